"""What a person trusted of a project, kept in hermes-tui's own state.

One file per project, `HERMES_HOME/state/trust/<key>.json` (the key is a hash of the
project's real path): the files of code and rules its `.hermes` held when trusted, with
their hashes and small texts. HERMES_HOME is hidden from commands in the sandbox and
writing it is hardline everywhere, so no command the agent runs can trust a project for
the person. Written atomically under its lock, private (0700/0600).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.storage.atomic import atomic_write_text, locked
from workbench.core.storage.private import private_dir
from workbench.core.trust.contents import Item

logger = logging.getLogger(__name__)

FOLDER = Path("state") / "trust"
MAX_KEPT = 1 << 20  # characters of text kept for one project; past it, hashes only


@dataclass(frozen=True)
class Trusted:
    project: str  # its real path
    at: float = 0.0  # when the person trusted it (0: never)
    items: dict[str, Item] = field(default_factory=dict)


def path_for(home: Path, project: Path) -> Path:
    real = os.path.realpath(project)
    return (
        home
        / FOLDER
        / f"{hashlib.sha256(real.encode('utf-8', 'surrogateescape')).hexdigest()[:32]}.json"
    )


def load(home: Path, project: Path) -> Trusted:
    """What was trusted of `project` (nothing, at 0, when it never was or the record cannot
    be read: then everything in it is new, which fails closed)."""
    real = os.path.realpath(project)
    path = path_for(home, project)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Trusted(real)
    except (OSError, ValueError) as exc:
        logger.warning("the trust record %s cannot be read (%s): nothing is trusted", path, exc)
        return Trusted(real)
    if not isinstance(data, dict) or data.get("project") != real:
        return Trusted(real)
    raw = data.get("items")
    items = {k: i for k, v in raw.items() if (i := Item.of(v))} if isinstance(raw, dict) else {}
    at = data.get("at")
    return Trusted(real, float(at) if isinstance(at, int | float) else 0.0, items)


def save(home: Path, project: Path, items: dict[str, Item]) -> Trusted:
    """Record `items` as what the person trusted of `project`, now."""
    real = os.path.realpath(project)
    path = path_for(home, project)
    kept, budget = {}, MAX_KEPT
    for rel, item in sorted(items.items()):
        text = item.text if item.text is not None and len(item.text) <= budget else None
        budget -= len(text or "")
        kept[rel] = Item(item.digest, item.size, item.link, text)
    trusted = Trusted(real, time.time(), kept)
    data = {"project": real, "at": trusted.at, "items": {k: v.as_dict() for k, v in kept.items()}}
    private_dir(path.parent)
    with locked(path):
        atomic_write_text(path, json.dumps(data, indent=1), mode=0o600)
    return trusted
