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
    # the gate could not read what this acts on (a target, program or code known only at run
    # time, a construct it does not interpret): `--yes` approves it only when confined
    opaque: bool = False
    # the folder the shell is in when it acts, where `writes` written relative are: the
    # command's own, or None once the command changes folder (`cd`, `pushd`, `env -C`)
    # before it, as bash's folder is then known only when it runs
    where: str | None = None
    # only a person approves it: `--yes` and `approvals.mode: off` never do, confined or not
    # (what the sandbox would refuse, asked of a call that runs where it cannot hold it)
    in_person: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    command: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    # every file the command writes, resolved where it can be: running one later asks
    touched: tuple[str, ...] = ()
    # every simple command it runs, wrappers peeled, also those inside payloads and inline
    # code (`os.system("git push")`): what deny and ask rules look at besides its own words
    ran: tuple[tuple[str | None, ...], ...] = ()
    # every file it runs as code (`./x.sh`, `bash x.sh`, `python x.py`, make's makefile),
    # resolved where it can be: what a person is shown before it runs outside the sandbox
    runs: tuple[str, ...] = ()

    @property
    def dangerous(self) -> bool:
        return bool(self.findings)

    @property
    def hardline(self) -> bool:
        return any(f.severity is Severity.HARDLINE for f in self.findings)

    @property
    def opaque(self) -> bool:
        """Some finding is about what the gate could not read: only confinement holds it."""
        return any(f.opaque for f in self.findings)

    @property
    def opaque_reasons(self) -> list[str]:
        seen: dict[str, None] = {}
        for finding in self.findings:
            if finding.opaque:
                seen.setdefault(finding.reason, None)
        return list(seen)

    @property
    def in_person_reasons(self) -> list[str]:
        return list(dict.fromkeys(f.reason for f in self.findings if f.in_person))

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
    def span(self) -> tuple[int, int] | None:
        """From the start of the first dangerous part to the end of the last (None: safe)."""
        if not self.findings:
            return None
        return min(f.span[0] for f in self.findings), max(f.span[1] for f in self.findings)

    def as_dict(self) -> dict[str, object]:
        """The verdict as plain data: what a simulator or `approvals test` shows."""
        return {
            "command": self.command,
            "dangerous": self.dangerous,
            "hardline": self.hardline,
            "opaque": self.opaque,
            "severity": self.severity.name.lower() if self.severity else None,
            "reasons": self.reasons,
            "span": list(self.span) if self.span else None,
            "findings": [
                {
                    "rule": f.rule,
                    "reason": f.reason,
                    "severity": f.severity.name.lower(),
                    "start": f.span[0],
                    "end": f.span[1],
                    "text": self.command[f.span[0] : f.span[1]],
                    "writes": list(f.writes),
                    "contextual": f.contextual,
                    "opaque": f.opaque,
                    "in_person": f.in_person,
                }
                for f in self.findings
            ],
        }

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
