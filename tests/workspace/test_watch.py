"""The workspace watcher with a real awatch (inotify) on real files: other processes
change files, our tools change files, and the bus shows which of them were announced.

No test sleeps to prove that nothing happened: after the action that must stay silent,
another process changes a second, watched file, and that event must be the next one
(the watcher judges paths in order, batch by batch)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import pytest

from app.core.errors import StaleFileError
from app.tools.delete import DeleteTool
from app.tools.edit import EditTool
from app.tools.view import ViewTool
from app.workspace.events import FileChangedOnDisk
from app.workspace.watch import WorkspaceWatcher
from tests.conftest import DEEP_TREE_LEVELS

WAIT = 5.0  # seconds: the bound on every wait; the event itself comes within ~0.1 s

# Written by another process: write in place, or save like an editor (temp file + rename).
WRITE = "import sys; open(sys.argv[1], 'w').write(sys.argv[2])"
SAVE_BY_RENAME = "import os, sys; open(sys.argv[1] + '.tmp', 'w').write(sys.argv[2]); os.replace(sys.argv[1] + '.tmp', sys.argv[1])"
REMOVE = "import os, sys; os.remove(sys.argv[1])"
BURST = "import sys\nfor i in range(20): open(sys.argv[1], 'w').write(sys.argv[2] * (i + 1))"
MAKE_FOLDER_AND_WRITE = "import os, sys; os.makedirs(os.path.dirname(sys.argv[1])); open(sys.argv[1], 'w').write(sys.argv[2])"


async def other_process(code: str, path: Path, text: str = "") -> None:
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", code, str(path), text)
    assert await asyncio.wait_for(process.wait(), WAIT) == 0


@pytest.fixture
async def watcher(runtime):
    """The runtime's services watched with short settings (production: 1600/100 ms)."""
    watcher = WorkspaceWatcher(
        runtime.workspace,
        runtime.records,
        runtime.bus,
        ignore_paths=[runtime.config.data_dir(runtime.root)],
        debounce_ms=400,
        step_ms=30,
    )
    await watcher.start()
    yield watcher
    await asyncio.wait_for(watcher.aclose(), WAIT)


@pytest.fixture
async def events(runtime):
    async with runtime.bus.subscribe(FileChangedOnDisk) as subscription:
        yield subscription


async def next_event(events) -> FileChangedOnDisk:
    return await asyncio.wait_for(events.get(), WAIT)


@pytest.fixture
def read_file(ctx, workspace: Path):
    """Create a workspace file and read it with the view tool, as the model would."""

    async def make(rel: str, text: str) -> Path:
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        await ViewTool().call({"filePath": rel}, ctx)
        return path

    return make


async def test_another_process_editing_a_read_file_is_announced_and_makes_the_next_edit_fail(
    watcher, events, ctx, session_id, read_file
):
    path = await read_file("app.py", "x = 1\n")

    await other_process(WRITE, path, "x = 2  # changed elsewhere\n")

    assert await next_event(events) == FileChangedOnDisk("app.py", "modified", (session_id,))
    with pytest.raises(StaleFileError, match="read it again"):
        await EditTool().call({"filePath": "app.py", "oldString": "x = 2", "newString": "x = 3"}, ctx)
    assert path.read_text() == "x = 2  # changed elsewhere\n"

    await ViewTool().call({"filePath": "app.py"}, ctx)  # reading again makes it editable
    await EditTool().call({"filePath": "app.py", "oldString": "x = 2", "newString": "x = 3"}, ctx)
    assert path.read_text() == "x = 3  # changed elsewhere\n"


async def test_our_own_edits_and_deletes_are_not_announced(watcher, events, ctx, read_file):
    await read_file("ours.py", "a = 1\n")
    await read_file("gone.py", "b = 1\n")
    theirs = await read_file("theirs.py", "c = 1\n")

    await EditTool().call({"filePath": "ours.py", "oldString": "a = 1", "newString": "a = 22"}, ctx)
    await DeleteTool().call({"path": "gone.py"}, ctx)
    await other_process(WRITE, theirs, "c = 333\n")

    assert (await next_event(events)).path == "theirs.py"


async def test_files_no_session_has_seen_are_not_announced(watcher, events, workspace, read_file):
    unseen = workspace / "unseen.txt"
    unseen.write_text("one\n")
    seen = await read_file("seen.txt", "one\n")

    await other_process(WRITE, unseen, "two, longer\n")
    await other_process(WRITE, seen, "two, longer\n")

    assert (await next_event(events)).path == "seen.txt"


@pytest.mark.parametrize("folder", [".git", ".venv", "node_modules", "pkg/__pycache__", ".opencode"])
async def test_ignored_folders_and_the_data_directory_are_not_announced(
    folder, watcher, events, ctx, workspace, read_file
):
    hidden = workspace / folder / "notes.txt"
    hidden.parent.mkdir(parents=True, exist_ok=True)  # the data directory exists already
    hidden.write_text("one\n")
    ctx.records.record_read(ctx.session_id, hidden)  # seen, yet never announced
    visible = await read_file("visible.txt", "one\n")

    await other_process(WRITE, hidden, "two, longer\n")
    await other_process(WRITE, visible, "two, longer\n")

    assert (await next_event(events)).path == "visible.txt"


