"""The core as the built-in tools see it: the one module through which they import it.

A built-in tool registers itself, resolves its paths, answers in the result format, and
runs through a backend; what it may use for that is listed here, and an import contract
(pyproject.toml) holds every built-in to it, so what they depend on stays small and seen.
"""

from workbench.core import skills as skill_store
from workbench.core.backends import BackendError, Spawn, backend_for
from workbench.core.backends.environment import scrubbed_env
from workbench.core.edits.patch import patched
from workbench.core.execution.budget import SpillSlot
from workbench.core.plugins.hooks import TerminalOutputHook
from workbench.core.safety import analyze_command
from workbench.core.safety.places import linked_secret, secret, state_roots, within
from workbench.core.storage.atomic import atomic_write_text, default_file_mode
from workbench.core.tools.errors import tool_error, tool_result
from workbench.core.tools.paths import resolve_path
from workbench.core.tools.registry import ToolUnavailable, registry

__all__ = [
    "BackendError",
    "Spawn",
    "SpillSlot",
    "TerminalOutputHook",
    "ToolUnavailable",
    "analyze_command",
    "atomic_write_text",
    "backend_for",
    "default_file_mode",
    "linked_secret",
    "patched",
    "registry",
    "resolve_path",
    "scrubbed_env",
    "secret",
    "skill_store",
    "state_roots",
    "tool_error",
    "tool_result",
    "within",
]
