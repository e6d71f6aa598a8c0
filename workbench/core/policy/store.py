"""Where rules live, by scope, and how they are read, saved, changed and deleted.

* everywhere: `config.yaml`. Hermes's keys keep their meaning: `command_allowlist` (exact
  commands, or globs) allows, `approvals.deny` (globs, case-insensitive) denies; our rules are
  under `approvals.rules`. Written atomically under the config's lock.
* this project: `.hermes/approvals.yaml` in the project (`rules: [...]`), read only when the
  user trusts the project as for project plugins (`HERMES_ENABLE_PROJECT_PLUGINS=1`), and
  as the person last trusted it (`workbench.core.trust`): a file that changed since (or was
  never trusted) is not obeyed; the trusted copy stays in force, with the new file's deny
  and ask rules (they only ever stop more).
* this session: in memory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.config import (
    Config,
    ConfigError,
    hermes_home,
    load_config,
    set_path,
    untrusted_file,
    update_config,
)
from workbench.core.plugins.sources import PROJECT_ENV, truthy
from workbench.core.policy.policy import Policy
from workbench.core.policy.rules import Action, Rule, RuleError, Scope, parse_rule
from workbench.core.policy.shell import normalise
from workbench.core.trust import RULES, ProjectTrust

PROJECT_FILE = Path(".hermes") / "approvals.yaml"
_GLOB = frozenset("*?[")


def project_trusted() -> bool:
    return truthy(os.environ.get(PROJECT_ENV))


class RuleBook:
    """The rules of every scope; `policy` is what is in force now."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        project: Path | None = None,
        trusted: bool | None = None,
        home: Path | None = None,
    ) -> None:
        self.config_path = config.path if config is not None else None
        self.project_file = (project or Path.cwd()) / PROJECT_FILE
        self.trusted = project_trusted() if trusted is None else trusted
        home = home or (config.path.parent if config is not None else hermes_home())
        self.trust = ProjectTrust(home, self.project_file.parent.parent)
        self.session: list[Rule] = []
        self._lock = threading.Lock()
        self.policy = self._build(config)

    # -- reading ---------------------------------------------------------------------

    def reload(self) -> Policy:
        config = load_config(self.config_path) if self.config_path is not None else None
        with self._lock:
            self.policy = self._build(config)
        return self.policy

    def _build(self, config: Config | None) -> Policy:
        policy = Policy()
        if config is not None:
            _from_config(config, policy)
        self._from_project(policy)
        policy.rules.extend(self.session)
        return policy

    def _from_project(self, policy: Policy) -> None:
        path = self.project_file
        if not path.exists():
            return
        if not self.trusted:
            policy.notes.append(
                f"{path}: project rules are not used until you trust this project "
                f"({PROJECT_ENV}=1, as for project plugins)"
            )
            return
        if not _ours(path, self.project_file.parent.parent):
            _broken(policy, f"{path}: a link out of the project (not read)", may_deny=True)
            return
        untrusted = untrusted_file(path)
        if untrusted:
            _untrusted(policy, untrusted, lambda: self._project_rules(policy))
            return
        self._project_rules(policy)

    def _project_rules(self, policy: Policy) -> None:
        path = self.project_file
        text = yaml_text(path, policy)
        if text is not None and self.trust.trusts(RULES, text):
            _rules_text(policy, text, str(path))
            return
        # changed since the person trusted it, or never trusted: the copy they trusted
        # stays in force (an agent that emptied the file must not lift its deny rules);
        # of the new file only what stops more counts
        trusted = self.trust.trusted_text(RULES)
        if trusted is not None:
            _rules_text(policy, trusted, f"{path} (as you trusted it)")
        before = len(policy.rules)
        _rules_text(policy, text, str(path))
        policy.rules[before:] = [r for r in policy.rules[before:] if r.action is not Action.ALLOW]
        policy.notes.append(
            f"{path}: {self.trust.since()}: its allow rules are not used until you agree "
            f"(`hermes-tui trust --cwd {self.trust.project}` shows the diff)"
        )

    # -- changing --------------------------------------------------------------------

    def add(self, rule: Rule) -> Rule:
        """Save `rule` in its scope; `ConfigError` if its file cannot be written."""
        if rule.scope is Scope.SESSION:
            with self._lock:
                self.session.append(rule)
        else:
            self._write(rule.scope, lambda doc: _append(doc, rule))
        self.reload()
        return rule

    def remove(self, rule: Rule) -> None:
        if rule.scope is Scope.SESSION:
            with self._lock:
                self.session = [r for r in self.session if not r.same(rule)]
        else:
            self._write(rule.scope, lambda doc: _delete(doc, rule))
        self.reload()

    def replace(self, old: Rule, new: Rule) -> Rule:
        """Change a rule: the old one goes, the new one is added (in one write)."""
        if old.scope is not new.scope or old.scope is Scope.SESSION:
            self.remove(old)
            return self.add(new)

        def swap(doc: Any) -> None:
            _delete(doc, old)
            _append(doc, new)

        self._write(old.scope, swap)
        self.reload()
        return new

    def _write(self, scope: Scope, mutate: Callable[[Any], None]) -> None:
        if scope is Scope.PROJECT:
            if not self.trusted:
                raise ConfigError(
                    f"this project is not trusted ({PROJECT_ENV}=1): its rules would not be used"
                )
            if not _ours(self.project_file, self.project_file.parent.parent):
                raise ConfigError(f"{self.project_file} is a link out of the project: not written")
            if self.project_file.exists() and not self.trust.holds(RULES):
                raise ConfigError(
                    f"{self.project_file} changed since you trusted it: not written "
                    "(`hermes-tui trust` shows the change)"
                )
            update_config(mutate, self.project_file)
            self.trust.accept(RULES)  # the person's own rule, written by hermes-tui
            return
        if self.config_path is None:
            raise ConfigError("no config file to save the rule to")
        update_config(mutate, self.config_path)


