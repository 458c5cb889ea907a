"""parse_patch and plan_patch: each grammar element, each refusal, and byte preservation."""

from __future__ import annotations

import pytest

from app.tools.text.patch import (
    AddFile,
    DeleteFile,
    FileOp,
    HunkLine,
    PatchError,
    PatchPlan,
    UpdateFile,
    parse_patch,
    plan_patch,
)


def wrap(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def plan(body: str, files: dict[str, bytes], **flags: bool) -> PatchPlan:
    return plan_patch(parse_patch(wrap(body)), files.get, **flags)


def updated(content: bytes, hunks: str) -> bytes | None:
    (op,) = plan(f"*** Update File: f.txt\n{hunks}", {"f.txt": content}).ops
    return op.new_bytes


def refusal(body: str, files: dict[str, bytes] | None = None, **flags: bool) -> str:
    """The message of the PatchError the patch must raise; it is always one line."""
    with pytest.raises(PatchError) as caught:
        plan(body, files or {}, **flags)
    message = str(caught.value)
    assert "\n" not in message
    return message


def parse_refusal(text: str) -> str:
    with pytest.raises(PatchError) as caught:
        parse_patch(text)
    assert "\n" not in str(caught.value)
    return str(caught.value)


# --- grammar -------------------------------------------------------------------------


def test_parses_every_section_kind() -> None:
    patch = parse_patch(
        wrap(
            "*** Add File: docs/new.txt\n+first\n+\n+last\n"
            "*** Delete File: old.txt\n"
            "*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def greet():\n-    print('Hi')\n+    print('Hello')\n"
        )
    )
    add, delete, update = patch.sections
    assert add == AddFile("docs/new.txt", ("first", "", "last"))
    assert delete == DeleteFile("old.txt")
    assert isinstance(update, UpdateFile)
    assert (update.path, update.move_to) == ("src/a.py", "src/b.py")
    (hunk,) = update.hunks
    assert hunk.header == "def greet():"
    assert hunk.lines == (HunkLine("-", "    print('Hi')"), HunkLine("+", "    print('Hello')"))
    assert not hunk.end_of_file


def test_hunk_lines_end_of_file_marker_and_numbering() -> None:
    (update,) = parse_patch(wrap("*** Update File: f\n@@\n a\n-b\n@@ x\n c\n+d\n*** End of File\n")).sections
    assert isinstance(update, UpdateFile)
    first, second = update.hunks
    assert (first.number, first.header, first.end_of_file) == (1, None, False)
    assert first.old_lines == ["a", "b"]
    assert (second.number, second.header, second.end_of_file) == (2, "x", True)
    assert second.old_lines == ["c"]


def test_first_hunk_may_omit_the_at_at_line() -> None:
    assert updated(b"a\nb\n", "-a\n+A\n b\n") == b"A\nb\n"


def test_first_hunk_without_at_at_must_still_be_prefixed() -> None:
    message = parse_refusal(wrap("*** Update File: f\n@@\n-a\n+b\n*** Update File: g\nstray\n"))
    assert 'Update File g, hunk 1 (line 7): unexpected line "stray"' in message


def test_unprefixed_line_after_a_hunk_is_refused_with_its_line() -> None:
    message = parse_refusal(wrap("*** Update File: f\n@@\n-a\nforgot the prefix\n"))
    assert message.startswith('Update File f, hunk 2 (line 5): unexpected line "forgot the prefix"')


def test_empty_line_inside_a_hunk_is_empty_context() -> None:
    assert updated(b"a\n\nb\n", "@@\n a\n\n-b\n+B\n") == b"a\n\nB\n"


def test_heredoc_wrappers_are_removed() -> None:
    body = "*** Begin Patch\n*** Delete File: x\n*** End Patch\n"
    for opener in ("<<'EOF'", '<<"EOF"', "<<EOF", "apply_patch <<'PATCH'"):
        closer = opener.split("<<")[1].strip("'\"")
        assert parse_patch(f"{opener}\n{body}{closer}\n").sections == (DeleteFile("x"),)


def test_markers_padded_with_whitespace_and_crlf_patch_text() -> None:
    text = "  *** Begin Patch \r\n\t*** Update File: f \r\n*** Move to:  g \r\n@@\r\n-a\r\n+b\r\n *** End Patch\r\n"
    (update,) = parse_patch(text).sections
    assert update == UpdateFile("f", "g", update.hunks)
    assert update.hunks[0].lines == (HunkLine("-", "a"), HunkLine("+", "b"))


def test_missing_envelope_is_refused() -> None:
    assert "must start with '*** Begin Patch'" in parse_refusal("*** Delete File: x\n*** End Patch\n")
    assert "line 2: the patch must end with '*** End Patch'" in parse_refusal(
        "*** Begin Patch\n*** Delete File: x\n"
    )
    assert "the patch is empty" in parse_refusal(" \n\n")


def test_patch_without_sections_is_refused() -> None:
    assert "no file sections" in parse_refusal(wrap(""))


def test_unknown_header_names_its_line() -> None:
    message = parse_refusal(wrap("*** Delete File: a\n*** Rename File: b\n"))
    assert message.startswith('line 3: unknown header "*** Rename File: b"')


def test_update_without_hunks_is_refused() -> None:
    assert "Update File f (line 2): no hunks" in parse_refusal(
        wrap("*** Update File: f\n*** Delete File: g\n")
    )


def test_a_move_without_hunks_is_a_plain_rename() -> None:
    (op,) = plan("*** Update File: a\n*** Move to: b/c\n", {"a": b"x\r\ny"}).ops
    assert op == FileOp("move", "a", "b/c", b"x\r\ny", b"x\r\ny", existed=False)


def test_empty_hunk_is_refused() -> None:
    message = parse_refusal(wrap("*** Update File: f\n@@\n-a\n+b\n@@\n@@\n-c\n"))
    assert message.startswith("Update File f, hunk 2 (line 6): the hunk is empty")
    # An "@@ <line>" with nothing after it positions nothing.
    message = parse_refusal(wrap("*** Update File: f\n@@\n-a\n@@ def f():\n*** Delete File: g\n"))
    assert message.startswith("Update File f, hunk 2 (line 5): the hunk is empty")


def test_an_unprefixed_line_right_after_at_at_is_named() -> None:
    message = parse_refusal(wrap("*** Update File: f\n@@ def f():\nx = 1\n"))
    assert message.startswith('Update File f, hunk 1 (line 4): unexpected line "x = 1"; hunk lines start with')


def test_lines_after_an_add_or_delete_section_are_explained() -> None:
    message = parse_refusal(wrap("*** Add File: a\n+x\n\n+y\n"))
    assert message.startswith('line 5: "+y" is outside Add File a: a line not starting with \'+\' ends')
    assert "a Delete File section has no lines" in parse_refusal(wrap("*** Delete File: a\n-x\n"))


def test_unified_diff_ranges_are_refused_with_the_fix() -> None:
    message = parse_refusal(wrap("*** Update File: f\n@@ -1,2 +1,2 @@\n-a\n+b\n"))
    assert "unified-diff range" in message and "no line numbers" in message


def test_header_without_path_is_refused() -> None:
    assert "'*** Add File:' needs a path" in parse_refusal(wrap("*** Add File:   \n+x\n"))


def test_lone_surrogate_is_refused() -> None:
    assert parse_refusal(wrap("*** Add File: f\n+\ud800\n")).startswith(
        "line 3: the patch contains a lone UTF-16"
    )


# --- planning: sections and paths ------------------------------------------------------


def test_add_file_content_and_summary() -> None:
    result = plan(
        "*** Add File: docs/notes.txt\n+First note\n+second\n*** Add File: empty.txt\n"
        "*** Update File: README.md\n@@\n-Old heading\n+New heading\n"
        "*** Delete File: tmp/old.txt\n"
        "*** Update File: src/old.swift\n*** Move to: src/new.swift\n@@\n-a\n+b\n",
        {"README.md": b"Old heading\n", "tmp/old.txt": b"bye\n", "src/old.swift": b"a\n"},
        allow_delete=True,
    )
    assert result.ops[0] == FileOp(
        "add", "docs/notes.txt", None, None, b"First note\nsecond\n", existed=False
    )
    assert result.ops[1].new_bytes == b""
    assert result.ops[3] == FileOp("delete", "tmp/old.txt", None, b"bye\n", None, existed=True)
    assert result.ops[4] == FileOp("move", "src/old.swift", "src/new.swift", b"a\n", b"b\n", existed=False)
    # Spec 002's summary counts the sections by kind, always all four.
    assert result.summary() == "A 2, M 1, D 1, R 1"
    assert result.listing() == (
        "A docs/notes.txt, A empty.txt, M README.md, D tmp/old.txt, R src/old.swift -> src/new.swift"
    )


def test_summary_counts_kinds_including_none() -> None:
    assert plan("*** Update File: a\n@@\n-x\n+y\n", {"a": b"x\n"}).summary() == "A 0, M 1, D 0, R 0"
    moved_to_itself = plan("*** Update File: a\n*** Move to: a\n@@\n-x\n+y\n", {"a": b"x\n"})
    assert moved_to_itself.summary() == "A 0, M 1, D 0, R 0"


def test_add_over_existing_file_overwrites_and_says_so() -> None:
    (op,) = plan("*** Add File: a.txt\n+new\n", {"a.txt": b"old\n"}).ops
    assert op == FileOp("add", "a.txt", None, b"old\n", b"new\n", existed=True)


def test_move_onto_existing_file_says_so() -> None:
    (op,) = plan("*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n", {"a": b"x\n", "b": b"old\n"}).ops
    assert (op.kind, op.new_path, op.new_bytes, op.existed) == ("move", "b", b"y\n", True)


def test_move_to_the_same_path_is_a_plain_update_even_with_moves_disabled() -> None:
    (op,) = plan("*** Update File: ./a\n*** Move to: a\n@@\n-x\n+y\n", {"a": b"x\n"}, allow_move=False).ops
    assert op == FileOp("update", "a", None, b"x\n", b"y\n", existed=True)


def test_later_sections_see_earlier_ones() -> None:
    result = plan(
        "*** Add File: a\n+one\n*** Update File: a\n@@\n-one\n+two\n*** Update File: a\n*** Move to: b\n@@\n-two\n+three\n",
        {},
    )
    assert [(op.kind, op.old_bytes, op.new_bytes) for op in result.ops] == [
        ("add", None, b"one\n"),
        ("update", b"one\n", b"two\n"),
        ("move", b"two\n", b"three\n"),
    ]
    assert "Update File a: file not found" in refusal(
        "*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** Update File: a\n@@\n-y\n+z\n", {"a": b"x\n"}
    )


def test_missing_files_are_refused() -> None:
    assert refusal("*** Update File: gone.txt\n@@\n-a\n+b\n") == (
        "Update File gone.txt: file not found; use *** Add File: to create it"
    )
    assert refusal("*** Delete File: gone.txt\n", allow_delete=True).startswith(
        "Delete File gone.txt: file not found"
    )


def test_delete_needs_allow_delete() -> None:
    assert refusal("*** Delete File: x\n", {"x": b"1\n"}) == (
        "Delete File x: deleting files is disabled; set allow_delete: true"
    )


def test_move_needs_allow_move() -> None:
    message = refusal("*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n", {"a": b"x\n"}, allow_move=False)
    assert message.startswith("Update File a: moving files is disabled")


@pytest.mark.parametrize("path", ["/etc/passwd", "C:\\Users\\x", "C:/x", "\\\\server\\share"])
def test_absolute_paths_are_refused(path: str) -> None:
    message = refusal(f"*** Add File: {path}\n+x\n")
    assert (
        message
        == f"Add File {path}: absolute paths are not allowed: {path}; use a path relative to the workspace"
    )


@pytest.mark.parametrize("path", ["../x", "a/../../x", ".."])
def test_paths_escaping_with_dotdot_are_refused(path: str) -> None:
    assert "the path leaves the workspace" in refusal(f"*** Add File: {path}\n+x\n")


def test_a_nul_in_a_path_is_refused() -> None:
    message = refusal("*** Update File: a\n*** Move to: b\0c\n@@\n-x\n+y\n", {"a": b"x\n"})
    assert message == "Update File a: the path contains a NUL character, which no file name can hold"


def test_move_destination_is_checked_too() -> None:
    assert "absolute paths are not allowed: /tmp/b" in refusal(
        "*** Update File: a\n*** Move to: /tmp/b\n@@\n-x\n+y\n", {"a": b"x\n"}
    )


def test_paths_are_normalised() -> None:
    (op,) = plan("*** Add File: ./src//x/../a.py\n+x\n", {}).ops
    assert op.path == "src/a.py"
    assert "names the workspace itself" in refusal("*** Add File: a/..\n+x\n")


def test_policy_is_checked_before_any_file_is_read() -> None:
    reads: list[str] = []

    def read(path: str) -> bytes | None:
        reads.append(path)
        return b"x\n"

    patch = parse_patch(wrap("*** Update File: a\n@@\n-missing\n+y\n*** Delete File: b\n"))
    with pytest.raises(PatchError, match="Delete File b: deleting files is disabled"):
        plan_patch(patch, read)
    assert reads == []


def test_a_failing_last_section_fails_the_whole_patch() -> None:
    message = refusal(
        "*** Add File: a\n+x\n*** Update File: b\n@@\n-x\n+y\n*** Update File: c\n@@\n-nope\n+z\n",
        {"b": b"x\n", "c": b"x\n"},
    )
    assert message.startswith('Update File c, hunk 1: context not found: "nope"')


# --- locating hunks ---------------------------------------------------------------------


def test_context_not_found_names_file_hunk_and_line() -> None:
    message = refusal("*** Update File: src/a.py\n@@\n a\n-b\n@@\n-def foo():\n+x\n", {"src/a.py": b"a\nb\n"})
    assert message == (
        'Update File src/a.py, hunk 2: context not found: "def foo():"; re-read the file and copy the lines exactly'
    )


def test_lines_that_exist_but_not_together_are_reported_as_such() -> None:
    message = refusal("*** Update File: f\n@@\n a\n-c\n", {"f": b"a\nb\nc\n"})
    assert 'the lines from "a" on do not appear together' in message


def test_hunks_out_of_order_are_explained() -> None:
    message = refusal("*** Update File: f\n@@\n-c\n+C\n@@\n-a\n+A\n", {"f": b"a\nb\nc\n"})
    assert "hunk 2: context found only at line 1, before line 4" in message
    assert "order hunks as they appear in the file" in message


def test_ambiguous_hunk_is_refused_not_guessed() -> None:
    content = b"x\nreturn 1\ny\nreturn 1\n"
    message = refusal("*** Update File: f\n@@\n-return 1\n+return 2\n", {"f": content})
    assert message == (
        "Update File f, hunk 1: ambiguous: the hunk matches at lines 2 and 4; add more context or an @@ line"
    )


def test_previous_hunk_disambiguates() -> None:
    content = b"x\nreturn 1\ny\nreturn 1\n"
    assert updated(content, "@@\n y\n-return 1\n+return 2\n") == b"x\nreturn 1\ny\nreturn 2\n"
    assert updated(content, "@@\n-x\n+X\n@@\n y\n@@\n-return 1\n+return 3\n") == b"X\nreturn 1\ny\nreturn 3\n"


def test_header_disambiguates_and_may_be_the_first_context_line() -> None:
    content = b"def a():\n    return 1\ndef b():\n    return 1\n"
    expected = b"def a():\n    return 1\ndef b():\n    return 2\n"
    assert updated(content, "@@ def b():\n-    return 1\n+    return 2\n") == expected
    assert updated(content, "@@ def b():\n def b():\n-    return 1\n+    return 2\n") == expected


def test_header_matched_with_the_same_passes_as_lines() -> None:
    content = b"class A:\n    def f(self):\n        pass\n"
    assert updated(content, "@@ def f(self):\n-        pass\n+        return 1\n") == (
        b"class A:\n    def f(self):\n        return 1\n"
    )


def test_repeated_header_is_refused_when_the_hunk_fits_after_both() -> None:
    content = b"class A:\n  def __init__(self):\n    pass\nclass B:\n  def __init__(self):\n    pass\n"
    message = refusal("*** Update File: f\n@@ def __init__(self):\n-    pass\n+    x = 1\n", {"f": content})
    assert message == (
        'Update File f, hunk 1: ambiguous: @@ line "def __init__(self):" matches at lines 2 and 5; '
        "the hunk fits after both; add more context or a more specific @@ line"
    )


def test_repeated_header_is_fine_when_the_hunk_fits_after_one_only() -> None:
    content = b"def f():\n    a = 1\ndef f():\n    b = 1\n"
    assert (
        updated(content, "@@ def f():\n-    a = 1\n+    a = 2\n")
        == b"def f():\n    a = 2\ndef f():\n    b = 1\n"
    )


def test_header_not_found() -> None:
    message = refusal("*** Update File: f\n@@ def missing():\n-a\n+b\n", {"f": b"a\n"})
    assert message.startswith('Update File f, hunk 1: @@ line not found: "def missing():"')


def test_pure_addition_goes_after_its_header() -> None:
    content = b"import os\n\ndef main():\n    pass\n"
    assert (
        updated(content, "@@ import os\n+import sys\n") == b"import os\nimport sys\n\ndef main():\n    pass\n"
    )


def test_pure_addition_under_a_repeated_header_is_ambiguous() -> None:
    message = refusal("*** Update File: f\n@@ }\n+// new\n", {"f": b"a {\n}\nb {\n}\n"})
    assert 'ambiguous: @@ line "}" matches at lines 2 and 4' in message


def test_pure_addition_under_the_last_line_is_still_checked_for_ambiguity() -> None:
    assert "ambiguous" in refusal("*** Update File: f\n@@ end\n+more\n", {"f": b"end\nend\n"})
    assert updated(b"a\nend\n", "@@ end\n+more\n") == b"a\nend\nmore\n"


def test_blank_context_that_is_nowhere_is_reported() -> None:
    message = refusal("*** Update File: f\n@@\n+x\n\n", {"f": b"a\n"})
    assert message.startswith('Update File f, hunk 1: context not found: the lines from "" on')


def test_nested_at_at_lines_narrow_the_search_step_by_step() -> None:
    # OpenAI's apply_patch instructions: "@@ class A" then "@@ def m():" reaches A's m.
    content = b"class A:\n  def m():\n    x\nclass B:\n  def m():\n    x\n"
    nested = "@@ class B:\n@@   def m():\n-    x\n+    y\n"
    assert updated(content, nested) == b"class A:\n  def m():\n    x\nclass B:\n  def m():\n    y\n"
    assert updated(content, "@@ class A:\n@@   def m():\n+    pass\n") == (
        b"class A:\n  def m():\n    pass\n    x\nclass B:\n  def m():\n    x\n"
    )
    # Alone, the inner line fits twice: refused as before.
    assert "ambiguous" in refusal(f"*** Update File: f\n{nested[12:]}", {"f": content})
    # The outer line must itself be unique.
    assert 'ambiguous: @@ line "class B:" matches at lines 4 and 7' in refusal(
        f"*** Update File: f\n{nested}", {"f": content + b"class B:\n"}
    )


def test_pure_addition_without_header_appends() -> None:
    assert updated(b"a\nb\n", "@@\n+c\n") == b"a\nb\nc\n"


def test_end_of_file_anchors_at_the_end() -> None:
    content = b"end\nmiddle\nend\n"
    assert updated(content, "@@\n-end\n+END\n*** End of File\n") == b"end\nmiddle\nEND\n"


def test_trailing_blank_context_line_is_retried_without() -> None:
    assert updated(b"a\nb\n", "@@\n-b\n+B\n\n") == b"a\nB\n"


def test_matching_passes_in_codex_order() -> None:
    assert updated(b"keep  \nx\n", "@@\n keep\n-x\n+y\n") == b"keep  \ny\n"  # trailing whitespace
    assert updated(b"    keep\nx\n", "@@\n keep\n-x\n+y\n") == b"    keep\ny\n"  # surrounding whitespace
    fancy = "say \u201chi\u201d \u2014 it\u2019s\u00a0ok\n".encode()
    assert updated(fancy + b"x\n", '@@\n say "hi" - it\'s ok\n-x\n+y\n') == fancy + b"y\n"


def test_composed_and_decomposed_accents_match_in_the_loosest_pass() -> None:
    decomposed = "caf\u0065\u0301 = 1\nx\n".encode()  # e + combining acute, as macOS may store it
    assert updated(decomposed, "@@\n caf\u00e9 = 1\n-x\n+y\n") == decomposed.replace(b"x\n", b"y\n")
    assert updated("caf\u00e9\n".encode(), "@@\n-caf\u0065\u0301\n+tea\n") == b"tea\n"


def test_exact_match_wins_over_looser_ones() -> None:
    # Loosely "a" fits twice; exactly, only once: no ambiguity, and the exact one changes.
    assert updated(b"a \na\n", "@@\n-a\n+b\n") == b"a \nb\n"


def test_context_lines_keep_the_files_bytes() -> None:
    content = "\tkeep \u2014 me\t\nx\n".encode()
    assert updated(content, "@@\n keep - me\n-x\n+y\n") == "\tkeep \u2014 me\t\ny\n".encode()


# --- bytes preserved ---------------------------------------------------------------------


def test_bom_is_kept() -> None:
    assert updated(b"\xef\xbb\xbfa\nb\n", "@@\n-a\n+A\n") == b"\xef\xbb\xbfA\nb\n"


def test_crlf_is_kept_and_used_for_new_lines() -> None:
    assert updated(b"a\r\nb\r\n", "@@\n a\n+x\n-b\n+B\n") == b"a\r\nx\r\nB\r\n"


def test_missing_final_newline_is_kept_while_the_last_line_is_untouched() -> None:
    assert updated(b"a\nb\nc", "@@\n-a\n+A\n b\n") == b"A\nb\nc"
    assert updated(b"a\nb", "@@\n a\n+x\n b\n*** End of File\n") == b"a\nx\nb"


def test_missing_final_newline_stays_missing_when_the_last_line_changes() -> None:
    # The final newline's absence is preserved, whatever the patch does at the end.
    assert updated(b"a\nb", "@@\n-b\n+B\n") == b"a\nB"
    assert updated(b"a\nb", "@@\n+c\n") == b"a\nb\nc"
    assert updated(b"a\nb", "@@ b\n+c\n") == b"a\nb\nc"
    assert updated(b"a\r\nb", "@@\n b\n+c\n*** End of File\n") == b"a\r\nb\r\nc"
    assert updated(b"a\nb\nc", "@@\n-c\n") == b"a\nb"
    assert updated(b"x", "@@\n-x\n") == b""


def test_removing_every_line_leaves_an_empty_file() -> None:
    assert updated(b"a\nb\n", "@@\n-a\n-b\n") == b""


def test_bytes_that_are_not_utf8_survive() -> None:
    assert updated(b"caf\xe9\nx\n", "@@\n-x\n+y\n") == b"caf\xe9\ny\n"


# --- changed regions (for the diff) ----------------------------------------------------------


def regions_of(content: bytes, hunks: str) -> tuple[tuple[int, int, int, int], ...] | None:
    (op,) = plan(f"*** Update File: f.txt\n{hunks}", {"f.txt": content}).ops
    return op.regions


def test_each_hunk_gives_the_old_and_new_lines_it_replaced() -> None:
    content = b"".join(b"line %d\n" % n for n in range(20))
    hunks = "@@\n line 2\n-line 3\n+three\n+and more\n line 4\n@@\n line 10\n-line 11\n line 12\n"
    assert regions_of(content, hunks) == ((2, 5, 2, 6), (10, 13, 11, 13))


def test_appending_after_an_unterminated_last_line_covers_that_line() -> None:
    # The old last line gains a newline: it changes too, so a region holds it.
    assert regions_of(b"a\nb", "@@\n+c\n") == ((1, 2, 1, 2), (2, 2, 2, 3))
    assert regions_of(b"a\nb", "@@\n b\n+c\n") == ((1, 2, 1, 3),)


def test_a_line_that_becomes_last_and_loses_its_newline_is_in_a_region() -> None:
    assert regions_of(b"a\nb\nc", "@@\n-c\n") == ((1, 2, 1, 2), (2, 3, 2, 2))


def test_regions_are_unknown_where_diff_lines_are_numbered_otherwise() -> None:
    assert regions_of(b"\xef\xbb\xbfa\nb\n", "@@\n-b\n+B\n") is None  # the BOM joins the first line
    assert regions_of(b"a\rb\n", "@@\n-b\n+B\n") is None  # a lone CR ends a line here, not in a diff
    assert regions_of(b"a\r\nb\r\n", "@@\n-b\n+B\n") == ((1, 2, 1, 2),)


def test_regions_do_not_make_ops_differ() -> None:
    assert plan("*** Update File: f\n@@\n-a\n+b\n", {"f": b"a\n"}).ops[0] == FileOp(
        "update", "f", None, b"a\n", b"b\n", existed=True
    )


# --- cases from Codex's apply-patch suite ------------------------------------------------
# openai/codex, codex-rs/apply-patch: the unit tests of parser.rs, lib.rs, invocation.rs,
# streaming_parser.rs, seek_sequence.rs and the tests/ folder, restated with our own data.
# Same outcome as Codex unless the test names the divergence it holds us to.


@pytest.mark.parametrize(
    ("content", "hunks", "expected"),
    [
        # replace a line under a context line, and two changes in one section
        (b"red\ngreen\n", "@@\n red\n-green\n+blue\n", b"red\nblue\n"),
        (b"w\nx\ny\nz\n", "@@\n w\n-x\n+X\n@@\n y\n-z\n+Z\n", b"w\nX\ny\nZ\n"),
        # three hunks, the last appending at the end of the file
        (b"1\n2\n3\n4\n5\n6\n", "@@\n 1\n-2\n+two\n@@\n 3\n 4\n-5\n+five\n@@\n 6\n+7\n*** End of File\n",
         b"1\ntwo\n3\n4\nfive\n6\n7\n"),
        # a pure addition without @@ line goes to the end, even before a hunk placed earlier
        (b"p\nq\nr\n", "@@\n+tail one\n+tail two\n@@\n p\n-q\n-r\n+qr\n", b"p\nqr\ntail one\ntail two\n"),
        # the blank line a patch often ends with is retried without (first and last line)
        (b"top\nmid\nend\n", "@@\n-top\n+TOP\n mid\n\n", b"TOP\nmid\nend\n"),
        (b"top\nmid\nend\n", "@@\n top\n mid\n-end\n+END\n\n", b"top\nmid\nEND\n"),
        # "@@" then only "+" lines and End of File: appended
        (b"top\nmid\n", "@@\n+added\n*** End of File\n", b"top\nmid\nadded\n"),
        # lines reordered around a repeated one
        (b"x\ny\n", "@@\n-x\n-y\n+y\n+y\n+x\n", b"y\ny\nx\n"),
    ],
    ids=["context", "two-hunks", "three-hunks-eof", "addition-then-removal", "blank-after-first",
         "blank-after-last", "insert-at-eof", "reorder-repeated"],
)
def test_codex_updates(content: bytes, hunks: str, expected: bytes) -> None:
    assert updated(content, hunks) == expected


def test_codex_ascii_patch_matches_typographic_dashes() -> None:
    line = "retry = 3  # back\u2011off \u2013 see docs\n".encode()
    assert updated(line, "@@\n-retry = 3  # back-off - see docs\n+retry = 5\n") == b"retry = 5\n"


@pytest.mark.parametrize(
    ("content", "hunks", "expected"),
    [
        (b"a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n@@\n c\n+d\n*** End of File\n", b"a\r\nB\r\nc\r\nd\r\n"),
        (b"x\r\r\ny\r\n", "@@\n+z\n*** End of File\n", b"x\r\r\ny\r\nz\r\n"),  # a CR inside a line stays
        (b"uno\r\ndos\r\ntres\r\n", "@@\n-uno\n+one\n@@\n dos\n+\n+mid\n tres\n", b"one\r\ndos\r\n\r\nmid\r\ntres\r\n"),
        (b"dup\r\ndup\n", "@@\n-dup\n dup\n", b"dup\n"),  # the kept line keeps its own ending
        (b"1\r\n2\n3\r\n4\n", "@@\n 1\n 2\n-3\n+three\n 4\n", b"1\r\n2\nthree\r\n4\n"),
    ],
    ids=["crlf", "cr-in-content", "crlf-blank-added", "repeated-line-endings", "mixed"],
)
def test_codex_line_endings(content: bytes, hunks: str, expected: bytes) -> None:
    assert updated(content, hunks) == expected


def test_codex_adds_a_final_newline_we_keep_its_absence() -> None:
    """Divergence (the final newline, or its absence, is preserved): Codex ends
    every updated file with a newline; a file that had none still has none here."""
    assert updated(b"alpha\r\nbeta", "@@\n-alpha\n+ALPHA\n") == b"ALPHA\r\nbeta"
    assert updated(b"only line", "@@\n-only line\n+one\n+two\n") == b"one\ntwo"


def test_codex_move_to_itself_keeps_the_file() -> None:
    """Codex's regression test for a self-move that deleted the file (issue 6358)."""
    (op,) = plan("*** Update File: log.md\n*** Move to: ./log.md\n@@\n-old\n+new\n", {"log.md": b"old\n"}).ops
    assert op == FileOp("update", "log.md", None, b"old\n", b"new\n", existed=True)


def test_codex_two_sections_on_one_file() -> None:
    """Apart, both apply in turn; on the same line the second no longer finds it (Codex's
    conflict tests expect an error too)."""
    content = b"l1\nl2\nl3\nl4\n"
    (_, second) = plan("*** Update File: f\n@@\n-l2\n+L2\n*** Update File: f\n@@\n-l4\n+L4\n", {"f": content}).ops
    assert second.new_bytes == b"l1\nL2\nl3\nL4\n"
    conflict = "*** Update File: f\n@@\n-l2\n+A\n*** Update File: f\n@@\n-l2\n+B\n"
    assert refusal(conflict, {"f": content}).startswith('Update File f, hunk 1: context not found: "l2"')


def test_codex_parse_of_a_long_mixed_patch() -> None:
    """The patch Codex's streaming parser is fed character by character, parsed whole."""
    text = wrap(
        "*** Add File: notes/changes.md\n+# Changes\n+\n+- faster start\n"
        "*** Update File: src/settings.rs\n@@ struct Settings\n-    pub verbose: bool,\n+    pub quiet: bool,\n"
        "     pub color: bool,\n@@ fn default_timeout()\n-    30\n+    60\n"
        "*** Delete File: src/legacy.rs\n"
        "*** Update File: cli/main.rs\n*** Move to: cli/bin/tool.rs\n@@ fn main()\n-    run()\n+    run_cli()\n"
        "*** Add File: fixtures/event.json\n+{\n+  \"kind\": \"progress\"\n+}\n"
        "*** Update File: README.md\n@@ Contributing\n Run the tests first.\n+Then run the linter.\n"
        "*** Delete File: notes/old.md\n"
    )
    sections = parse_patch(text).sections
    assert [(type(s).__name__, s.path) for s in sections] == [
        ("AddFile", "notes/changes.md"),
        ("UpdateFile", "src/settings.rs"),
        ("DeleteFile", "src/legacy.rs"),
        ("UpdateFile", "cli/main.rs"),
        ("AddFile", "fixtures/event.json"),
        ("UpdateFile", "README.md"),
        ("DeleteFile", "notes/old.md"),
    ]
    settings, moved, readme = sections[1], sections[3], sections[5]
    assert [h.header for h in settings.hunks] == ["struct Settings", "fn default_timeout()"]
    assert settings.hunks[0].old_lines == ["    pub verbose: bool,", "    pub color: bool,"]
    assert settings.hunks[0].new_lines == ["    pub quiet: bool,", "    pub color: bool,"]
    assert moved.move_to == "cli/bin/tool.rs"
    assert readme.hunks[0].new_lines == ["Run the tests first.", "Then run the linter."]
    assert sections[4].lines == ("{", '  "kind": "progress"', "}")


def test_codex_parse_of_hunk_forms() -> None:
    (update,) = parse_patch(wrap("*** Update File: f\n@@ anchor\n\n keep\n-drop\n+put\n keep2\n")).sections
    (hunk,) = update.hunks
    assert (hunk.header, hunk.old_lines, hunk.new_lines) == (
        "anchor", ["", "keep", "drop", "keep2"], ["", "keep", "put", "keep2"]
    )
    (update,) = parse_patch(wrap("*** Update File: f\n@@\n+only\n*** End of File\n")).sections
    assert (update.hunks[0].old_lines, update.hunks[0].new_lines, update.hunks[0].end_of_file) == ([], ["only"], True)
    update, add = parse_patch(wrap("*** Update File: f\n@@\n+line\n*** Add File: g\n+text\n")).sections
    assert update.hunks[0].new_lines == ["line"] and add == AddFile("g", ("text",))
    (add,) = parse_patch("*** Begin Patch \n*** Add File: f\n+hi\n *** End Patch").sections
    assert add == AddFile("f", ("hi",))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("oops", "line 1: the patch must start with '*** Begin Patch'"),
        ("*** Begin Patch\noops", "line 2: the patch must end with '*** End Patch'"),
        ("*** Begin Patch\n*** End Patch", "the patch has no file sections"),  # Codex: "No files were modified."
        (wrap("*** Update File: f\n"), "Update File f (line 2): no hunks"),
        (wrap("*** Shred File: f\n"), 'line 2: unknown header "*** Shred File: f"'),
        (wrap("*** Update File: f\n@@\n*** End of File\n"), "Update File f, hunk 1 (line 3): the hunk is empty"),
        (wrap("*** Update File: f\n@@\noops\n"), 'Update File f, hunk 1 (line 4): unexpected line "oops"'),
        (wrap("*** Update File: f\noops\n"), 'Update File f, hunk 1 (line 3): unexpected line "oops"'),
        (wrap("*** Add File: f\noops\n"), 'line 3: unknown header "oops"'),
        (wrap("*** Delete File: f\noops\n"), 'line 3: unknown header "oops"'),
        # Codex's failing-write test ends its patch twice: that alone is refused
        (wrap("*** Update File: f\n@@\n-a\n+b\n*** End Patch\n"), 'line 6: unknown header "*** End Patch"'),
    ],
    ids=["no-begin", "no-end", "no-sections", "no-hunks", "unknown-header", "eof-only", "unprefixed",
         "first-unprefixed", "after-add", "after-delete", "end-twice"],
)
def test_codex_parse_refusals(text: str, expected: str) -> None:
    assert parse_refusal(text).startswith(expected)


