"""The bubblewrap command line for a policy.

The whole file system is bound read-only, then each folder a command may write is bound
over itself writable, then each carve-out on top: a read-only path bound over itself
read-only, a hidden folder replaced by an empty read-only tmpfs, a hidden file by
/dev/null. Every folder between a writable root and a carve-out is bound over itself too:
a mount point cannot be renamed or removed, so no command can move the folder away and
make a new one in its place. All capabilities are dropped (root could remount `/`
writable), the process ids are private, `/proc` and `/dev` are new, and the network is
a namespace of its own with only loopback unless the policy allows it.
"""

from __future__ import annotations

import posixpath

from app.sandbox.policy import SandboxPolicy, within


def bwrap_argv(policy: SandboxPolicy, argv: list[str], bwrap: str = "bwrap") -> list[str]:
    args = [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    ]  # fmt: skip
    if not policy.network:
        args.append("--unshare-net")
    for root in policy.write_roots:
        args += ["--bind", root, root]
    for folder in _pinned(policy):
        args += ["--bind", folder, folder]
    for carve in policy.carves:  # sorted by path: a folder before what lies in it
        if carve.kind == "read-only":
            args += ["--ro-bind", carve.path, carve.path]
        elif carve.folder:
            args += ["--tmpfs", carve.path, "--remount-ro", carve.path]
        else:
            args += ["--ro-bind", "/dev/null", carve.path]
    args += ["--setenv", "TMPDIR", policy.tmpdir, "--chdir", policy.workspace, "--", *argv]
    return args


def _pinned(policy: SandboxPolicy) -> list[str]:
    """The folders between a writable root and a carve-out in it, outermost first."""
    roots = policy.write_roots
    folders: set[str] = set()
    for carve in policy.carves:
        if not within(carve.path, roots):
            continue
        folder = posixpath.dirname(carve.path)
        while folder not in roots and within(folder, roots):
            folders.add(folder)
            folder = posixpath.dirname(folder)
    return sorted(folders)
