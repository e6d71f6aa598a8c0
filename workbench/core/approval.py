"""Approvals: a destructive action waits for a person's decision, and silence means no.

The core posts a request carrying a future; a front end (the TUI modal, the CLI prompt)
answers it. Everything fails closed (hermes-compat.md §8.3): a timeout, an answer that is
not exactly one of the approving choices, no front end to ask, a front end that goes away,
all deny. Hardline findings are denied before anyone is asked.

"Session" and "always" rules approve that exact command (or a prefix the user chose), and
only for the risks seen when they were granted: a rule for `rm -rf build/` never approves
`rm -rf build/ && git push --force`. "Always" persists: exact commands to
`command_allowlist` (Hermes's key, plain strings), prefix rules to `approvals.rules`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from workbench.core.config import Config, ConfigError, set_path, update_config
from workbench.core.safety import Verdict

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0


class Choice(StrEnum):
    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"
    OUTSIDE = "outside"  # once, outside the terminal's sandbox (offered only when it is on)


_APPROVING = {
    "o": Choice.ONCE,
    "once": Choice.ONCE,
    "s": Choice.SESSION,
    "session": Choice.SESSION,
    "a": Choice.ALWAYS,
    "always": Choice.ALWAYS,
}


def parse_answer(answer: object) -> Choice:
    """Exactly one of the approving answers approves; anything else denies (W-A9)."""
    if isinstance(answer, Choice):
        return answer
    return _APPROVING.get(answer, Choice.DENY) if isinstance(answer, str) else Choice.DENY


@dataclass(frozen=True, slots=True)
class Decision:
    choice: Choice
    reason: str

    @property
    def approved(self) -> bool:
        return self.choice is not Choice.DENY


@dataclass(frozen=True, slots=True)
class CommandRule:
    """Approves one exact command, or commands starting with `text`, for the given risks."""

    text: str
    prefix: bool = False
    risks: frozenset[str] = frozenset()
    permanent: bool = False

    def covers(self, command: str, verdict: Verdict | None) -> bool:
        command = normalise(command)
        if verdict is not None and (
            verdict.hardline or any(f.contextual for f in verdict.findings)
        ):
            return False
        if not self.prefix:
            return command == self.text
        if not (
            command == self.text
            or command.startswith(self.text.rstrip() + " ")
            or (self.text.endswith(("/", " ")) and command.startswith(self.text))
        ):
            return False
        return verdict is None or verdict.rules <= self.risks


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
    allow_permanent: bool = True
    where: str = ""  # where the command would run (the terminal's backend)
    can_leave: bool = False  # the sandbox is on: the person may let this one command out
    future: asyncio.Future[Choice] | None = field(default=None, repr=False)
    loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    @property
    def writes(self) -> list[str]:
        return self.verdict.writes if self.verdict else []


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    request: ApprovalRequest


@dataclass(frozen=True, slots=True)
class ApprovalAnswered:
    request: ApprovalRequest
    decision: Decision


FrontEnd = Callable[[ApprovalRequest], None]
Listener = Callable[[object], None]


class ApprovalBroker:
    """Routes approval requests to whoever can answer, and remembers the rules granted."""

    def __init__(
        self,
        *,
        config_path: Path | None = None,
        mode: str = "ask",
        timeout: float = DEFAULT_TIMEOUT,
        rules: list[CommandRule] | None = None,
    ) -> None:
        self.config_path = config_path
        self.mode = mode
        self.timeout = timeout
        self.rules: list[CommandRule] = list(rules or [])
        self._front_ends: list[FrontEnd] = []
        self._listeners: list[Listener] = []
        self._pending: dict[int, ApprovalRequest] = {}
        self._ids = itertools.count(1)

    @classmethod
    def from_config(cls, config: Config, *, mode: str | None = None) -> ApprovalBroker:
        """Rules from `command_allowlist` (exact commands) and `approvals.rules` (prefixes)."""
        rules = [
            CommandRule(normalise(entry), permanent=True)
            for entry in config.get("command_allowlist") or []
            if isinstance(entry, str) and entry.strip() and not any(c in entry for c in "*?[")
        ]
        for entry in config.get("approvals.rules") or []:
            if isinstance(entry, dict) and isinstance(entry.get("prefix"), str):
                risks = frozenset(str(r) for r in entry.get("risks") or [])
                rules.append(CommandRule(normalise(entry["prefix"]), True, risks, permanent=True))
        raw_mode = config.get("approvals.mode", "ask")  # YAML reads a bare `off` as False
        configured = "off" if raw_mode is False else str(raw_mode).lower()
        timeout = config.get("approvals.timeout")
        return cls(
            config_path=config.path,
            mode=mode or ("off" if configured in ("off", "false", "no") else "ask"),
            timeout=float(timeout)
            if isinstance(timeout, int | float) and timeout > 0
            else DEFAULT_TIMEOUT,
            rules=rules,
        )

    # -- front ends and listeners ----------------------------------------------------

    def attach(self, front_end: FrontEnd) -> Callable[[], None]:
        """A front end that can ask a person; returns `detach`, which denies what is pending."""
        self._front_ends.append(front_end)

        def detach() -> None:
            if front_end in self._front_ends:
                self._front_ends.remove(front_end)
            if not self._front_ends:
                self.close("the front end that could answer went away")

        return detach

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
        return sorted(self._pending.values(), key=lambda r: r.id)

    # -- deciding --------------------------------------------------------------------

    async def decide(
        self,
        tool: str,
        command: str,
        verdict: Verdict | None,
        *,
        cwd: str = "",
        label: str = "",
        reason: str = "",
        where: str = "",
        can_leave: bool = False,
    ) -> Decision:
        """Ask (or answer from rules) whether `command` may run. Never raises but CancelledError."""
        reason = reason or "; ".join(verdict.reasons if verdict else []) or "needs approval"
        if verdict is not None and verdict.hardline:
            return Decision(Choice.DENY, f"blocked (hardline): {reason}")
        if self.mode == "off":
            return Decision(Choice.ONCE, "approvals are off (approvals.mode: off or --yes)")
        rule = next((r for r in self.rules if r.covers(command, verdict)), None)
        if rule is not None:
            source = "command_allowlist" if rule.permanent else "a rule approved this session"
            return Decision(Choice.SESSION, f"allowed by {source}")
        if not self._front_ends:
            return Decision(
                Choice.DENY,
                "denied: no one can be asked (headless; pass --yes or set approvals.mode: off "
                "to allow destructive commands without asking)",
            )
        return await self._ask(tool, command, verdict, cwd, label, reason, where, can_leave)

    async def _ask(self, tool, command, verdict, cwd, label, reason, where, can_leave) -> Decision:
        loop = asyncio.get_running_loop()
        request = ApprovalRequest(
            id=next(self._ids),
            tool=tool,
            command=command,
            reason=reason,
            verdict=verdict,
            cwd=cwd,
            label=label,
            timeout=self.timeout,
            deadline=time.monotonic() + self.timeout,
            future=loop.create_future(),
            loop=loop,
            where=where,
            can_leave=can_leave,
        )
        self._pending[request.id] = request
        self._emit(ApprovalRequested(request))
        for front_end in list(self._front_ends):
            try:
                front_end(request)
            except Exception:
                logger.exception("approval front end failed; the request is denied")
                request.future.set_result(Choice.DENY) if not request.future.done() else None
        try:
            choice = await asyncio.wait_for(asyncio.shield(request.future), self.timeout)
            decision = await self._apply(choice, command, verdict, can_leave)
        except TimeoutError:
            decision = Decision(Choice.DENY, f"denied: no answer within {self.timeout:g}s")
        except asyncio.CancelledError:
            self._finish(request, Decision(Choice.DENY, "withdrawn: the call was cancelled"))
            raise
        self._finish(request, decision)
        return decision

    def _finish(self, request: ApprovalRequest, decision: Decision) -> None:
        self._pending.pop(request.id, None)
        if request.future is not None and not request.future.done():
            request.future.set_result(Choice.DENY)
        self._emit(ApprovalAnswered(request, decision))

    async def _apply(
        self, choice: Choice, command: str, verdict: Verdict | None, can_leave: bool = False
    ) -> Decision:
        if choice is Choice.DENY or (choice is Choice.OUTSIDE and not can_leave):
            return Decision(Choice.DENY, "denied by the user")
        if choice is Choice.OUTSIDE:  # never a rule: the next one asks again
            return Decision(Choice.OUTSIDE, "approved once by the user, outside the sandbox")
        if choice is Choice.ONCE:
            return Decision(Choice.ONCE, "approved once by the user")
        rule = CommandRule(normalise(command), risks=verdict.rules if verdict else frozenset())
        self.rules.append(rule)
        if choice is Choice.SESSION:
            return Decision(Choice.SESSION, "approved for this session by the user")
        try:
            await asyncio.to_thread(self._persist, rule)
        except ConfigError as exc:
            return Decision(Choice.SESSION, f"approved for this session; not saved: {exc}")
        self.rules[-1] = CommandRule(rule.text, rule.prefix, rule.risks, permanent=True)
        return Decision(Choice.ALWAYS, "approved always by the user (saved to command_allowlist)")

    def answer(self, request_id: int, answer: object) -> bool:
        """Resolve a pending request from any thread; False if it is no longer pending."""
        request = self._pending.get(request_id)
        if request is None or request.future is None or request.loop is None:
            return False
        choice = parse_answer(answer)

        def resolve() -> None:
            if not request.future.done():
                request.future.set_result(choice)

        request.loop.call_soon_threadsafe(resolve)
        return True

    def close(self, why: str = "the front end went away") -> None:
        """Deny everything pending (the UI is closing)."""
        for request in list(self._pending.values()):
            if request.future is not None and request.loop is not None:
                request.loop.call_soon_threadsafe(
                    lambda r=request: r.future.done() or r.future.set_result(Choice.DENY)
                )
        logger.info("approvals closed (%s): %d pending denied", why, len(self._pending))

    # -- rules -----------------------------------------------------------------------

    def add_prefix_rule(
        self, prefix: str, risks: frozenset[str], *, permanent: bool
    ) -> CommandRule:
        rule = CommandRule(
            normalise(prefix), prefix=True, risks=frozenset(risks), permanent=permanent
        )
        if permanent:
            self._persist(rule)
        self.rules.append(rule)
        return rule

    def revoke(self, rule: CommandRule) -> None:
        self.rules = [r for r in self.rules if r != rule]
        if rule.permanent and self.config_path is not None:
            update_config(lambda doc: _remove_rule(doc, rule), self.config_path)

    def _persist(self, rule: CommandRule) -> None:
        if self.config_path is None:
            raise ConfigError("no config file to save the rule to")
        update_config(lambda doc: _add_rule(doc, rule), self.config_path)


def _add_rule(doc: Any, rule: CommandRule) -> None:
    if rule.prefix:
        entries = list((doc.get("approvals") or {}).get("rules") or [])
        entries.append({"prefix": rule.text, "risks": sorted(rule.risks)})
        set_path(doc, "approvals.rules", entries)
        return
    allow = list(doc.get("command_allowlist") or [])
    if rule.text not in allow:
        allow.append(rule.text)
    doc["command_allowlist"] = allow


def _remove_rule(doc: Any, rule: CommandRule) -> None:
    if rule.prefix:
        entries = [
            e
            for e in (doc.get("approvals") or {}).get("rules") or []
            if not (isinstance(e, dict) and e.get("prefix") == rule.text)
        ]
        set_path(doc, "approvals.rules", entries)
    else:
        doc["command_allowlist"] = [e for e in doc.get("command_allowlist") or [] if e != rule.text]
