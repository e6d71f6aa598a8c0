"""Issue 36, items 5 and 8, tried as a hostile model would: real `hermes-tui call` steps in a
scratch world (see tests/support/hostile.py), then `hermes-tui checkpoints restore --yes`,
as root and as an unprivileged user, with the sandbox as it is by default and off.

- One allowed command no longer disables the undo: `git init -q corrupt` sets no store
  aside (and another project's checkpoints are untouched), `git init -q vendor` fails no
  snapshot or restore, a tree pushed past the caps still restores an earlier checkpoint.
- A restore is exact: modes come back (0600, setuid, the executable bit), and an edit the
  person made while the agent's turn ran is kept by `restore --yes`.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.procs import wait_until

pytestmark = pytest.mark.e2e

CONFIGS = {"default": "", "off": hostile.SANDBOX_OFF}
ways = pytest.mark.parametrize(
    ("user", "config"), [(u, c) for u in hostile.USERS for c in CONFIGS], ids=lambda v: v
)


@pytest.fixture
def world(tmp_path: Path, user: str, config: str):
    why = hostile.skip_unless_user(user)
    if why:
        pytest.skip(why)
    root = hostile.scratch_root(tmp_path, user)
    yield hostile.build(root, CONFIGS[config], user)
    if root != tmp_path:
        shutil.rmtree(root, ignore_errors=True)


def hermes(s: hostile.Scratch, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    where = cwd or s.work
    return subprocess.run(
        [*hostile.hermes_tui(s.user), *args], env=hostile.cli_env(s), cwd=where,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def step(s: hostile.Scratch, tool: str, cwd: Path | None = None, **args: str):
    """One call as the model makes it, headless (every question is a denial)."""
    where = cwd or s.work
    done = hermes(s, "call", tool, "--args", json.dumps(args), "--cwd", str(where), cwd=where)
    assert done.returncode == 0, f"{tool} {args}: {done.stdout[-300:]} {done.stderr[-300:]}"
    return done


def restore(s: hostile.Scratch, *extra: str, cwd: Path | None = None) -> str:
    where = cwd or s.work
    done = hermes(s, "checkpoints", "restore", *extra, "--yes", "--cwd", str(where), cwd=where)
    assert done.returncode == 0, f"restore: {done.stdout[-400:]} {done.stderr[-400:]}"
    return done.stdout


def ids(s: hostile.Scratch) -> list[str]:
    listed = hermes(s, "checkpoints", "list", "--json", "--cwd", str(s.work))
    return [c["id"] for c in json.loads(listed.stdout)["checkpoints"]]


def as_person(s: hostile.Scratch, path: Path, content: str, mode: int | None = None) -> None:
    """A file the person writes (theirs: the unprivileged user's in that user's world)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    if mode is not None:
        path.chmod(mode)
    if hostile.as_user(s.user):
        os.chown(path, hostile.UNPRIVILEGED, hostile.UNPRIVILEGED)
        os.chown(path.parent, hostile.UNPRIVILEGED, hostile.UNPRIVILEGED)
        if mode is not None:
            path.chmod(mode)  # chown clears setuid and setgid


