"""Approval rules: allow, ask or deny a call, matched on its tool, toolset, MCP server or command.

A rule is one mapping with an `action` and exactly one matcher:

    {action: deny,  command_prefix: "git push"}     # words: `git push -f`, not `git pushx`
    {action: allow, command: "make test"}           # this exact command (whitespace aside)
    {action: allow, command_glob: "npm run *"}      # a glob over the command's words
    {action: ask,   tool: "mcp__github__*"}         # a tool name or glob
    {action: deny,  toolset: web}                   # every tool of a toolset (name or glob)
    {action: ask,   mcp_server: github}             # every tool of one MCP server

An allow rule may carry `risks: [delete, ...]`: it then approves only commands whose
detector findings are all of those kinds. Rules read from a file are checked here, and a
bad one is named with what is wrong (`parse_rule` raises `RuleError`).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from workbench.core.policy.shell import ShellCommand, normalise, split_words
from workbench.core.safety.commands import GIT_VALUE_OPTIONS


class Action(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Scope(StrEnum):
    SESSION = "session"  # in memory, gone when the session ends
    PROJECT = "project"  # .hermes/approvals.yaml in the project (used once trusted)
    EVERYWHERE = "everywhere"  # config.yaml


COMMAND_KINDS = ("command", "command_prefix", "command_glob")
TOOL_KINDS = ("tool", "toolset", "mcp_server")
KINDS = (*COMMAND_KINDS, *TOOL_KINDS)
KEYS = frozenset({"action", "risks", *KINDS})
MAX_PATTERN = 4096


class RuleError(ValueError):
    """A rule that cannot be used; the message says what is wrong with it."""


@dataclass(frozen=True)
class CallFacts:
    """What rules match on: the tool, where it comes from, and the command it would run."""

    tool: str
    toolset: str = ""
    server: str = ""  # the MCP server that owns the tool, if any
    command: str | None = None  # the terminal's command


@dataclass(frozen=True)
class Rule:
    action: Action
    kind: str  # one of KINDS
    pattern: str
    risks: frozenset[str] | None = None  # allow rules: the detector findings covered (None: any)
    scope: Scope = Scope.EVERYWHERE
    origin: str = ""  # where it was read, e.g. "config.yaml approvals.rules[2]"
    hermes_glob: bool = False  # a command_allowlist glob: never approves a risky command
    ignore_case: bool = False  # approvals.deny globs are matched as Hermes does
    _words: tuple[str | None, ...] = field(default=(), compare=False, repr=False)
    _match: Any = field(default=None, compare=False, repr=False)  # the glob, compiled once

    def __post_init__(self) -> None:
        if self.kind == "command_prefix" and not self._words:
            object.__setattr__(self, "_words", split_words(self.pattern))
        if self.kind != "command_prefix":
            object.__setattr__(self, "_match", _compile(self.pattern, self.ignore_case))

    # -- what it says ----------------------------------------------------------------

    def describe(self) -> str:
        what = {
            "command": f"the command `{self.pattern}`",
            "command_prefix": f"commands starting with `{self.pattern}`",
            "command_glob": f"commands matching `{self.pattern}`",
            "tool": f"tool {self.pattern}",
            "toolset": f"tools of toolset {self.pattern}",
            "mcp_server": f"tools of MCP server {self.pattern}",
        }[self.kind]
        risks = f" (only for: {', '.join(sorted(self.risks))})" if self.risks else ""
        return f"{self.action.value} {what}{risks}"

    def entry(self) -> dict[str, Any]:
        """The mapping this rule is saved as."""
        entry: dict[str, Any] = {"action": self.action.value, self.kind: self.pattern}
        if self.risks is not None:
            entry["risks"] = sorted(self.risks)
        return entry

    def same(self, other: Rule) -> bool:
        """The same rule, wherever it was read from."""
        return (self.action, self.kind, self.pattern, self.risks) == (
            other.action,
            other.kind,
            other.pattern,
            other.risks,
        )

    # -- matching --------------------------------------------------------------------

    def matches(self, facts: CallFacts, shell: ShellCommand | None) -> bool:
        """Whether this rule is about the call. Command rules see only the terminal's command;
        a deny or ask rule matches when any command it runs matches, an allow rule only when
        the command is one plain command that matches."""
        if self.kind in TOOL_KINDS:
            return self._tool_matches(facts)
        if shell is None:
            return False
        if self.action is Action.ALLOW:
            if self.kind == "command":
                return shell.text == self.pattern
            return shell.plain and self._one_matches(shell.commands[0], shell.texts[0])
        if self.kind == "command" and shell.text == self.pattern:
            return True
        if self.kind == "command_glob" and self._glob(shell.text):
            return True
        return any(map(self._one_matches, shell.commands, shell.texts))

    def _tool_matches(self, facts: CallFacts) -> bool:
        if self.kind == "tool":
            return bool(self._match(facts.tool))
        if self.kind == "toolset":
            return bool(facts.toolset) and self._match(facts.toolset)
        return bool(facts.server) and self._match(facts.server)

    def _one_matches(self, words: tuple[str | None, ...], text: str | None) -> bool:
        """One simple command: its words, and their text (None when a word is unknown)."""
        if self.kind == "command_prefix" and self.action is not Action.ALLOW:
            return self._reaches(words) is True
        if text is None:
            return False
        if self.kind == "command":
            return text == self.pattern
        if self.kind == "command_glob":
            return self._glob(text)
        prefix = self._words
        if not prefix or len(words) < len(prefix):
            return False
        head = words[0] or ""
        if "/" not in (prefix[0] or "") and "/" in head:
            head = head.rsplit("/", 1)[-1]  # /usr/bin/git push is git push
        return head == prefix[0] and words[1 : len(prefix)] == prefix[1:]

    def _reaches(self, words: tuple[str | None, ...]) -> bool | None:
        """A deny or ask rule's prefix against one command, past the options before the
        words it names (`git -C dir push` is `git push`): True, False, or None when a word
        it needs is known only at run time (`git $(echo push)`)."""
        prefix = self._words
        if not prefix or not words or words[0] is None:
            return False
        head = words[0]
        if "/" not in (prefix[0] or "") and "/" in head:
            head = head.rsplit("/", 1)[-1]
        if head != prefix[0]:
            return False
        want, rest = prefix[1:], words[1:]
        starts = [0] if (want[:1] and (want[0] or "").startswith("-")) else _starts(head, rest)
        found: bool | None = False
        for start in starts:
            got = rest[start : start + len(want)]
            if any(g is not None and g != w for g, w in zip(got, want, strict=False)):
                continue
            if None in got or (len(got) < len(want) and None in rest):
                found = None
            elif len(got) == len(want):
                return True
        return found

    def hides(self, shell: ShellCommand | None) -> bool:
        """A prefix rule that may apply to a command whose words are known only when it runs."""
        return (
            self.kind == "command_prefix"
            and shell is not None
            and any(self._reaches(words) is None for words in shell.commands)
        )

    def _glob(self, text: str) -> bool:
        return bool(self._match(text.lower() if self.ignore_case else text))

    def prefix_head(self) -> str | None:
        """A prefix rule's program name (what it can only match), else None."""
        if self.kind != "command_prefix" or not self._words or self._words[0] is None:
            return None
        return self._words[0].rsplit("/", 1)[-1] if "/" not in self._words[0] else None

    def might_match(self, shell: ShellCommand | None) -> bool:
        """A deny rule on commands, where the command hides what it runs."""
        return self.kind in COMMAND_KINDS and shell is not None and bool(shell.opaque)


