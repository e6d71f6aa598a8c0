"""The environment a child process of ours gets: an allowlist, never our secrets.

The terminal, MCP servers and the sandbox all start from `scrubbed_env`: what a shell needs
to find programs, speak the user's language and draw on the terminal. API keys (`*_API_KEY`,
`AWS_*`, tokens), `HERMES_HOME` and everything else stay behind unless the user names a
variable in `terminal.env_passthrough` (the terminal) or a server's own `env` (MCP).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.core.env_names import ALLOWED_NAMES, ALLOWED_PREFIXES, allowed

__all__ = ["ALLOWED_NAMES", "ALLOWED_PREFIXES", "allowed", "passthrough_names", "scrubbed_env"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def scrubbed_env(
    passthrough: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowlisted variables of `source` (default: ours), the named ones, then `extra`."""
    source = os.environ if source is None else source
    names = set(passthrough)
    env = {k: v for k, v in source.items() if allowed(k) or k in names}
    return {**env, **(extra or {})}


def passthrough_names(value: Any) -> tuple[list[str], list[str]]:
    """`terminal.env_passthrough` (Hermes's list of variable names) and what is wrong in it."""
    if value is None:
        return [], []
    if isinstance(value, str):  # one name, or a comma-separated list, written by hand
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list):
        return [], [f"terminal.env_passthrough must be a list of names, not {type(value).__name__}"]
    names, problems = [], []
    for item in value:
        if isinstance(item, str) and _NAME.match(item):
            names.append(item)
        else:
            problems.append(f"terminal.env_passthrough: {item!r} is not a variable name")
    return names, problems
