"""Names Hermes's registry tests import that belong to Hermes's own program, not to a registry.

Hermes finds its built-in tools by reading its own `tools/` folder; hermes-tui's built-ins are
a package of their own. The tests that use these are skipped in conftest.py with that reason.
"""

from pathlib import Path


def _module_registers_tools(path: Path) -> bool:
    raise NotImplementedError("Hermes's own tools/ folder is not part of hermes-tui")


def discover_builtin_tools(tools_dir: Path) -> list[str]:
    raise NotImplementedError("Hermes's own tools/ folder is not part of hermes-tui")
