"""Syntax colours for diff lines, by the file's language (Pygments), in the theme's colours.

Each side of a file (old: context + removed lines; new: context + added lines) is lexed as
one block, so a construct spanning lines (a docstring, a block comment) is coloured as a
whole within a hunk. Colours are not chosen here: ``style_for(role)`` maps one of
``SYNTAX_ROLES`` to a Rich style, which the widget reads from the theme.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import Token, _TokenType
from pygments.util import ClassNotFound
from rich.style import Style
from rich.text import Text

from app.tui.widgets.diff_view_model import DiffLine

SYNTAX_ROLES = (
    "comment", "keyword", "function", "variable", "string", "number", "type", "operator", "punctuation",
)

# Most specific first: the first token type containing the token decides its role.
_TOKEN_ROLES: tuple[tuple[_TokenType, str], ...] = (
    (Token.Comment, "comment"),
    (Token.Literal.String, "string"),
    (Token.Literal.Number, "number"),
    (Token.Keyword.Type, "type"),
    (Token.Keyword, "keyword"),
    (Token.Operator.Word, "keyword"),
    (Token.Operator, "operator"),
    (Token.Name.Function, "function"),
    (Token.Name.Decorator, "function"),
    (Token.Name.Class, "type"),
    (Token.Name.Builtin.Pseudo, "variable"),
    (Token.Name.Builtin, "type"),
    (Token.Name.Variable, "variable"),
    (Token.Name.Tag, "keyword"),
    (Token.Name.Attribute, "function"),
    (Token.Punctuation, "punctuation"),
)

StyleFor = Callable[[str], Style]


@lru_cache(maxsize=64)
def _role(token: _TokenType) -> str | None:
    return next((role for parent, role in _TOKEN_ROLES if token in parent), None)


@lru_cache(maxsize=64)
def lexer_for(path: str) -> Lexer:
    """The Pygments lexer for the file name; plain text when unknown."""
    try:
        return get_lexer_for_filename(path or "file.txt", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def warm_up(paths: tuple[str, ...] = ("x.py", "x.ts", "x.js", "x.go", "x.rs", "x.json", "x.md")) -> None:
    """Load Pygments' lexer table and the common lexers (slow the first time).
    Blocking: the app calls it in a thread worker after its first frame, so the first
    diff shown in the chat does not pay for it on the UI thread."""
    for path in paths:
        lexer_for(path)


def highlight_lines(texts: list[str], path: str, style_for: StyleFor) -> list[Text]:
    """One styled Text per input line, lexed together as one block."""
    lexer = lexer_for(path)
    lines: list[Text] = [Text()]
    for token, value in lexer.get_tokens("\n".join(texts)):
        role = _role(token)
        style = style_for(role) if role else ""
        first, *rest = value.split("\n")
        lines[-1].append(first, style)
        for piece in rest:
            lines.append(Text(piece, style))
    lines.extend(Text() for _ in range(len(texts) - len(lines)))
    return lines[: len(texts)]


def highlight_diff(lines: list[DiffLine], path: str, style_for: StyleFor) -> dict[int, Text]:
    """Styled text for every code line of one file, by its index in ``lines``; a context
    line takes its new-side colouring."""
    old = [i for i, line in enumerate(lines) if line.kind in ("context", "removed")]
    new = [i for i, line in enumerate(lines) if line.kind in ("context", "added")]
    styled: dict[int, Text] = {}
    for side in (old, new):
        texts = highlight_lines([lines[i].text for i in side], path, style_for)
        styled.update(zip(side, texts, strict=True))
    return styled
