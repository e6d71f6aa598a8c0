"""Approvals: a destructive action waits for a person's decision, and silence means no.

A request is asked through the session's `Asker` (workbench.core.asking), which a front end
(the TUI modal, the CLI prompt) answers. Everything fails closed: a timeout, an answer that
is not exactly one of the approving choices, no front end to ask, a front end that goes
away, all deny. Hardline findings and deny rules are refused before anyone is asked,
whatever the mode (`--yes` too). A read of a secret place is asked of a person whatever
the mode: `--yes` never answers it.

What needs asking is the policy's call (`workbench.core.policy`): rules of every scope, then
the detector. "Session", "always" and "never" save exactly the rule the front end showed
(one of the request's `offers`: this exact command, or a prefix it starts with), in memory,
in config.yaml or, for a trusted project, in its `.hermes/approvals.yaml`.

A sandboxed command that failed because of the sandbox is asked about once more
(`ask_to_leave`): only a person's `x` runs it outside, once; no rule, `--yes` or
`approvals.mode: off` answers that question, and nothing is saved.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from workbench.core.asking import ANSWERED, NO_ANSWER, Ask, Asker, AskKind
from workbench.core.config import Config, ConfigError
from workbench.core.edits.diffs import FileDiff
from workbench.core.execution.events import ApprovalAnswered
from workbench.core.execution.scripts import Script
from workbench.core.policy import Action, CallFacts, Outcome, Rule, RuleBook, Ruling, Scope
from workbench.core.policy.offer import History, Offer, in_scope, offers
from workbench.core.safety import Finding, Verdict

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0
SMART_NOTE = (
    "approvals.mode: smart (Hermes's default: an auxiliary model approves low-risk commands) "
    "is not supported by hermes-tui: every call that needs approval asks you (mode ask)"
)
SANDBOX_REFUSED = "sandbox-refused"  # the finding of a request to leave the sandbox


class Choice(StrEnum):
    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"
    NEVER = "never"  # deny, and save a deny rule
    OUTSIDE = "outside"  # once, outside the terminal's sandbox (offered only when it is on)


_ANSWERS = {
    "o": Choice.ONCE,
    "once": Choice.ONCE,
    "s": Choice.SESSION,
    "session": Choice.SESSION,
    "a": Choice.ALWAYS,
    "always": Choice.ALWAYS,
    "n": Choice.NEVER,
    "never": Choice.NEVER,
    "x": Choice.OUTSIDE,  # denied by `_apply` unless the request offers it (`can_leave`)
    "outside": Choice.OUTSIDE,
}


def parse_answer(answer: object) -> Choice:
    """Exactly one of the known answers counts; anything else denies (Hermes
    approved any answer it did not know, "nope" included)."""
    if isinstance(answer, Choice):
        return answer
    return _ANSWERS.get(answer, Choice.DENY) if isinstance(answer, str) else Choice.DENY


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's answer to an approval: the choice, and for "session", "always" or
    "never" the offer they picked to save (the first offer when None)."""

    choice: Choice | str
    rule: Rule | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    choice: Choice
    reason: str
    rule: Rule | None = None  # the rule that decided, or the one the person saved

    @property
    def approved(self) -> bool:
        return self.choice not in (Choice.DENY, Choice.NEVER)


def normalise(command: str) -> str:
    return " ".join(command.split())


@dataclass
class ApprovalRequest:
    id: int
    tool: str
    command: str  # shown in full: a shell command, or what the tool would do
    reason: str
    verdict: Verdict | None
    cwd: str
    label: str  # who asks: "" for the main agent, a child agent's name otherwise
    timeout: float
    deadline: float  # time.monotonic() at which silence becomes a denial
    call_id: str = ""  # the tool call that waits for the answer ("" when none)
    allow_permanent: bool = True
    where: str = ""  # where the command would run (the terminal's backend)
    can_leave: bool = False  # the sandbox is on: the person may let this one command out
    # The command failed in the sandbox because of it: the only yes is `x` (run it outside
    # once); nothing is saved, everything else keeps the failed result.
    only_leave: bool = False
    allow_offers: list[Offer] = field(default_factory=list)  # what session/always would save
    deny_offers: list[Offer] = field(default_factory=list)  # what never would save
    scopes: tuple[Scope, ...] = (Scope.EVERYWHERE,)  # where always/never may save
    diff: FileDiff | None = None  # a file write: the change it would make
    scripts: tuple[Script, ...] = ()  # what a command let out of the sandbox would run
    chosen: Rule | None = field(default=None, repr=False)  # the offer the person picked

    @property
    def writes(self) -> list[str]:
        return self.verdict.writes if self.verdict else []