# -- config.yaml ---------------------------------------------------------------------


def _from_config(config: Config, policy: Policy) -> None:
    if config.untrusted:
        _untrusted(policy, config.untrusted, lambda: _config_rules(config, policy))
        return
    _config_rules(config, policy)


def _untrusted(policy: Policy, why: str, read: Callable[[], None]) -> None:
    """Rules from a file the agent may have rewritten: its deny and ask rules still count,
    its allow rules are dropped, and every call asks (`--yes` and `approvals.mode: off` do
    not answer) until the file is trusted again."""
    before = len(policy.rules)
    read()
    policy.rules[before:] = [r for r in policy.rules[before:] if r.action is not Action.ALLOW]
    _broken(policy, f"not trusted: {why}; its allow rules are not used", may_deny=True)


def _config_rules(config: Config, policy: Policy) -> None:
    name = config.path.name
    if config.error:  # its deny rules and switches are unknown: fail closed
        _broken(policy, f"{config.error} (its rules cannot be read)", may_deny=True)
        return
    allow = config.get("command_allowlist") or []
    if not isinstance(allow, list):
        policy.problems.append(f"{name} command_allowlist: must be a list of commands (ignored)")
        allow = []
    for i, entry in enumerate(allow):
        origin = f"{name} command_allowlist[{i}]"
        if not isinstance(entry, str) or not entry.strip():
            policy.problems.append(f"{origin}: {entry!r} is not a command (ignored)")
            continue
        glob = bool(_GLOB & set(entry))
        kind = "command_glob" if glob else "command"
        policy.rules.append(
            Rule(Action.ALLOW, kind, normalise(entry), None, Scope.EVERYWHERE, origin, glob)
        )
    deny = config.get("approvals.deny") or []
    for i, entry in enumerate(deny if isinstance(deny, list) else [deny]):
        origin = f"{name} approvals.deny[{i}]"
        if not isinstance(entry, str) or not entry.strip():
            _broken(policy, f"{origin}: {entry!r} is not a command glob", may_deny=True)
            continue
        policy.rules.append(
            Rule(Action.DENY, "command_glob", normalise(entry), None, Scope.EVERYWHERE, origin,
                 ignore_case=True)
        )  # fmt: skip
    rules = config.get("approvals.rules") or []
    if not isinstance(rules, list):
        _broken(policy, f"{name} approvals.rules: must be a list of rules", may_deny=True)
        return
    _add_rules(policy, rules, Scope.EVERYWHERE, f"{name} approvals.rules")


