"""Where `opencode serve` listens, and the checks that keep it its owner's alone.

Standard library only: the attaching client (`-p`) reads it too. The socket lives in a
folder only its owner may enter: ``$XDG_RUNTIME_DIR/opencode`` (a per-user tmpfs the
system makes 0700), else ``opencode-<uid>`` in the temp folder, which anyone could have
made first; so whoever uses the folder, server or client, checks that it is a real folder
(not a link), owned by this user and closed to everyone else, and refuses it otherwise.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path

from app.core.errors import OpencodeError

SOCKET_NAME = "serve.sock"
TOKEN_NAME = "serve.token"
LOCK_NAME = "serve.lock"
LOG_NAME = "serve.log"
MAX_SOCKET_PATH = 107
"""Bytes a Unix socket path may have on Linux (sun_path is 108, NUL included)."""
_PEERCRED = struct.Struct("3i")
"""struct ucred: pid, uid, gid."""


class ServeError(OpencodeError):
    """The server cannot start, or cannot be reached safely; one line naming what to do."""


def serve_folder(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    runtime_dir = env.get("XDG_RUNTIME_DIR", "")
    if runtime_dir and Path(runtime_dir).is_absolute():
        return Path(runtime_dir) / "opencode"
    return Path(tempfile.gettempdir()) / f"opencode-{os.getuid()}"


def socket_path(env: Mapping[str, str] | None = None) -> Path:
    return serve_folder(env) / SOCKET_NAME


def make_private_folder(folder: Path) -> Path:
    """Create ``folder`` 0700 (its parent must exist), or check the one there: see
    ``check_private_folder``."""
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise ServeError(f"cannot create {folder}: {error.strerror}: set XDG_RUNTIME_DIR to a folder of yours") from None
    check_private_folder(folder)
    return folder


def check_private_folder(folder: Path) -> None:
    """Refuse a folder that is a link, is not ours or that others may enter: someone else
    could then put their own socket there and read what we send to it."""
    try:
        info = os.lstat(folder)
    except OSError as error:
        raise ServeError(f"cannot use {folder}: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ServeError(f"{folder} is not a folder (a link or a file): remove it, or set XDG_RUNTIME_DIR")
    if info.st_uid != os.getuid():
        raise ServeError(f"{folder} belongs to uid {info.st_uid}, not to you: remove it, or set XDG_RUNTIME_DIR")
    if info.st_mode & 0o077:
        raise ServeError(
            f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o}): run chmod 700 on it"
        )


def check_socket_path(path: Path) -> None:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise ServeError(f"the socket path {path} is too long for a Unix socket: set XDG_RUNTIME_DIR to a shorter folder")


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket (SO_PEERCRED:
    the kernel's record of who connected, which the peer cannot forge)."""
    _pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
    return int(uid)


def connect(path: Path) -> socket.socket | None:
    """A connection to the server at ``path``, or None when nobody listens there (no
    socket file, or a stale one). Raises ServeError when the folder is not private or the
    listener is not this user's."""
    if not path.exists():
        return None
    check_private_folder(path.parent)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fspath(path))
    except (ConnectionRefusedError, FileNotFoundError):
        sock.close()
        return None
    except OSError as error:
        sock.close()
        raise ServeError(f"cannot connect to {path}: {error.strerror}") from None
    if peer_uid(sock) != os.getuid():
        sock.close()
        raise ServeError(f"the server on {path} runs as another user: remove the socket and start your own")
    return sock
