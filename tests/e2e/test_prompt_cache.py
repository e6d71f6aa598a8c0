"""The fixed prompt (system prompt and tools) is read once and its state kept in HERMES_HOME:
a second process restores it and reads only its own tokens, by the server's own counters.
Real processes on the real bundled model (the 0.5B, for speed)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.core.model import local as local_model

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / ".cache" / "models"
pytestmark = [
    pytest.mark.e2e,
    # the bundled model takes every core, and the lifetime tests count its servers: the
    # tests that run it go one after the other, on one worker
    pytest.mark.xdist_group("local-model"),
    pytest.mark.skipif(
        not local_model.installed(local_model.MODELS["qwen2.5-coder-0.5b"]),
        reason="the local model is installed by `make test`",
    ),
]
CONFIG = "model:\n  local: qwen2.5-coder-0.5b\n  temperature: 0\n  max_rounds: 1\n"


def one_turn(env: dict[str, str], cwd: Path, prompt: str = "Say hello.") -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.local_session", str(cwd), prompt],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def env(cli_env: dict[str, str], home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(CONFIG)
    return {**cli_env, "HERMES_TUI_MODELS_DIR": str(MODELS)}


def cache_dir(home: Path) -> Path:
    return home / "state" / "prompt-cache"


@pytest.mark.timeout(900)  # four processes, each loading a real model on a shared CPU
def test_the_second_process_restores_the_fixed_prompt(
    env: dict[str, str], home: Path, tmp_path: Path
) -> None:
    first = one_turn(env, tmp_path)
    assert first["primed"] == "saved"
    second = one_turn(env, tmp_path)
    assert second["primed"] == "restored"
    # the first process read the system prompt and the tools before its turn; the second
    # restored them: its first round takes them from the cache and reads only the turn's
    assert second["rounds"][0]["cached"] > 500
    assert second["rounds"][0]["evaluated"] < 100
    files = sorted(cache_dir(home).iterdir())
    assert [f.suffix for f in files] == [".json", ".slot"]
    slot = files[1]
    assert stat.S_IMODE(cache_dir(home).stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)

    # another tool set: another fixed prompt, another entry; the first one is kept
    (home / "config.yaml").write_text(CONFIG + "platform_toolsets:\n  cli: [terminal]\n")
    other = one_turn(env, tmp_path)
    assert other["primed"] == "saved"
    assert len(list(cache_dir(home).glob("*.slot"))) == 2

    # a truncated file is not loaded: logged, removed, read and saved again
    (home / "config.yaml").write_text(CONFIG)
    data = slot.read_bytes()
    slot.write_bytes(data[: len(data) // 2])
    again = one_turn(env, tmp_path)
    assert again["primed"] == "saved"
    log = (home / "logs" / "hermes-tui.log").read_text()
    assert "prompt cache" in log and "truncated" in log and slot.name in log


@pytest.mark.timeout(600)
def test_chat_says_what_the_local_model_is_doing(
    env: dict[str, str], home: Path, tmp_path: Path
) -> None:
    from tests.support.cli import BIN

    def chat() -> list[str]:
        done = subprocess.run(
            [str(BIN / "hermes-tui"), "chat", "Say hello.", "--cwd", str(tmp_path)],
            env=env, capture_output=True, text=True, timeout=500, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("…")]

    first = chat()  # the first reads and saves the fixed prompt, and says how far it is
    assert any(line.startswith("… reading the model's fixed prompt: ") for line in first)
    said = chat()
    assert said[0] == "… loading the local model…"
    reading = [line for line in said if line.startswith("… reading the prompt: ")]
    assert reading and "from cache" in reading[0]  # restored: the server said so
    assert reading[-1].split("(")[1].startswith("100%")
    assert "… generating…" in said
