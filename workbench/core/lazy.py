"""Names a package gives without importing the modules that hold them until first use.

A package's `__init__` that re-exports the names of its modules would load them all when
any one is wanted: importing the event types would load the MCP SDK's users and the
checkpoint store. `lazy_names` makes the package's `__getattr__` (PEP 562) import a name's
module only when the name is first read, and keep it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(
    package: str, homes: dict[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: `homes` maps each name to the module (relative to the
    package) that holds it; a name read once is kept in the package's `namespace`."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__
