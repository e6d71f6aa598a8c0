"""The bundled model's server dies with the process that started it, however that ends.

Real processes: `hermes-tui chat` and the full-screen app start the real server, and are
killed (SIGKILL leaves them no chance to clean up); the server must be gone soon after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest

from tests.support.cli import BIN
from tests.support.procs import alive, local_servers, parent_of, serving, wait_until
from tests.support.tmux import keys, typed, wait_for
from workbench.core.model import local as local_model

MODELS = Path(__file__).resolve().parents[2] / ".cache" / "models"
SPEC = local_model.MODELS[local_model.DEFAULT_MODEL]
pytestmark = [
    pytest.mark.e2e,
    # the bundled model takes every core, and the lifetime tests count its servers: the
    # tests that run it go one after the other, on one worker
    pytest.mark.xdist_group("local-model"),
    pytest.mark.skipif(
        not local_model.installed(SPEC), reason="the local model is installed by `make test`"
    ),
]


@pytest.fixture
def env(cli_env: dict[str, str], home: Path):
    env = {k: v for k, v in cli_env.items() if not k.startswith(("OPENAI_", "OPENROUTER_"))}
    yield {**env, "HERMES_TUI_MODELS_DIR": str(MODELS)}
    for pid in local_servers(home):  # a failed test leaves no orphan on the shared machine
        os.kill(pid, signal.SIGKILL)


def the_server(home: Path) -> int:
    """The one local server started for `home`, once it listens."""
    found: list[int] = []
    wait_until(lambda: found.extend(local_servers(home)) or found, 180, "the server started")
    (pid,) = found
    wait_until(lambda: serving(pid), 180, "the server has loaded its model")
    return pid


def assert_gone(pid: int) -> None:
    wait_until(lambda: not alive(pid), 20, f"the local server {pid} ended")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_chat_leaves_no_server(home: Path, env: dict, tmp_path: Path, how) -> None:
    chat = subprocess.Popen(
        [str(BIN / "hermes-tui"), "chat"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        server = the_server(home)
        assert parent_of(server) == chat.pid
        chat.send_signal(how)
        chat.wait(20)
        assert_gone(server)
    finally:
        chat.kill()
        chat.wait()


@pytest.mark.timeout(300)
def test_a_chat_killed_mid_reply_leaves_no_server(home: Path, env: dict, tmp_path: Path) -> None:
    chat = subprocess.Popen(
        [str(BIN / "hermes-tui"), "chat", "Write a very long story about a dragon."],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        server = the_server(home)
        assert chat.stdout.read(1)  # the model is answering: the server is busy generating
        chat.kill()
        chat.wait(20)
        assert_gone(server)
    finally:
        chat.kill()
        chat.wait()


@pytest.mark.timeout(300)
def test_the_killed_workbench_leaves_no_server(tmux_run, home: Path, env: dict) -> None:
    session = tmux_run(env_prefix=f"HERMES_TUI_MODELS_DIR={MODELS}")
    wait_for(session, "Built-in (")
    keys(session, "F6")
    wait_for(session, "bundled local model")
    typed(session, "Say hello.")
    keys(session, "Enter")
    server = the_server(home)
    app = parent_of(server)
    os.kill(app, signal.SIGKILL)
    wait_for(session, "EXIT=")
    assert_gone(server)


@pytest.mark.timeout(300)
def test_a_server_started_from_a_thread_outlives_the_thread(tmp_path: Path) -> None:
    """The parent-death signal follows the thread that forked: it must not end the server."""
    started: list[local_model.LocalServer] = []
    worker = threading.Thread(target=lambda: started.append(local_model.start(SPEC, MODELS)))
    worker.start()
    worker.join()
    (server,) = started
    try:
        request = urllib.request.Request(
            server.base_url + "/models", headers={"Authorization": f"Bearer {server.api_key}"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200 and b"n_ctx" in answer.read()  # answered, with our key
    finally:
        server.stop()
    assert server.process.poll() is not None
