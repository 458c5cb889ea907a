"""A fetched body as the model reads it: HTML turned into markdown (markdownify, over
BeautifulSoup's standard-library parser) or plain text, other text decoded as it is.

What a browser never shows (scripts, styles, templates, embedded frames and SVG) is
dropped before converting, so a page's code does not reach the model as prose."""

from __future__ import annotations

import re
from typing import Literal

Format = Literal["markdown", "text", "html"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-javascript",
     "application/ecmascript", "application/x-yaml", "application/yaml", "application/toml", "application/x-sh"}
)
BLOCK_TAGS = (
    "p", "div", "section", "article", "header", "footer", "nav", "aside", "main", "li", "tr", "br", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dl", "dt", "dd", "figure",
)
"""Elements that end a line in the text format."""
INVISIBLE_TAGS = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "head")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_SPACE_RUNS = re.compile(r"[ \t\r\f\v]+")


def is_html(mime: str) -> bool:
    return mime in HTML_TYPES


def is_text(mime: str, head: bytes) -> bool:
    """Whether a body of this type is text a model can read: text/*, the common text
    formats, +json/+xml types, or no type at all and no NUL byte in its first bytes."""
    if mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return True
    return mime == "" and b"\0" not in head[:4096]


def convert(body: bytes, mime: str, charset: str | None, fmt: Format) -> str:
    """The body in the format asked for. HTML's own encoding declaration is honoured when
    the response names none; other text is decoded as UTF-8 unless the response says."""
    if not is_html(mime) or fmt == "html":
        return _decode(body, charset)
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser", from_encoding=charset)
    for tag in soup.find_all(INVISIBLE_TAGS):
        tag.decompose()
    if fmt == "text":
        for tag in soup.find_all(BLOCK_TAGS):
            tag.append("\n")
        lines = (_SPACE_RUNS.sub(" ", line).strip() for line in soup.get_text().splitlines())
        text = "\n".join(lines)
    else:
        from markdownify import ATX, MarkdownConverter

        text = MarkdownConverter(heading_style=ATX, bullets="-").convert_soup(soup)
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")
