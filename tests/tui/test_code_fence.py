"""Code blocks of stored replies: drawn plain at once, then coloured as Textual's own
fence colours them (after a theme change too); and which words of a reply become links."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.strip import Strip
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownFence

from app.tui.widgets.code_fence import CodeFence, plain
from app.tui.widgets.message_text import StreamedText, reply_parser
from tests.tui.conftest import wait_until

# Languages no other test colours (the lexers built in a process are shared by its tests).
OCAML = "let rec fact n =\n  if n <= 1 then 1\n  else n * fact (n - 1)"
RUST = 'fn main() {\n    let answer: u32 = 42;\n    println!("{answer}");\n}'
UNNAMED = "import os\n\n\ndef main() -> None:\n    print(os.getcwd())\n"


class SideBySide(App):
    """A stored reply beside the same text in Textual's own Markdown widget."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield StreamedText(self.text)
            yield Markdown(self.text)


def styled(content: Content) -> tuple[str, list]:
    return content.plain, list(content.spans)


def lines(fence: MarkdownFence) -> list[Strip]:
    """What the block draws, line by line."""
    label = fence.query_one("#code-content", Label)
    return [label.render_line(y) for y in range(label.size.height)]


def same_picture(app: SideBySide) -> bool:
    stored = app.query_one(CodeFence)
    textual = next(widget for widget in app.query(Markdown) if type(widget) is Markdown).query_one(MarkdownFence)
    return stored.coloured and bool(lines(stored)) and lines(stored) == lines(textual)


async def test_a_stored_code_block_is_plain_until_its_lexer_is_built_then_drawn_as_textual_draws_it():
    assert styled(CodeFence.highlight(OCAML, "ocaml")) == styled(plain(OCAML))  # before the lexer exists
    app = SideBySide(f"Factorial:\n\n```ocaml\n{OCAML}\n```\n")
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: same_picture(app))
        fence = app.query_one(CodeFence)
        assert styled(fence.query_one("#code-content", Label).content) != styled(plain(OCAML))
    # Built once, the lexer colours the next block in the language as it is made.
    assert styled(CodeFence.highlight(OCAML, "ocaml")) == styled(MarkdownFence.highlight(OCAML, "ocaml"))


async def test_a_theme_change_draws_a_block_in_the_new_theme():
    app = SideBySide(f"```rust\n{RUST}\n```\n")
    async with app.run_test(size=(100, 20)) as pilot:
        app.theme = "textual-dark"
        await wait_until(pilot, lambda: same_picture(app))
        dark = lines(app.query_one(CodeFence))
        app.theme = "textual-light"
        await wait_until(pilot, lambda: lines(app.query_one(CodeFence)) != dark and same_picture(app))


async def test_a_block_that_names_no_language_is_coloured_in_the_language_guessed():
    app = SideBySide(f"```\n{UNNAMED}```\n")
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: same_picture(app))
        assert app.query_one(CodeFence).lexer == "python"


async def test_a_streamed_block_is_coloured_as_it_is_made():
    app = SideBySide("")
    async with app.run_test(size=(100, 20)) as pilot:
        text = app.query_one(StreamedText)
        await text.write("```python\nprint('streamed')\n```\n")
        await wait_until(pilot, lambda: text.query(MarkdownFence))
        assert not text.query(CodeFence)


def test_file_names_stay_words_and_addresses_with_a_scheme_become_links():
    tokens = reply_parser().parse("Read setup.py, README.md and notes.sh, then https://example.com/docs.")
    links = [child.attrs["href"] for token in tokens for child in token.children or [] if child.type == "link_open"]
    assert links == ["https://example.com/docs"]