def _add_rules(policy: Policy, entries: list[Any], scope: Scope, where: str) -> None:
    for i, entry in enumerate(entries):
        origin = f"{where}[{i}]"
        try:
            policy.rules.append(parse_rule(entry, scope=scope, origin=origin))
        except RuleError as exc:
            allows = isinstance(entry, dict) and entry.get("action") == Action.ALLOW
            _broken(policy, str(exc), may_deny=not allows)


def _broken(policy: Policy, problem: str, *, may_deny: bool) -> None:
    """A rule that cannot be read: an allow rule is dropped; one that may have denied or
    asked makes every call ask, so it never lets through what it was there to stop."""
    if may_deny:
        policy.problems.append(f"{problem} — until it is fixed, every call asks")
        policy.fail_closed = policy.fail_closed or f"a rule cannot be read ({problem})"
    else:
        policy.problems.append(f"{problem} (ignored)")


def _ours(path: Path, project: Path) -> bool:
    """The rules file is really the project's own (no link leads it elsewhere): a link to
    another file would be replaced by a rule saved here."""
    expected = os.path.join(os.path.realpath(project), *PROJECT_FILE.parts)
    return os.path.realpath(path) == expected


def yaml_text(path: Path, policy: Policy) -> str | None:
    """The rules file's text (None, said as a problem that fails closed, when unreadable)."""
    from workbench.core.storage import yaml_file

    try:
        return yaml_file.read_text(path)
    except (yaml_file.YAMLFileError, OSError) as exc:
        _broken(policy, str(exc), may_deny=True)
        return None


def _rules_text(policy: Policy, text: str | None, where: str) -> None:
    """The rules of a project rules file's text (`rules: [...]`)."""
    from workbench.core.storage import yaml_file

    if text is None:
        return
    try:
        data = yaml_file.parse(text, Path(where))
    except yaml_file.YAMLFileError as exc:
        _broken(policy, str(exc), may_deny=True)
        return
    if not isinstance(data, dict) or not isinstance(data.get("rules", []), list):
        _broken(policy, f"{where}: expected `rules:` with a list of rules", may_deny=True)
        return
    _add_rules(policy, data.get("rules") or [], Scope.PROJECT, where)


def _append(doc: Any, rule: Rule) -> None:
    exact = rule.action is Action.ALLOW and rule.kind == "command" and rule.risks is None
    if exact and rule.scope is Scope.EVERYWHERE:  # Hermes's key for an exact command
        allow = list(doc.get("command_allowlist") or [])
        if rule.pattern not in allow:
            allow.append(rule.pattern)
        set_path(doc, "command_allowlist", allow)
        return
    key = "rules" if rule.scope is Scope.PROJECT else "approvals.rules"
    entries = list(_get(doc, key) or [])
    if not any(_is(e, rule) for e in entries):
        entries.append(rule.entry())
    set_path(doc, key, entries)


def _delete(doc: Any, rule: Rule) -> None:
    key = "rules" if rule.scope is Scope.PROJECT else "approvals.rules"
    entries = _get(doc, key)
    if isinstance(entries, list):
        set_path(doc, key, [e for e in entries if not _is(e, rule)])
    if rule.scope is Scope.PROJECT:
        return
    if rule.action is Action.ALLOW and isinstance(doc.get("command_allowlist"), list):
        allowed = doc["command_allowlist"]
        set_path(
            doc,
            "command_allowlist",
            [e for e in allowed if not (isinstance(e, str) and _text(e, rule))],
        )
    deny = _get(doc, "approvals.deny")
    if rule.action is Action.DENY and isinstance(deny, list):
        set_path(
            doc, "approvals.deny", [e for e in deny if not (isinstance(e, str) and _text(e, rule))]
        )


def _text(entry: str, rule: Rule) -> bool:
    return rule.kind in ("command", "command_glob") and normalise(entry) == rule.pattern


def _is(entry: Any, rule: Rule) -> bool:
    try:
        return parse_rule(entry, scope=rule.scope, origin="").same(rule)
    except RuleError:
        return False


def _get(doc: Any, dotted: str) -> Any:
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node
