"""Run commands under Landlock: the fork server the bash tool starts once per opencode
process as ``python -I -S -B landlock_exec.py FD`` when Landlock is the sandbox
(app.sandbox.mechanisms, app.sandbox.landlock_server). FD is its end of a Unix socket.

It imports nothing of opencode and only the standard library, and it has one thread: the
restriction is applied in a child forked from it, between fork and exec, instead of in
``preexec_fn`` of the threaded main program. One server serves every command, so no
interpreter starts per command.

Each request on the socket is one byte carrying four file descriptors: the command's
stdin, stdout and stderr, and a stream socket for this request. On that socket come a
4-byte length and a JSON object: ``argv``, ``cwd``, ``env`` (the whole environment) and
``policy``. The server makes the policy's ruleset and forks; the child starts a session
of its own (so the caller can kill its process group by its pid), applies the ruleset
and execs the command. The server set no_new_privs and emptied the capability bounding
set of itself when it started, so every child has them. The server
answers the pid, once the child leads its own group, then the exit code (negative: the
signal that ended it), one line each. It exits when the other end of FD closes (the main
program ended) and the commands it started have ended.

The policy holds: ``read`` and ``write`` (paths granted), ``read_carved`` and
``write_carved`` (paths left out of those grants, existing or not), ``network`` (whether
TCP connect and bind stay allowed).

Landlock only grants: every access it handles is refused unless a rule allows it beneath
a folder. A path carved out of a grant (a denied file inside the workspace) is reached by
granting each of its siblings, down the folders that lead to it, and never the folders
themselves; so no new entry can be made, and none removed or renamed, in a folder that
leads to a carved-out path.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import socket
import stat
import sys

# The generic system call numbers, the same on x86_64 and aarch64.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
WRITE = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK
    | MAKE_SYM | REFER | TRUNCATE
)
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
"""The rights a rule on a file (not a folder) may hold."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm")
"""What every program writes to (or opens for writing) though it is outside the workspace."""


class RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class Failed(Exception):
    """Why a command could not be started: said on its stderr, exit code 126."""


def fail(message: str) -> None:
    sys.stderr.write(f"opencode sandbox (landlock): {message}\n")
    sys.exit(126)


def syscall(number: int, *args: object) -> int:
    result = libc.syscall(number, *args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(result)


def abi_version() -> int:
    return syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))


def handled(abi: int) -> tuple[int, int, int]:
    """(file system, network, scope) accesses this kernel's ABI knows."""
    fs = READ | WRITE
    if abi < 2:
        fs &= ~REFER
    if abi < 3:
        fs &= ~TRUNCATE
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    return fs, net, scoped


def beneath(path: str, carved: list[str]) -> bool:
    prefix = path.rstrip("/") + "/"
    return any(c.startswith(prefix) for c in carved)


def grants(root: str, carved: list[str]) -> list[str]:
    """The paths to grant so that all of ``root`` is reached except ``carved``: ``root``
    itself when nothing is carved out of it, else each sibling on the way down. Symbolic
    links are never granted: the rule would hold for wherever they lead."""
    if root in carved:
        return []
    if not beneath(root, carved):
        return [root]
    found = []
    try:
        entries = os.scandir(root)
    except OSError:
        return []
    with entries:
        for entry in entries:
            child = os.path.join(root, entry.name)
            if child in carved or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False) and beneath(child, carved):
                found += grants(child, carved)
            elif not beneath(child, carved):
                found.append(child)
    return found


