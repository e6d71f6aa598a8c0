"""Destructive-command detection on a real shell parser (tree-sitter-bash).

`analyze_command(cmd)` returns a `Verdict`: whether the command is dangerous, why, the spans
of the command each reason points at (the approval modal highlights them) and the files it
would delete or overwrite. A command that cannot be parsed is dangerous, with that reason.
Hardline findings (the whole filesystem, a home directory, system directories, raw disks,
fork bombs, power-off) never run, whatever anyone approves.
"""

from __future__ import annotations

import functools
import os

from workbench.core.safety.analyzer import Analyzer, default_cwd, sensitive_path
from workbench.core.safety.verdict import Finding, Severity, Verdict

__all__ = ["Finding", "Severity", "Verdict", "analyze_command", "sensitive_path"]


def analyze_command(
    command: str,
    cwd: str | os.PathLike[str] | None = None,
    recent_writes: frozenset[str] = frozenset(),
) -> Verdict:
    """Judge every simple command in `command`.

    `cwd` lets relative targets be resolved (`rm -rf .` in the home directory is hardline);
    `recent_writes` are files the session wrote, so running one of them is flagged.
    """
    return _analyze(command, default_cwd(cwd), frozenset(recent_writes))


@functools.lru_cache(maxsize=1024)
def _analyze(command: str, cwd: str | None, recent_writes: frozenset[str]) -> Verdict:
    if not command.strip():
        return Verdict(command)
    try:
        findings = Analyzer(command, cwd=cwd, recent_writes=recent_writes).run()
    except RecursionError:  # nested past what can be checked: not understood, so it asks
        reason = "the command is nested too deeply to be checked"
        findings = [Finding("unparsable", reason, (0, len(command)))]
    return Verdict(command, tuple(findings))
