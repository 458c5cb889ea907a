"""End the app when its terminal goes away.

The kernel sends SIGHUP only to a terminal's foreground process group and session
leader; under `make run` in a tmux pane or an ssh session that is closed, opencode can
be neither, and then nothing tells it. Textual's input thread reads end-of-file again
and again (the process spins at half a core, for ever) and its writer blocks on a
terminal that is gone. So a thread waits on the terminal itself, asleep until it hangs
up, and then ends the process as SIGHUP would have. Nothing is lost: every file write is
atomic and the database commits in transactions.
"""

from __future__ import annotations

import os
import select
import signal
import threading


def end_on_hangup(fd: int) -> None:
    """Watch ``fd`` (the terminal) from a daemon thread; nothing to watch if it is not one."""
    if os.isatty(fd):
        threading.Thread(target=_wait_for_hangup, args=(fd,), name="opencode-hangup", daemon=True).start()


def _wait_for_hangup(fd: int) -> None:
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: poll still reports POLLHUP and POLLERR
    while not poller.poll():
        pass
    os.kill(os.getpid(), signal.SIGHUP)  # its default action ends the process
    os._exit(128 + signal.SIGHUP)  # SIGHUP ignored (nohup): a TUI with no terminal ends anyway