def add_rule(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return  # gone since it was listed, or unreachable: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= FILE_ONLY
        if access:
            attr = PathBeneathAttr(access, fd)
            syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(attr), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def drop_capabilities() -> None:
    """Empty the bounding set, so that a command run as root has no capability after the
    exec (it could otherwise remount or reconfigure what Landlock does not cover)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as file:
            last = int(file.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM for a user without CAP_SETPCAP: nothing to drop


def ruleset_for(policy: dict[str, object]) -> int:
    """A Landlock ruleset holding the policy's grants, as a file descriptor. Made in the
    server: it restricts no one until a child applies it."""
    abi = abi_version()
    fs, net, scoped = handled(abi)
    if policy.get("network"):
        net = 0
    attr = RulesetAttr(fs, net, scoped)  # an older kernel takes the longer struct when its extra fields are 0
    ruleset = syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    read_carved = list(policy["read_carved"])  # type: ignore[call-overload]
    write_carved = list(policy["write_carved"])  # type: ignore[call-overload]
    for root in policy["read"]:  # type: ignore[attr-defined]
        for path in grants(root, read_carved):
            add_rule(ruleset, path, READ & fs)
    for root in policy["write"]:  # type: ignore[attr-defined]
        for path in grants(root, write_carved):
            add_rule(ruleset, path, WRITE & fs)
    for device in DEVICES:
        add_rule(ruleset, device, (READ | WRITE_FILE) & fs)
    return ruleset


def lock_down() -> None:
    """What every command inherits from the server: no_new_privs (no setuid program
    regains privileges, and Landlock may be applied without them) and an empty
    capability bounding set. The server itself needs neither."""
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        fail("could not set no_new_privs")
    drop_capabilities()


def run_child(request: dict[str, object], stdio: list[int], ruleset: int | str, ready: int, go: int) -> None:
    """In the forked child: a session of its own, the command's stdio and folder, the
    ruleset (or why there is none), then the command. It runs nothing unless the server
    told the caller its pid, so a caller that got no pid may ask again. Never returns."""
    try:
        os.setsid()
        os.close(ready)  # the server now answers the pid: the group exists
        if os.read(go, 1) != b"g":
            os._exit(126)
        for name in ("SIGPIPE", "SIGXFSZ"):  # ignored by Python: restored as subprocess does
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        argv = list(request["argv"])  # type: ignore[call-overload]
        try:
            os.chdir(str(request["cwd"]))
            if isinstance(ruleset, str):
                raise Failed(f"could not apply the policy: {ruleset}")
            syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
            os.close(ruleset)
        except OSError as err:
            raise Failed(f"could not apply the policy: {err.strerror}") from None
        try:
            os.execvpe(argv[0], argv, request["env"])  # type: ignore[arg-type]
        except OSError as err:
            raise Failed(f"could not run {argv[0]}: {err.strerror}") from None
    except Failed as err:
        os.write(2, f"opencode sandbox (landlock): {err}\n".encode())
    finally:
        os._exit(126)


def read_request(reply: socket.socket) -> dict[str, object]:
    size = int.from_bytes(receive(reply, 4), "big")
    request: dict[str, object] = json.loads(receive(reply, size))
    return request


def receive(reply: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = reply.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def start(fds: list[int], waiting: selectors.BaseSelector) -> None:
    """Fork and start one command; the child's exit is watched through a pidfd."""
    for fd in fds:
        os.set_inheritable(fd, False)  # no command inherits another's descriptors
    if len(fds) != 4:
        for fd in fds:
            os.close(fd)
        return
    *stdio, reply_fd = fds
    reply = socket.socket(fileno=reply_fd)
    try:
        request = read_request(reply)
    except (OSError, EOFError, ValueError):
        reply.close()
        return
    ruleset: int | str
    try:
        ruleset = ruleset_for(request["policy"])  # type: ignore[arg-type]
    except OSError as err:
        ruleset = err.strerror or str(err)
    ready, ready_w = os.pipe()
    go_r, go = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready)
        os.close(go)
        run_child(request, stdio, ruleset, ready_w, go_r)
    if isinstance(ruleset, int):
        os.close(ruleset)
    os.close(ready_w)
    os.close(go_r)
    for fd in stdio:
        os.close(fd)
    os.read(ready, 1)  # EOF once the child has its own session (or has ended)
    os.close(ready)
    try:
        reply.sendall(f"{pid}\n".encode())
        os.write(go, b"g")
    except OSError:
        pass  # the caller is gone: the child ends without running the command
    os.close(go)
    waiting.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, reply))


def finish(pidfd: int, pid: int, reply: socket.socket, waiting: selectors.BaseSelector) -> None:
    waiting.unregister(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    try:
        reply.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    except OSError:
        pass
    reply.close()


def serve(control_fd: int) -> None:
    """Start commands until the main program closes its end, then wait for those still
    running, so that each caller learns its command's exit code."""
    lock_down()
    control = socket.socket(fileno=control_fd)
    waiting = selectors.DefaultSelector()
    waiting.register(control, selectors.EVENT_READ)
    while len(waiting.get_map()) > 0:
        for key, _ in waiting.select():
            if key.data is not None:
                pid, reply = key.data
                finish(key.fd, pid, reply, waiting)
                continue
            message, fds, _, _ = socket.recv_fds(control, 1, 4)
            if message:
                start(fds, waiting)
            else:
                waiting.unregister(control)  # the main program ended, or started a new server


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: landlock_exec.py FD")
    serve(int(sys.argv[1]))
