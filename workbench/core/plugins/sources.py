"""Where plugins come from: the user's directory, the project's (opt-in), pip entry points.

Directory plugins are `<root>/<folder>/` or `<root>/<category>/<folder>/`, each with
`plugin.yaml` (or `plugin.yml`) and `__init__.py`. Pip plugins are entry points in
`hermes_agent.plugins`: a module with `register`, or the callable itself.

A plugin's key is Hermes's, so `plugins.enabled` and `plugins.disabled` mean the same to
both: a flat plugin's is its manifest's `name` (the folder's name when the manifest has
none: a plugin cloned as `hermes-plugin-x` with `name: x` is `x`), a category plugin's is
`category/folder`, a pip plugin's the entry point's name. The config names a plugin by its
key or its manifest's name, as in Hermes, or (ours) a flat plugin by its folder's name.

Precedence is Hermes's (user < project < entry point), but a key found in two sources is
reported on both, never silently resolved (Hermes lets the entry point win unsaid).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENTRY_POINT_GROUP = "hermes_agent.plugins"
PROJECT_ENV = "HERMES_ENABLE_PROJECT_PLUGINS"
KINDS = frozenset({"standalone", "backend", "exclusive", "platform", "model-provider"})
PRECEDENCE = ("user", "project", "entrypoint")


@dataclass
class PluginManifest:
    key: str
    name: str
    source: str  # user, project, entrypoint
    path: Path | None = None  # the plugin's directory (directory plugins)
    entry_point: str = ""  # "package.module" or "package.module:function"
    version: str = ""
    description: str = ""
    author: str = ""
    kind: str = "standalone"
    requires_env: list[Any] = field(default_factory=list)
    provides_tools: list[str] = field(default_factory=list)
    provides_hooks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # manifest errors, collisions
    # a project plugin as trusted: the hash of each of its files the loader may compile
    trusted: dict[str, str] | None = None
    category: str = ""  # the folder a category plugin is in (its key is category/folder)
    # the packages it declares it needs (manifest, pyproject.toml, requirements.txt, metadata)
    requirements: list[str] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return self.key.replace("/", "__").replace("-", "_").replace(".", "_")

    @property
    def folder(self) -> str:
        """A flat directory plugin's folder name ("" for the others: theirs is in the key)."""
        return self.path.name if self.path is not None and not self.category else ""

    @property
    def aliases(self) -> frozenset[str]:
        """Every name the config may give this plugin: its key, its manifest's name (both as
        Hermes reads them), a flat plugin's folder name (ours)."""
        return frozenset(n for n in (self.key, self.name, self.folder) if n)


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def read_manifest(directory: Path, category: str, source: str) -> PluginManifest:
    """The plugin in `directory`; `category` is the folder it is in ("" for a flat plugin,
    whose key is then its manifest's name, as Hermes keys it)."""
    from workbench.core.requirements import declared
    from workbench.core.storage import yaml_file

    key = f"{category}/{directory.name}" if category else ""
    manifest = PluginManifest(
        key=key, name=directory.name, source=source, path=directory, category=category
    )
    file = next(
        (directory / n for n in ("plugin.yaml", "plugin.yml") if (directory / n).is_file()), None
    )
    data: Any = {}
    if file is not None:
        try:
            data = yaml_file.load(file) or {}
        except (OSError, yaml_file.YAMLFileError) as exc:
            manifest.problems.append(str(exc))  # it names the file and the line
            data = {}
        if not isinstance(data, dict):
            manifest.problems.append(f"{file.name} must be a mapping")
            data = {}
    if not (directory / "__init__.py").is_file():
        manifest.problems.append("no __init__.py with register(ctx)")
    _fill(manifest, data)
    manifest.requirements = declared(directory, data)
    manifest.key = manifest.key or manifest.name
    return manifest


def _fill(manifest: PluginManifest, data: dict[str, Any]) -> None:
    manifest.name = str(data.get("name") or manifest.name)
    manifest.version = str(data.get("version") or manifest.version or "")
    manifest.description = str(data.get("description") or manifest.description or "")
    manifest.author = str(data.get("author") or manifest.author or "")
    kind = str(data.get("kind") or "standalone")
    if kind not in KINDS:
        manifest.problems.append(f"unknown kind '{kind}' (treated as standalone)")
        kind = "standalone"
    manifest.kind = kind
    manifest.requires_env = list(data.get("requires_env") or [])
    manifest.provides_tools = [str(t) for t in data.get("provides_tools") or []]
    manifest.provides_hooks = [str(h) for h in data.get("provides_hooks") or []]


def scan_directory(root: Path, source: str) -> list[PluginManifest]:
    """Flat and category layouts, two levels deep."""
    found: list[PluginManifest] = []
    try:
        children = sorted(
            p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
        )
    except OSError:
        return found
    for child in children:
        if _is_plugin_dir(child):
            found.append(read_manifest(child, "", source))
            continue
        for grandchild in sorted(
            p for p in child.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
        ):
            if _is_plugin_dir(grandchild):
                found.append(read_manifest(grandchild, child.name, source))
    return found


def _is_plugin_dir(path: Path) -> bool:
    return any((path / n).is_file() for n in ("plugin.yaml", "plugin.yml", "__init__.py"))


EntryPoints = Callable[[], Iterable[Any]]


def default_entry_points() -> Iterable[Any]:
    from importlib import metadata  # not at import time: a plugin probe does not need it

    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def scan_entry_points(entry_points: EntryPoints = default_entry_points) -> list[PluginManifest]:
    found = []
    for ep in sorted(entry_points(), key=lambda e: e.name):
        manifest = PluginManifest(
            key=ep.name, name=ep.name, source="entrypoint", entry_point=ep.value
        )
        dist = getattr(ep, "dist", None)
        if dist is not None:
            from workbench.core.requirements import declared

            manifest.version = str(dist.version or "")
            manifest.requirements = declared(None, {}, str(dist.metadata.get("Name") or ""))
            manifest.description = str(dist.metadata.get("Summary") or "")
            manifest.author = str(
                dist.metadata.get("Author") or dist.metadata.get("Author-email") or ""
            )
        found.append(manifest)
    return found


def discover(
    home: Path,
    project: Path | None = None,
    entry_points: EntryPoints = default_entry_points,
) -> tuple[dict[str, PluginManifest], list[PluginManifest]]:
    """(winner per key, losers) over every source, collisions noted on both sides."""
    candidates = scan_directory(home / "plugins", "user")
    project = project if project is not None else Path.cwd() / ".hermes" / "plugins"
    if truthy(os.environ.get(PROJECT_ENV)):
        candidates += scan_directory(project, "project")
    candidates += scan_entry_points(entry_points)
    winners: dict[str, PluginManifest] = {}
    losers: list[PluginManifest] = []
    for manifest in candidates:  # in precedence order: a later source wins, and says so
        previous = winners.get(manifest.key)
        if previous is not None:
            previous.problems.append(
                f"key '{manifest.key}' is also provided by the {manifest.source} "
                f"plugin at {manifest.path or manifest.entry_point}, which takes precedence"
            )
            manifest.problems.append(
                f"key '{manifest.key}' collides with the {previous.source} plugin "
                f"at {previous.path or previous.entry_point}; this one is used"
            )
            losers.append(previous)
        winners[manifest.key] = manifest
    return winners, losers


def project_plugins_present(project: Path | None = None) -> bool:
    root = project if project is not None else Path.cwd() / ".hermes" / "plugins"
    return root.is_dir() and any(root.iterdir())
