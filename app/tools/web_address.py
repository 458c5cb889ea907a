"""Where webfetch may go: a URL made canonical (the permission subject, so a rule on
`https://example.com/*` cannot be dodged by spelling the URL another way), and the
addresses its host resolves to, each of them checked before one is connected to.

An IP address is written one way whatever way the URL spells it: `127.1`, `2130706433`,
`0x7f.1` and `017700000001` are `127.0.0.1` (as the system's resolver reads them), an
IPv6 address is in its compressed form, and one that only carries an IPv4 address
(`::ffff:127.0.0.1`) is that IPv4 address. ``WebTarget.at_address`` spells the URL with
each resolved address the same way, so rules are matched on the address connected to too.

Only http and https; no credentials in the URL. Every address the name resolves to must
be global (not private, loopback, link-local, shared, reserved, multicast, nor an IPv6
form embedding such an IPv4 address) unless ``tools.webfetch.allowPrivate`` is on; the
fetch then connects to one of these checked addresses, never resolving the name again,
so a DNS answer that changes between check and connection (rebinding) cannot steer it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass

import httpx

from app.core.errors import ToolError

MAX_URL_CHARS = 4096
DEFAULT_PORTS = {"http": 80, "https": 443}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class WebTarget:
    """A URL webfetch may be asked for: ``url`` is its canonical spelling (lower-case
    scheme and host, the host in its ASCII form without a final dot, no default port, no
    fragment, percent escapes of unreserved characters decoded and the others upper-case)."""

    url: str
    scheme: str
    host: str
    """ASCII host name or IP address (IPv6 without brackets)."""
    port: int
    target: str
    """Path and query, as sent on the request line."""

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    def at(self, address: str) -> str:
        """The URL with the host replaced by ``address`` (one of its checked addresses)."""
        host = f"[{address}]" if ":" in address else address
        return f"{self.scheme}://{host}:{self.port}{self.target}"

    def at_address(self, address: str) -> str:
        """The canonical URL with the host replaced by ``address`` (a resolved one) in its
        canonical text: the subject the rules judge for the address connected to."""
        return _canonical_url(self.scheme, canonical_host(address.split("%", 1)[0]), self.port, self.target)


def web_target(text: str, base: WebTarget | None = None) -> WebTarget:
    """``text`` (relative to ``base``, for a redirect's Location) as a WebTarget; a
    ToolError naming the problem for anything webfetch does not fetch."""
    text = text.strip()
    if len(text) > MAX_URL_CHARS:
        raise ToolError(f"webfetch: the URL is {len(text):,} characters, over the limit of {MAX_URL_CHARS:,}")
    try:
        url = httpx.URL(base.url).join(text) if base is not None else httpx.URL(text)
        scheme, raw_host = url.scheme.lower(), url.raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError, ValueError) as err:
        raise ToolError(f"webfetch: {_shown(text)} is not a valid URL ({err}): give a full http(s) URL") from None
    if scheme not in DEFAULT_PORTS:
        what = f"a URL of scheme {scheme}" if scheme else "a URL without a scheme"
        raise ToolError(f"webfetch: {_shown(text)} is {what}: only http and https URLs are fetched")
    if url.userinfo:
        raise ToolError(f"webfetch: {_shown(text)} carries a user name or password: give the URL without them")
    host = canonical_host(raw_host.lower().rstrip("."))
    if not host:
        raise ToolError(f"webfetch: {_shown(text)} names no host: give a full http(s) URL")
    port = url.port or DEFAULT_PORTS[scheme]
    target = _normal_escapes(url.raw_path.decode("ascii")) or "/"
    return WebTarget(_canonical_url(scheme, host, port, target), scheme, host, port, target)


def _canonical_url(scheme: str, host: str, port: int, target: str) -> str:
    shown_host = f"[{host}]" if ":" in host else host
    shown_port = "" if port == DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{shown_host}{shown_port}{target}"


def canonical_host(host: str) -> str:
    """An IP address's one text (module doc); a host name as it is."""
    if ":" in host:
        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            return host
        return str(address.ipv4_mapped or address)
    number = _ipv4_number(host)
    return str(ipaddress.IPv4Address(number)) if number is not None else host


_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")


def _ipv4_number(host: str) -> int | None:
    """The IPv4 address a host of one to four numbers means (decimal, 0x hex or 0 octal,
    the last filling the bytes left, as inet_aton reads it), or None for a name."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.fullmatch(part) for part in parts):
        return None
    values = [_ipv4_part(part) for part in parts]
    last_bits = 8 * (5 - len(parts))
    if any(value > 255 for value in values[:-1]) or values[-1] >= 1 << last_bits:
        return None
    number = values[-1]
    for index, value in enumerate(values[:-1]):
        number |= value << (24 - 8 * index)
    return number


def _ipv4_part(part: str) -> int:
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16)
    return int(part, 8) if part.startswith("0") else int(part)


def _normal_escapes(text: str) -> str:
    def fix(match: re.Match[str]) -> str:
        byte = int(match.group(1), 16)
        return chr(byte) if byte in _UNRESERVED else f"%{match.group(1).upper()}"

    return _ESCAPE.sub(fix, text)


def _shown(text: str) -> str:
    return text if len(text) <= 100 else text[:99] + "…"


def why_refused(address: IPAddress) -> str | None:
    """What kind of non-global address this is (None for a global one). An IPv4-mapped
    or NAT64 address is the IPv4 address it carries; a 6to4 or Teredo one is judged by
    the IPv4 addresses inside it as well."""
    embedded: list[IPAddress] = []
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return why_refused(address.ipv4_mapped)
        if address in _NAT64:
            return why_refused(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        inside = [address.sixtofour, *(address.teredo or ())]
        embedded = [found for found in inside if found is not None]
    for candidate in (address, *embedded):
        if candidate.is_loopback:
            return "a loopback address"
        if candidate.is_link_local:
            return "a link-local address"
        if candidate.is_multicast:
            return "a multicast address"
        if candidate.is_private:
            return "a private address"
        if not candidate.is_global or candidate.is_unspecified or candidate.is_reserved:
            return "a non-global address"
    return None


async def checked_addresses(target: WebTarget, allow_private: bool) -> list[str]:
    """Every address ``target.host`` resolves to, in the resolver's order, once each;
    ToolError when it resolves to nothing or (unless ``allow_private``) to any address
    that is not global: one bad answer among good ones refuses the whole name."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            target.host, target.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (socket.gaierror, UnicodeError) as err:
        raise ToolError(f"webfetch: cannot resolve {target.host} ({_reason(err)}): check the URL") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)))
    if not addresses:
        raise ToolError(f"webfetch: {target.host} resolves to no internet address: check the URL")
    if allow_private:
        return addresses
    for address in addresses:
        kind = why_refused(ipaddress.ip_address(address.split("%", 1)[0]))
        if kind is not None:
            named = f"{address} is" if target.host == address else f"{target.host} resolves to {address},"
            raise ToolError(
                f"webfetch: {named} {kind}: webfetch reaches only public addresses "
                "unless tools.webfetch.allowPrivate is true in the user config"
            )
    return addresses


def _reason(err: BaseException) -> str:
    return getattr(err, "strerror", None) or str(err) or type(err).__name__
