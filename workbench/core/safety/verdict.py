"""What the detector says about a command: findings with their spans, and the overall verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Severity(IntEnum):
    NORMAL = 1  # destructive: ask the user
    HIGH = 2  # destructive and touching something precious (system paths, keys, rc files)
    HARDLINE = 3  # never runs, whatever the user or the config says


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # a stable id ("delete", "overwrite", "git-force-push", ...)
    reason: str  # for a person: what the command would do
    span: tuple[int, int]  # character offsets into the analysed command
    severity: Severity = Severity.NORMAL
    writes: tuple[str, ...] = ()  # files it deletes or overwrites, as written
    contextual: bool = False  # depends on the session (a file written earlier), not the text


@dataclass(frozen=True, slots=True)
class Verdict:
    command: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def dangerous(self) -> bool:
        return bool(self.findings)

    @property
    def hardline(self) -> bool:
        return any(f.severity is Severity.HARDLINE for f in self.findings)

    @property
    def severity(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    @property
    def reasons(self) -> list[str]:
        seen: dict[str, None] = {}
        for finding in self.findings:
            seen.setdefault(finding.reason, None)
        return list(seen)

    @property
    def spans(self) -> list[tuple[int, int]]:
        return sorted({f.span for f in self.findings})

    @property
    def rules(self) -> frozenset[str]:
        return frozenset(f.rule for f in self.findings)

    @property
    def writes(self) -> list[str]:
        seen: dict[str, None] = {}
        for finding in self.findings:
            for path in finding.writes:
                seen.setdefault(path, None)
        return list(seen)
