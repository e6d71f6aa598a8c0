"""Deferred tools in our own sessions: the three bridge tools as the agent answers them.

With deferral on, the model is sent its eager tools in full and three bridge tools in place
of the deferred ones (`tool_search`, `tool_describe`, `tool_call`, as Hermes 0.21 does). This
module is the loop's side of that:

* `Offer`: what a round is sent (core.tools.deferral assembles it; the same tools give the
  same bytes, so the tools' part of every request of a conversation is identical and a
  server's prompt cache keeps the prefix);
* `Bridge.search` / `Bridge.describe`: keyword search over the deferred tools' names and
  descriptions (several queries a call) and their full schemas, with Hermes's result shapes;
* `Bridge.unwrap`: a `tool_call` made into the real calls it names. The agent hands those to
  the executor like any direct call (the gate, approvals, checkpoints, budgets, history), each
  marked with the bridge call it came through (`via`); a name that is not a deferred tool of
  this conversation is an error the model can read, in Hermes's words;
* `Bridge.kept`: schemas the model loaded with `tool_describe` survive compression;
* `inner_calls`: the real calls of a recorded `tool_call`, for whatever reads conversations
  (session search, exports, a Hermes session log).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.schema import Node
from workbench.core.tools.deferral import (
    BRIDGE_NAMES,
    MAX_DESCRIBE_NAMES,
    MAX_QUERIES_PER_CALL,
    TOOL_CALL,
    ToolSearchSettings,
)
from workbench.core.tools.errors import tool_error

ECHO_ARGS_MAX_CHARS = 1500  # a refused batch's first entry, echoed back to retry with
DESCRIPTION_CAP = 500
KEPT_PREFIX = "[Tool schemas loaded earlier with tool_describe, kept through compression]"
NO_MATCH_HINT = (
    "This query returned no lexical matches, but the sources above are connected and their "
    "tools remain available. Retry tool_search with the service name plus a concrete action "
    "or object before concluding the capability is unavailable."
)
NOT_FOUND_HINT = "Names in not_found are not currently available. Re-run tool_search to refresh."


@dataclass(frozen=True)
class Offer:
    """What a conversation is sent: eager tools and the bridge (`definitions`), and the
    deferred tools' full definitions by name, reachable only through the bridge."""

    definitions: list[dict[str, Any]]
    deferred: dict[str, dict[str, Any]]
    settings: ToolSearchSettings = field(default_factory=ToolSearchSettings)

    @property
    def names(self) -> list[str]:
        return sorted(d["function"]["name"] for d in self.definitions)

    @property
    def active(self) -> bool:
        return TOOL_CALL in self.names


@dataclass(frozen=True)
class Inner:
    """One real call named by a `tool_call` entry."""

    id: str
    name: str
    arguments: str  # JSON text, as the model's own calls carry it
    via: str  # the bridge call's id


