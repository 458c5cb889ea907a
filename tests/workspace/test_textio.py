"""Text I/O on real files: byte-exact round trips, binary detection, atomic writes."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import BinaryFileError
from app.workspace import TextFile, is_binary, read_text_file
from app.workspace.beneath import Beneath

BOM = codecs.BOM_UTF8


def _file(tmp_path: Path, data: bytes, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"one\ntwo\n",
        b"one\r\ntwo\r\n",
        b"no final newline",
        b"one\r\ntwo",
        BOM + b"bom\r\nand crlf\r\n",
        BOM,
        BOM + b"bom, no newline",
        "h\u00e9llo w\u00f6rld \U0001f600\n".encode(),
        b"\n\n\n",
    ],
)
def test_round_trip_is_byte_for_byte(tmp_path: Path, data: bytes) -> None:
    text_file = read_text_file(_file(tmp_path, data))
    assert text_file.render(text_file.text) == data
    assert text_file.raw == data


def test_fields_describe_the_file(tmp_path: Path) -> None:
    text_file = read_text_file(_file(tmp_path, BOM + b"a\r\nb\r\nc"))
    assert text_file.text == "a\nb\nc"
    assert text_file.bom
    assert text_file.newline == "\r\n"
    assert not text_file.final_newline


def test_file_without_line_break_uses_lf(tmp_path: Path) -> None:
    text_file = read_text_file(_file(tmp_path, b"single"))
    assert (text_file.newline, text_file.final_newline, text_file.bom) == ("\n", False, False)


def test_mixed_endings_render_with_the_majority(tmp_path: Path) -> None:
    crlf_majority = read_text_file(_file(tmp_path, b"a\r\nb\r\nc\n", "crlf.txt"))
    assert crlf_majority.newline == "\r\n"
    assert crlf_majority.render(crlf_majority.text) == b"a\r\nb\r\nc\r\n"
    lf_majority = read_text_file(_file(tmp_path, b"a\nb\nc\r\n", "lf.txt"))
    assert lf_majority.newline == "\n"
    assert lf_majority.render(lf_majority.text) == b"a\nb\nc\n"
    tie = read_text_file(_file(tmp_path, b"a\r\nb\n", "tie.txt"))
    assert tie.newline == "\n"


def test_render_applies_the_files_conventions_to_new_text(tmp_path: Path) -> None:
    text_file = read_text_file(_file(tmp_path, BOM + b"old\r\n"))
    assert text_file.render("new\nlines\r\nhere\n") == BOM + b"new\r\nlines\r\nhere\r\n"
    assert text_file.render("no newline") == BOM + b"no newline"


def test_new_file_is_lf_without_bom() -> None:
    text_file = TextFile.new("a\r\nb\n")
    assert (text_file.text, text_file.bom, text_file.newline, text_file.mode) == ("a\nb\n", False, "\n", None)
    assert text_file.render(text_file.text) == b"a\nb\n"


def test_mode_is_read(tmp_path: Path) -> None:
    path = _file(tmp_path, b"#!/bin/sh\n", "run.sh")
    path.chmod(0o751)
    assert read_text_file(path).mode == 0o751


# --- binary detection ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        (b"", False),
        (b"plain text\n", False),
        ("\u00e9\u00e8 unicode\n".encode(), False),
        (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", True),
        (b"text then \0 a NUL", True),
        ("caf\u00e9\n".encode("latin-1"), True),
        ("utf-16 text".encode("utf-16"), True),
        (b"a" * 8191 + "\u00e9".encode(), False),  # a character cut at the 8 KiB edge
        (b"a" * 9000 + b"\0", False),  # only the first 8 KiB are sniffed
    ],
)
def test_is_binary(data: bytes, binary: bool) -> None:
    assert is_binary(data) is binary


def test_binary_file_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(BinaryFileError) as caught:
        read_text_file(_file(tmp_path, b"\0\1\2\3", "image.png"))
    assert str(caught.value).startswith("image.png is a binary file")


def test_invalid_utf8_past_the_sniffed_part_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BinaryFileError, match="late.txt is a binary file"):
        read_text_file(_file(tmp_path, b"a" * 10_000 + b"\xff\xfe", "late.txt"))


# --- atomic writes -----------------------------------------------------------------------------


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def write_atomic(base: Path, path: Path, data: bytes, mode: int | None = None) -> None:
    """The change path's atomic write of one file below ``base``: staged, then renamed over."""
    with Beneath(base) as fs:
        rel = fs.relative(path)
        fs.replace(fs.stage(rel, data, mode, sync=True), rel)


def _leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(".opencode-tmp-")]


def test_write_creates_parents_with_default_mode(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "new" / "deep" / "file.txt"
    write_atomic(tmp_path, path, b"content\n")
    assert path.read_bytes() == b"content\n"
    assert _mode(path) == 0o644
    assert _leftovers(path.parent) == []


def test_default_mode_respects_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        write_atomic(tmp_path, tmp_path / "private.txt", b"x")
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "private.txt") == 0o600


def test_existing_mode_is_kept_and_content_replaced(tmp_path: Path) -> None:
    path = _file(tmp_path, b"old\n", "script.sh")
    path.chmod(0o755)
    write_atomic(tmp_path, path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert _mode(path) == 0o755


def test_explicit_mode_wins(tmp_path: Path) -> None:
    path = _file(tmp_path, b"old\n")
    write_atomic(tmp_path, path, b"new\n", mode=0o600)
    assert _mode(path) == 0o600


def test_read_only_file_is_replaced_and_stays_read_only(tmp_path: Path) -> None:
    path = _file(tmp_path, b"old\n")
    path.chmod(0o444)
    write_atomic(tmp_path, path, b"new\n")
    assert (path.read_bytes(), _mode(path)) == (b"new\n", 0o444)


@pytest.mark.parametrize("failing_call", ["fchmod", "fsync"])
def test_a_failed_staging_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_call: str
) -> None:
    """A temp file that cannot be filled (a full disk) is removed at once; a failure after
    staging is the change path's to undo (its journal's entries are restored and our temp
    files in their folders removed: tests/workspace/test_crash_recovery.py)."""
    path = _file(tmp_path, b"precious\n")
    before = os.stat(path)

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing_call, fail)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(tmp_path, path, b"half-written garbage")
    monkeypatch.undo()
    assert path.read_bytes() == b"precious\n"
    assert os.stat(path).st_ino == before.st_ino
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["n" * 255, "é" * 125 + ".txt"])
def test_a_name_at_the_length_limit_can_be_replaced(tmp_path: Path, name: str) -> None:
    path = _file(tmp_path, b"old\n", name)
    write_atomic(tmp_path, path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert _leftovers(tmp_path) == []


def test_round_trip_through_write_atomic(tmp_path: Path) -> None:
    original = BOM + b"line one\r\nline two"
    path = _file(tmp_path, original)
    text_file = read_text_file(path)
    write_atomic(tmp_path, path, text_file.render(text_file.text.replace("two", "2")))
    assert path.read_bytes() == BOM + b"line one\r\nline 2"
