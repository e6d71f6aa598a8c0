"""Where the terminal's commands and the file tools run: Hermes's `terminal.backend`.

* `local`: here, as the user (the default), in the sandbox (bubblewrap, see `sandbox.py`)
  where it works unless `terminal.sandbox: false`; where it cannot run, unconfined and said
  so (`terminal.sandbox: true` refuses instead);
* `ssh`: on another machine through the system's OpenSSH client, the file tools too;
* any other backend Hermes knows (docker, modal, ...) is not run by hermes-tui: every
  terminal and file call is refused with a message naming it. Never a silent fall back to
  local, which would run on this machine what the user meant to keep off it.

The tools ask `backend_for(kw)` (the executor passes the session's backend); the terminal
builds its process from `Backend.shell`, the file tools go to `Backend.remote` when it is
set. Every child gets a scrubbed environment (see `environment.py`).
"""

from __future__ import annotations

from workbench.core.backends.base import (
    Backend,
    BackendError,
    LocalBackend,
    RefusedBackend,
    Spawn,
)
from workbench.core.backends.settings import backend_for, backend_from_config

__all__ = [
    "Backend",
    "BackendError",
    "LocalBackend",
    "RefusedBackend",
    "Spawn",
    "backend_for",
    "backend_from_config",
]