@dataclass
class Bridge:
    """The bridge tools of one agent. `source` says where a tool comes from (for search
    results: its source and toolset); `known` whether a name is a tool at all here."""

    offer: Offer
    source: Callable[[str], tuple[str, str]] = lambda name: ("builtin", "")
    known: Callable[[str], bool] = lambda name: False
    described: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the results the model got from tool_describe, by call id: kept whole, nothing to add
    _results: dict[str, str] = field(default_factory=dict)

    # -- tool_search -------------------------------------------------------------------

    def search(self, args: dict[str, Any], **_: Any) -> str:
        queries, error = _strings(
            args, "queries", False, MAX_QUERIES_PER_CALL, "Retry with fewer, more targeted queries."
        )
        if error:
            return error
        limit = self.offer.settings.search_limit(args.get("limit"))
        results: list[dict[str, Any]] = []
        tools: dict[str, dict[str, Any]] = {}
        for query in queries:
            matches = search(self.offer.deferred, query, limit)
            for name in matches:
                tools.setdefault(name, self._record(name))
            group: dict[str, Any] = {"query": query, "matches": matches}
            if not matches and self.offer.deferred:
                group["available_sources"] = self._sources()
                group["hint"] = NO_MATCH_HINT
            results.append(group)
        payload = {
            "queries": queries,
            "total_available": len(self.offer.deferred),
            "results": results,
            "tools": tools,
        }
        return json.dumps(payload, ensure_ascii=False)

    def _record(self, name: str) -> dict[str, Any]:
        function = self.offer.deferred[name]["function"]
        required = Node.parameters_of(function).required
        source, toolset = self.source(name)
        description = str(function.get("description") or "")
        if len(description) > DESCRIPTION_CAP:
            description = description[:DESCRIPTION_CAP] + "…"
        return {
            "source": source,
            "source_name": toolset,
            "description": description,
            "required": [r[:64] for r in required][:32],
        }

    def _sources(self) -> list[dict[str, Any]]:
        counts: dict[str, int] = {}
        for name in self.offer.deferred:
            toolset = self.source(name)[1] or name
            counts[toolset] = counts.get(toolset, 0) + 1
        return [{"name": n, "tool_count": counts[n]} for n in sorted(counts)]

    # -- tool_describe -----------------------------------------------------------------

    def describe(self, args: dict[str, Any], **context: Any) -> str:
        names, error = _strings(
            args, "names", True, MAX_DESCRIBE_NAMES, "Retry with fewer names per call."
        )
        if error:
            return error
        tools: dict[str, dict[str, Any]] = {}
        not_found: list[str] = []
        errors: dict[str, str] = {}
        for name in names:
            definition = self.offer.deferred.get(name)
            if definition is not None:
                function = definition["function"]
                tools[name] = {
                    "description": function.get("description", ""),
                    "parameters": function.get("parameters", {}),
                }
            elif name in self.offer.names or self.known(name):
                errors[name] = self.not_deferred(name)
            else:
                not_found.append(name)
        result: dict[str, Any] = {"tools": tools}
        if not_found:
            result["not_found"] = not_found
            result["hint"] = NOT_FOUND_HINT
        if errors:
            result["errors"] = errors
        text = json.dumps(result, ensure_ascii=False)
        if tools:  # what the model now knows, to keep through compression
            self.described.update(tools)
            self._results[str(context.get("tool_call_id") or "")] = text
        return text

    # -- tool_call ---------------------------------------------------------------------

    def unwrap(self, call_id: str, arguments: Any) -> Inner | str:
        """The real call a `tool_call` names, or the error the model gets instead. One entry
        a call, as the bridge's schema says and Hermes requires for local tools: several
        calls are several tool_call calls, planned together like any other batch."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = None
        if not isinstance(arguments, dict):
            return tool_error("tool_call requires 'calls' (an array of {name, arguments})")
        entries, problem = entries_of(arguments)
        if problem:
            return tool_error(problem)
        if len(entries) > 1:
            return tool_error(batch_refused(entries))
        name, args = entries[0]
        if name not in self.offer.deferred:
            return tool_error(self.not_deferred(name))
        missing = _missing(self.offer.deferred[name], args)
        if missing:
            return missing
        return Inner(f"{call_id}.0", name, json.dumps(args, ensure_ascii=False), call_id)

    def not_deferred(self, name: str) -> str:
        """Why a name cannot be reached through the bridge, as Hermes says it: a tool sent in
        full is called directly; a tool this session does not offer is not retried; any other
        name is not a tool (with the deferred names it may have meant)."""
        if name in self.offer.names:
            return (
                f"'{name}' is a directly-listed tool, not a deferred one. "
                "Call it directly instead of via tool_call."
            )
        if self.known(name):
            return (
                f"'{name}' is not available in this session: it is not among the tools "
                "offered to you (its toolset is disabled for this platform/profile, the "
                "session hides it, or its requirements are not met). Do not retry it."
            )
        near = sorted(n for n in self.offer.deferred if n.endswith(f"__{name}"))
        hint = (
            f" Did you mean {', '.join(repr(n) for n in near)}?"
            if near
            else " Use tool_search to find the exact name."
        )
        return (
            f"'{name}' is not a known tool name. Deferred tools must be invoked through "
            f"tool_call by the exact name tool_search returns (e.g. mcp__<server>__<tool>).{hint}"
        )

    # -- compression -------------------------------------------------------------------

    def kept(
        self, messages: list[dict[str, Any]], earlier: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """The compressed conversation with the described schemas in it: when a
        tool_describe result was summarised, stubbed or cut, one note right after the first
        request holds every schema the model loaded (an older note is replaced). The note is
        the user's side, never the model's own words; the agent sends it as one message with
        the user messages beside it (core.agent.loop), as no endpoint takes two in a row."""
        out = [m for m in messages if not _is_note(m)]
        # a note in the conversation before this compression (`earlier`) or after it: what
        # the model loaded before, also in a session resumed since, which has only the note
        noted = [m for m in [*(earlier or []), *messages] if _is_note(m)]
        for note in noted:
            self.described = {**_schemas_in(note), **self.described}
        if not self.described:
            return out
        whole = {m.get("tool_call_id"): m.get("content") for m in out if m.get("role") == "tool"}
        if not noted and all(whole.get(i) == text for i, text in self._results.items()):
            return out
        head = next((i + 1 for i, m in enumerate(out) if m.get("role") == "user"), 0)
        body = json.dumps({"tools": self.described}, ensure_ascii=False)
        note = {"role": "user", "content": f"{KEPT_PREFIX}\n{body}"}
        return [*out[:head], note, *out[head:]]


def _is_note(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and content.startswith(KEPT_PREFIX)


def _schemas_in(note: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The schemas a note holds (none from one that cannot be read: cut, or hand-edited)."""
    try:
        body = json.loads(str(note["content"]).split("\n", 1)[1])
    except (IndexError, ValueError):
        return {}
    tools = body.get("tools") if isinstance(body, dict) else None
    return (
        {k: v for k, v in tools.items() if isinstance(v, dict)} if isinstance(tools, dict) else {}
    )


