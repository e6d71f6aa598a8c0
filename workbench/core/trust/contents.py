"""What a project's `.hermes` folder holds that hermes-tui runs or obeys: the files of its
plugins and its approval rules, each with a hash of its content (and, when it is small
text, the text itself, so that a later change can be shown as a diff).

Links are followed, as the loader and the rules reader follow them, and the link's target
is part of what is compared: re-pointing `.hermes/plugins/x` elsewhere is a change.
`__pycache__` is left out (plugins are compiled from source, never from it), and so are
folders whose names start with a dot (a plugin's `.git`), as the plugin probe does.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

FOLDER = ".hermes"
RULES = f"{FOLDER}/approvals.yaml"
PLUGINS = f"{FOLDER}/plugins"
MAX_FILES = 2000  # files read under .hermes/plugins; beyond, the rest counts as one change
MAX_TEXT = 64 * 1024  # bytes of a file's text kept, to show its diff later
TOO_MANY = f"{PLUGINS}/…"  # stands for the files past MAX_FILES


@dataclass(frozen=True, slots=True)
class Item:
    """One file: the hash of its content, its size, where a link on its way pointed, and
    its text when small enough to keep (None: binary or too large, hash only)."""

    digest: str
    size: int
    link: str = ""
    text: str | None = None

    def same(self, other: Item | None) -> bool:
        return other is not None and (self.digest, self.link) == (other.digest, other.link)

    def as_dict(self) -> dict[str, object]:
        return {"digest": self.digest, "size": self.size, "link": self.link, "text": self.text}

    @classmethod
    def of(cls, data: object) -> Item | None:
        if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
            return None
        text = data.get("text")
        size = data.get("size")
        return cls(
            data["digest"],
            size if isinstance(size, int) else 0,
            str(data.get("link") or ""),
            text if isinstance(text, str) else None,
        )


def read(project: Path) -> dict[str, Item]:
    """Every file of code or rules under `project/.hermes`, by its path from the project."""
    found: dict[str, Item] = {}
    rules = project / RULES
    if rules.is_file():
        found[RULES] = _item(rules, links(project, rules))
    root = project / PLUGINS
    if not root.is_dir():
        return found
    seen: set[str] = set()
    for directory, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(directory)
        if real in seen:  # a link back up: walked once
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            path = Path(directory) / name
            if len(found) > MAX_FILES:
                found[TOO_MANY] = Item("too many files", 0)
                return found
            if path.is_file():
                found[path.relative_to(project).as_posix()] = _item(path, links(project, path))
    return found


def links(project: Path, path: Path) -> str:
    """Where the links on the way from `project` to `path` lead ("" when none does)."""
    targets = []
    current = project
    for part in path.relative_to(project).parts:
        current = current / part
        if current.is_symlink():
            targets.append(f"{current.relative_to(project).as_posix()} -> {os.readlink(current)}")
    return "; ".join(targets)


def _item(path: Path, link: str) -> Item:
    digest, size, head = hashlib.sha256(), 0, b""
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 16):
                digest.update(chunk)
                if size < MAX_TEXT + 1:
                    head += chunk[: MAX_TEXT + 1 - size]
                size += len(chunk)
    except OSError as exc:
        return Item(f"unreadable: {exc.strerror or exc}", 0, link)
    return Item(digest.hexdigest(), size, link, _text(head, size))


def _text(head: bytes, size: int) -> str | None:
    if size > MAX_TEXT or b"\0" in head:
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError:
        return None
