"""Session titles: the title agent's request and what is kept of its reply.

The title is generated in the background after a session's first prompt; the turn never
waits for it. When the model fails or answers nothing usable, the prompt's first words
stand in, so a session is never left untitled.
"""

from __future__ import annotations

MAX_TITLE_CHARS = 50
TITLE_INSTRUCTION = "Write the title of the conversation that starts with this message:"


def title_request(system: str, prompt: str) -> list[dict[str, str]]:
    """The messages sent to the title agent (its last user message starts with
    TITLE_INSTRUCTION, so a scripted model can match it)."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{TITLE_INSTRUCTION}\n\n{prompt}"},
    ]


def _shorten(text: str) -> str:
    if len(text) <= MAX_TITLE_CHARS:
        return text
    cut = text[: MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0] or text[: MAX_TITLE_CHARS - 1]
    return cut.rstrip(" ,;:-") + "…"


def title_from_reply(reply: str) -> str:
    """The model's title on one short line, without quotes, markdown or a final period;
    "" when the reply has nothing usable."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    title = lines[0].strip("#*_`\"' ").removeprefix("Title:").strip().strip("\"'").rstrip(".")
    return _shorten(title)


def fallback_title(prompt: str) -> str:
    """The prompt's first line, shortened: the title when the model cannot give one."""
    first_line = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return _shorten(" ".join(first_line.split())) or "New session"
