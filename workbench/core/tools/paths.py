"""How a tool's path argument becomes a path: one rule, shared by the tools and the planner."""

from __future__ import annotations

import os
from pathlib import Path


def resolve_path(path: str, cwd: str | os.PathLike[str] | None = None) -> Path:
    """`~` and `$VARS` expanded, relative to `cwd` (default: the process's), `..` folded."""
    expanded = os.path.expandvars(os.path.expanduser(path))
    base = Path(cwd) if cwd is not None else Path.cwd()
    return Path(os.path.normpath(base / expanded))