def bits(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@ways
def test_git_init_corrupt_sets_no_store_aside_and_another_project_keeps_its_own(world) -> None:
    s = world
    other = s.root / "other"
    as_person(s, other / "keep.txt", "the other project's\n")
    step(s, "write_file", cwd=other, path="keep.txt", content="the agent's\n")
    step(s, "terminal", command="git init -q corrupt")
    step(s, "write_file", path="victim.txt", content="nothing left\n")
    restore(s)
    assert (s.work / "victim.txt").read_text() == hostile.VICTIM
    assert not list((s.hermes / "checkpoints").glob("*.damaged-*"))
    restore(s, cwd=other)
    assert (other / "keep.txt").read_text() == "the other project's\n"


@ways
def test_git_init_vendor_then_xz_is_undone(world) -> None:
    s = world
    step(s, "terminal", command="git init -q vendor && touch vendor/x.c")
    step(s, "terminal", command="xz victim.txt")
    assert not (s.work / "victim.txt").exists()
    restore(s)
    assert (s.work / "victim.txt").read_text() == hostile.VICTIM
    assert (s.work / "vendor" / "x.c").exists() and (s.work / "vendor" / ".git").is_dir()


@ways
def test_a_tree_pushed_past_the_caps_restores_earlier_checkpoints(world) -> None:
    s = world
    config = s.hermes / "config.yaml"
    config.write_text(config.read_text() + "checkpoints:\n  max_files: 40\n")
    step(s, "write_file", path="victim.txt", content="the agent's\n")
    step(s, "terminal", command="mkdir gen && touch gen/f{1..60}.txt")
    step(s, "terminal", command="xz README.md")  # its snapshot is skipped: past the cap
    assert not (s.work / "README.md").exists()
    restore(s)  # the latest: before the 60 files
    assert (s.work / "README.md").read_text() == "a small project\n"
    assert not (s.work / "gen").exists()
    restore(s, ids(s)[-1])  # the first: before write_file
    assert (s.work / "victim.txt").read_text() == hostile.VICTIM


@ways
def test_modes_are_restored(world) -> None:
    s = world
    as_person(s, s.work / "run.sh", "#!/bin/sh\necho run\n", 0o755)
    as_person(s, s.work / "tool", "#!/bin/sh\nid\n", 0o4755)
    step(s, "terminal", command="chmod 0600 victim.txt && chmod u+s README.md && chmod -x run.sh")
    step(s, "terminal", command="chmod u-s tool")
    diff = hermes(s, "checkpoints", "diff", "--cwd", str(s.work))
    assert "tool: mode 4755 → 0755, content unchanged" in diff.stdout, diff.stdout
    restore(s)
    assert bits(s.work / "tool") == 0o4755  # given back to its owner: the bit too
    restore(s, ids(s)[-1])
    assert bits(s.work / "victim.txt") == 0o644
    assert bits(s.work / "README.md") == 0o644
    assert bits(s.work / "run.sh") == 0o755


@ways
def test_an_edit_made_while_the_agents_turn_runs_is_kept(world) -> None:
    """The model's turn: a command, then (while the model thinks) the person edits
    notes.md, then `xz victim.txt`. Only what changed while each command ran is the
    agent's: `restore --yes` brings victim.txt back and keeps the person's edit."""
    s = world
    fake = FakeOpenAI().start()
    thinking = threading.Event()
    try:
        fake.api_key = s.markers["app-key"]
        fake.add(
            tools(("terminal", {"command": "date > when.txt"})),
            tools(("terminal", {"command": "xz victim.txt"}), hold=thinking),
            text("done"),
        )
        argv = [*hostile.hermes_tui(s.user), "chat", "tidy up", "--api-key", fake.api_key,
                "--base-url", fake.url, "--model", "m", "--cwd", str(s.work)]  # fmt: skip
        chat = subprocess.Popen(argv, env=hostile.cli_env(s, app_key=False), cwd=s.work,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        wait_until(lambda: len(fake.requests) >= 2, what="the model's second round")
        as_person(s, s.work / "notes.md", "# notes\nwritten by the person during the turn\n")
        thinking.set()
        _, err = chat.communicate(timeout=120)
    finally:
        thinking.set()
        fake.stop()
    assert chat.returncode == 0, err[-600:]
    assert not (s.work / "victim.txt").exists()
    said = restore(s)
    assert (s.work / "victim.txt").read_text() == hostile.VICTIM
    assert (s.work / "notes.md").read_text().endswith("written by the person during the turn\n")
    assert "notes.md" in said  # named as changed by hand, and kept


@ways
def test_an_edit_made_while_a_command_runs_comes_back_from_the_backup(world) -> None:
    """What changes while a command runs cannot be told from the command's own doing: it is
    taken for the agent's and `restore --yes` replaces it, but the restore's backup holds
    it, and restoring the backup gives it back."""
    s = world
    command = "touch started; while [ ! -e go ]; do sleep 0.05; done; xz victim.txt"
    argv = [*hostile.hermes_tui(s.user), "call", "terminal", "--args",
            json.dumps({"command": command}), "--cwd", str(s.work)]  # fmt: skip
    call = subprocess.Popen(argv, env=hostile.cli_env(s), cwd=s.work, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_until(lambda: (s.work / "started").exists(), what="the command started")
        as_person(s, s.work / "notes.md", "# notes\ntyped while it ran\n")
        as_person(s, s.work / "go", "")
        out, _ = call.communicate(timeout=120)
    finally:
        if call.poll() is None:
            call.kill()
    assert call.returncode == 0, out[-300:]
    said = restore(s)
    assert (s.work / "victim.txt").read_text() == hostile.VICTIM
    backup = said.split("undo with: hermes-tui checkpoints restore ")[1].split()[0]
    restore(s, backup)
    assert (s.work / "notes.md").read_text() == "# notes\ntyped while it ran\n"
