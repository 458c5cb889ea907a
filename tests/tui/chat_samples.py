"""Tool calls as the agent loop stores and publishes them, one per built-in tool, with
real diffs and metadata in the shapes the tools produce (docs/tools.md). Shared by the
chat behaviour tests and the snapshots."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.core.diff import diff_stats, unified_diff
from app.runtime import Runtime

OLD_APP = "def main():\n    print('hello')\n\n\nif __name__ == '__main__':\n    main()\n"
NEW_APP = "def main(name: str) -> None:\n    print(f'hello {name}')\n\n\nif __name__ == '__main__':\n    main('world')\n"
NOTES = "# Notes\n\n- ship the TUI\n- write the docs\n"


@dataclass(frozen=True)
class Sample:
    tool: str
    arguments: dict[str, Any]
    output: str
    metadata: dict[str, Any] = field(default_factory=dict)
    error: bool = False


def _change(path: str, old: str, new: str) -> dict[str, Any]:
    additions, deletions = diff_stats(old, new)
    return {"path": path, "diff": unified_diff(old, new, path), "additions": additions, "deletions": deletions}


def _patch() -> Sample:
    parts = [("src/app.py", OLD_APP, NEW_APP), ("NOTES.md", "", NOTES), ("old.txt", "obsolete\n", "")]
    diff = "".join(unified_diff(old, new, path) for path, old, new in parts)
    files = [
        {"path": "src/app.py", "additions": 3, "deletions": 3, "deleted": False, "created": False, "moved_from": None},
        {"path": "NOTES.md", "additions": 4, "deletions": 0, "deleted": False, "created": True, "moved_from": None},
        {"path": "old.txt", "additions": 0, "deletions": 1, "deleted": True, "created": False, "moved_from": None},
    ]
    patch = "*** Begin Patch\n*** Update File: src/app.py\n*** Add File: NOTES.md\n*** Delete File: old.txt\n*** End Patch"
    return Sample("patch", {"patch": patch}, json.dumps({"ok": True, "summary": "A 1, M 1, D 1"}),
                  {"diff": diff, "additions": 7, "deletions": 4, "dry_run": False, "files": files})


def _directory_delete() -> Sample:
    files = [{"path": f"build/out/chunk_{n:02}.js", "lines": 10 + n} for n in range(15)]
    removed = sum(f["lines"] for f in files)
    listing = "\n".join(f"- {f['path']} ({f['lines']} lines)" for f in files)
    return Sample(
        "delete", {"path": "build"}, f"15 files deleted, {removed} lines removed (build/):\n{listing}",
        {"path": "build", "kind": "directory", "files": files, "links": [], "deleted_count": 15,
         "removed_lines": removed, "diff": ""},
    )


def _bash() -> Sample:
    lines = "\n".join(f"tests/test_{n:02}.py::test_case PASSED" for n in range(40))
    return Sample("bash", {"command": "pytest -q", "description": "Run the tests"},
                  f"{lines}\n\nExit code 0", {"command": "pytest -q", "exit_code": 0, "timed_out": False})


SAMPLES: dict[str, Sample] = {
    "view": Sample("view", {"filePath": "src/app.py"}, "\n".join(f"{n:>5}\t{line}" for n, line in
                   enumerate(OLD_APP.splitlines(), 1))),
    "grep": Sample("grep", {"pattern": "def main", "include": "*.py"}, "src/app.py:\n  1: def main():"),
    "write": Sample("write", {"filePath": "NOTES.md", "content": NOTES}, "Wrote NOTES.md",
                    {**_change("NOTES.md", "", NOTES), "created": True}),
    "edit": Sample("edit", {"filePath": "src/app.py", "oldString": "def main():", "newString": "def main(name):"},
                   "Edited src/app.py", {**_change("src/app.py", OLD_APP, NEW_APP), "strategy": "simple"}),
    "multiedit": Sample("multiedit", {"filePath": "src/app.py", "edits": []}, "Applied 2 edits to src/app.py",
                        {**_change("src/app.py", OLD_APP, NEW_APP), "strategies": ["simple", "simple"]}),
    "patch": _patch(),
    "delete_file": Sample(
        "delete", {"path": "src/app.py"}, "1 file deleted, 6 lines removed (src/app.py).",
        {"path": "src/app.py", "kind": "file", "files": [{"path": "src/app.py", "lines": 6}], "links": [],
         "deleted_count": 1, "removed_lines": 6, "diff": unified_diff(OLD_APP, "", "src/app.py")},
    ),
    "delete_directory": _directory_delete(),
    "bash": _bash(),
    "error": Sample("edit", {"filePath": "src/app.py", "oldString": "def mian():", "newString": "x"},
                    "oldString was not found in src/app.py: view the file and copy the exact text", error=True),
}


def store_tool_conversation(runtime: Runtime, sample: Sample, *, title: str = "Tool rendering") -> str:
    """A session holding one prompt, one tool call with its result, and a closing answer."""
    session = runtime.store.sessions.create(title=title)
    messages = runtime.store.messages
    messages.add(session.id, "user", [{"type": "text", "text": f"Please use {sample.tool}."}])
    call = {"type": "tool_call", "id": "call-1", "name": sample.tool, "arguments": json.dumps(sample.arguments)}
    messages.add(session.id, "assistant", [{"type": "text", "text": "On it."}, call])
    result = {"type": "tool_result", "call_id": "call-1", "name": sample.tool, "output": sample.output,
              "metadata": sample.metadata, "error": sample.error}
    messages.add(session.id, "tool", [result])
    messages.add(session.id, "assistant", [{"type": "text", "text": "Done."}])
    return session.id
