"""The history part of each request, built once per session and then extended, so that a
step costs what was added since the last one, not what the session holds.

A request sends the session's messages from the compaction summary on as chat messages
(``to_chat``). ``ChatHistories`` keeps, per session, the chat messages it already built
and converts only the stored messages that are new or changed since; the result is the
same, item for item, as ``to_chat`` over the whole history (prompt caching needs that
stable prefix).

Why what is kept stays right: the chat messages of one stored message depend on it, on
the message after it, on the summary's id, the model and vision, nothing else
(``chat_of``). A change of the summary id (a compaction), the model or vision builds the
history again. The transcript (app.llm.transcript) hands a written message back as a new
object, read back from the store, and reads the whole session again after an undo, a
redo or a rewind; so messages are compared by identity: what was built is kept for the
leading messages that are the very objects it was built from, less the last of them when
messages follow it now (its tool results may be among them), and the rest is converted.

Beside the chat messages, the JSON length of each is kept, so the size estimate of the
history (``estimate_tokens`` of it) is a sum rather than a serialisation of it all.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from app.llm.messages import chat_of, json_chars, list_json_chars, since_summary
from app.llm.transcript import CACHED_SESSIONS
from app.store import Message

ChatKey = tuple[str | None, str | None, bool]
"""What every chat message depends on besides the stored messages: (summary message id,
model, vision)."""


@dataclass(frozen=True)
class ChatHistory:
    messages: tuple[dict[str, Any], ...]
    """The chat messages, as ``to_chat`` gives them. The dicts are the cache's own, shared
    with later requests: a consumer copies one before changing it."""
    json_chars: int
    """The length of ``messages`` as a JSON list (``json_chars``)."""

    @property
    def tokens(self) -> int:
        """``estimate_tokens`` of the messages; 0 when there are none."""
        return self.json_chars // 4 if self.messages else 0


@dataclass
class _Built:
    """One session's history as built so far."""

    key: ChatKey
    sources: list[Message]
    """The transcript it was built from, whole (the messages before the summary too)."""
    ids: list[int]
    """``id()`` of each source, to compare a new transcript quickly (``sources`` keeps them alive)."""
    start: int
    """The position in ``sources`` of the first message sent: the summary's, else 0."""
    chat: list[dict[str, Any]] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    """For each source from ``start`` on: where its chat messages end in ``chat``."""
    chars: list[int] = field(default_factory=list)
    """For each source from ``start`` on: the JSON length of ``chat`` up to that end."""

    def keep(self, count: int) -> None:
        """Keep what the first ``count`` sources from ``start`` made; drop the rest."""
        end = self.ends[count - 1] if count else 0
        del self.chat[end:], self.ends[count:], self.chars[count:]

    def extend(self, transcript: list[Message], summary_message_id: str | None) -> None:
        """Convert the messages of ``transcript`` after those kept, and make it the source."""
        model, vision = self.key[1], self.key[2]
        chat, ends, sizes = self.chat, self.ends, self.chars
        chars = sizes[-1] if sizes else 0
        for index in range(self.start + len(ends), len(transcript)):
            following = transcript[index + 1] if index + 1 < len(transcript) else None
            made = chat_of(transcript[index], following, summary_message_id, model=model, vision=vision)
            if made:  # its messages' own lengths: the list's, less its brackets and separators
                chars += json_chars(made) - list_json_chars(0, len(made))
                chat += made
            ends.append(len(chat))
            sizes.append(chars)
        self.sources, self.ids = transcript, list(map(id, transcript))


class ChatHistories:
    """Each session's chat history, kept for the most recently used sessions. Call from
    the event loop (like the transcript it reads)."""

    def __init__(self, capacity: int = CACHED_SESSIONS) -> None:
        self._capacity = capacity
        self._built: OrderedDict[str, _Built] = OrderedDict()

    async def build(
        self, session_id: str, transcript: list[Message], summary_message_id: str | None, *, model: str | None,
        vision: bool,
    ) -> ChatHistory:
        """``to_chat(transcript, summary_message_id, model=model, vision=vision)``, from
        what was built for the session before when it still holds. A history built whole
        (the first request after resuming, an undo, a compaction, another model) is
        converted in a worker thread: in a long session that is thousands of messages,
        which would hold the event loop; nothing else touches it until it is in place."""
        key: ChatKey = (summary_message_id, model, vision)
        built = self._built.get(session_id)
        kept = _kept(built, transcript) if built is not None and built.key == key else None
        if built is not None and kept is not None:
            built.keep(kept)
            built.extend(transcript, summary_message_id)
        else:
            start = len(transcript) - len(since_summary(transcript, summary_message_id))
            built = _Built(key, [], [], start)
            await asyncio.to_thread(built.extend, transcript, summary_message_id)
            self._built[session_id] = built
            while len(self._built) > self._capacity:
                self._built.popitem(last=False)
        self._built.move_to_end(session_id)
        chars = built.chars[-1] if built.chars else 0
        return ChatHistory(tuple(built.chat), list_json_chars(chars, len(built.chat)))


def _kept(built: _Built, transcript: list[Message]) -> int | None:
    """How many of the sources from ``built.start`` on still make the same chat messages
    in ``transcript``; None when the summary's own position is in doubt (build again)."""
    same = _same_prefix(built.ids, list(map(id, transcript)))
    if same <= built.start:
        return None
    unchanged = same == len(built.ids) == len(transcript)
    return (same if unchanged else same - 1) - built.start


def _same_prefix(old: list[int], new: list[int]) -> int:
    """The length of the common beginning of two lists of ints (compared in C when whole)."""
    shorter = min(len(old), len(new))
    if old[:shorter] == new[:shorter]:
        return shorter
    return next(index for index in range(shorter) if old[index] != new[index])