FrontEnd = Callable[[ApprovalRequest], None]
Listener = Callable[[object], None]
NO_ONE = (
    "denied: no one can be asked (headless; pass --yes or set approvals.mode: off "
    "to allow destructive commands without asking)"
)


def read_mode(raw: Any) -> tuple[str, str, str]:
    """`approvals.mode` as hermes-tui runs it: the mode ("ask" or "off"), a note when the one
    configured is Hermes's `smart` (supported there, not here), and a problem when it is not
    a mode at all. Hermes's `manual` is our `ask`."""
    if raw is None:
        return "ask", "", ""
    configured = "off" if raw is False else str(raw).strip().lower()  # YAML: bare `off` is False
    if configured in ("off", "false", "no"):
        return "off", "", ""
    if configured in ("ask", "manual"):
        return "ask", "", ""
    if configured == "smart":
        return "ask", SMART_NOTE, ""
    return "ask", "", f"approvals.mode must be manual (ask), smart or off, not {raw!r}: ask is used"


class ApprovalBroker:
    """Decides from `book`'s rules, and asks a person through `asker` what they leave open."""

    def __init__(
        self,
        *,
        config_path: Path | None = None,
        mode: str = "ask",
        timeout: float = DEFAULT_TIMEOUT,
        book: RuleBook | None = None,
        rules: list[Rule] | None = None,
        asker: Asker | None = None,
    ) -> None:
        self.mode = mode
        self.mode_note = ""  # an approvals.mode we do not support, and what is used instead
        self.asker = asker or Asker()
        self.timeout = timeout
        self.book = book or RuleBook(trusted=False)
        if config_path is not None:
            self.book.config_path = config_path
        for rule in rules or []:
            self.book.session.append(rule)
        self.book.reload() if rules else None
        self.history = History()
        self._listeners: list[Listener] = []

    @classmethod
    def from_config(
        cls,
        config: Config,
        *,
        mode: str | None = None,
        project: Path | None = None,
        asker: Asker | None = None,
    ) -> ApprovalBroker:
        """Rules from config.yaml (and a trusted project); mode and timeout from `approvals`."""
        configured, note, _ = read_mode(config.get("approvals.mode"))
        timeout = config.get("approvals.timeout")
        broker = cls(
            mode=mode or configured,
            timeout=float(timeout)
            if isinstance(timeout, int | float) and timeout > 0
            else DEFAULT_TIMEOUT,
            book=RuleBook(config, project=project),
            asker=asker,
        )
        broker.mode_note = "" if mode else note
        return broker

    @property
    def config_path(self) -> Path | None:
        return self.book.config_path

    # -- front ends and listeners ----------------------------------------------------

    def attach(self, front_end: FrontEnd) -> Callable[[], None]:
        """A front end that is handed each request and answers it with `answer`; returns
        `detach`, which denies what is pending when no one else can answer."""
        return self.asker.attach(lambda ask: front_end(ask.subject), (AskKind.APPROVAL,))

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: object) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("approval listener failed")

    def pending(self) -> list[ApprovalRequest]:
        return [ask.subject for ask in self.asker.pending(AskKind.APPROVAL)]

    # -- deciding --------------------------------------------------------------------

    def note(self, facts: CallFacts, shown: str) -> None:
        """A call this session made, for the offers' "would also have matched"."""
        self.history.add(facts, shown)

    def judge(self, facts: CallFacts, verdict: Verdict | None) -> Ruling:
        return self.book.policy.judge(facts, verdict)

    async def decide(
        self,
        tool: str,
        command: str,
        verdict: Verdict | None,
        *,
        facts: CallFacts | None = None,
        ruling: Ruling | None = None,
        cwd: str = "",
        label: str = "",
        reason: str = "",
        where: str = "",
        can_leave: bool = False,
        diff: FileDiff | None = None,
        confined: bool = False,
        leaves: str = "",
        call_id: str = "",
    ) -> Decision:
        """Decide from the rules, or ask, whether `command` may run. Never raises but
        CancelledError. `facts` default to a terminal command's (or a tool with no more).
        `confined`: it runs in the working sandbox, so what the gate could not read (an
        opaque finding) is held by the sandbox and approvals.mode: off may let it run.
        `leaves`: why a file tool's call does what the sandbox would refuse a command;
        then, as for what was not understood, only a person may allow it, and so for a
        finding marked `in_person` (a read of a secret place, a workdir outside the
        session's places), with no one to ask or not. `call_id`: the tool call that waits
        (its timeline bar shows it)."""
        if facts is None:
            facts = CallFacts(tool, tool, command=command if tool == "terminal" else None)
        if verdict is None and ruling is None:  # the caller found something to ask about
            verdict = needs_approval(command, reason or "needs approval")
        ruling = ruling or self.judge(facts, verdict)
        if ruling.outcome is Outcome.DENY:
            return Decision(Choice.DENY, ruling.reason, ruling.rule)
        if ruling.outcome is Outcome.ALLOW:
            return Decision(
                Choice.SESSION if ruling.rule else Choice.ONCE, ruling.reason, ruling.rule
            )
        fail_closed = self.book.policy.fail_closed
        personal = "; ".join(verdict.in_person_reasons) if verdict is not None else ""
        unread = "; ".join(
            filter(None, (not_understood(verdict, ruling, confined), leaves, personal))
        )
        if self.mode == "off" and not fail_closed and not unread:
            return Decision(Choice.ONCE, "approvals are off (approvals.mode: off or --yes)")
        if not self._someone and fail_closed:  # --yes answers for rules it can read only
            return Decision(Choice.DENY, f"denied: {fail_closed}; fix it, or approve in person")
        if not self._someone and personal:  # --yes or not, only a person may allow it
            return Decision(Choice.DENY, in_person_denial(personal))
        if not self._someone and self.mode == "off":  # --yes answers for what it read only
            confining = tool == "terminal" and not ruling.opaque  # the sandbox would hold it
            if leaves:
                return Decision(Choice.DENY, leaving_denial(leaves))
            return Decision(Choice.DENY, unread_denial(unread, tool, confining, where))
        reason = ruling.reason if ruling.rule or not reason else reason
        reason = told(reason, verdict, ruling)
        if not self._someone:  # what it would have asked about: the user can judge it
            return Decision(Choice.DENY, f"{NO_ONE}; it asks because {reason}")
        request = self._request(tool, command, verdict, facts, cwd, label, reason, where, can_leave)
        request.diff, request.call_id = diff, call_id
        return await self._ask(request)

    @property
    def _someone(self) -> bool:
        """A front end that can answer an approval is attached."""
        return self.asker.can_ask(AskKind.APPROVAL)

    @property
    def can_ask(self) -> bool:
        """A person can be asked: a front end is attached and approvals are not off (--yes)."""
        return self._someone and self.mode != "off"

    async def ask_to_leave(
        self,
        command: str,
        reason: str,
        *,
        cwd: str = "",
        label: str = "",
        where: str = "",
        call_id: str = "",
        scripts: tuple[Script, ...] = (),
    ) -> Decision:
        """A sandboxed command failed because of the sandbox: may it run once outside?
        Rules never answer this (an allow rule approved running it, not leaving), nor does
        --yes; only a person's `x` does. `scripts`: what the command runs, shown with it.
        Never raises but CancelledError."""
        if not self.can_ask:
            return Decision(Choice.DENY, "it stays in the sandbox: no one can be asked")
        verdict = Verdict(command, (Finding(SANDBOX_REFUSED, reason, (0, len(command))),))
        request = self._new_request(
            "terminal",
            command,
            reason,
            verdict,
            cwd,
            label,
            where,
            allow_permanent=False,
            can_leave=True,
            only_leave=True,
            call_id=call_id,
            scripts=scripts,
        )
        return await self._ask(request)

    def _new_request(
        self,
        tool: str,
        command: str,
        reason: str,
        verdict: Verdict | None,
        cwd: str,
        label: str,
        where: str,
        **fields: Any,
    ) -> ApprovalRequest:
        """A request with its id and its deadline (the asker's): the one place both are set."""
        return ApprovalRequest(
            id=self.asker.next_id(),
            tool=tool,
            command=command,
            reason=reason,
            verdict=verdict,
            cwd=cwd,
            label=label,
            timeout=self.timeout,
            deadline=self.asker.deadline(self.timeout),
            where=where,
            **fields,
        )

    def _request(
        self,
        tool: str,
        command: str,
        verdict: Verdict | None,
        facts: CallFacts,
        cwd: str,
        label: str,
        reason: str,
        where: str,
        can_leave: bool,
    ) -> ApprovalRequest:
        scopes = (Scope.EVERYWHERE, Scope.PROJECT) if self.book.trusted else (Scope.EVERYWHERE,)
        return self._new_request(
            tool,
            command,
            reason,
            verdict,
            cwd,
            label,
            where,
            can_leave=can_leave,
            allow_offers=offers(facts, verdict, self.history, Action.ALLOW),
            deny_offers=offers(facts, None, self.history, Action.DENY),
            scopes=scopes,
        )

    async def _ask(self, request: ApprovalRequest) -> Decision:
        ask = Ask.about(AskKind.APPROVAL, request, request.call_id)
        try:
            answer, why = await self.asker.ask(ask, Answer(Choice.DENY))
        except asyncio.CancelledError:
            self._emit(
                ApprovalAnswered(
                    request, Decision(Choice.DENY, "withdrawn: the call was cancelled")
                )
            )
            raise
        if why == NO_ANSWER:
            decision = Decision(Choice.DENY, f"denied: no answer within {self.timeout:g}s")
        elif why != ANSWERED:
            decision = Decision(Choice.DENY, f"denied: {why}")
        else:
            answer = answer if isinstance(answer, Answer) else Answer(parse_answer(answer))
            request.chosen = answer.rule
            decision = await self._apply(parse_answer(answer.choice), request)
        self._emit(ApprovalAnswered(request, decision))
        return decision

    async def _apply(self, choice: Choice, request: ApprovalRequest) -> Decision:
        if request.only_leave and choice is not Choice.OUTSIDE:
            return Decision(Choice.DENY, "denied by the user: it stays in the sandbox")
        if choice is Choice.DENY or (choice is Choice.OUTSIDE and not request.can_leave):
            return Decision(Choice.DENY, "denied by the user")
        if choice is Choice.OUTSIDE:  # never a rule: the next one asks again
            return Decision(Choice.OUTSIDE, "approved once by the user, outside the sandbox")
        if choice is Choice.ONCE:
            return Decision(Choice.ONCE, "approved once by the user")
        rule = self._chosen(choice, request)
        if rule is None:  # what was answered is not what was shown: fail closed
            return Decision(Choice.DENY, "denied: the rule to save was not one of those offered")
        try:
            await asyncio.to_thread(self.book.add, rule)
        except ConfigError as exc:
            if choice is Choice.NEVER:
                return Decision(Choice.DENY, f"denied by the user; the rule was not saved: {exc}")
            self.book.add(in_scope(rule, Scope.SESSION))
            return Decision(Choice.SESSION, f"approved for this session; not saved: {exc}", rule)
        if choice is Choice.NEVER:
            return Decision(Choice.NEVER, f"denied by the user; saved: {rule.describe()}", rule)
        if choice is Choice.SESSION:
            return Decision(Choice.SESSION, "approved for this session by the user", rule)
        where = "the project's rules" if rule.scope is Scope.PROJECT else "config.yaml"
        return Decision(Choice.ALWAYS, f"approved always by the user (saved to {where})", rule)

    def _chosen(self, choice: Choice, request: ApprovalRequest) -> Rule | None:
        """The rule to save: one of the request's offers, in a scope the request allows."""
        offered = request.deny_offers if choice is Choice.NEVER else request.allow_offers
        if not offered:
            return None
        picked = request.chosen or offered[0].rule
        if not any(picked.same(o.rule) for o in offered):
            return None
        if choice is Choice.SESSION:
            return in_scope(picked, Scope.SESSION)
        scope = picked.scope if picked.scope in request.scopes else None
        return in_scope(picked, scope) if scope is not None else None

    def answer(self, request_id: int, answer: object, rule: Rule | None = None) -> bool:
        """Resolve a pending request from any thread; False if it is no longer pending.
        `rule` is the offer the person chose to save (the first offer when None)."""
        choice = answer if isinstance(answer, Choice | str) else Choice.DENY
        return self.asker.answer(request_id, Answer(choice, rule))

    def close(self, why: str = "the front end went away") -> None:
        """Deny every approval pending (the UI is closing)."""
        self.asker.close(why, (AskKind.APPROVAL,))


