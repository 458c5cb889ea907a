"""The permission service: evaluates the configured rules, asks the user through the bus
when a rule says "ask", and remembers the user's answers for the rest of the session.

An answer "for this session" answers each effect the question covered (app.permission.
request, ``PermissionRequest.grants``), and a later question only when every one of its
effects was answered: a grant never covers an effect that was not in the question the user
saw. The rules themselves (``evaluate``, ``judge``) know nothing of these answers.

Core never knows who answers: an interactive front-end (TUI modal, ACP client) listens for
`PermissionRequested` and calls `reply`; headless runs answer by policy without asking.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Literal, NamedTuple, get_args

from app.bus import Bus
from app.config import Config
from app.core.errors import PermissionDeniedError
from app.permission.effects import OWN_CONFIG, Effect, Evaluate, Judgement, judge_all
from app.permission.events import ApprovalMissing, PermissionGranted, PermissionRequested, PermissionResolved
from app.permission.hook_decision import current_hook_decision
from app.permission.request import (
    GrantKey,
    PermissionPreview,
    PermissionReply,
    PermissionRequest,
    ReplyDecision,
)
from app.permission.rules import Action, AgentRules, Decision, Rules, evaluate_rules

Policy = Literal["interactive", "headless", "headless-yes"]

_CANCELLED = PermissionReply("deny", "the turn was cancelled", automatic=True)
_HEADLESS_DENIED = PermissionReply("deny", "needs approval: run with --yes to allow it", automatic=True)
_HEADLESS_ALLOWED = PermissionReply("allow_once", "allowed by --yes", automatic=True)
_SESSION_ACTIONS: dict[str, Action] = {"allow_session": "allow", "deny_session": "deny"}
_DECISIONS = frozenset(get_args(ReplyDecision))
_UNMADE_PREVIEW = PermissionPreview("text", "(made only when a person is asked)")
"""Stands in a request whose preview is made on asking; no front-end ever sees it."""


def config_rules(
    config: Config, agent: str, defined: Mapping[str, AgentRules] | None = None
) -> tuple[Rules | None, Rules]:
    """(agent rules, global rules): the agent's rules in the config, over (key by key) the
    rules its definition brings (``defined``: an agent file's `permission`); an agent with
    neither has none."""
    agent_config = config.agents.get(agent)
    configured = agent_config.permission if agent_config is not None else None
    own = defined[agent].own if defined and agent in defined else None
    agent_rules = {**own, **(configured or {})} if own else configured
    return agent_rules, config.permission.rules


def user_rules(
    config: Config, agent: str, defined: Mapping[str, AgentRules] | None = None
) -> tuple[Rules | None, Rules]:
    """``config_rules`` from the user's own configuration alone (``Config.user_permission``),
    with the agent's definition unless it is the repository's: what a project's rules
    and agent files may narrow but never lift a deny of."""
    user = config.user_permission()
    definition = defined.get(agent) if defined else None
    own = definition.own if definition is not None and not definition.repository else None
    configured = user.agents.get(agent)
    return ({**own, **(configured or {})} if own else configured), user.rules


def _one_line(text: str, limit: int = 80) -> str:
    """A subject or message squeezed onto one short line, for error messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class _Pending(NamedTuple):
    request: PermissionRequest
    future: asyncio.Future[PermissionReply]


class PermissionService:
    """Built once per runtime. Session answers are kept in memory for the process's life
    (or until `forget_session`): they are a convenience, not configuration."""

    def __init__(
        self,
        config: Config,
        bus: Bus,
        policy: Policy = "interactive",
        agents: Mapping[str, AgentRules] | None = None,
    ) -> None:
        """``agents``: what agent definitions add to the config's rules (an agent file's
        own rules, plan mode's locked denies), by agent name."""
        if policy not in get_args(Policy):
            raise ValueError(f"unknown permission policy {policy!r}: use interactive, headless or headless-yes")
        self._config = config
        self._bus = bus
        self.policy = policy
        self._agents: Mapping[str, AgentRules] = agents or {}
        self._pending: dict[str, _Pending] = {}
        self._session_answers: dict[str, dict[GrantKey, Action]] = {}
        self._ancestors: dict[str, tuple[str, ...]] = {}
        self._parents: dict[str, str] = {}
        self._tasks: dict[str, str] = {}

    def inherit(
        self, child_session_id: str, parent_session_id: str, parent_agent: str, task: str | None = None
    ) -> None:
        """A sub-agent's session starts: every deny the agents above it get (the parent and
        the parent's own ancestors, from any layer of rules: their own, the global ones,
        plan mode's) holds in it too, whatever its own rules allow; the
        answers "for this session" given in the conversation hold in it too; and each
        question it asks carries ``task`` (the description of the task it runs)."""
        above = (*self._ancestors.get(parent_session_id, ()), parent_agent)
        self._ancestors[child_session_id] = tuple(dict.fromkeys(above))
        self._parents[child_session_id] = parent_session_id
        if task is not None:
            self._tasks[child_session_id] = task

    def conversation(self, session_id: str) -> str:
        """The top session of a sub-agent's session (the session itself for a top one):
        where answers "for this session" are kept, so they hold in the whole conversation."""
        while session_id in self._parents:
            session_id = self._parents[session_id]
        return session_id

    def agents_above(self, session_id: str) -> tuple[str, ...]:
        """The agents whose denies a session inherits, outermost first (none for a top session)."""
        return self._ancestors.get(session_id, ())

    def evaluate(
        self,
        tool: str,
        subject: str,
        agent: str,
        absolute: str | None = None,
        *,
        session_id: str | None = None,
    ) -> Decision:
        """The rules' decision, with the denies a sub-agent's session inherits. Answers given
        for the session play no part: they answer questions (``request``), not rules."""
        return self.evaluator(agent, session_id=session_id)(tool, subject, absolute)

    def evaluator(self, agent: str, *, session_id: str | None = None) -> Evaluate:
        """``evaluate`` for one agent and session as a function of (tool, subject, absolute),
        with what is the same for every subject (the agent's rules, whether it has locked
        rules, the agents above the session) looked up once: a folder delete judges each
        of its files."""
        own = self._own_evaluator(agent)
        ancestors = self._ancestors.get(session_id) if session_id is not None else None
        if not ancestors:
            return own
        above = [self._own_evaluator(ancestor) for ancestor in ancestors]

        def evaluate(tool: str, subject: str, absolute: str | None) -> Decision:
            decision = own(tool, subject, absolute)
            if decision.action == "deny":
                return decision
            for evaluate_above in above:
                inherited = evaluate_above(tool, subject, absolute)
                if inherited.action == "deny":
                    return inherited._replace(reason=f"{inherited.reason}, inherited by {agent}")
            return decision

        return evaluate

    def _own_evaluator(self, agent: str) -> Evaluate:
        """The decision of the agent's own rules, whatever session: plan mode's locked
        denies first; then the rules of every layer (the agent's over the global ones);
        and a deny of the user's own configuration, which no rule of the project's (its
        .opencode.json, a repository agent file) lifts."""
        defined = self._agents.get(agent)
        locked = defined is not None and bool(defined.locked)
        rules = config_rules(self._config, agent, self._agents)
        users = user_rules(self._config, agent, self._agents)
        floor = users if users != rules else None

        def evaluate(tool: str, subject: str, absolute: str | None) -> Decision:
            if locked and (deny := self._locked_deny(tool, subject, absolute, agent)) is not None:
                return deny
            agent_rules, global_rules = rules
            decision = evaluate_rules(
                tool, subject, agent_rules=agent_rules, global_rules=global_rules, absolute=absolute, agent=agent
            )
            if decision.action != "deny" and floor is not None:
                user_agent, user_global = floor
                users_decision = evaluate_rules(
                    tool, subject, agent_rules=user_agent, global_rules=user_global, absolute=absolute, agent=agent
                )
                if users_decision.action == "deny":
                    return users_decision
            return decision

        return evaluate

    def _locked_deny(self, tool: str, subject: str, absolute: str | None, agent: str) -> Decision | None:
        """The deny of the agent's locked rules (plan mode), which no rule lifts."""
        defined = self._agents.get(agent)
        if defined is None or not defined.locked:
            return None
        decision = evaluate_rules(
            tool, subject, agent_rules=defined.locked, global_rules=None, absolute=absolute, agent=agent
        )
        if decision.action != "deny":
            return None
        return decision._replace(reason=defined.locked_reason or decision.reason, pattern=None)

    def judge(
        self,
        tool: str,
        effects: Sequence[Effect],
        agent: str,
        *,
        session_id: str | None = None,
        protected: Sequence[str] = OWN_CONFIG,
    ) -> list[Judgement]:
        """Each effect's decision (app.permission.effects), with this session's inherited
        denies."""

        evaluate = self.evaluator(agent, session_id=session_id)
        return judge_all(evaluate, tool, effects, protected, self.keys_with(agent, session_id, "deny"))

    def patterns_with(self, agent: str, session_id: str | None, key: str, action: Action) -> list[str]:
        """The patterns under ``key`` whose action is ``action`` in the rules that hold for
        this agent and session (its own, its ancestors', the global and locked ones): what
        the bash sandbox turns into its policy (app.sandbox.policy)."""
        agents = (agent, *(self._ancestors.get(session_id, ()) if session_id else ()))
        locked = [self._agents[name].locked for name in agents if name in self._agents]
        configured = [rules for name in agents for rules in config_rules(self._config, name, self._agents)]
        found: list[str] = []
        for rules in (*configured, *locked):
            value = (rules or {}).get(key)
            patterns = {"*": value} if isinstance(value, str) else value or {}
            found += [pattern for pattern, chosen in patterns.items() if chosen == action]
        return list(dict.fromkeys(found))

    def keys_with(self, agent: str, session_id: str | None, *actions: str) -> frozenset[str] | None:
        """The keys whose rules (this agent's, its ancestors', the global ones) hold one of
        ``actions`` (any rule at all when none are given); None when the key `*` does
        (then any key may)."""
        keys: set[str] = set()
        agents = (agent, *(self._ancestors.get(session_id, ()) if session_id else ()))
        locked = [self._agents[name].locked for name in agents if name in self._agents]
        configured = [
            rules
            for name in agents
            for layers in (config_rules, user_rules)
            for rules in layers(self._config, name, self._agents)
        ]
        for rules in (*configured, *locked):
            for key, value in (rules or {}).items():
                values = {value} if isinstance(value, str) else set(value.values())
                if not actions or values.intersection(actions):
                    keys.add(key)
        return None if "*" in keys else frozenset(keys)

    async def request(
        self,
        req: PermissionRequest,
        *,
        ask_anyway: bool = False,
        person_only: str | None = None,
        make_preview: Callable[[], PermissionPreview] | None = None,
    ) -> PermissionReply:
        """Allow or deny by the rules; for "ask", answer by policy or wait for a front-end.

        ``ask_anyway``: the caller also evaluated other subjects (the files inside a folder)
        and one of them asks, so a rule allowing ``req.subject`` is not enough (earlier
        answers for the session covering every effect still are). ``person_only``: why
        only a person may approve this (a delete past tools.delete.maxFiles): it is asked
        whatever rules or earlier answers allow (an earlier refusal still refuses), and
        headless runs refuse it, --yes included. A deny always refuses.
        ``make_preview``: makes ``req.preview`` once a person is to be asked. An allow with
        nobody asked is announced as PermissionGranted."""
        reply = await self._answer(req, ask_anyway, person_only, make_preview)
        if reply.allowed and reply.automatic:
            self.announce_granted(req.session_id, req.tool, req.subject)
        return reply

    def announce_granted(self, session_id: str, tool: str, subject: str) -> None:
        """Say that a call goes ahead with nobody asked (a rule or an earlier answer allowed
        every effect it has): front-ends show it running rather than awaiting approval."""
        self._bus.publish(PermissionGranted(session_id, tool, subject))

    async def _answer(
        self,
        req: PermissionRequest,
        ask_anyway: bool,
        person_only: str | None,
        make_preview: Callable[[], PermissionPreview] | None,
    ) -> PermissionReply:
        decision = self.evaluate(req.tool, req.subject, req.agent, req.absolute, session_id=req.session_id)
        if decision.action == "deny":
            return _reply_for(decision)
        hooked = current_hook_decision()  # a PreToolUse hook's answer (app/permission/hook_decision.py)
        if decision.action == "allow" and not ask_anyway and person_only is None and hooked != "ask":
            return _reply_for(decision)
        answer = self._answered(req)
        # Only a person approves a person-only question, each time; a refusal still holds.
        if answer == "deny" or (answer == "allow" and person_only is None and hooked != "ask"):
            return _reply_for(Decision(answer, "the user, for this session", None, "session"))
        if hooked == "allow" and person_only is None:
            return PermissionReply("allow_once", "allowed by a PreToolUse hook", automatic=True)
        if person_only is not None:
            req = replace(req, person_only=person_only)
        if self.policy != "interactive":
            return self.headless_reply(req, self.policy)
        return await self._ask(req, make_preview)

    def headless_reply(self, req: PermissionRequest, policy: Policy) -> PermissionReply:
        """What a headless policy answers a question: --yes (headless-yes) allows it unless
        only a person may approve it; otherwise it is refused as needing approval
        (ApprovalMissing). A client attached to ``opencode serve`` has its questions
        answered by this too, so it behaves as the run in its own process would."""
        if policy == "headless-yes" and req.person_only is None:
            return _HEADLESS_ALLOWED
        self._bus.publish(ApprovalMissing(req.session_id, req.tool, req.subject))
        return _HEADLESS_DENIED if req.person_only is None else _needs_a_person(req.person_only)

    async def _ask(
        self, req: PermissionRequest, make_preview: Callable[[], PermissionPreview] | None = None
    ) -> PermissionReply:
        if make_preview is not None:
            req = replace(req, preview=make_preview())
        request_id = uuid.uuid4().hex
        future: asyncio.Future[PermissionReply] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(req, future)
        self._bus.publish(PermissionRequested(request_id, req))
        try:
            return await future
        finally:
            # Still pending means the waiting task itself was cancelled: close the question.
            if request_id in self._pending:
                self._resolve(request_id, _CANCELLED)

    def reply(self, request_id: str, reply: PermissionReply, *, session_id: str | None = None) -> bool:
        """A front-end's answer. Returns False when the request is no longer pending (already
        answered elsewhere, or cancelled), which is a normal race between front-ends, and
        when ``session_id`` (the session the answering front-end shows) is given and the
        question is neither of it nor of a sub-agent's session below it: nobody answers
        another conversation's question. An answer that is not one of the four choices
        denies."""
        pending = self._pending.get(request_id)
        if pending is None or (session_id is not None and not self._within(pending.request.session_id, session_id)):
            return False
        if reply.decision not in _DECISIONS:
            reply = PermissionReply("deny", f"an answer that is not one of the choices: {reply.decision!r}", True)
        self._resolve(request_id, reply)
        session_action = _SESSION_ACTIONS.get(reply.decision)
        if session_action is not None:
            self._remember(pending.request, session_action)
        return True

    def answered_for_session(self, session_id: str, tool: str, effect: Effect) -> Action | None:
        """The answer given for the session to ``tool`` having ``effect`` on its own (in no
        scope, as the file tools ask), or None."""
        answers = self._session_answers.get(self.conversation(session_id), {})
        return answers.get((tool, "", effect.kind, effect.target))

    def _answered(self, req: PermissionRequest) -> Action | None:
        """The session's answer to every effect of ``req``: deny when one of them was
        denied, allow when all were allowed; None when one was never answered (a question
        that covers more than any earlier one is asked)."""
        answers = self._session_answers.get(self.conversation(req.session_id), {})
        found = [answers.get(key) for key in req.grants()]
        if None in found:
            return None
        return "deny" if "deny" in found else "allow"

    def _remember(self, req: PermissionRequest, action: Action) -> None:
        """Keep a session answer for each effect of this question, for the whole
        conversation (its sub-agents' sessions too), and answer the questions of the
        conversation still waiting whose every effect it now answers (parallel calls of
        the same question). A question only a person may answer waits for its own answer."""
        conversation = self.conversation(req.session_id)
        answers = self._session_answers.setdefault(conversation, {})
        for key in req.grants():
            answers[key] = action
        covered = [
            (request_id, answer)
            for request_id, other in self._pending.items()
            if other.request.person_only is None
            and self.conversation(other.request.session_id) == conversation
            and (answer := self._answered(other.request)) is not None
        ]
        for request_id, answer in covered:
            self._resolve(request_id, _reply_for(Decision(answer, "the user, for this session", None, "session")))

    def _resolve(self, request_id: str, reply: PermissionReply) -> None:
        pending = self._pending.pop(request_id)
        if not pending.future.done():
            pending.future.set_result(reply)
        self._bus.publish(PermissionResolved(request_id, reply))

    def cancel_session(self, session_id: str) -> None:
        """Deny every question of that session and of its sub-agents' sessions still
        waiting (the turn was cancelled)."""
        for request_id in [
            rid for rid, p in self._pending.items() if self._within(p.request.session_id, session_id)
        ]:
            self._resolve(request_id, _CANCELLED)

    def _within(self, session_id: str, top: str) -> bool:
        """Whether ``session_id`` is ``top`` or a sub-agent's session below it."""
        while session_id != top:
            if session_id not in self._parents:
                return False
            session_id = self._parents[session_id]
        return True

    def pending(self) -> list[PermissionRequested]:
        """The questions still waiting, as the events a late subscriber missed."""
        return [PermissionRequested(request_id, p.request) for request_id, p in self._pending.items()]

    def forget_session(self, session_id: str) -> None:
        self._session_answers.pop(self.conversation(session_id), None)

    async def check(
        self,
        session_id: str,
        tool: str,
        subject: str,
        agent: str,
        title: str,
        preview: PermissionPreview | Callable[[], PermissionPreview],
        absolute: str | None = None,
        *,
        ask_anyway: bool = False,
        person_only: str | None = None,
        effects: Sequence[Effect] = (),
        scope: str = "",
    ) -> None:
        """`request` for tools: returns when allowed, raises `PermissionDeniedError` otherwise.
        ``preview`` may be the function that makes it, called only when a person is asked:
        the diff of a big patch that rules or --yes approve is then not made for nobody.
        ``effects`` and ``scope``: what the question covers (``PermissionRequest``)."""
        made = preview if isinstance(preview, PermissionPreview) else None
        req = PermissionRequest(
            session_id,
            tool,
            subject,
            agent,
            title,
            made or _UNMADE_PREVIEW,
            absolute,
            self._tasks.get(session_id),
            effects=tuple(effects),
            scope=scope,
        )
        reply = await self.request(
            req,
            ask_anyway=ask_anyway,
            person_only=person_only,
            make_preview=None if isinstance(preview, PermissionPreview) else preview,
        )
        if not reply.allowed:
            raise PermissionDeniedError(_denial_message(req, reply))


def _reply_for(decision: Decision) -> PermissionReply:
    """The reply to a question nobody had to be asked."""
    if decision.action == "allow":
        return PermissionReply("allow_once", f"allowed by {decision.reason}", automatic=True)
    return PermissionReply("deny", f"denied by {decision.reason}", automatic=True)


def _needs_a_person(reason: str) -> PermissionReply:
    return PermissionReply(
        "deny",
        f"{reason}: only a person can approve this, in an interactive session (--yes does not cover it)",
        automatic=True,
    )


def _denial_message(req: PermissionRequest, reply: PermissionReply) -> str:
    """One line for the model (and the user) saying who refused and, if they said, why."""
    if reply.automatic:
        return f"{req.tool} {_one_line(req.subject)}: {reply.message}"
    if reply.message:
        return f'The user denied this {req.tool}: "{_one_line(reply.message, 200)}"'
    return f"The user denied this {req.tool} of {_one_line(req.subject)}: do not retry it without asking them"
