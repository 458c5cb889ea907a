"""webfetch over HTTPS to a local server: the request goes to the checked address
(127.0.0.1) while the certificate is verified for the name in the URL (sent as the TLS
server name), and a certificate for another name is refused in one line. The test's own
authority is trusted through SSL_CERT_FILE, as a company's would be."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.core.errors import ToolError
from app.tools.webfetch import WebfetchTool
from tests.tools.web_server import web_server

OPEN = {"tools": {"webfetch": {"allowPrivate": True}}, "lsp": {"python": {"disabled": True}}}


def _certificate(tmp_path: Path, name: str) -> tuple[Path, ssl.SSLContext]:
    """A self-signed certificate for ``name`` (its own authority): the file a client
    trusts, and a server context that presents it."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return cert_file, server


async def _fetch(make_runtime, url: str):
    runtime = make_runtime(config=OPEN)
    return await WebfetchTool().call({"url": url}, runtime.context(runtime.store.sessions.create().id))


async def test_https_verifies_the_name_while_connecting_to_the_checked_address(tmp_path, make_runtime, monkeypatch):
    authority, tls = _certificate(tmp_path, "localhost")
    monkeypatch.setenv("SSL_CERT_FILE", str(authority))
    page = b"<h1>Secure</h1><p>over TLS</p>"
    with web_server({"/": lambda h: h.reply(200, "text/html", page)}, tls=tls) as server:
        result = await _fetch(make_runtime, f"https://localhost:{server.port}/")
    assert "# Secure" in result.output
    assert server.requests == [("/", f"localhost:{server.port}")]


async def test_a_certificate_for_another_name_is_refused(tmp_path, make_runtime, monkeypatch):
    authority, tls = _certificate(tmp_path, "other.example")
    monkeypatch.setenv("SSL_CERT_FILE", str(authority))
    with web_server({"/": lambda h: h.reply(200, "text/plain", b"x")}, tls=tls) as server:
        with pytest.raises(ToolError) as caught:
            await _fetch(make_runtime, f"https://localhost:{server.port}/")
    message = str(caught.value)
    assert message.startswith(f"webfetch: cannot connect to https://localhost:{server.port}/: ")
    assert "CERTIFICATE_VERIFY_FAILED" in message and "\n" not in message
