"""Everything a front end needs from the core, loaded once: home, config, tools, toolsets."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.config import Config, ensure_home, hermes_home, load_config
from workbench.core.discovery import DiscoveryReport, discover_builtin_tools
from workbench.core.registry import ToolRegistry, registry
from workbench.core.toolsets import ToolsetChoices, Toolsets


@dataclass
class Runtime:
    home: Path
    config: Config
    registry: ToolRegistry
    toolsets: Toolsets
    discovery: DiscoveryReport
    home_problems: list[str] = field(default_factory=list)

    @property
    def choices(self) -> ToolsetChoices:
        return ToolsetChoices.from_config(self.config)

    def reload_config(self) -> None:
        self.config = load_config(self.config.path)

    def effective_tools(self) -> list[str]:
        """The tools the model would be offered now: enabled toolsets, available tools."""
        names = self.choices.effective_tools(self.toolsets)
        report = self.registry.availability_report(names)
        return [n for n, a in report.items() if a.available]


def load_runtime(home: Path | None = None) -> Runtime:
    home = home or hermes_home()
    problems = ensure_home(home)
    _log_to_file(home)
    discovery = discover_builtin_tools()
    return Runtime(
        home=home,
        config=load_config(home / "config.yaml"),
        registry=registry,
        toolsets=Toolsets(registry),
        discovery=discovery,
        home_problems=problems,
    )


def _log_to_file(home: Path) -> None:
    """Send the core's log to HERMES_HOME/logs, never to the terminal a UI may own."""
    root = logging.getLogger("workbench")
    if root.handlers:
        return
    try:
        handler: logging.Handler = logging.FileHandler(home / "logs" / "hermes-tui.log")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    root.propagate = False