def entries_of(arguments: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """A `tool_call`'s entries as (name, arguments), or what is wrong with them (Hermes's
    words): `calls` as a list, one object, or JSON text; the single `{name, arguments}` shape
    too; arguments given as JSON text, empty or missing are read as Hermes reads them."""
    raw = arguments.get("calls")
    if raw is None:
        if not str(arguments.get("name") or "").strip():
            return [], "tool_call requires 'calls' (an array of {name, arguments})"
        raw = [{"name": arguments.get("name"), "arguments": arguments.get("arguments")}]
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            return [], f"tool_call 'calls' is not valid JSON: {exc}"
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        return [], "tool_call 'calls' must be a non-empty array of {name, arguments}"
    entries = []
    for position, item in enumerate(raw):
        if not isinstance(item, dict):
            return [], f"tool_call calls[{position}] must be an object with 'name' and 'arguments'"
        name = str(item.get("name") or "").strip()
        if not name:
            return [], f"tool_call calls[{position}] requires a 'name'"
        if name in BRIDGE_NAMES:
            return [], f"tool_call cannot invoke '{name}' (it is itself a bridge tool)"
        args = item.get("arguments")
        if args is None or (isinstance(args, str) and not args.strip()):
            args = {}
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError as exc:
                return [], f"tool_call calls[{position}].arguments is not valid JSON: {exc}"
        if not isinstance(args, dict):
            return [], f"tool_call calls[{position}].arguments must be an object"
        entries.append((name, args))
    return entries, ""


def batch_refused(entries: list[tuple[str, dict[str, Any]]]) -> str:
    """Several entries in one tool_call, refused in Hermes's words: the first entry is
    echoed back as the call to retry with (a small model re-sends a batch it is only told
    is wrong)."""
    name, args = entries[0]
    shown = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    if len(shown) > ECHO_ARGS_MAX_CHARS:
        shown = "{...}"
    quoted = json.dumps(name, ensure_ascii=False)
    retry = f'{{"calls":[{{"name":{quoted},"arguments":{shown}}}]}}'
    return (
        f"tool_call takes exactly one entry for local tools; you sent {len(entries)}. "
        f"Retry with only: {retry} then issue the remaining {len(entries) - 1} call(s) as "
        "separate tool_call invocations. Only connectors__ names may be batched together."
    )


def _missing(definition: dict[str, Any], args: dict[str, Any]) -> str:
    """A call made without reading the schema that lacks a required argument: told which,
    with the schema, before anything runs (as Hermes does)."""
    parameters = definition["function"].get("parameters") or {}
    missing = [r for r in Node.parameters_of(definition["function"]).required if r not in args]
    if not missing:
        return ""
    name = definition["function"]["name"]
    return tool_error(
        f"tool_call to '{name}' is missing required argument(s): {', '.join(missing)}. "
        "The tool was NOT invoked.",
        path="arguments",
        constraint="required",
        parameters=parameters,
        hint="Retry tool_call with 'arguments' matching the parameters schema above.",
    )


def inner_calls(name: str, arguments: Any) -> list[tuple[str, Any]]:
    """The real calls of a recorded call: a `tool_call`'s entries, or the call itself (also
    when a `tool_call`'s arguments cannot be read: it is shown as it was)."""
    if name != TOOL_CALL:
        return [(name, arguments)]
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return [(name, arguments)]
    if not isinstance(parsed, dict):
        return [(name, arguments)]
    entries, problem = entries_of(parsed)
    return [(name, arguments)] if problem else list(entries)


# -- search ----------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower().replace("_", " "))]


def _stem(word: str) -> str:
    """Plural and verb endings folded, enough for `files`/`file`, `searching`/`search`."""
    for ending in ("ing", "es", "s"):
        if len(word) > len(ending) + 2 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def search(deferred: dict[str, dict[str, Any]], query: str, limit: int) -> list[str]:
    """Deferred tools whose name or description holds every word of the query (a word no
    tool has makes the query find nothing, as the tool's description tells the model),
    best first: words in the name count more than words in the description."""
    terms = [t for t in dict.fromkeys(_words(query)) if t]
    if not terms:
        return []
    scored: list[tuple[float, str]] = []
    for name, definition in deferred.items():
        named = set(_words(name))
        described = _words(str(definition["function"].get("description") or ""))
        text = set(described)
        if not all(t in named or t in text for t in terms):
            continue
        score = sum(
            3.0 if t in named else 1.0 + described.count(t) / (1 + len(described)) for t in terms
        )
        scored.append((-score, name))
    return [name for _, name in sorted(scored)[:limit]]


def _strings(
    args: dict[str, Any], key: str, dedupe: bool, most: int, retry: str
) -> tuple[list[str], str]:
    """A list-of-strings argument (a bare string is a list of one), or its error."""
    raw = args.get(key)
    raw = [raw] if isinstance(raw, str) else raw
    if not isinstance(raw, list):
        return [], tool_error(f"{key} is required and must be an array of strings")
    out: list[str] = []
    for item in raw:
        text = str(item or "").strip()
        if text and (not dedupe or text not in out):
            out.append(text)
    if not out:
        return [], tool_error(f"{key} is required and must contain at least one non-empty string")
    if len(out) > most:
        return [], tool_error(f"too many {key}: {len(out)} > max {most}. {retry}")
    return out, ""
