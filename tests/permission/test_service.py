"""The service over a real Bus: rules answer without asking, "ask" goes to the front-end
(or the headless policy), and session answers are remembered for one tool and subject."""

import asyncio

import pytest

from app.bus import Bus
from app.core.errors import PermissionDeniedError
from app.permission import (
    ApprovalMissing,
    PermissionGranted,
    PermissionPreview,
    PermissionReply,
    PermissionRequest,
    PermissionRequested,
    PermissionResolved,
    PermissionService,
)
from app.permission.effects import Effect
from tests.permission.conftest import SPEC_000_DELETE, make_config

PREVIEW = PermissionPreview("files", "", [("tmp/a.txt", 3)])


def ask(subject: str = "README.md", tool: str = "delete", session: str = "s1") -> PermissionRequest:
    return PermissionRequest(session, tool, subject, "coder", f"Delete {subject}", PREVIEW)


def service(bus: Bus, policy: str = "interactive", rules: dict | None = None, agents=None) -> PermissionService:
    return PermissionService(make_config(rules or {"delete": SPEC_000_DELETE}, agents), bus, policy)


async def answered(awaitable):
    """Await a request with a deadline: a question nobody answers must fail the test, not hang it."""
    return await asyncio.wait_for(awaitable, timeout=2)


async def next_event(sub):
    return await answered(sub.get())


async def asked(sub, request: PermissionRequest, perms: PermissionService) -> tuple[asyncio.Task, str]:
    """Start a request and wait until the front-end sees the question."""
    task = asyncio.create_task(perms.request(request))
    event = await next_event(sub)
    assert isinstance(event, PermissionRequested)
    assert event.request == request
    return task, event.request_id


# --- answered by the rules -------------------------------------------------------------


async def test_allowed_by_a_rule_without_asking(bus):
    perms = service(bus)
    sub = bus.subscribe()
    reply = await answered(perms.request(ask("tmp/a.txt")))
    assert reply == PermissionReply("allow_once", 'allowed by global rule "tmp/*"', automatic=True)
    assert sub.get_nowait() == PermissionGranted("s1", "delete", "tmp/a.txt")  # announced, not asked
    assert sub.get_nowait() is None


async def test_denied_by_a_rule_without_asking_and_the_error_names_the_rule(bus):
    perms = service(bus)
    sub = bus.subscribe()
    with pytest.raises(PermissionDeniedError) as caught:
        await answered(perms.check("s1", "delete", "main.go", "coder", "Delete main.go", PREVIEW))
    assert str(caught.value) == 'delete main.go: denied by global rule "*.go"'
    assert sub.get_nowait() is None


async def test_agent_rules_are_looked_up_by_the_agent_name(bus):
    perms = service(bus, agents={"coder": {"delete": {"*.go": "allow"}}})
    assert perms.evaluate("delete", "main.go", "coder").reason == 'agent coder rule "*.go"'
    assert perms.evaluate("delete", "main.go", "explorer").reason == 'global rule "*.go"'


# --- interactive -----------------------------------------------------------------------


async def test_ask_publishes_the_question_and_allow_once_lets_it_through_once(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested, PermissionResolved)
    task, request_id = await asked(sub, ask(), perms)
    assert perms.pending() == [PermissionRequested(request_id, ask())]

    assert perms.reply(request_id, PermissionReply("allow_once")) is True
    assert (await answered(task)).allowed
    assert await next_event(sub) == PermissionResolved(request_id, PermissionReply("allow_once"))
    assert perms.pending() == []

    # Not remembered: the same call asks again.
    task, _ = await asked(sub, ask(), perms)
    task.cancel()


async def test_allow_session_is_remembered_for_that_tool_and_subject_only(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask("README.md"), perms)
    perms.reply(request_id, PermissionReply("allow_session"))
    assert (await answered(task)).decision == "allow_session"

    again = await answered(perms.request(ask("README.md")))
    assert again.allowed and again.automatic
    assert sub.get_nowait() is None
    # The answer answers questions; the rules themselves are unchanged by it.
    assert perms.evaluate("delete", "README.md", "coder", session_id="s1").action == "ask"

    for other in (ask("LICENSE"), ask("README.md", tool="write"), ask("README.md", session="s2")):
        task, _ = await asked(sub, other, perms)
        task.cancel()


