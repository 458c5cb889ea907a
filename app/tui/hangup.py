"""End the app when its terminal goes away.

The kernel sends SIGHUP only to a terminal's foreground process group and session
leader; under `make run` in a tmux pane or an ssh session that is closed, opencode can
be neither, and then nothing tells it. Textual's input thread reads end-of-file again
and again (the process spins at half a core, for ever) and its writer blocks on a
terminal that is gone. So a thread waits on the terminal itself, asleep until it hangs
up, and then asks the app, on its own event loop, to exit as the quit key does: the
runtime closes its database and language servers the normal way.
"""

from __future__ import annotations

import asyncio
import os
import select
import threading
from collections.abc import Callable

HANGUP_EXIT_CODE = 129
"""The exit status of a process that SIGHUP ended (128 + 1), as shells report it."""


def watch_for_hangup(fd: int, loop: asyncio.AbstractEventLoop, on_hangup: Callable[[], object]) -> None:
    """Call ``on_hangup`` on ``loop`` once ``fd`` (the terminal) hangs up, from a daemon
    thread; nothing to watch if ``fd`` is not a terminal."""
    if os.isatty(fd):
        watcher = threading.Thread(
            target=_wait_for_hangup, args=(fd, loop, on_hangup), name="opencode-hangup", daemon=True
        )
        watcher.start()


def _wait_for_hangup(fd: int, loop: asyncio.AbstractEventLoop, on_hangup: Callable[[], object]) -> None:
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: poll still reports POLLHUP and POLLERR
    while not poller.poll():
        pass
    try:
        loop.call_soon_threadsafe(on_hangup)
    except RuntimeError:  # the loop closed meanwhile: the app has ended already
        pass