def test_codex_heredoc_wrappers() -> None:
    body = "*** Begin Patch\n*** Update File: f.py\n import os\n+import re\n*** End Patch"
    for opener in ("<<EOF", "<<'EOF'", '<<"EOF"', "applypatch <<'EOF'"):
        (update,) = parse_patch(f"{opener}\n{body}\nEOF\n").sections
        assert update.hunks[0].new_lines == ["import os", "import re"]
    assert "must start with '*** Begin Patch'" in parse_refusal(f"<<\"EOF'\n{body}\nEOF\n")  # quotes differ
    missing_end = "<<EOF\n*** Begin Patch\n*** Update File: f.py\nEOF\n"
    assert "line 3: the patch must end with '*** End Patch'" in parse_refusal(missing_end)


@pytest.mark.parametrize(
    ("prefix", "workdir"),
    [("", None), ("apply_patch ", None), ("cd sub && apply_patch ", "sub"), ("cd 'a b' && applypatch ", "a b"),
     ('cd "a b"&&apply_patch', "a b")],
)
def test_codex_heredoc_with_cd_names_the_folder_paths_start_in(prefix: str, workdir: str | None) -> None:
    """Codex resolves the patch's paths in the folder of ``cd <dir> && apply_patch <<EOF``;
    dropping the cd would patch a same-named file elsewhere."""
    patch = parse_patch(f"{prefix}<<'PATCH'\n*** Begin Patch\n*** Add File: x\n+hi\n*** End Patch\nPATCH")
    assert patch.workdir == workdir and patch.sections == (AddFile("x", ("hi",)),)


