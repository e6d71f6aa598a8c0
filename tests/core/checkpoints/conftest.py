"""A project folder and a checkpoint store in a private HERMES_HOME, both real."""

from __future__ import annotations

import os
import subprocess
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


def git(repo: Path, *args: str) -> str:
    """The person's own git in `repo`, with none of the machine's configuration."""
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # our own `git status` must not refresh the index
    ident = ["-c", "user.name=me", "-c", "user.email=me@example.com"]
    ident += ["-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"]
    done = subprocess.run(
        ["git", *ident, *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout
