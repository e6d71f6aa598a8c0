"""What a command runs, for the person asked to let it out of the sandbox.

A command that runs a script (`./x.sh`, `bash x.sh`, `python x.py`, `make`) does what the
script says, which the command line does not show. So the question names each script it
runs (the analysis's `Verdict.runs`, those that exist), and shows what changed in it: its
diff against the turn's checkpoint when it changed since, or its whole text when this
session wrote it. A script that is neither is named only: it is as the turn found it.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from workbench.core.checkpoints.model import CheckpointError
from workbench.core.checkpoints.turns import Coverage
from workbench.core.edits import diffs

MAX_SCRIPTS = 5  # named in one question; a command running more is rare


@dataclass(frozen=True, slots=True)
class Script:
    path: str
    why: str = ""  # "changed since this turn's checkpoint", "written by this session", ""
    diff: diffs.FileDiff | None = None

    def describe(self) -> str:
        return f"{self.path} ({self.why})" if self.why else self.path


def scripts_run(
    runs: Collection[str], cwd: str, written: Collection[str], coverage: Coverage | None
) -> tuple[Script, ...]:
    """The scripts among `runs` (a verdict's) that exist, each with what changed in it."""
    found = [p for p in dict.fromkeys(runs) if os.path.isfile(p)][:MAX_SCRIPTS]
    return tuple(_script(path, cwd, written, coverage) for path in found)


def _script(path: str, cwd: str, written: Collection[str], coverage: Coverage | None) -> Script:
    changed = _since_checkpoint(path, cwd, coverage)
    if changed is not None:
        return Script(path, "changed since this turn's checkpoint", changed)
    if os.path.realpath(path) in written:
        before = diffs.Before(Path(path))  # as if new: all of it is the session's
        now = diffs.before("write_file", {"path": path}, cwd)
        text = now.text if now is not None and not now.note else None
        diff = diffs.compare(before, text) if text is not None else None
        return Script(path, "written by this session", diff)
    return Script(path)


def _since_checkpoint(path: str, cwd: str, coverage: Coverage | None) -> diffs.FileDiff | None:
    if coverage is None or coverage.store is None or coverage.commit is None:
        return None
    try:
        diff = coverage.store.file_diff(cwd, coverage.commit[:12], path)
    except (CheckpointError, OSError):
        return None  # outside the working directory, or left out of checkpoints
    return None if diff.note == "no change" else diff