# Programs' options (before a subcommand) that take the next word as their value.
_OPTION_VALUES = {"git": GIT_VALUE_OPTIONS}


def _starts(head: str, rest: tuple[str | None, ...]) -> list[int]:
    """Where a subcommand may start after a program's leading options. A program whose
    options are not known here may give each option a value: every way is tried."""
    values = _OPTION_VALUES.get(head)
    starts, frontier = [], [0]
    seen = set()
    while frontier:
        i = frontier.pop()
        if i in seen or i > len(rest):
            continue
        seen.add(i)
        word = rest[i] if i < len(rest) else None
        if i < len(rest) and word is not None and word.startswith("-") and word != "-":
            takes = "=" not in word and (values is None or word in values)
            frontier.append(i + 1 if values is None or not takes else i + 2)
            if values is None and takes:
                frontier.append(i + 2)
        else:
            starts.append(i)
    return sorted(starts)


def _compile(pattern: str, ignore_case: bool) -> Any:
    """A matcher for a glob (`fnmatch` syntax); a plain name is compared as it is."""
    pattern = pattern.lower() if ignore_case else pattern
    if not any(c in pattern for c in "*?["):
        return pattern.__eq__
    return re.compile(fnmatch.translate(pattern)).match


def parse_rule(entry: Any, *, scope: Scope, origin: str) -> Rule:
    """A rule from its mapping; `RuleError` says what is wrong, naming `origin`."""
    if not isinstance(entry, dict):
        raise RuleError(f"{origin}: a rule is a mapping like {{action: deny, tool: NAME}}")
    unknown = sorted(str(k) for k in entry if k not in KEYS and k != "prefix")
    if unknown:
        raise RuleError(f"{origin}: unknown key {', '.join(unknown)} (known: {_known()})")
    entry = _legacy(entry)
    action = entry.get("action")
    if action not in tuple(Action):
        raise RuleError(f"{origin}: action must be allow, ask or deny, not {action!r}")
    kinds = [k for k in KINDS if k in entry]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none"
        raise RuleError(f"{origin}: needs exactly one of {', '.join(KINDS)} (found: {found})")
    kind = kinds[0]
    pattern = entry[kind]
    if not isinstance(pattern, str) or not pattern.strip():
        raise RuleError(f"{origin}: {kind} must be a non-empty string, not {pattern!r}")
    if len(pattern) > MAX_PATTERN:
        raise RuleError(f"{origin}: {kind} is longer than {MAX_PATTERN} characters")
    if kind in COMMAND_KINDS:
        pattern = normalise(pattern)
    elif pattern != pattern.strip():
        raise RuleError(f"{origin}: {kind} {pattern!r} has spaces around it")
    return Rule(Action(action), kind, pattern, _risks(entry, origin, action), scope, origin)


def _legacy(entry: dict[str, Any]) -> dict[str, Any]:
    """Earlier versions saved `{prefix: TEXT, risks: [...]}`: an allow rule on a prefix."""
    if "prefix" not in entry:
        return entry
    entry = dict(entry)
    entry.setdefault("action", "allow")
    entry["command_prefix"] = entry.pop("prefix")
    return entry


def _risks(entry: dict[str, Any], origin: str, action: str) -> frozenset[str] | None:
    if "risks" not in entry:
        return None
    risks = entry["risks"]
    if action != Action.ALLOW:
        raise RuleError(f"{origin}: risks applies to allow rules only")
    if isinstance(risks, str):
        risks = [risks]
    if not isinstance(risks, list) or not all(isinstance(r, str) and r for r in risks):
        raise RuleError(f"{origin}: risks must be a list of detector findings, like [delete]")
    return frozenset(risks)


def _known() -> str:
    return ", ".join(("action", *KINDS, "risks"))
