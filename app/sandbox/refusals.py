"""The line a sandboxed command's result gets when the sandbox stopped it: the program
says only "Permission denied" or "Read-only file system"; the model needs to know that
the sandbox refused it, which path, why, and what it can do instead.

The output is searched for the errors a refused write, read or connection gives, and
the paths on those lines are compared with the policy.
"""

from __future__ import annotations

import os
import posixpath
import re

from app.sandbox.policy import SandboxPolicy

_REFUSED = re.compile(r"Permission denied|Read-only file system|Operation not permitted|EACCES|EROFS|EPERM")
_NETWORK = re.compile(
    r"Network is unreachable|Connection refused|Temporary failure in name resolution|Name or service not known"
    r"|Could not resolve host|getaddrinfo|ENETUNREACH|ECONNREFUSED|EAI_AGAIN|No address associated"
)
_CONNECT = re.compile(r"connect|socket", re.IGNORECASE)
_PATHS = re.compile(r"""['"`‘’“”]([^'"`‘’“”\n]+)['"`‘’“”]|((?:~|\.{0,2}/|[\w.-]+/)[\w./~+@%=-]*|[\w.-]+\.[\w-]+)""")
_OUTSIDE_FIX = "if the command must write there, call bash again with sandbox false: the user is asked to run it outside the sandbox"


def refusal_note(policy: SandboxPolicy, output: str) -> str | None:
    """One line for the model when the output shows the sandbox refusing something; None otherwise."""
    for line in output.splitlines():
        if _REFUSED.search(line):
            for path in _paths(line, policy.workspace):
                note = _path_note(policy, path)
                if note is not None:
                    return note
    if not policy.network and (_NETWORK.search(output) or (_REFUSED.search(output) and _CONNECT.search(output))):
        return (
            "Sandbox: the network is off for bash commands, so the connection was refused; "
            "if the command needs it, call bash again with sandbox false (the user is asked), "
            'or ask the user for a rule ("network": {"<command> *": "allow"})'
        )
    return None


def _paths(line: str, workspace: str) -> list[str]:
    found = []
    for quoted, bare in _PATHS.findall(line):
        text = (quoted or bare).strip().rstrip(":,.")
        if not text:
            continue
        found.append(posixpath.normpath(posixpath.join(workspace, os.path.expanduser(text))))
    return found


def _path_note(policy: SandboxPolicy, path: str) -> str | None:
    carve = policy.carve_for(path)
    shown = policy.shown(path)
    if carve is not None:
        verb = "reading or writing" if carve.kind == "hidden" else "writing"
        return f"Sandbox: it refused {verb} {shown}: {carve.reason}. Leave it alone, or ask the user to change that rule."
    if not policy.writable_at(path) and os.path.isabs(path) and _exists_or_parent(path):
        return (
            f"Sandbox: it refused writing {shown}: bash commands write only in the workspace, $TMPDIR "
            f"and the folders of sandbox.writable; {_OUTSIDE_FIX}"
        )
    return None


def _exists_or_parent(path: str) -> bool:
    """Whether ``path`` or its folder exists: a word that only looks like a path is left out."""
    return os.path.lexists(path) or os.path.isdir(posixpath.dirname(path))
