"""Each tool's cost per request joined with its use, and what to defer or switch off.

Use is read from the last N sessions, ours and Hermes's (`gather`): the newest N of both
together. A suggestion is made for a tool that costs much and earns little:
- never called in those sessions and at least COSTLY tokens a request: switch it off;
- called in at most one session of every RARE, and at least LARGE tokens a request, sent in
  full and deferrable: defer it (it stays reachable through tool search).
`clarify` and the core tools Hermes keeps eager are never suggested for deferral (small
models stop using what they must search for), and `clarify` is never switched off. Each
suggestion's saving per request is measured as its preview is (the config as it would be
saved, counted again), and per session it is that times the sessions' mean requests.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.commands import CommandFailed
from workbench.core.costs import offered_costs
from workbench.core.tools import deferral
from workbench.core.usage import change
from workbench.core.usage.hermes_store import HERMES, read_store
from workbench.core.usage.sessions import OURS, SessionUse, recent_transcripts

if TYPE_CHECKING:
    from workbench.core.agent.offered import Costs
    from workbench.core.runtime import Runtime

DEFAULT_SESSIONS = 20
COSTLY = 100  # tokens a request: a never-called tool below this is not worth a change
LARGE = 400  # tokens a request: a rarely called tool this large is worth deferring
RARE = 5  # "rarely": called in at most one session of every RARE
MIN_SESSIONS = 3  # fewer sessions read say too little of what is never used
CLARIFY = "clarify"
OFF_STATE = "off"  # switched off: not sent
UNAVAILABLE = "unavailable"  # not sent for another reason: its check fails, a lean profile
ABSENT = "absent"  # called in a past session, not a tool here now
BRIDGE = "bridge"  # tool_search, tool_describe, tool_call: sent for the deferred tools


@dataclass(frozen=True)
class Gathered:
    """The sessions read (oldest first) and what could not be read."""

    sessions: list[SessionUse]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, source: str) -> int:
        return sum(s.source == source for s in self.sessions)

    @property
    def requests_per_session(self) -> float:
        if not self.sessions:
            return 0.0
        return sum(s.requests for s in self.sessions) / len(self.sessions)


@dataclass(frozen=True)
class ToolUse:
    name: str
    state: str  # eager, listed, searchable (deferral's), OFF_STATE, UNAVAILABLE or ABSENT
    tokens: int  # sent on every request in that state
    calls: int  # in the sessions read
    sessions: int  # how many of them called it
    last_used: float | None  # when it was last called (seconds since the epoch)


@dataclass(frozen=True)
class Suggestion:
    tool: str
    action: str  # change.OFF or change.DEFER
    why: str
    per_request: int  # tokens saved on each request
    per_session: int  # and in a session of the mean number of requests
    preview: change.Preview


@dataclass(frozen=True)
class Report:
    tools: list[ToolUse]
    suggestions: list[Suggestion]
    gathered: Gathered
    tokens: int  # the tools' part of every request now
    counted: str  # how the tokens were counted (the tokenizer)
    bridge: int = 0  # of those, the tool-search bridge and its listing
    deferred: int = 0  # the tools behind it
    notes: list[str] = field(default_factory=list)  # caveats: what was read, and how

    def to_json(self) -> dict[str, Any]:
        g = self.gathered
        return {
            "sessions": {
                "read": len(g.sessions),
                OURS: g.count(OURS),
                HERMES: g.count(HERMES),
                "requests_per_session": round(g.requests_per_session, 2),
            },
            "tokens_per_request": self.tokens,
            "bridge_tokens": self.bridge,
            "deferred_tools": self.deferred,
            "counted": self.counted,
            "tools": [{**asdict(t), "last_used": iso(t.last_used)} for t in self.tools],
            "suggestions": [
                {
                    "tool": s.tool,
                    "action": s.action,
                    "why": s.why,
                    "saving_per_request": s.per_request,
                    "saving_per_session": s.per_session,
                    "config_key": s.preview.key,
                    "config_after": s.preview.after,
                    "tokens_per_request_after": s.preview.tokens_after,
                }
                for s in self.suggestions
            ],
            "problems": g.problems,
            "notes": self.notes,
        }


def iso(at: float | None) -> str | None:
    if not at:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def gather(home: Path, limit: int) -> Gathered:
    """The newest `limit` sessions of our transcripts and Hermes's store together."""
    problems: list[str] = []
    ours = recent_transcripts(home, limit, problems)
    store = read_store(home, limit)
    notes = [store.note] if store.note else []
    if store.problem:
        problems.append(store.problem)
    both = sorted([*ours, *store.sessions], key=lambda s: s.started)
    return Gathered(both[-limit:] if limit > 0 else [], problems, notes)


