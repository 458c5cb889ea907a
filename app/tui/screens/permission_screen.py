"""The permission question, one at a time, keyboard only.

a allow once · s allow for this session (what this call does, to the paths it shows:
the dialog says which, and that anything else still asks) · d deny · D deny with a message to the model
(an input appears; enter sends) · enter presses the focused button · escape denies ·
h hides the question to read the chat behind it (h or escape brings it back) ·
up/down and page keys scroll a long preview.
Space never answers: it is the key most often hit by accident while typing. Nor does a key
pressed before the question was on screen (type-ahead meant for the prompt, read while the
app was busy and handed to the screen on top once it was free): only keys stamped after
the screen's first paint count. A sub-agent's question names the sub-agent and its task
in the heading.

The answer is the screen's result (``dismiss(PermissionReply)``); whoever pushed the
screen replies to the permission service (see PermissionQueue).
"""

from __future__ import annotations

from typing import Literal

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Static
from textual.widgets.button import ButtonVariant

from app.permission import PermissionReply, PermissionRequest
from app.permission.request import ReplyDecision
from app.tui.widgets.permission_preview import PermissionPreviewView

_BUTTONS: tuple[tuple[ReplyDecision | Literal["deny_message"], str, ButtonVariant], ...] = (
    ("allow_once", "Allow once (a)", "success"),
    ("allow_session", "Allow for session (s)", "primary"),
    ("deny", "Deny (d)", "error"),
    ("deny_message", "Deny with message (D)", "default"),
)
_ANSWERS = {"answer", "deny_with_message"}


def heading(request: PermissionRequest) -> Content:
    """ "Permission required  edit", or for a sub-agent's call who asks and for which task:
    "Permission required  workhorse · add tests: edit tests/test_api.py"."""
    asks = Content.styled("Permission required  ", "$warning bold")
    if request.task is None:
        return asks + Content.styled(request.tool, "$accent bold")
    task = " ".join(request.task.split())
    return Content.assemble(
        asks,
        (request.agent, "$accent bold"),
        (" · ", "$text-muted"),
        (task, "bold"),
        ": ",
        (request.tool, "$accent bold"),
        " ",
        request.subject,
    )


def session_scope(request: PermissionRequest) -> str:
    """What "Allow for session" covers (``PermissionRequest.session_covers``), in this
    session, for as long as the app runs."""
    covered, others = request.session_covers()
    return f"Allow for session: {covered} is not asked again in this session (until you quit); {others} still ask."


class PermissionScreen(ModalScreen[PermissionReply | None]):
    CSS_PATH = "permission_screen.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    """Small terminals (80x24) get the buttons on two rows and a preview that takes the
    rows the rest leaves."""
    BINDINGS = [
        Binding("a", "answer('allow_once')", "Allow once", id="permission.allow_once"),
        Binding("s", "answer('allow_session')", "Allow for session", id="permission.allow_session"),
        Binding("d", "answer('deny')", "Deny", id="permission.deny"),
        Binding("D", "deny_with_message", "Deny with message", id="permission.deny_message"),
        Binding("h", "peek", "Hide / show the question", id="permission.peek"),
        Binding("escape", "cancel", "Deny (or go back)", id="permission.cancel"),
        Binding("left", "app.focus_previous", "Previous button", show=False, id="permission.previous"),
        Binding("right", "app.focus_next", "Next button", show=False, id="permission.next"),
        Binding("up", "scroll_preview(-1)", "Scroll the preview up", show=False, id="permission.scroll_up"),
        Binding("down", "scroll_preview(1)", "Scroll the preview down", show=False, id="permission.scroll_down"),
        Binding("pageup", "scroll_preview(-10)", "Page the preview up", show=False, id="permission.page_up"),
        Binding("pagedown", "scroll_preview(10)", "Page the preview down", show=False, id="permission.page_down"),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request
        self._withdrawn = False
        self._focus_before_peek: Widget | None = None
        self._shown_at: float | None = None

    @property
    def ready(self) -> bool:
        """On screen: keys pressed from now on answer the question."""
        return self._shown_at is not None

    @property
    def peeking(self) -> bool:
        return self.has_class("-peeking")

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="permission-dialog"):
            yield Static(heading(request), id="permission-heading")
            yield Static(Content(request.title or request.subject), id="permission-title")
            # The subject, unless the title or the preview already shows it.
            if request.subject not in request.title and request.subject != request.preview.text:
                yield Static(Content.styled(request.subject, "$text-muted"), id="permission-subject")
            yield PermissionPreviewView(request.preview, request.subject, id="permission-preview")
            yield Static(Content(session_scope(request)), id="permission-scope")
            with Horizontal(id="permission-buttons"):
                for decision, label, variant in _BUTTONS:
                    yield Button(label, id=f"permission-{decision}", variant=variant, compact=True)
            yield Input(placeholder="Tell the model why (enter sends, escape goes back)", id="permission-message")
        yield Static("Question hidden: h or escape shows it again", id="permission-peek-bar")

    def on_mount(self) -> None:
        self.query_one("#permission-allow_once", Button).focus()
        self.call_after_refresh(self._shown)

    def _shown(self) -> None:
        """The first paint is done: stamp it with the clock Textual stamps keys with (every
        message carries its creation time)."""
        self._shown_at = Message().time

    def on_screen_resume(self) -> None:
        if self._withdrawn and self.is_active:
            self.dismiss(None)

    def withdraw(self) -> None:
        """The question was answered elsewhere (turn cancelled, a session answer): close
        now, or as soon as this screen is shown again; the result is None."""
        self._withdrawn = True
        if self.is_active:
            self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While peeking nothing can be answered: the question is not visible."""
        return not (self.peeking and action in _ANSWERS)

    def on_key(self, event: events.Key) -> None:
        if event.key == "space" or self._shown_at is None or event.time < self._shown_at:
            event.prevent_default()
            event.stop()

    def action_answer(self, decision: ReplyDecision) -> None:
        self.dismiss(PermissionReply(decision))

    def action_scroll_preview(self, lines: int) -> None:
        """The preview never takes focus (the buttons keep it), so the keys scroll it here."""
        preview = self.query_one(PermissionPreviewView)
        preview.scroll_relative(y=lines, animate=False)

    def action_deny_with_message(self) -> None:
        message = self.query_one("#permission-message", Input)
        self.add_class("-asking-message")
        message.focus()

    def action_cancel(self) -> None:
        if self.peeking:
            self.action_peek()
        elif self.has_class("-asking-message"):
            self.remove_class("-asking-message")
            self.query_one("#permission-deny_message", Button).focus()
        else:
            self.dismiss(PermissionReply("deny"))

    def action_peek(self) -> None:
        if self.peeking:
            self.remove_class("-peeking")
            if self._focus_before_peek is not None:
                self._focus_before_peek.focus()
        else:
            self._focus_before_peek = self.focused
            self.add_class("-peeking")
            self.set_focus(None)

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        decision = next(decision for decision, _, _ in _BUTTONS if event.button.id == f"permission-{decision}")
        if decision == "deny_message":
            self.action_deny_with_message()
        else:
            self.action_answer(decision)

    @on(Input.Submitted, "#permission-message")
    def _send_message(self, event: Input.Submitted) -> None:
        self.dismiss(PermissionReply("deny", event.value.strip() or None))
