"""What the copy commands offer (ctrl+l, ``/copy``, the palette): the last reply, read from
the store wherever the user has scrolled, and each prompt, reply and fenced code block of
the messages the chat holds, newest first. The app copies the chosen text with Textual's
``copy_to_clipboard``, an OSC 52 sequence that terminals honour over SSH and in tmux."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from app.store.messages import part_texts

if TYPE_CHECKING:
    from app.tui.message_pages import MessagePages
    from app.tui.widgets.chat_log import ChatLog

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
"""A fenced code block's opening (or closing) line: its fence and the info word."""
LAST_REPLY_PAGE = 32
"""Messages read at a time while looking back for the last reply."""


class Copyable(NamedTuple):
    label: str
    """What the copy list shows ("Code (python): def main():")."""
    text: str


class CodeBlock(NamedTuple):
    language: str
    code: str


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced code blocks of ``markdown``, in order, without their fences; a block
    left open runs to the end of the text, as Markdown reads it."""
    blocks: list[CodeBlock] = []
    fence: str | None = None
    language = ""
    lines: list[str] = []
    for line in markdown.splitlines():
        found = FENCE.match(line)
        if fence is None:
            if found:
                fence, language, lines = found.group(1), found.group(2), []
        elif found and found.group(1)[0] == fence[0] and len(found.group(1)) >= len(fence) and not found.group(2):
            blocks.append(CodeBlock(language, "\n".join(lines)))
            fence = None
        else:
            lines.append(line)
    if fence is not None:
        blocks.append(CodeBlock(language, "\n".join(lines)))
    return blocks


def first_line(text: str, width: int = 60) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def chat_copyables(chat: ChatLog) -> list[Copyable]:
    """Each prompt, reply and code block of the messages the chat holds, newest first."""
    from app.tui.widgets.message_assistant import AssistantMessage
    from app.tui.widgets.message_user import UserMessage

    found: list[Copyable] = []
    for widget in reversed(chat.message_widgets()):
        if isinstance(widget, AssistantMessage) and widget.text.strip():
            for block in reversed(code_blocks(widget.text)):
                kind = f"Code ({block.language})" if block.language else "Code"
                found.append(Copyable(f"{kind}: {first_line(block.code)}", block.code))
            found.append(Copyable(f"Reply: {first_line(widget.text)}", widget.text))
        elif isinstance(widget, UserMessage) and widget.text.strip():
            found.append(Copyable(f"Prompt: {first_line(widget.text)}", widget.text))
    return found


async def last_reply(pages: MessagePages) -> str | None:
    """The text of the session's last reply that has some, read back from its end."""
    stop = await pages.count()
    while stop > 0:
        start = max(stop - LAST_REPLY_PAGE, 0)
        for message in reversed(await pages.page(start, stop)):
            text = "".join(part_texts([p for p in message.parts if p.get("type") == "text"]))
            if message.role == "assistant" and text.strip():
                return text
        stop = start
    return None
