"""Whether a plugin's declared requirements fight hermes-tui's own, and whether the installed
MCP SDK still is the one hermes-tui needs.

`pip install` of a plugin that pins `mcp<2` downgrades the SDK with only a warning, and then
every MCP server fails on an import. Saying the conflict from the plugin's own declarations,
and the downgrade from the installed version, turns that into one clear line with its fix.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from workbench.core.storage import yaml_file

OWN = "hermes-tui"
SDK = "mcp"


@functools.cache
def own_requirements() -> dict[str, Requirement]:
    """hermes-tui's runtime requirements by canonical name (extras' ones left out); read once
    a process, since every plugin is compared with them."""
    found: dict[str, Requirement] = {}
    try:
        lines = metadata.requires(OWN) or []
    except metadata.PackageNotFoundError:
        return found
    for line in lines:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            found[canonicalize_name(req.name)] = req
    return found


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def declared(path: Path | None, data: dict[str, Any], distribution: str = "") -> list[str]:
    """What a plugin says it needs: its manifest's `pip_dependencies` (the key Hermes reads
    for a memory provider's packages) or `requires`, its pyproject.toml's
    [project].dependencies, its requirements.txt, or a pip plugin's own metadata."""
    lines: list[str] = []
    for key in ("pip_dependencies", "requires"):
        value = data.get(key)
        if isinstance(value, list):
            lines += [str(v) for v in value]
    if path is not None:
        lines += _pyproject(path / "pyproject.toml") + _requirements_txt(path / "requirements.txt")
    if distribution:
        try:
            lines += metadata.requires(distribution) or []
        except metadata.PackageNotFoundError:
            pass
    return lines


def _text(file: Path) -> str:
    """A plugin's file, read as a manifest is: a regular file of bounded size only (a plugin
    folder from a cloned project may hold a FIFO or a link to /dev/zero)."""
    try:
        return yaml_file.read_text(file)
    except (OSError, yaml_file.YAMLFileError):
        return ""


def _pyproject(file: Path) -> list[str]:
    try:
        project = tomllib.loads(_text(file)).get("project") or {}
    except ValueError:
        return []
    deps = project.get("dependencies") if isinstance(project, dict) else None
    return [str(d) for d in deps] if isinstance(deps, list) else []


def _requirements_txt(file: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in _text(file).splitlines())
    # pip's own forms (options, URLs, local paths) name no package to compare
    return [
        line
        for line in lines
        if line and not line.startswith(("-", ".", "/")) and "://" not in line
    ]


def conflicts(
    lines: list[str],
    ours: dict[str, Requirement],
    installed: dict[str, str | None],
) -> list[str]:
    """Each requirement of the plugin whose specifier excludes the version hermes-tui has
    and needs (installing the plugin with its dependencies would replace it), said with both
    sides; a line that is not a requirement is said too, never silently dropped."""
    found = []
    for line in lines:
        try:
            theirs = Requirement(line)
        except InvalidRequirement:
            found.append(f"'{line}' is not a requirement pip can read")
            continue
        if theirs.marker is not None and not theirs.marker.evaluate({"extra": ""}):
            continue
        mine = ours.get(canonicalize_name(theirs.name))
        if mine is None or not theirs.specifier:
            continue
        have = installed.get(canonicalize_name(theirs.name))
        if (
            have is not None
            and mine.specifier.contains(have, prereleases=True)
            and not theirs.specifier.contains(have, prereleases=True)
        ):
            found.append(
                f"{theirs} excludes {theirs.name} {have}, which hermes-tui needs "
                f"({mine}): installing it with its dependencies would replace it"
            )
    return found


def sdk_problem(installed: str | None, ours: Requirement | None) -> str:
    """Why MCP cannot work with the installed SDK, with the fix, or "" when it can."""
    if ours is None:
        return ""
    want = f"{ours.name}{ours.specifier}"
    if installed is None:
        return f"the MCP SDK is not installed: every MCP server fails; fix: pip install '{want}'"
    try:
        fits = ours.specifier.contains(Version(installed), prereleases=True)
    except InvalidVersion:
        fits = False
    if fits:
        return ""
    return (
        f"the installed MCP SDK is {ours.name} {installed}, outside hermes-tui's {want} "
        f"(a plugin's install may have replaced it): every MCP server fails; "
        f"fix: pip install '{want}'"
    )


def installed_sdk_problem() -> str:
    ours = own_requirements()
    return sdk_problem(installed_version(SDK), ours.get(SDK))
