"""Built-in tool discovery: every module under `workbench.builtins` registers itself on import
(its families' subpackages too).

No hand-kept list: a new module is found by being there. A module that fails to import is
reported with its error and traceback, and the others load.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import traceback
from dataclasses import dataclass, field

from workbench.core.tools.events import ModuleImportFailed

logger = logging.getLogger(__name__)

BUILTIN_PACKAGE = "workbench.builtins"


@dataclass
class DiscoveryReport:
    loaded: list[str] = field(default_factory=list)
    failed: list[ModuleImportFailed] = field(default_factory=list)


def discover_builtin_tools(package: str = BUILTIN_PACKAGE) -> DiscoveryReport:
    """Import every public module of `package` and of its public subpackages (the families of
    tools), sorted; idempotent, as imports are cached."""
    report = DiscoveryReport()
    _discover(package, report)
    return report


def _discover(package: str, report: DiscoveryReport) -> None:
    pkg = importlib.import_module(package)
    found = sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name)
    for info in (m for m in found if not m.name.startswith("_")):
        module = f"{package}.{info.name}"
        try:
            importlib.import_module(module)
        except Exception as exc:
            logger.warning("Could not import tool module %s: %s", module, exc)
            report.failed.append(
                ModuleImportFailed(module, f"{type(exc).__name__}: {exc}", traceback.format_exc())
            )
        else:
            if info.ispkg:
                _discover(module, report)
            else:
                report.loaded.append(module)
