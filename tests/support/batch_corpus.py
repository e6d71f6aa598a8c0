"""The labelled batch corpus and its fixture tree, shared by the test and the benchmark."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parents[1] / "core" / "execution" / "data" / "batch_corpus.yaml"


def build_tree(root: Path) -> None:
    """The files the corpus refers to (see the corpus header)."""
    for rel in (
        "a.txt",
        "b.txt",
        "c.txt",
        "README.md",
        "dir/f.txt",
        "dir/g.txt",
        "src/app.py",
        "src/util.py",
        "docs/guide.md",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n")
    os.link(root / "a.txt", root / "hard.txt")
    (root / "sym.txt").symlink_to(root / "a.txt")


def load_batches(root: Path) -> list[tuple[bool, list[dict[str, Any]]]]:
    """(label, OpenAI-shaped calls) with @ROOT@ replaced by the fixture's path."""
    out = []
    for number, batch in enumerate(yaml.safe_load(CORPUS.read_text())["batches"]):
        calls = []
        for index, (name, args) in enumerate(batch["calls"]):
            text = args if isinstance(args, str) else json.dumps(args)
            text = text.replace("@ROOT@", str(root))
            calls.append(
                {
                    "id": f"b{number}c{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": text},
                }
            )
        out.append((batch["parallel"], calls))
    return out