def not_understood(verdict: Verdict | None, ruling: Ruling, confined: bool) -> str:
    """What the gate could not read in this call, that approvals being off do not answer for
    ("" when nothing): the detector's opaque findings unless the call runs confined, and a
    rule that may apply to what the command hides, confined or not."""
    found = [] if confined or verdict is None else verdict.opaque_reasons
    if ruling.opaque:
        found.append(ruling.reason)
    return "; ".join(found)


def told(reason: str, verdict: Verdict | None, ruling: Ruling) -> str:
    """The reason a person is shown: what was not understood first (also in the sandbox,
    which the person may let the command out of), then the rest."""
    unread = not_understood(verdict, ruling, confined=False)
    if not unread:
        return reason
    rest = [r for r in reason.split("; ") if r and r not in unread]
    return "; ".join([f"not understood: {unread}", *rest])


def unread_denial(unread: str, tool: str, confining: bool, where: str = "") -> str:
    """Why `--yes` did not approve a call whose effect the gate could not read, and what to do
    (`confining`: the sandbox would let --yes run it; `where`: the backend's line, which
    says why it is unconfined: bubblewrap missing here, or terminal.sandbox: false)."""
    if confining:
        why = f" ({where})" if where else ""
        what = (
            f"this command would run outside the sandbox{why}: turn on terminal.sandbox where "
            "bubblewrap can run (there it runs confined, and --yes runs it) or approve it in "
            "person"
        )
    elif tool == "terminal":
        what = "a rule may apply to what it hides: approve it in person"
    else:
        what = f"{tool} does not run in the sandbox: approve it in person"
    return (
        f"denied: not understood: {unread}. --yes (approvals.mode: off) approves only what "
        f"the gate could read, and {what}"
    )


