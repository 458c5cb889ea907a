"""Front matter of agent and command files: a mapping then the body; every fault one line
naming the file."""

from pathlib import Path

import pytest

from app.core import frontmatter
from app.core.frontmatter import FrontMatterError


def test_front_matter_and_body_are_separated():
    doc = frontmatter.split("---\ndescription: Reviews code\ntools: [view, grep]\n---\nYou review.\n", "r.md")
    assert doc.meta == {"description": "Reviews code", "tools": ["view", "grep"]}
    assert doc.body == "You review."


def test_a_file_without_front_matter_is_all_body():
    assert frontmatter.split("Say hello to $ARGUMENTS\n", "hello.md") == frontmatter.Document({}, "Say hello to $ARGUMENTS")


def test_an_empty_header_gives_no_keys():
    assert frontmatter.split("---\n---\nbody", "x.md").meta == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ndescription: x\nbody", "never closed"),
        ("---\ndescription: [unclosed\n---\nbody", "front matter at line"),
        ("---\n- a\n- b\n---\nbody", "must be 'key: value' lines"),
        ("---\njust words\n---\nbody", "must be 'key: value' lines"),
    ],
)
def test_bad_front_matter_is_one_line_naming_the_file(text, expected):
    with pytest.raises(FrontMatterError) as caught:
        frontmatter.split(text, ".opencode/agents/bad.md")
    message = str(caught.value)
    assert message.startswith(".opencode/agents/bad.md: ") and expected in message and "\n" not in message


def test_yaml_tags_that_build_objects_are_refused(tmp_path: Path):
    path = tmp_path / "evil.md"
    path.write_text("---\nx: !!python/object/apply:os.system ['true']\n---\nbody")
    with pytest.raises(FrontMatterError, match="evil.md: front matter"):
        frontmatter.read(path)


def test_unreadable_oversized_and_binary_files_are_refused(tmp_path: Path):
    big = tmp_path / "big.md"
    big.write_text("x" * (frontmatter.MAX_BYTES + 1))
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00")
    for path, expected in [(big, "larger than"), (binary, "not UTF-8"), (tmp_path / "missing.md", "cannot read")]:
        with pytest.raises(FrontMatterError, match=expected):
            frontmatter.read(path)
