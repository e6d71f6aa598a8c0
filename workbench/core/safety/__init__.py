"""Destructive-command detection on a real shell parser (tree-sitter-bash).

`analyze_command(cmd)` returns a `Verdict`: whether the command is dangerous, why, the spans
of the command each reason points at (the approval modal highlights them) and the files it
would delete or overwrite. A command that cannot be parsed or followed is dangerous, with
that reason. Hardline findings (the whole filesystem, a home directory, system directories,
raw disks, hermes-tui's own state, credentials, fork bombs, power-off) never run, whatever
anyone approves.

Targets are judged where they really are: symlinks on disk and links an earlier part of the
same command makes are followed, so the verdict depends on the filesystem; only a verdict
that looked at no path is cached.
"""

from __future__ import annotations

import os

from workbench.core.safety.analyzer import Analyzer, default_cwd
from workbench.core.safety.places import sensitive_path
from workbench.core.safety.verdict import Finding, Severity, Verdict

__all__ = ["Finding", "Severity", "Verdict", "analyze_command", "sensitive_path"]

_CACHE: dict[tuple[str, str | None, frozenset[str], tuple[str, ...] | None], Verdict] = {}
_CACHE_SIZE = 1024


def analyze_command(
    command: str,
    cwd: str | os.PathLike[str] | None = None,
    recent_writes: frozenset[str] = frozenset(),
    write_roots: tuple[str, ...] | None = None,
) -> Verdict:
    """Judge every simple command in `command`.

    `cwd` lets relative targets be resolved (`rm -rf .` in the home directory is hardline);
    `recent_writes` are files the session wrote, so running one of them is flagged;
    `write_roots` are where writes need no approval (the session's directory and the roots
    the user added); None judges no write by where it lands.
    """
    key = (command, default_cwd(cwd), frozenset(recent_writes), write_roots)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    verdict, pure = _analyze(*key)
    if pure:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = verdict
    return verdict


def _analyze(
    command: str,
    cwd: str | None,
    recent_writes: frozenset[str],
    write_roots: tuple[str, ...] | None = None,
) -> tuple[Verdict, bool]:
    """The verdict, and whether it is pure (it consulted no path, so it may be cached)."""
    if not command.strip():
        return Verdict(command), True
    analyzer = Analyzer(command, cwd=cwd, recent_writes=recent_writes, write_roots=write_roots)
    try:
        findings = analyzer.run()
    except RecursionError:  # nested past what can be checked: not understood, so it asks
        reason = "the command is nested too deeply to be checked"
        finding = Finding("unparsable", reason, (0, len(command)), opaque=True)
        return Verdict(command, (finding,)), True
    ran = tuple(dict.fromkeys(analyzer.ran))
    runs = tuple(dict.fromkeys(analyzer.runs))
    verdict = Verdict(command, tuple(findings), tuple(sorted(analyzer.written)), ran, runs)
    return verdict, not analyzer.looked