async def test_a_session_answer_never_overrides_a_deny_rule_added_later(bus):
    config = make_config({"delete": {"*": "ask"}})
    perms = PermissionService(config, bus, "interactive")
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask("README.md"), perms)
    perms.reply(request_id, PermissionReply("allow_session"))
    await answered(task)
    config.permission.rules["delete"]["README.md"] = "deny"  # e.g. edited while running
    reply = await answered(perms.request(ask("README.md")))
    assert reply == PermissionReply("deny", 'denied by global rule "README.md"', automatic=True)


async def test_deny_with_a_message_reaches_the_model_in_the_user_s_words(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    check = asyncio.create_task(perms.check("s1", "delete", "README.md", "coder", "Delete README.md", PREVIEW))
    event = await next_event(sub)
    perms.reply(event.request_id, PermissionReply("deny", "keep the readme"))
    with pytest.raises(PermissionDeniedError) as caught:
        await answered(check)
    assert str(caught.value) == 'The user denied this delete: "keep the readme"'


async def test_deny_without_a_message_still_says_who_and_what(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    check = asyncio.create_task(perms.check("s1", "delete", "README.md", "coder", "Delete README.md", PREVIEW))
    perms.reply((await next_event(sub)).request_id, PermissionReply("deny"))
    with pytest.raises(PermissionDeniedError, match=r"^The user denied this delete of README\.md"):
        await answered(check)


async def test_deny_session_denies_the_same_call_without_asking_again(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask(), perms)
    perms.reply(request_id, PermissionReply("deny_session"))
    assert not (await answered(task)).allowed

    with pytest.raises(PermissionDeniedError, match="denied by the user, for this session"):
        await answered(perms.check("s1", "delete", "README.md", "coder", "Delete README.md", PREVIEW))
    assert sub.get_nowait() is None


async def test_a_session_answer_also_answers_the_same_question_already_waiting(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested, PermissionResolved)
    first, first_id = await asked(sub, ask(), perms)
    second, second_id = await asked(sub, ask(), perms)
    other, _ = await asked(sub, ask("LICENSE"), perms)

    perms.reply(first_id, PermissionReply("allow_session"))
    assert (await answered(first)).decision == "allow_session"
    assert (await answered(second)).allowed
    resolved = [await next_event(sub), await next_event(sub)]
    assert [event.request_id for event in resolved] == [first_id, second_id]
    assert [event.request.subject for event in perms.pending()] == ["LICENSE"]
    other.cancel()


async def test_forget_session_drops_its_answers(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask(), perms)
    perms.reply(request_id, PermissionReply("allow_session"))
    await answered(task)
    perms.forget_session("s1")
    task, _ = await asked(sub, ask(), perms)
    task.cancel()


async def test_cancel_session_denies_what_that_session_is_waiting_for(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested, PermissionResolved)
    mine, my_id = await asked(sub, ask(session="s1"), perms)
    theirs, _ = await asked(sub, ask(session="s2"), perms)

    perms.cancel_session("s1")
    cancelled = PermissionReply("deny", "the turn was cancelled", automatic=True)
    assert await answered(mine) == cancelled
    assert await next_event(sub) == PermissionResolved(my_id, cancelled)
    assert [event.request.session_id for event in perms.pending()] == ["s2"]
    assert perms.reply(my_id, PermissionReply("allow_once")) is False  # too late
    theirs.cancel()


async def test_a_cancelled_waiting_call_closes_its_question(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested, PermissionResolved)
    task, request_id = await asked(sub, ask(), perms)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answered(task)
    event = await next_event(sub)
    assert event == PermissionResolved(request_id, PermissionReply("deny", "the turn was cancelled", True))
    assert perms.pending() == []


async def test_a_reply_to_an_unknown_request_is_refused(bus):
    assert service(bus).reply("no-such-id", PermissionReply("allow_once")) is False


# --- what an answer reaches -------------------------------------------------------------


def patching(*effects: str, session: str = "s1", person_only: str | None = None) -> PermissionRequest:
    """A patch's question covering ``effects`` ("write a.txt", "delete b.txt")."""
    found = tuple(Effect(*effect.split(" ", 1)) for effect in effects)
    return PermissionRequest(
        session, "patch", found[0].target, "coder", "Patch", PREVIEW, effects=found, person_only=person_only
    )


async def test_an_answer_for_the_session_answers_waiting_calls_it_covers_and_no_other(bus):
    perms = service(bus, rules={})
    sub = bus.subscribe(PermissionRequested)
    first, first_id = await asked(sub, patching("write a.txt", "write b.txt"), perms)
    within, _ = await asked(sub, patching("write b.txt"), perms)
    beyond, _ = await asked(sub, patching("write b.txt", "write c.txt"), perms)
    deleting, _ = await asked(sub, patching("delete a.txt"), perms)
    elsewhere, _ = await asked(sub, patching("write a.txt", session="s2"), perms)

    perms.reply(first_id, PermissionReply("allow_session"))
    assert (await answered(first)).decision == "allow_session"
    assert await answered(within) == PermissionReply("allow_once", "allowed by the user, for this session", True)
    waiting = sorted((event.request.session_id, tuple(map(str, event.request.effects))) for event in perms.pending())
    assert waiting == [("s1", ("delete a.txt",)), ("s1", ("write b.txt", "write c.txt")), ("s2", ("write a.txt",))]
    for task in (beyond, deleting, elsewhere):
        task.cancel()


async def test_allow_once_answers_its_own_question_and_leaves_a_waiting_twin_waiting(bus):
    perms = service(bus, rules={})
    sub = bus.subscribe(PermissionRequested)
    first, first_id = await asked(sub, patching("write a.txt"), perms)
    twin, twin_id = await asked(sub, patching("write a.txt"), perms)
    perms.reply(first_id, PermissionReply("allow_once"))
    assert (await answered(first)).allowed
    assert [event.request_id for event in perms.pending()] == [twin_id]
    twin.cancel()


async def test_a_denial_for_the_session_refuses_what_it_covers_and_asks_about_more(bus):
    perms = service(bus, rules={})
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, patching("write a.txt", "write b.txt"), perms)
    perms.reply(request_id, PermissionReply("deny_session"))
    await answered(task)
    refused = await answered(perms.request(patching("write b.txt")))
    assert refused == PermissionReply("deny", "denied by the user, for this session", True)
    more, _ = await asked(sub, patching("write b.txt", "write c.txt"), perms)
    more.cancel()


async def test_a_person_only_question_is_asked_each_time_but_a_denial_for_the_session_holds(bus):
    perms = service(bus, rules={})
    sub = bus.subscribe(PermissionRequested)
    big = patching("delete src", person_only="600 files (over 500)")
    task, request_id = await asked(sub, big, perms)
    twin, twin_id = await asked(sub, big, perms)
    perms.reply(request_id, PermissionReply("allow_session"))
    assert (await answered(task)).allowed
    assert [event.request_id for event in perms.pending()] == [twin_id]  # its own answer, from a person
    perms.reply(twin_id, PermissionReply("deny_session"))
    await answered(twin)
    refused = await answered(perms.request(big, person_only="600 files (over 500)"))
    assert refused.decision == "deny" and refused.automatic


async def test_a_reply_naming_another_session_is_refused_and_the_question_stays_open(bus):
    perms = service(bus)
    perms.inherit("child", "s1", "coder", "look")
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask(session="child"), perms)
    assert perms.reply(request_id, PermissionReply("allow_session"), session_id="s2") is False
    assert perms.reply(request_id, PermissionReply("allow_session"), session_id="child2") is False
    assert [event.request_id for event in perms.pending()] == [request_id]
    again, _ = await asked(sub, ask(session="s2"), perms)  # nothing was remembered
    assert perms.reply(request_id, PermissionReply("allow_once"), session_id="s1") is True  # its parent's front-end
    assert (await answered(task)).allowed
    again.cancel()


