"""Trust on change: a project's plugins and rules are used as the person last trusted them.

`HERMES_ENABLE_PROJECT_PLUGINS=1` says a person trusts the projects they work in; what it
trusts is each project's `.hermes` folder as it was when they agreed (`hermes-tui trust`,
the workbench's question, `chat`'s on a terminal), kept in hermes-tui's state
(`record.py`). What appeared or changed since (a plugin, a file of one, `approvals.yaml`;
on first sight all of it) is not loaded until a person agrees, shown its diff against the
trusted copy: a command the agent ran cannot have written code hermes-tui then runs
unconfined, or rules it then obeys. Headless, nothing new loads, and the session says so.

The question is asked through the session's `Asker` (kind TRUST), like every other; what
is trusted is what the question showed, not what the folder holds when it is answered.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from workbench.core.asking import ANSWERED, Ask, Asker, AskKind
from workbench.core.edits.diffs import FileDiff, unified
from workbench.core.trust import contents, record
from workbench.core.trust.contents import PLUGINS, RULES, Item

__all__ = ["PLUGINS", "RULES", "Change", "ProjectTrust", "TrustRequest", "ask_to_trust"]


@dataclass(frozen=True, slots=True)
class Change:
    path: str  # from the project: `.hermes/plugins/x/__init__.py`
    kind: str  # new, changed, removed
    diff: FileDiff  # against the trusted copy (a note when no text was kept)


@dataclass(frozen=True)
class TrustRequest:
    """What the question shows: the project, and what is new or changed in its `.hermes`."""

    id: int
    project: str
    changes: tuple[Change, ...]
    deadline: float
    timeout: float
    first: bool  # never trusted before: everything is new

    @property
    def summary(self) -> str:
        return summary(self.changes)

    @property
    def since(self) -> str:
        return since(not self.first)


class ProjectTrust:
    """One project's code and rules against what its person last trusted."""

    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.given = Path(os.path.abspath(project))
        self.project = Path(os.path.realpath(project))

    @property
    def record(self) -> record.Trusted:
        """What was trusted, read afresh (another session may have trusted it since)."""
        return record.load(self.home, self.project)

    def now(self) -> dict[str, Item]:
        return contents.read(self.project)

    def changes(self, now: Mapping[str, Item] | None = None) -> tuple[Change, ...]:
        """What differs from the trusted record (first sight: everything, as new)."""
        now = self.now() if now is None else now
        trusted = self.record.items
        found = []
        for rel in sorted(set(now) | set(trusted)):
            old, new = trusted.get(rel), now.get(rel)
            if new is not None and new.same(old):
                continue
            kind = "new" if old is None else "removed" if new is None else "changed"
            found.append(Change(rel, kind, _diff(rel, old, new)))
        return tuple(found)

    def holds(self, rel: str) -> bool:
        """`rel` (a file, or a plugin's folder with everything in it) is as trusted, now."""
        now = _under(self.now(), rel)
        trusted = _under(self.record.items, rel)
        if not trusted or set(now) != set(trusted):
            return False
        return all(item.same(trusted[k]) for k, item in now.items())

    def trusts(self, rel: str, text: str) -> bool:
        """`text`, read from `rel` just now, is what the person trusted there (one read, so
        the file cannot change between the check and its use)."""
        item = self.record.items.get(rel)
        if item is None or item.digest != hashlib.sha256(text.encode("utf-8")).hexdigest():
            return False
        return item.link == contents.links(self.project, self.project / rel)

    def digests(self, rel: str) -> dict[str, str]:
        """The trusted hash of each file under `rel`, by its path (for the loader's guard)."""
        return {str(self.project / k): v.digest for k, v in _under(self.record.items, rel).items()}

    def trusted_text(self, rel: str) -> str | None:
        item = self.record.items.get(rel)
        return item.text if item is not None else None

    def trust(self, items: Mapping[str, Item] | None = None) -> None:
        """Record `items` (what a person was shown; now's by default) as trusted."""
        record.save(self.home, self.project, dict(self.now() if items is None else items))

    def accept(self, rel: str) -> None:
        """hermes-tui itself just wrote `rel` for the person (a rule saved to the project's
        rules): that file as it is now is trusted; the rest stays as it was."""
        items = {k: v for k, v in self.record.items.items() if k != rel}
        now = self.now().get(rel)
        if now is not None:
            items[rel] = now
        self.trust(items)

    def rel(self, path: Path) -> str | None:
        """`path` (a plugin's folder) as the record names it, from the project."""
        for base in (self.project, self.given):
            try:
                return Path(os.path.abspath(path)).relative_to(base).as_posix()
            except ValueError:
                continue
        return None

    def since(self) -> str:
        return since(bool(self.record.at))

    def not_loaded(self, changes: tuple[Change, ...]) -> str:
        """The note for a session that could not ask: what was left out, and the way in."""
        return (
            f"{self.project}/.hermes: {summary(changes)}, {self.since()}: not loaded. "
            f"`hermes-tui trust --cwd {self.project}` shows the diff and trusts them"
        )


def _under(items: Mapping[str, Item], rel: str) -> dict[str, Item]:
    return {k: v for k, v in items.items() if k == rel or k.startswith(rel.rstrip("/") + "/")}


def _diff(rel: str, old: Item | None, new: Item | None) -> FileDiff:
    item = new if new is not None else old
    assert item is not None  # a change has one side at least
    if (old is not None and old.text is None) or (new is not None and new.text is None):
        note = f"binary or over {contents.MAX_TEXT // 1024} KB: no diff ({item.size:,} bytes)"
        return FileDiff(rel, created=old is None, note=note)
    diff = unified(rel, old.text if old is not None else None, (new.text or "") if new else "")
    if old is not None and new is not None and old.link != new.link:
        return replace(diff, note=f"a link on its way leads elsewhere now: {new.link or 'none'}")
    return diff


def since(trusted_before: bool) -> str:
    """How what differs came to differ, in words."""
    return "changed since you last trusted this project" if trusted_before else "never trusted here"


def summary(changes: tuple[Change, ...]) -> str:
    """`2 new (.hermes/plugins/x/__init__.py, …), 1 changed (.hermes/approvals.yaml)`."""
    parts = []
    for kind in ("new", "changed", "removed"):
        paths = [c.path for c in changes if c.kind == kind]
        if paths:
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            parts.append(f"{len(paths)} {kind} ({shown})")
    return ", ".join(parts)


async def ask_to_trust(asker: Asker, trust: ProjectTrust, timeout: float) -> bool | None:
    """Ask a person whether to trust what is new or changed in the project's `.hermes`
    (None: nothing is); True once they agreed and it is recorded. Silence, no one to ask,
    or any answer but yes: False."""
    now = trust.now()
    changes = trust.changes(now)
    if not changes:
        return None
    request = TrustRequest(
        asker.next_id(), str(trust.project), changes, asker.deadline(timeout), timeout,
        first=not trust.record.at,
    )  # fmt: skip
    answer, why = await asker.ask(Ask.about(AskKind.TRUST, request), False)
    if why != ANSWERED or answer is not True:
        return False
    trust.trust(now)  # what was shown, whatever the folder holds by now
    return True
