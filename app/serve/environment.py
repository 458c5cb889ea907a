"""Whether a client's environment is the server's, in what the server reads from it.

A server reads its provider keys and base URLs, its ``OPENCODE_*`` settings and litellm's
``LITELLM_*`` ones, the home that holds the user's global config, and the ``PATH`` and
shell its tools run with, from the environment it was started with. A ``-p`` from a shell
where any of those differ would get the server's (another key, another endpoint, another
config), so it runs in its own process instead (docs/serve.md says why).

Standard library only: the attaching client reads it. The client sends a digest of each
of its variables' values (never a value), the server compares those of the variables it
reads, and answers with the names that differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

READ_PREFIXES = ("OPENCODE_", "LITELLM_", "AWS_", "AZURE_", "VERTEX", "GOOGLE_", "OLLAMA_", "HF_", "HUGGINGFACE_")
"""Settings of opencode and of litellm, and the clouds' and hosts' own variables litellm reads."""
READ_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_API_BASE", "_BASE_URL", "_API_VERSION", "_ORGANIZATION")
"""Provider keys, base URLs and API versions, whatever the provider (litellm knows over a hundred)."""
READ_NAMES = frozenset({
    "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",  # the global config and user agents
    "PATH", "SHELL", "VIRTUAL_ENV",  # what the bash tool runs, and with which shell
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",  # how the provider is reached
})  # fmt: skip


def digests(env: Mapping[str, str]) -> dict[str, str]:
    """Every variable's name with a digest of its value: what a client sends."""
    return {name: _digest(value) for name, value in env.items()}


def read_by_server(name: str) -> bool:
    return name in READ_NAMES or name.startswith(READ_PREFIXES) or name.endswith(READ_SUFFIXES)


def differing(ours: Mapping[str, str], theirs: Mapping[str, str], also: Iterable[str] = ()) -> list[str]:
    """The names, sorted, of the variables the server reads (and of ``also``: those its
    configuration names, as ``{env:VAR}``) whose digests differ between ``ours`` and
    ``theirs``; a variable set on one side only differs."""
    extra = set(also)
    names = {name for name in (*ours, *theirs) if read_by_server(name) or name in extra}
    return sorted(name for name in names if ours.get(name) != theirs.get(name))


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:32]