async def test_a_second_reply_to_an_answered_question_is_refused_and_remembers_nothing(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask(), perms)
    assert perms.reply(request_id, PermissionReply("deny")) is True
    assert perms.reply(request_id, PermissionReply("allow_session")) is False
    assert not (await answered(task)).allowed
    again, _ = await asked(sub, ask(), perms)  # asked again: the late "for the session" counted for nothing
    again.cancel()


async def test_an_answer_that_is_not_one_of_the_choices_denies(bus):
    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    task, request_id = await asked(sub, ask(), perms)
    assert perms.reply(request_id, PermissionReply("allow_always")) is True  # type: ignore[arg-type]
    reply = await answered(task)
    assert not reply.allowed and "not one of the choices" in reply.message
    again, _ = await asked(sub, ask(), perms)
    again.cancel()


# --- headless --------------------------------------------------------------------------


async def test_headless_denies_what_needs_approval_and_says_how_to_allow_it(bus):
    perms = service(bus, policy="headless")
    sub = bus.subscribe()
    with pytest.raises(PermissionDeniedError) as caught:
        await answered(perms.check("s1", "delete", "README.md", "coder", "Delete README.md", PREVIEW))
    assert str(caught.value) == "delete README.md: needs approval: run with --yes to allow it"
    assert (await answered(perms.request(ask("tmp/a.txt")))).allowed  # allowed by a rule: no approval needed
    assert sub.get_nowait() == ApprovalMissing("s1", "delete", "README.md")  # what `opencode -p` exits 3 for
    assert sub.get_nowait() == PermissionGranted("s1", "delete", "tmp/a.txt")
    assert sub.get_nowait() is None


