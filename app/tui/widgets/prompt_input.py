"""The multi-line prompt: enter sends, shift+enter or ctrl+j adds a line, and up/down on
the first/last row recall earlier prompts (like a shell), so editing a long prompt
with the arrows still works (rows as drawn: a long line wraps over several). ctrl+u
deletes to the start of the line as readline does: the whole line as typed, however
many rows it wraps over (at the start of a line it joins it to the one above). A long
paste shows as one label, "[pasted 10,000 characters]" (ctrl+r shows it whole; backspace
or delete next to it removes it whole), and is sent in full. Tab switches the agent the
next prompt goes to (the app's action).

Typing ``/`` at the start of the prompt, or ``@`` anywhere, opens a completion list above
it (the app says what it offers): while it is open up/down move in it, tab takes the
choice, enter takes it too (and sends a command that needs nothing more; it sends the
prompt when the path is typed whole already), escape closes it; those keys mean nothing
else then, so a Tab of the app is not reached either."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from app.tui import css_beside, pasted
from app.tui.completion import Choice, Trigger, find_trigger

if TYPE_CHECKING:
    from app.tui.widgets.completion_list import CompletionList

LIST_KEYS = {"up": -1, "down": 1}


class PromptInput(TextArea):
    """Posts ``PromptInput.Submitted`` with the text; the app decides what sending means."""

    DEFAULT_CSS = css_beside(__file__)

    # Not priority bindings: those run as soon as the key arrives, ahead of the letters
    # typed just before it (a fast paste or tmux send-keys would send half a prompt).
    BINDINGS = [
        Binding("enter", "submit", "Send (while a reply runs: queue it for after)", id="prompt.send"),
        Binding("alt+enter", "submit(True)", "Steer the running reply (read at its next step)", id="prompt.steer"),
        Binding("shift+enter,ctrl+j", "newline", "New line", id="prompt.newline"),
        Binding("up", "recall_previous", "Earlier prompt", id="prompt.history_previous", show=False),
        Binding("down", "recall_next", "Later prompt", id="prompt.history_next", show=False),
        Binding("ctrl+u", "delete_to_line_start", "Delete to the start of the line", id="prompt.delete_to_line_start",
                show=False),
        Binding("ctrl+r", "expand_pastes", "Show pasted text whole", id="prompt.expand_pastes", show=False),
        # shift+tab keeps moving the keyboard (back into the chat, to its last block).
        Binding("tab", "app.next_agent", "Next agent (coder, plan, ...)", id="prompt.next_agent"),
    ]

    class Submitted(Message):
        """``text`` is what to send (pastes in full); ``shown`` is the prompt as it read,
        long pastes collapsed to their labels (the same as ``text`` without any)."""

        def __init__(self, text: str, shown: str | None = None, *, steer: bool = False) -> None:
            super().__init__()
            self.text = text
            self.shown = text if shown is None else shown
            self.steer = steer
            """Sent with alt+enter: for the running reply, at its next step."""

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=placeholder,
        )
        self.earlier_prompts: list[str] = []
        """Earlier prompts, oldest first; the app fills it (attributes down)."""
        self._recall_index: int | None = None
        self._draft = ""
        self.pastes: dict[str, str] = {}
        """Label -> pasted text, kept for the app's life: a recalled prompt still sends
        what its labels stand for."""
        self.completion: CompletionList | None = None
        """The list that shows completions; the app sets it with ``choices_for``."""
        self.choices_for: Callable[[Trigger], list[Choice]] | None = None
        """What the list offers for a token being typed (the app's commands and files)."""
        self._trigger: Trigger | None = None
        self._recalled: str | None = None
        """The earlier prompt last recalled, while it stands unchanged: it opens no list,
        so up and down keep walking the history."""

    @property
    def full_text(self) -> str:
        """What sending would send: the text with every paste label expanded."""
        return pasted.expand(self.text, self.pastes)

    def on_paste(self, event: events.Paste) -> None:
        """A long paste from the terminal goes in as its label (TextArea's own handler
        inserts the rest)."""
        if self.read_only or not pasted.is_long(event.text):
            return
        event.prevent_default()
        self._insert_label(event.text)
        self.focus()

    def action_paste(self) -> None:
        """ctrl+v pastes the app's own clipboard (text copied in the app): a long one
        goes in as its label too."""
        if self.read_only or not pasted.is_long(self.app.clipboard):
            super().action_paste()
            return
        self._insert_label(self.app.clipboard)

    def _insert_label(self, text: str) -> None:
        label = next((known for known, known_text in self.pastes.items() if known_text == text), None)
        if label is None:
            label = pasted.paste_label(text, set(self.pastes))
            self.pastes[label] = text
        self.move_cursor(self.replace(label, *self.selection).end_location)

    def action_delete_left(self) -> None:
        """Backspace right after a paste label removes the whole label (the paste), not
        its last character, which would leave a label that stands for nothing."""
        if not self._delete_label(before=True):
            super().action_delete_left()

    def action_delete_right(self) -> None:
        if not self._delete_label(before=False):
            super().action_delete_right()

    def _delete_label(self, *, before: bool) -> bool:
        if not self.selection.is_empty:
            return False
        row, column = self.cursor_location
        line = self.document.get_line(row)
        for label in self.pastes:
            if before and line[:column].endswith(label):
                start = (row, column - len(label))
                self.delete(start, (row, column))
                self.move_cursor(start)
                return True
            if not before and line[column:].startswith(label):
                self.delete((row, column), (row, column + len(label)))
                return True
        return False

    def action_expand_pastes(self) -> None:
        """Put the pasted text itself in place of its labels (ctrl+z collapses it again)."""
        full = self.full_text
        if full != self.text:
            self.move_cursor(self.replace(full, (0, 0), self.document.end).end_location)

    def action_delete_to_line_start(self) -> None:
        """readline's ctrl+u: from the cursor back to the start of the line as typed, not
        of the row it wraps onto; at the start of a line, the line break before it."""
        row, column = self.cursor_location
        if column > 0:
            start = (row, 0)
        elif row > 0:
            start = (row - 1, len(self.document.get_line(row - 1)))
        else:
            return
        self.delete(start, self.cursor_location)
        self.move_cursor(start)

    async def _on_key(self, event: events.Key) -> None:
        """A key bound here (enter, after any remap) goes to its binding, in order with
        the typing before it, instead of being inserted by the TextArea; while the
        completion list is open, its keys go to it alone. (Textual calls every class's
        ``_on_key`` in turn, so there is no super() call to make.)"""
        if self._completion_key(event.key):
            event.prevent_default()
            event.stop()
            return
        active = self.screen.active_bindings.get(event.key)
        if active is not None and active.node is self:
            event.prevent_default()  # skips TextArea's own key handler; the event still bubbles

    # -- the completion list --------------------------------------------------------------

    def on_text_area_changed(self) -> None:
        self.refresh_completion()

    def on_text_area_selection_changed(self) -> None:
        self.refresh_completion()

    @property
    def trigger(self) -> Trigger | None:
        """The token the completion list completes now, if any."""
        return self._trigger

    def refresh_completion(self) -> None:
        """Offer what completes the token at the cursor, or close the list."""
        listing = self.completion
        if listing is None or self.choices_for is None:
            return
        typed = self.selection.is_empty and self.text != self._recalled
        trigger = find_trigger(self.text, *self.cursor_location) if typed else None
        self._trigger = trigger
        if trigger is None:
            listing.close()
        else:
            listing.offer(self.choices_for(trigger))

    def _completion_key(self, key: str) -> bool:
        """Handle ``key`` in the open list; False when it is not the list's."""
        listing, trigger = self.completion, self._trigger
        if listing is None or trigger is None or not listing.is_open:
            return False
        if key == "escape":
            listing.close()
        elif key in LIST_KEYS:
            listing.move(LIST_KEYS[key])
        elif key in ("tab", "enter") and (choice := listing.chosen) is not None:
            token = self.document.get_line(trigger.row)[trigger.start : trigger.end]
            if key == "enter" and trigger.kind == "file" and token == choice.insert.rstrip():
                listing.close()  # the path is typed whole already: enter sends
                return False
            end = self.replace(choice.insert, (trigger.row, trigger.start), (trigger.row, trigger.end)).end_location
            self.move_cursor(end)
            if key == "enter" and choice.runs:
                listing.close()
                self.action_submit()
        else:
            return False
        return True

    def action_submit(self, steer: bool = False) -> None:
        text = self.text.strip()
        if not text:
            return
        self.post_message(self.Submitted(pasted.expand(text, self.pastes), text, steer=steer))
        if not self.earlier_prompts or self.earlier_prompts[-1] != text:
            self.earlier_prompts.append(text)
        self._recall_index = None
        self.clear()

    def action_newline(self) -> None:
        self.insert("\n")

    def action_recall_previous(self) -> None:
        if not self.navigator.is_first_wrapped_line(self.cursor_location) or not self.earlier_prompts:
            self.action_cursor_up()
            return
        if self._recall_index is None:
            self._draft = self.text
            self._recall_index = len(self.earlier_prompts)
        if self._recall_index > 0:
            self._recall_index -= 1
            self._show(self.earlier_prompts[self._recall_index])

    def action_recall_next(self) -> None:
        if not self.navigator.is_last_wrapped_line(self.cursor_location) or self._recall_index is None:
            self.action_cursor_down()
            return
        self._recall_index += 1
        if self._recall_index >= len(self.earlier_prompts):
            self._recall_index = None
            self._show(self._draft)
        else:
            self._show(self.earlier_prompts[self._recall_index])

    def _show(self, text: str) -> None:
        self._recalled = text
        self.load_text(text)
        self.move_cursor(self.document.end)
