"""Long pasted text, shown collapsed: a paste of more than ``MAX_CHARS`` characters or
``MAX_LINES`` lines shows in the prompt and the chat as one label, "[pasted 10,000
characters]", while the full text is what the model gets. Pure, so the prompt and the
chat share one rule."""

from __future__ import annotations

import re

MAX_CHARS = 800
MAX_LINES = 10


def is_long(text: str) -> bool:
    """More than a screenful: 800 characters, or more than 10 lines."""
    return len(text) > MAX_CHARS or text.count("\n") >= MAX_LINES


def paste_label(text: str, taken: set[str]) -> str:
    """ "[pasted 10,000 characters]", numbered ("... #2") when another paste of the same
    length already took that label."""
    base = f"pasted {len(text):,} characters"
    label, number = f"[{base}]", 1
    while label in taken:
        number += 1
        label = f"[{base} #{number}]"
    return label


def expand(text: str, pastes: dict[str, str]) -> str:
    """``text`` with every paste label in it replaced by what was pasted (in one pass, so
    a pasted text that itself reads like a label stays as it is)."""
    labels = [label for label in pastes if label in text]
    if not labels:
        return text
    pattern = re.compile("|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True)))
    return pattern.sub(lambda match: pastes[match.group()], text)


def collapsed(text: str) -> str:
    """How the chat shows a long prompt whose pastes it does not know (a stored session,
    reopened): its first line, then how long the whole is."""
    first = text.split("\n", 1)[0]
    if len(first) > 60:
        first = first[:60] + "…"
    return f"{first} [{len(text):,} characters]"