@pytest.mark.parametrize(
    "prefix",
    ["cd sub; apply_patch", "cd sub || apply_patch", "cd sub | apply_patch", "echo hi && apply_patch",
     "apply_patch extra", "cd a && cd b && apply_patch", "cd a b && apply_patch", "cat"],
)
def test_codex_heredoc_wrappers_it_does_not_take_are_refused(prefix: str) -> None:
    """Codex treats these as some other shell command; we cannot run them, and ignoring a
    part of them could put the change in the wrong folder."""
    message = parse_refusal(f"{prefix} <<'PATCH'\n*** Begin Patch\n*** Add File: x\n+hi\n*** End Patch\nPATCH\n")
    assert message.startswith(f"line 1: the heredoc wrapper runs {prefix!r}".replace("'", '"'))


@pytest.mark.parametrize(
    ("hunks", "expected"),
    [
        ("@@\n-two\n-\n+TWO\n+\n", b"one\nTWO\n"),  # the removed and added blank: the final newline
        ("@@\n-two\n-\n", b"one\n"),
        ("@@\n two\n\n+three\n", b"one\ntwo\n\nthree\n"),  # the blank context then stays, as added
        ("@@\n two\n\n\n", b"one\ntwo\n"),
    ],
    ids=["removed-and-added", "removed", "context-before-an-addition", "two-blank-context-lines"],
)
def test_codex_retries_without_a_final_blank_old_line(hunks: str, expected: bytes) -> None:
    """Codex's retry when a hunk does not fit: its last old line, if blank, is taken for the
    file's final newline and dropped, with the last new line when that is blank too."""
    assert updated(b"one\ntwo\n", hunks) == expected


