"""The code blocks the copy list offers, as Markdown reads fences."""

from __future__ import annotations

from app.tui.copying import CodeBlock, code_blocks


def test_fenced_blocks_are_found_with_their_language_and_without_their_fences() -> None:
    text = (
        "Intro\n\n```python\nprint(1)\n```\n\nthen\n\n~~~~\nraw ``` inside\n~~~~\n\n"
        "````md\n```js\nnested\n```\n````\n\n```sh\nleft open\n"
    )
    assert code_blocks(text) == [
        CodeBlock("python", "print(1)"),
        CodeBlock("", "raw ``` inside"),
        CodeBlock("md", "```js\nnested\n```"),
        CodeBlock("sh", "left open"),
    ]
    assert code_blocks("no code here") == []
