"""`HERMES_HOME` and `config.yaml`: reading fast, writing atomically, never losing a user's file.

Reads go through the one bounded YAML loader (`yaml_file`: size, alias expansion and depth
are capped, the error names the file). Writes go through ruamel.yaml's round-trip
mode so a hand-written config keeps its comments, order and other keys, and they refuse to
touch a file that does not parse: the user's text is never replaced by our guess.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.storage import yaml_file
from workbench.core.storage.atomic import atomic_write_text, locked
from workbench.core.storage.private import private_dir, tighten

CONFIG_NAME = "config.yaml"
HOME_SUBDIRS = ("logs", "state", "plugins")
# Created when first needed; made private at start if an older version left them readable.
LATER_SUBDIRS = ("sessions", "memories", "models")
FIRST_CONFIG = """\
# hermes-tui / Hermes Agent configuration (YAML). hermes-tui keeps your comments and
# every key it does not manage when it saves a choice here.
#
# Toolset choices, saved by `hermes-tui toolsets enable|disable NAME` and the workbench:
#   platform_toolsets:
#     cli: [hermes-cli]          # or a list: [file, terminal, web, todo, memory, ...]
#   agent:
#     disabled_toolsets: []      # subtracted last: a disabled toolset always wins
"""


class ConfigError(Exception):
    """config.yaml cannot be read or written; the message says where and why."""


def hermes_home() -> Path:
    """`$HERMES_HOME`, or `~/.hermes` as in Hermes."""
    value = os.environ.get("HERMES_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def ensure_home(home: Path | None = None) -> list[str]:
    """Create the home and its sub-directories, private; return problems instead of raising."""
    home = home or hermes_home()
    problems = []
    for path in (home, *(home / d for d in HOME_SUBDIRS)):
        try:
            private_dir(path)
        except OSError as exc:
            problems.append(f"cannot create {path}: {exc.strerror or exc}")
    ours = (*LATER_SUBDIRS, CONFIG_NAME, ".env")  # the config and .env may hold API keys
    for path in (home.resolve(), *(home / name for name in ours)):
        with contextlib.suppress(OSError):  # the home may be a link to the user's folder
            tighten(path)
    config = home / CONFIG_NAME
    if not problems and not config.exists():
        try:  # never over a config another process wrote meanwhile
            atomic_write_text(config, FIRST_CONFIG, mode=0o600, replace=False)
        except OSError as exc:
            problems.append(f"cannot create {config}: {exc.strerror or exc}")
    return problems


@dataclass
class Config:
    """The parsed config, or the reason it could not be parsed (then `data` is empty)."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    # "" when the file is trusted, else why not (see `untrusted_file`): its settings that
    # loosen safety (approval rules, approvals.mode, the sandbox) must then not count.
    untrusted: str = ""

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def config_path(home: Path | None = None) -> Path:
    return (home or hermes_home()) / CONFIG_NAME


def load_config(path: Path | None = None) -> Config:
    """Load config.yaml. A missing file is an empty config; a broken one carries `error`."""
    path = path or config_path()
    try:
        text = yaml_file.read_text(path)
    except FileNotFoundError:
        return Config(path)
    except yaml_file.YAMLFileError as exc:
        return Config(path, error=str(exc), untrusted=untrusted_file(path))
    untrusted = untrusted_file(path)
    try:
        data = parse_yaml(text, path)
    except ConfigError as exc:
        return Config(path, error=str(exc), untrusted=untrusted)
    return Config(path, data, untrusted=untrusted)


def untrusted_file(path: Path) -> str:
    """Why a file of rules or settings cannot be trusted, or "" when it can.

    A second hard link lets whoever made it rewrite the file through a name no guard knows
    (a command given `k.txt` changes the config); a file owned by another user is theirs to
    change. Our own writes replace the file by a rename, so they never make either true.
    """
    try:
        info = os.stat(path)
    except OSError:
        return ""  # missing: nothing is read from it
    if info.st_nlink > 1:
        return (
            f"{path} has {info.st_nlink} hard links: it could have been rewritten through "
            f"another name (check it, then remove the other: `find / -xdev -samefile {path}`)"
        )
    if info.st_uid != os.geteuid():
        return f"{path} is owned by uid {info.st_uid}, not by you (uid {os.geteuid()})"
    return ""


def parse_yaml(text: str, path: Path) -> dict[str, Any]:
    """The config's mapping; the error names the file (and the line when there is one)."""
    try:
        data = yaml_file.parse(text, path)
    except yaml_file.YAMLFileError as exc:
        raise ConfigError(str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping, not {type(data).__name__}")
    return data


def update_config(mutate: Callable[[Any], None], path: Path | None = None) -> None:
    """Apply `mutate` to the round-trip document and write it back atomically.

    The file is locked from the read to the rename, so concurrent writers (two commands,
    two threads) each apply their change to the other's result and none is lost.
    Raises `ConfigError` when the current file does not parse (it is left untouched) or
    when the new file cannot be written (read-only home, full disk).
    """
    path = path or config_path()
    try:
        private_dir(path.parent)
        with locked(path):
            _rewrite(mutate, path)
    except OSError as exc:  # the lock file cannot be created: neither can the config
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


def _rewrite(mutate: Callable[[Any], None], path: Path) -> None:
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError as RuamelError

    from workbench.core.storage.yaml_comments import anchor_comments

    if why := untrusted_file(path):  # rewritten by us it would be trusted, whoever wrote it
        raise ConfigError(f"{why}: not changed until you have checked its content")
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    try:
        text = yaml_file.read_text(path)
    except FileNotFoundError:
        text = ""
    except yaml_file.YAMLFileError as exc:
        raise ConfigError(str(exc)) from None
    parse_yaml(text, path)  # the same error, with the line, that a read would give (and limits)
    try:
        doc = rt.load(text) if text.strip() else None
    except RuamelError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    tail = anchor_comments(doc)  # the comments above each key stay above it
    out = io.StringIO()
    if doc is None:  # empty, `~`, or comments only (as the first run writes it)
        doc = CommentedMap()
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines and all(line.startswith("#") for line in lines):  # kept on top
            out.write(text.rstrip() + "\n")
    mutate(doc)
    rt.dump(doc, out)
    out.write(tail)
    try:
        atomic_write_text(path, out.getvalue(), mode=0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


def preview_config(config: Config, mutate: Callable[[Any], None]) -> Config:
    """`config` as it would be after `mutate` (the change `update_config` would save), in
    memory: what a change would do, shown before it is saved."""
    data = copy.deepcopy(config.data)
    mutate(data)
    return Config(config.path, data, untrusted=config.untrusted)


def set_path(doc: Any, dotted: str, value: Any) -> None:
    """Set `a.b.c` in a (round-trip) mapping, creating the intermediate mappings; a list
    replacing a list keeps its style and comments (`yaml_comments.assign`)."""
    parts = dotted.split(".")
    node = doc
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = type(node)()
        node = child
    if type(node).__module__.startswith("ruamel"):  # a document read to be written back
        from workbench.core.storage.yaml_comments import assign

        assign(node, parts[-1], value)
    else:
        node[parts[-1]] = value