# --- added lines follow the file's indentation -------------------------------------------
# A hunk found by the passes that ignore leading whitespace was written a level off (or
# with spaces for tabs): its added lines move with it, as the edit tool's do.


def test_a_hunk_one_level_too_shallow_has_its_added_lines_re_indented() -> None:
    content = b"class A:\n    def f(self):\n        x = 1\n        return x\n"
    hunk = "@@\n x = 1\n-return x\n+if x:\n+    return x\n+return 0\n"
    (op,) = plan(f"*** Update File: a.py\n{hunk}", {"a.py": content}).ops
    assert op.new_bytes == (
        b"class A:\n    def f(self):\n        x = 1\n        if x:\n            return x\n        return 0\n"
    )
    assert op.notes == ("hunk 1: matched with different indentation: re-indented the replacement by 8 spaces",)


def test_a_hunk_one_level_too_deep_has_its_added_lines_re_indented() -> None:
    content = b"def f():\n    x = 1\n    return x\n"
    assert updated(content, "@@\n         x = 1\n-        return x\n+        return -x\n") == (
        b"def f():\n    x = 1\n    return -x\n"
    )


def test_spaces_in_the_hunk_become_the_file_tabs() -> None:
    content = b"func f() {\n\tif a {\n\t\tb()\n\t}\n}\n"
    hunk = "@@\n     if a {\n         b()\n+        c()\n     }\n"
    (op,) = plan(f"*** Update File: m.go\n{hunk}", {"m.go": content}).ops
    assert op.new_bytes == b"func f() {\n\tif a {\n\t\tb()\n\t\tc()\n\t}\n}\n"
    assert op.notes == (
        "hunk 1: matched with different indentation: re-indented the replacement to the file's tabs",
    )


def test_added_lines_already_at_the_file_level_stay_there() -> None:
    # The context was trimmed, the added line was written for the file as it is.
    assert updated(b"def f():\n    x = 1\n    return x\n", "@@\n x = 1\n-return x\n+    return 2\n") == (
        b"def f():\n    x = 1\n    return 2\n"
    )


def test_an_exact_hunk_keeps_its_lines_as_written() -> None:
    (op,) = plan("*** Update File: a.py\n@@\n x = 1\n+  odd = 2\n", {"a.py": b"x = 1\n"}).ops
    assert (op.new_bytes, op.notes) == (b"x = 1\n  odd = 2\n", ())
