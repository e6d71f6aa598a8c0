"""The terminal's sandbox, for real (bubblewrap): through `hermes-tui call`, as the agent runs.

A command may write only in its working directory and a private /tmp; HERMES_HOME and the
credential folders read as empty; the network is gone unless allowed; without a working
bubblewrap nothing runs at all.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run
from workbench.core.backends.sandbox import bwrap_status

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")


@pytest.fixture
def sandboxed(cli_env, home: Path, tmp_path: Path) -> dict[str, str]:
    """A session whose terminal is sandboxed; a fake user home with credentials in it."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("terminal:\n  sandbox: true\n")
    (home / ".env").write_text("OPENAI_API_KEY=sk-in-dotenv\n")
    user = tmp_path / "user-home"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (user / ".aws").mkdir()
    (user / ".aws" / "credentials").write_text("aws_secret_access_key = AWSSECRET\n")
    (user / ".netrc").write_text("machine x password NETRCSECRET\n")
    return {**cli_env, "HOME": str(user)}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def term(env: dict[str, str], cwd: Path, command: str) -> dict:
    out = run(env, "call", "terminal", "--args", json.dumps({"command": command}), "--yes", cwd=cwd)
    assert out.stdout, out.stderr
    return json.loads(out.stdout)


def test_writes_only_in_the_working_directory_and_a_private_tmp(
    sandboxed, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    user_home = Path(sandboxed["HOME"])
    out = term(
        sandboxed,
        work,
        f"echo in > inside.txt; echo t > /tmp/probe-{os.getpid()} && cat /tmp/probe-{os.getpid()}; "
        f"echo out > {outside}/escaped.txt; echo h > {user_home}/escaped.txt; "
        "touch /usr/escaped.txt; echo done",
    )
    assert (work / "inside.txt").read_text() == "in\n"
    assert not (outside / "escaped.txt").exists() and not (user_home / "escaped.txt").exists()
    assert not Path("/usr/escaped.txt").exists()
    assert not Path(f"/tmp/probe-{os.getpid()}").exists()  # its /tmp was its own
    assert "Read-only file system" in out["output"] and out["output"].endswith("done\n")


def test_hermes_home_and_credentials_read_as_nothing(sandboxed, work: Path, home: Path) -> None:
    user = sandboxed["HOME"]
    out = term(
        sandboxed,
        work,
        f"cat {home}/.env {home}/config.yaml {user}/.ssh/id_rsa {user}/.aws/credentials "
        f"{user}/.netrc; ls -A {home} {user}/.ssh; echo end",
    )
    shown = out["output"]
    for secret in ("sk-in-dotenv", "PRIVATE KEY", "AWSSECRET", "NETRCSECRET", "sandbox: true"):
        assert secret not in shown, secret
    assert shown.endswith("end\n")
    echo = term(sandboxed, work, f"echo x > {home}/config.yaml")
    assert echo["exit_code"] != 0 and "sandbox: true" in (home / "config.yaml").read_text()


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP server on 127.0.0.1 that records every connection it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted: list[object] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    server.close()
    thread.join(timeout=5)


def test_no_network_unless_allowed(sandboxed, work: Path, home: Path, listener) -> None:
    port, accepted = listener
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    out = term(sandboxed, work, probe)
    assert out["exit_code"] != 0 and "connected" not in out["output"] and accepted == []
    (home / "config.yaml").write_text("terminal:\n  sandbox: true\n  sandbox_network: true\n")
    assert term(sandboxed, work, probe)["output"] == "connected\n"


def test_without_bubblewrap_nothing_runs(sandboxed, work: Path, tmp_path: Path) -> None:
    """Fail closed: a sandbox that cannot start never becomes a command run unsandboxed."""
    bin_dir = tmp_path / "bin"  # bash, but no bwrap, on PATH
    bin_dir.mkdir()
    for tool in ("bash", "touch"):
        (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
    out = term({**sandboxed, "PATH": str(bin_dir)}, work, "touch ran")
    assert out["status"] == "refused" and "bwrap is not installed" in out["error"]
    assert not (work / "ran").exists()
    doctor = run({**sandboxed, "PATH": str(bin_dir)}, "doctor")
    assert doctor.returncode == 1 and "terminal.sandbox is on, but bwrap" in doctor.stdout


def test_doctor_says_the_sandbox_is_on_and_working(sandboxed) -> None:
    doctor = run(sandboxed, "doctor").stdout
    assert "terminal  sandbox (bubblewrap: writes only in the working directory, network off)" in (
        doctor
    )


def test_a_working_directory_inside_hermes_home_is_refused(sandboxed, home: Path) -> None:
    out = term(sandboxed, home, "ls -A")
    assert out["status"] == "refused" and "which the sandbox hides" in out["error"]
    assert ".env" not in out["output"]


async def test_the_person_may_let_one_command_out_of_the_sandbox(
    tmp_path: Path, home: Path
) -> None:
    """Allowed once, `rm` of a file outside the project fails inside the sandbox; allowed
    "outside the sandbox" (the modal's extra choice), that one command runs unconfined."""
    from workbench.core.backends.sandbox import SandboxBackend
    from workbench.core.execution.approval import ApprovalBroker, Choice
    from workbench.core.execution.executor import Executor
    from workbench.core.tools.registry import registry

    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    victim = other / "victim.txt"
    victim.write_text("x")
    broker, asked = ApprovalBroker(), []
    answers = iter([Choice.ONCE, Choice.OUTSIDE])
    broker.attach(lambda r: (asked.append(r), broker.answer(r.id, next(answers))))
    backend = SandboxBackend(hermes_home=home)
    executor = Executor(registry, broker=broker, cwd=str(project), backend=backend)
    command = {"command": f"rm {victim}"}
    (inside,) = await executor.run([{"id": "1", "name": "terminal", "arguments": command}])
    assert victim.exists() and json.loads(inside.content)["exit_code"] != 0
    assert asked[0].can_leave and asked[0].where.startswith("sandbox (bubblewrap")
    (outside,) = await executor.run([{"id": "2", "name": "terminal", "arguments": command}])
    assert outside.decision.choice is Choice.OUTSIDE and not victim.exists()
    victim.write_text("x")  # and it was this command only: the next one asks again
    (again,) = await executor.run([{"id": "3", "name": "terminal", "arguments": command}])
    assert len(asked) == 3 and again.status == "denied" and victim.exists()
    executor.shutdown()


async def test_outside_is_refused_where_there_is_no_sandbox_to_leave() -> None:
    from workbench.core.execution.approval import ApprovalBroker, Choice

    broker = ApprovalBroker()
    broker.attach(lambda r: broker.answer(r.id, Choice.OUTSIDE))
    decision = await broker.decide("terminal", "rm -rf build", None, can_leave=False)
    assert decision.choice is Choice.DENY


def test_a_link_in_the_project_does_not_lead_out(sandboxed, work: Path, tmp_path: Path) -> None:
    """A symlink inside the working directory to a folder outside it is read-only in there."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (work / "door").symlink_to(outside)
    out = term(sandboxed, work, "echo x > door/through.txt; echo $?")
    assert not (outside / "through.txt").exists() and out["output"].strip().endswith("1")