def leaving_denial(leaves: str) -> str:
    """Why `--yes` did not approve a file tool's call the sandbox would refuse a command."""
    roots = ", add the directory to approvals.write_roots" if " writes " in leaves else ""
    return (
        f"denied: {leaves}. The file tools run outside the sandbox, so --yes "
        "(approvals.mode: off) does not approve what it would refuse: approve it in "
        f"person{roots}, or set terminal.sandbox: false"
    )


def in_person_denial(reason: str) -> str:
    """Why a call only a person may allow (a read of a secret place, a workdir outside the
    session's places) was denied with no one to ask: what it is (a secret by its place,
    never its content), and that --yes does not change it."""
    return (
        f"denied: {reason}; only a person may allow it: --yes (approvals.mode: off) never "
        "approves this, sandbox or not, and no one can be asked here (approve it in person: "
        "in the workbench, or in `hermes-tui chat` or `call` at a terminal)"
    )


def plugin_verdict(shown: str, reason: str) -> Verdict:
    """A plugin's `pre_tool_call` asked for approval: a finding rules can see."""
    return Verdict(shown, (Finding("plugin-approval", reason, (0, len(shown))),))


def needs_approval(shown: str, reason: str) -> Verdict:
    """A caller asks about a call with no finding of its own: one rules can see."""
    return Verdict(shown, (Finding("needs-approval", reason, (0, len(shown))),))