def inotify_watches() -> int:
    """The watches this process's inotify instances hold (Linux: /proc/self/fdinfo)."""
    count = 0
    for info in Path("/proc/self/fdinfo").iterdir():
        with contextlib.suppress(OSError):  # a descriptor closed meanwhile
            count += info.read_text().count("inotify wd:")
    return count


async def test_ignored_folders_get_no_watch_at_all(runtime, workspace):
    """Watching a folder costs the UI while the watch is set (notify holds the interpreter):
    a virtualenv's or node_modules' thousands of folders are not walked."""
    for n in range(40):
        (workspace / ".venv" / "lib" / f"package{n}").mkdir(parents=True)
        (workspace / "node_modules" / f"dep{n}").mkdir(parents=True)
    (workspace / "src" / "app").mkdir(parents=True)
    watcher = WorkspaceWatcher(runtime.workspace, runtime.records, runtime.bus,
                               ignore_paths=[runtime.config.data_dir(runtime.root)], step_ms=30)
    before = inotify_watches()
    await watcher.start()
    try:
        watched = inotify_watches() - before
    finally:
        await asyncio.wait_for(watcher.aclose(), WAIT)
    assert watched == 3, "the workspace, src and src/app"


async def test_a_file_in_folders_made_while_watching_is_announced(watcher, events, session_id, read_file):
    path = await read_file("later/deeper/new.py", "x = 1\n")  # both folders are made now

    await other_process(WRITE, path, "x = 2  # changed elsewhere\n")
    assert await next_event(events) == FileChangedOnDisk("later/deeper/new.py", "modified", (session_id,))
    await other_process(WRITE, path, "x = 3  # and again, now watched where it is\n")
    assert (await next_event(events)).path == "later/deeper/new.py"


async def test_a_seen_file_made_with_its_folder_in_one_go_is_announced(watcher, events, ctx, session_id, workspace):
    """The file is made before its new folder can be watched: the watch that starts
    over the new folder judges the files seen so far (those in ignored folders aside)."""
    ignored = workspace / "pkg" / "__pycache__" / "notes.txt"
    ignored.parent.mkdir(parents=True)
    ignored.write_text("one\n")
    ctx.records.record_read(session_id, ignored)  # judged first, were it judged
    path = workspace / "made" / "now.txt"
    ctx.records.record_read(session_id, path)  # seen absent
    await other_process(WRITE, ignored, "two, longer\n")

    await other_process(MAKE_FOLDER_AND_WRITE, path, "hello\n")

    assert await next_event(events) == FileChangedOnDisk("made/now.txt", "added", (session_id,))


async def test_files_beside_the_data_directory_that_share_its_prefix_are_announced(
    watcher, events, session_id, read_file
):
    # The data directory is .opencode; the project config .opencode.json is not inside it.
    config = await read_file(".opencode.json", "{}\n")

    await other_process(WRITE, config, '{"model": "changed elsewhere"}\n')

    assert await next_event(events) == FileChangedOnDisk(".opencode.json", "modified", (session_id,))


async def test_deletion_and_recreation_are_named_as_such(watcher, events, ctx, session_id, read_file):
    doomed = await read_file("doomed.txt", "bye\n")
    await other_process(REMOVE, doomed)
    assert await next_event(events) == FileChangedOnDisk("doomed.txt", "deleted", (session_id,))

    back = await read_file("back.txt", "soon gone\n")
    await DeleteTool().call({"path": "back.txt"}, ctx)  # ours: the session knows it is absent
    await other_process(WRITE, back, "recreated\n")
    assert await next_event(events) == FileChangedOnDisk("back.txt", "added", (session_id,))


async def test_an_editor_save_by_rename_is_one_modification(watcher, events, session_id, read_file):
    path = await read_file("notes.md", "draft\n")
    sentinel = await read_file("sentinel.txt", "one\n")

    await other_process(SAVE_BY_RENAME, path, "final version\n")
    await other_process(WRITE, sentinel, "two, longer\n")

    assert await next_event(events) == FileChangedOnDisk("notes.md", "modified", (session_id,))
    assert (await next_event(events)).path == "sentinel.txt"


async def test_a_state_already_announced_is_not_announced_again(watcher, events, read_file):
    path = await read_file("script.sh", "echo one\n")
    sentinel = await read_file("sentinel.txt", "one\n")
    # Saved whole: a plain write may be seen truncated first, a state of its own.
    await other_process(SAVE_BY_RENAME, path, "echo two, longer\n")
    assert (await next_event(events)).path == "script.sh"

    # chmod is a change event for watchfiles, but the content the session knows is the same.
    await other_process("import os, sys; os.chmod(sys.argv[1], 0o755)", path)
    await other_process(WRITE, sentinel, "two, longer\n")

    assert (await next_event(events)).path == "sentinel.txt"


