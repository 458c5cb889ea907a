"""The compiled-code cache, in real processes: it fills on the first start, serves the
next one without compiling, makes the very methods and forward references a plain start
makes, and never fails a command over a damaged or unwritable cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Defines dataclasses and forward references of the kinds the cache sees, and prints
# what they do.
PROBE = '''
import dataclasses, json, sys, typing
from app import codecache
if sys.argv[1] == "cached":
    codecache.install("probe")

@dataclasses.dataclass(frozen=True, order=True)
class Point:
    x: int
    y: "int" = 0
    tags: tuple[str, ...] = ()

@dataclasses.dataclass
class Box:
    items: list[int] = dataclasses.field(default_factory=list)
    label: str = dataclasses.field(default="box", repr=False)

a, b = Point(1, 2, ("t",)), Point(1, 3)
try:
    a.x = 5
    frozen = "assigned"
except dataclasses.FrozenInstanceError as err:
    frozen = type(err).__name__
box = Box(); box.items.append(1)
hints = typing.get_type_hints(Point)
try:
    typing.ForwardRef("not valid ::")
    bad_reference = "accepted"
except SyntaxError as err:
    bad_reference = str(err)
print(json.dumps({
    "reprs": [repr(a), repr(b), repr(box)],
    "eq": [a == Point(1, 2, ("t",)), a == b, Box() == Box()],
    "order": a < b,
    "hash": hash(a) == hash(Point(1, 2, ("t",))),
    "frozen": frozen,
    "annotations": {k: str(v) for k, v in Point.__init__.__annotations__.items()},
    "defaults": [Box().items is not Box().items, Box().label],
    "hints": {k: str(v) for k, v in hints.items()},
    "starred": str(typing.ForwardRef("*tuple[int, str]")._evaluate(globals(), None, recursive_guard=frozenset())),
    "bad_reference": bad_reference,
}))
codecache.save()
'''


def run_probe(mode: str, cache_home: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=REPO, capture_output=True, text=True, timeout=60,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cache_files(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "opencode").glob("compiled-*.marshal"))


def opencode(cache_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home)},
    )


def test_methods_from_the_cache_behave_as_freshly_compiled_ones(tmp_path: Path) -> None:
    plain = run_probe("plain", tmp_path)
    assert cache_files(tmp_path) == []  # without install, nothing is cached
    cold = run_probe("cached", tmp_path)
    assert len(cache_files(tmp_path)) == 1
    warm = run_probe("cached", tmp_path)
    assert plain == cold == warm
    assert plain["frozen"] == "FrozenInstanceError"
    assert plain["annotations"]["y"] == "int"  # compiled without this project's __future__ flags
    assert plain["hints"] == {"x": "<class 'int'>", "y": "<class 'int'>", "tags": "tuple[str, ...]"}
    assert plain["bad_reference"] == "Forward reference must be an expression -- got 'not valid ::'"


def test_a_second_start_compiles_nothing_and_leaves_the_file_alone(tmp_path: Path) -> None:
    assert opencode(tmp_path, "schema").returncode == 0
    [cache] = cache_files(tmp_path)
    first = cache.stat()
    assert first.st_size > 10_000  # hundreds of methods, ours and pydantic's
    assert opencode(tmp_path, "schema").returncode == 0
    again = cache.stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)


def test_a_damaged_cache_is_ignored_and_rewritten(tmp_path: Path) -> None:
    assert opencode(tmp_path, "schema").returncode == 0
    [cache] = cache_files(tmp_path)
    cache.write_bytes(b"\x00not marshal data")
    done = opencode(tmp_path, "schema")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["type"] == "object"
    assert cache.stat().st_size > 10_000


def test_an_unwritable_cache_folder_does_not_fail_the_command(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    done = opencode(blocked, "schema")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["type"] == "object"
    assert list(tmp_path.iterdir()) == [blocked]


def test_a_cache_others_could_have_written_is_not_used(tmp_path: Path) -> None:
    """Code from the cache runs: a file group or others may write is ignored, and the
    start compiles (and writes a safe file) instead."""
    assert opencode(tmp_path, "schema").returncode == 0
    [cache] = cache_files(tmp_path)
    cache.chmod(0o666)
    first = cache.stat()
    assert opencode(tmp_path, "schema").returncode == 0
    again = cache.stat()
    assert again.st_ino != first.st_ino  # rewritten: nothing was taken from it
    assert again.st_mode & 0o022 == 0
