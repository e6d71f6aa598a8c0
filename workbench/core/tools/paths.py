"""How a tool's path argument becomes a path: one rule, shared by the tools and the planner.

`~` is the home, as for a command. Of `$VARS`, only those a command itself gets and a path
is made of are expanded (PATH_VARIABLES, from the scrubbed environment's allowlist): a
model's `read_file {"path": "$OPENAI_API_KEY"}` stays that text, so no error message can
show hermes-tui's own key ("File not found: sk-...").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from workbench.core.env_names import allowed

# The home, the user's names, the temporary folder, the working directory, the XDG folders.
PATH_VARIABLES = frozenset(
    {"HOME", "USER", "LOGNAME", "TMPDIR", "PWD"}
    | {f"XDG_{n}" for n in ("CONFIG_HOME", "CACHE_HOME", "DATA_HOME", "STATE_HOME", "RUNTIME_DIR")}
)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def resolve_path(path: str, cwd: str | os.PathLike[str] | None = None) -> Path:
    """`~` and PATH_VARIABLES expanded, relative to `cwd` (default: the process's), `..`
    folded; any other `$NAME` is kept as written."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    expanded = expand_variables(os.path.expanduser(path), str(base))
    return Path(os.path.normpath(base / expanded))


def expand_variables(text: str, cwd: str) -> str:
    """`$NAME` and `${NAME}` for the names in PATH_VARIABLES that are set (`$PWD` is
    `cwd`, as bash sets it for a command run there); every other one left as it is."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name == "PWD":
            return cwd
        found = os.environ.get(name) if name in PATH_VARIABLES and allowed(name) else None
        return found if found is not None else match.group(0)

    return _VARIABLE.sub(value, text) if "$" in text else text