async def test_headless_yes_allows_what_needs_approval_but_a_deny_stays_a_deny(bus):
    perms = service(bus, policy="headless-yes")
    sub = bus.subscribe()
    await answered(perms.check("s1", "delete", "README.md", "coder", "Delete README.md", PREVIEW))
    with pytest.raises(PermissionDeniedError, match=r'denied by global rule "\*\.go"'):
        await answered(perms.check("s1", "delete", "main.go", "coder", "Delete main.go", PREVIEW))
    assert sub.get_nowait() == PermissionGranted("s1", "delete", "README.md")  # the allow, not the deny
    assert sub.get_nowait() is None


async def test_a_question_only_a_person_may_answer_is_missing_approval_even_with_yes(bus):
    perms = service(bus, policy="headless-yes")
    sub = bus.subscribe()
    with pytest.raises(PermissionDeniedError, match="only a person can approve this"):
        await answered(
            perms.check("s1", "delete", "src", "coder", "Delete src", PREVIEW, person_only="600 files (over 500)")
        )
    assert sub.get_nowait() == ApprovalMissing("s1", "delete", "src")
    assert sub.get_nowait() is None


async def test_a_preview_maker_is_called_only_when_a_person_is_asked(bus):
    made: list[str] = []

    def make_preview() -> PermissionPreview:
        made.append("made")
        return PREVIEW

    for policy, subject in [("headless-yes", "README.md"), ("headless", "tmp/a.txt"), ("interactive", "tmp/a.txt")]:
        perms = service(bus, policy=policy)
        await answered(perms.check("s1", "delete", subject, "coder", f"Delete {subject}", make_preview))
    assert made == []  # --yes, or a rule, answered: nobody looks at a preview

    perms = service(bus)
    sub = bus.subscribe(PermissionRequested)
    task = asyncio.create_task(perms.check("s1", "delete", "README.md", "coder", "Delete README.md", make_preview))
    event = await next_event(sub)
    assert made == ["made"] and event.request.preview == PREVIEW
    perms.reply(event.request_id, PermissionReply("allow_once"))
    await answered(task)


async def test_a_long_multi_line_bash_subject_is_one_short_line_in_the_error(bus):
    perms = service(bus, policy="headless", rules={})
    command = "echo start\n" + "x" * 500
    with pytest.raises(PermissionDeniedError) as caught:
        await answered(perms.check("s1", "bash", command, "coder", "Run a command", PermissionPreview("command", command)))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bash echo start xxx")
    assert len(message) < 140


def test_an_unknown_policy_is_refused_with_the_choices(bus):
    with pytest.raises(ValueError, match="use interactive, headless or headless-yes"):
        service(bus, policy="yolo")
