"""Warm by default in a shell: after a `-p` that found no server, leave one behind.

A person typing `opencode -p` in a terminal runs it again soon; the first run pays for
the interpreter and litellm in its own process, as always, and then starts a detached
`opencode serve` (idle timeout ``serve.idleTimeout``) that the next `-p` attaches to.
Scripts are left alone: not when neither standard input nor output is a terminal, not
in CI (``CI`` set), not with ``--no-attach``, and not when the user config says
``"serve": {"autostart": false}``. See docs/serve.md.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import TextIO

from app.core.errors import OpencodeError
from app.serve.address import connect, serve_folder, socket_path

NOT_CI = frozenset({"", "0", "false", "no"})
"""Values of ``CI`` that do not mean a CI run (compared in lower case)."""


def in_a_shell(env: Mapping[str, str], stdin: TextIO | None, stdout: TextIO | None) -> bool:
    """A person's shell, not a script's pipe nor a CI job: standard input or output is a
    terminal, and ``CI`` is not set (to anything but empty, 0, false or no)."""
    if env.get("CI", "").strip().lower() not in NOT_CI:
        return False
    return any(stream is not None and stream.isatty() for stream in (stdin, stdout))


def leave_server_behind(environment: Mapping[str, str]) -> None:
    """Start `opencode serve` detached, with ``environment`` (the one this `-p` started
    with, so that the next `-p` from the same shell may attach to it), when this is a
    person's shell, the user config allows it and no server listens. The server runs in a
    session of its own, its output nowhere (it logs to serve.log), so closing the
    terminal does not end it; two racing starts leave one server (its lock)."""
    if not in_a_shell(environment, sys.stdin, sys.stdout) or not _allowed(environment):
        return
    try:
        folder = serve_folder(environment)
        listening = connect(socket_path(environment))
    except OpencodeError:
        return  # a folder that is not private: the next -p says so, this one has done its work
    if listening is not None:
        listening.close()
        return
    # -P: the server's modules come from opencode's installation, never from the folder it starts in.
    subprocess.Popen(
        [sys.executable, "-P", "-m", "app.cli", "serve"], cwd=folder if folder.is_dir() else "/", env=dict(environment),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def _allowed(environment: Mapping[str, str]) -> bool:
    """``serve.autostart`` of the user's config, as the server reads its own settings
    (a broken config: not now; the run has said why)."""
    from app.config import load_config

    try:
        return load_config(serve_folder(environment), env=environment, warn=lambda _: None).serve.autostart
    except OpencodeError:
        return False
