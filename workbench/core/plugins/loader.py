"""Importing plugin code: directory plugins as `hermes_plugins.<slug>`, pip plugins as they are.

Directory plugins are compiled from source on every import (never from a stale .pyc: two
saves within one second would otherwise load the old code), and a re-import replaces the
plugin's own modules, submodules included, so a hot reload sees every edited file.

A project plugin's folder is guarded (`guard`): each source compiled from it must be the
one the person trusted (its hash in the trust record), so a file swapped between the check
and the import is refused, not run.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.plugins.sources import PluginManifest

NAMESPACE = "hermes_plugins"


# A guarded folder -> the hash of each source in it the person trusted (by its path).
_GUARDS: dict[str, dict[str, str]] = {}


def guard(root: Path | str, digests: dict[str, str]) -> None:
    """Sources under `root` compile only when their hash is the one given for their path."""
    _GUARDS[os.path.normpath(root)] = {os.path.normpath(k): v for k, v in digests.items()}


def _checked(path: str, source: bytes) -> bytes:
    path = os.path.normpath(path)
    for root, digests in _GUARDS.items():
        inside = path.startswith(root + os.sep)
        if inside and digests.get(path) != hashlib.sha256(source).hexdigest():
            raise ImportError(f"{path} is not as you trusted it: not loaded")
    return source


class _FreshLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname: str) -> types.CodeType:
        source = _checked(self.path, self.get_data(self.path))
        return compile(source, self.path, "exec", dont_inherit=True)


class _PluginFinder(importlib.abc.MetaPathFinder):
    """Finds submodules of directory plugins, so they load fresh too."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(NAMESPACE + ".") or fullname.count(".") < 2 or not path:
            return None
        leaf = fullname.rsplit(".", 1)[1]
        for entry in path:
            package = Path(entry) / leaf / "__init__.py"
            if package.is_file():
                return importlib.util.spec_from_file_location(
                    fullname,
                    package,
                    loader=_FreshLoader(fullname, str(package)),
                    submodule_search_locations=[str(package.parent)],
                )
            module = Path(entry) / f"{leaf}.py"
            if module.is_file():
                return importlib.util.spec_from_file_location(
                    fullname, module, loader=_FreshLoader(fullname, str(module))
                )
        return None


def _install() -> None:
    if not any(isinstance(f, _PluginFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PluginFinder())
    if NAMESPACE not in sys.modules:
        package = types.ModuleType(NAMESPACE)
        package.__path__ = []
        sys.modules[NAMESPACE] = package


def module_name(manifest: PluginManifest) -> str:
    return f"{NAMESPACE}.{manifest.slug}"


def take_modules(manifest: PluginManifest) -> dict[str, types.ModuleType]:
    """Remove the plugin's modules from sys.modules and return them (to restore on failure)."""
    base = module_name(manifest)
    taken = {n: m for n, m in sys.modules.items() if n == base or n.startswith(base + ".")}
    for name in taken:
        del sys.modules[name]
    return taken


def restore_modules(modules: dict[str, types.ModuleType]) -> None:
    sys.modules.update(modules)


def import_directory(manifest: PluginManifest) -> types.ModuleType:
    _install()
    name = module_name(manifest)
    init = Path(manifest.path or ".") / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name,
        init,
        loader=_FreshLoader(name, str(init)),
        submodule_search_locations=[str(init.parent)],
    )
    if spec is None or spec.loader is None:  # not with a loader given: said, never skipped
        raise ImportError(f"cannot load the plugin at {init}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        take_modules(manifest)
        raise
    return module


def load_register(manifest: PluginManifest) -> Callable[[Any], Any]:
    """The plugin's `register` function (a pip plugin may be the callable itself,
    which Hermes fails to load)."""
    target: object
    if manifest.source == "entrypoint":
        target = _load_entry_point(manifest.entry_point)
    else:
        target = import_directory(manifest)
    register: object = getattr(target, "register", None)
    if callable(register):
        return register
    if callable(target) and not isinstance(target, types.ModuleType):
        return target
    raise TypeError(f"plugin '{manifest.key}' has no register(ctx) function")


def _load_entry_point(value: str) -> Any:
    module_part, _, attribute = value.partition(":")
    target: Any = importlib.import_module(module_part.strip())
    for part in filter(None, attribute.strip().split(".")):
        target = getattr(target, part)
    return target