def usage_report(
    runtime: Runtime,
    sessions: int = DEFAULT_SESSIONS,
    model_flags: dict[str, str] | None = None,
) -> Report:
    """The report on the last `sessions` sessions; `model_flags`: the front end's --model,
    --base-url (the model whose tokenizer counts)."""
    flags: dict[str, Any] = dict(model_flags or {})
    gathered = gather(runtime.home, sessions)
    return build(runtime, offered_costs(runtime, **flags), gathered, **flags)


def build(runtime: Runtime, costs: Costs, gathered: Gathered, **model_flags: Any) -> Report:
    rows = _rows(costs, gathered, set(runtime.off_tools()))
    suggestions = _suggest(runtime, costs, rows, gathered, **model_flags)
    notes = list(gathered.notes)
    if 0 < len(gathered.sessions) < MIN_SESSIONS:
        notes.append(f"suggestions need {MIN_SESSIONS} sessions read at least")
    if not deferral.ToolSearchSettings.from_config(runtime.config).on:
        notes.append(
            f"tool search is off ({deferral.CONFIG_KEY}.enabled): nothing is suggested for deferral"
        )
    return Report(
        rows,
        suggestions,
        gathered,
        costs.total,
        costs.describe(),
        costs.bridge,
        len(costs.deferred),
        notes,
    )


def _rows(costs: Costs, gathered: Gathered, off: set[str]) -> list[ToolUse]:
    calls: dict[str, int] = {}
    used_in: dict[str, int] = {}
    last: dict[str, float] = {}
    for session in gathered.sessions:
        for call in session.calls:
            calls[call.name] = calls.get(call.name, 0) + 1
            last[call.name] = max(last.get(call.name, 0.0), call.at)
        for name in {c.name for c in session.calls}:
            used_in[name] = used_in.get(name, 0) + 1
    rows = []
    bridge = set(deferral.BRIDGE_NAMES) if costs.bridge else set()
    for name in sorted(set(costs.tools) | set(calls) | bridge):
        state, tokens = current(costs, name, off)
        rows.append(
            ToolUse(name, state, tokens, calls.get(name, 0), used_in.get(name, 0), last.get(name))
        )
    return sorted(rows, key=lambda r: (-r.tokens, r.name))


def current(costs: Costs, name: str, off: set[str]) -> tuple[str, int]:
    """A tool's state and what it adds to every request in that state (`off`: the tools
    switched off). A deferred tool adds nothing of its own: the bridge and its listing,
    shared by all of them, are a row of their own (BRIDGE)."""
    cost = costs.tools.get(name)
    if name in deferral.BRIDGE_NAMES:
        return BRIDGE, 0  # their tokens are the bridge's, counted once (Report.bridge)
    if cost is None:
        return ABSENT, 0
    if not cost.offered:
        return (OFF_STATE if name in off else UNAVAILABLE), 0
    if cost.state is not deferral.ToolState.EAGER:
        return cost.state.value, 0
    return cost.state.value, cost.tokens


def _suggest(
    runtime: Runtime,
    costs: Costs,
    rows: list[ToolUse],
    gathered: Gathered,
    **model_flags: Any,
) -> list[Suggestion]:
    read = len(gathered.sessions)
    if read < MIN_SESSIONS:
        return []
    settings = deferral.ToolSearchSettings.from_config(runtime.config)
    out = []
    for row in rows:
        action, why = _candidate(row, read, settings)
        if action is None:
            continue
        try:
            seen = change.preview(runtime, costs, row.name, action, **model_flags)
        except CommandFailed:  # a tool no switch can reach (the agent's own): nothing to do
            continue
        if seen.saving <= 0:
            continue
        per_session = round(seen.saving * gathered.requests_per_session)
        out.append(Suggestion(row.name, action, why, seen.saving, per_session, seen))
    return sorted(out, key=lambda s: (-s.per_session, -s.per_request, s.tool))


def _candidate(
    row: ToolUse, read: int, settings: deferral.ToolSearchSettings
) -> tuple[str | None, str]:
    if row.state in (OFF_STATE, UNAVAILABLE, ABSENT, BRIDGE) or row.name == CLARIFY:
        return None, ""
    sessions = f"{read} session{'s' * (read != 1)}"
    if row.calls == 0 and row.tokens >= COSTLY:
        return change.OFF, f"never called in the last {sessions}"
    rare = 0 < row.sessions * RARE <= read
    if not rare or row.tokens < LARGE or row.state != deferral.ToolState.EAGER.value:
        return None, ""
    if not settings.on or row.name in deferral.CORE_TOOLS:
        return None, ""
    return change.DEFER, f"called in {row.sessions} of the last {sessions}"
