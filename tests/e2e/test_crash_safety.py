"""A process killed mid-turn leaves a transcript that reads back whole up to the last event."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import BIN
from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.agent import transcript

pytestmark = pytest.mark.e2e


def test_kill_mid_turn(cli_env, home: Path, tmp_path: Path) -> None:
    fake = FakeOpenAI().start()
    fake.add(tools(("terminal", {"command": "sleep 30"})), text("never"))
    env = {**cli_env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": fake.api_key}
    try:
        process = subprocess.Popen(
            [str(BIN / "hermes-tui"), "chat", "run the slow thing", "--model", "m"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        files: list[Path] = []
        while time.monotonic() < deadline:
            files = (
                list((home / "sessions").glob("*.jsonl")) if (home / "sessions").exists() else []
            )
            if files and any(r["kind"] == "tool_started" for r in transcript.read(files[0])):
                break
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        fake.stop()
    records = transcript.read(files[0])
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "session" and "tool_started" in kinds and "turn_finished" not in kinds
    user = transcript.messages(records)[0]
    assert user == {"role": "user", "content": "run the slow thing"}
    raw = files[0].read_text()
    assert raw.endswith("\n")  # every record was written whole
