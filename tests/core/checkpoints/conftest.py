"""A project folder and a checkpoint store in a private HERMES_HOME, both real."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.checkpoints import CheckpointStore
from workbench.core.config import Config


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\n")
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "src" / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    return root


def make_store(home: Path, **settings: object) -> CheckpointStore:
    config = Config(home / "config.yaml", {"checkpoints": settings} if settings else {})
    return CheckpointStore(home, config)


@pytest.fixture
def store(home: Path) -> CheckpointStore:
    return make_store(home)