async def test_a_burst_of_writes_is_announced_once(runtime, events, session_id, read_file):
    slow = WorkspaceWatcher(runtime.workspace, runtime.records, runtime.bus, debounce_ms=2000, step_ms=300)
    await slow.start()
    try:
        path = await read_file("log.txt", "start\n")
        sentinel = await read_file("sentinel.txt", "one\n")

        await other_process(BURST, path, "line\n")
        assert await next_event(events) == FileChangedOnDisk("log.txt", "modified", (session_id,))
        await other_process(WRITE, sentinel, "two, longer\n")
        assert (await next_event(events)).path == "sentinel.txt"
    finally:
        await asyncio.wait_for(slow.aclose(), WAIT)


async def test_every_session_that_saw_the_file_is_named(watcher, events, runtime, workspace, session_id):
    other = runtime.store.sessions.create(title="other").id
    path = workspace / "shared.txt"
    path.write_text("one\n")
    runtime.records.record_read(session_id, path)
    runtime.records.record_read(other, path)

    await other_process(WRITE, path, "two, longer\n")

    assert (await next_event(events)).session_ids == tuple(sorted([session_id, other]))


async def test_the_runtime_starts_the_watcher_and_close_stops_it(runtime, events, workspace, session_id):
    path = workspace / "main.py"
    path.write_text("one\n")
    runtime.records.record_read(session_id, path)

    await runtime.start_watching()
    await runtime.start_watching()  # a second call changes nothing
    await other_process(WRITE, path, "two, longer\n")
    assert (await next_event(events)).path == "main.py"

    runtime.close()
    await asyncio.wait_for(runtime.watcher._task, WAIT)  # the watch thread let go of the tree
    assert not runtime.watcher.running


async def test_a_workspace_inside_an_ignored_folder_is_still_watched(runtime, events, tmp_path):
    from app.workspace import FileRecords, Workspace

    inside = Workspace(tmp_path / "node_modules" / "pkg")  # a dependency opened as the workspace
    (inside.root / "node_modules").mkdir(parents=True)
    records = FileRecords(inside)
    hidden, visible = inside.root / "node_modules" / "dep.js", inside.root / "index.js"
    for path in (hidden, visible):
        path.write_text("one\n")
        records.record_read("s1", path)
    watcher = WorkspaceWatcher(inside, records, runtime.bus, debounce_ms=400, step_ms=30)
    await watcher.start()
    try:
        await other_process(WRITE, hidden, "two, longer\n")
        await other_process(WRITE, visible, "two, longer\n")
        assert await next_event(events) == FileChangedOnDisk("index.js", "modified", ("s1",))
    finally:
        await asyncio.wait_for(watcher.aclose(), WAIT)


async def test_a_watcher_that_cannot_watch_reports_why_and_does_not_raise(runtime, tmp_path):
    from app.workspace import FileRecords, Workspace

    missing = Workspace(tmp_path / "removed")
    watcher = WorkspaceWatcher(missing, FileRecords(missing), runtime.bus, step_ms=30)
    await watcher.start()
    await asyncio.wait_for(watcher.aclose(), WAIT)
    assert watcher.failure is not None and "file watching stopped" in watcher.failure
    assert not os.path.exists(tmp_path / "removed")


async def test_a_file_a_thousand_folders_deep_is_watched(deep_tree, watcher, events, ctx, session_id):
    rel = "t/" + "d/" * DEEP_TREE_LEVELS + "f.txt"
    await ViewTool().call({"filePath": rel}, ctx)

    await other_process(WRITE, deep_tree.parent / rel, "changed elsewhere\n")

    assert await next_event(events) == FileChangedOnDisk(rel, "modified", (session_id,))


STARTS_IN_A_FRESH_PROCESS = """
import asyncio, sys, threading
from pathlib import Path
from app.bus import Bus
from app.workspace.file_records import FileRecords
from app.workspace.paths import Workspace
from app.workspace.watch import WorkspaceWatcher

imported_on_the_loop = []

def note_imports(event, args):
    if event != "import" or args[0] in sys.modules:  # an import of a module loaded already
        return
    if threading.current_thread() is threading.main_thread():
        imported_on_the_loop.append(args[0])

async def main():
    workspace = Workspace(Path(sys.argv[1]))
    watcher = WorkspaceWatcher(workspace, FileRecords(workspace), Bus(), step_ms=30)
    sys.addaudithook(note_imports)
    await watcher.start()
    await watcher.aclose()
    print(" ".join(imported_on_the_loop) or "none")

asyncio.run(main())
"""


async def test_starting_the_watch_imports_nothing_on_the_event_loop(tmp_path):
    """Importing holds the interpreter: the modules a first watch needs (watchfiles, and
    anyio's support for asyncio, which awatch's first step would load) are imported in
    threads, so the UI's event loop does not wait on them. A process of its own: this
    one has them imported already."""
    (tmp_path / "src").mkdir()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", STARTS_IN_A_FRESH_PROCESS, str(tmp_path), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    assert out.decode().split() == ["none"]
