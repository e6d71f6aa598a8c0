"""The app's secrets are out of reach of the commands it runs: not in its /proc environment,
not in its arguments (what `ps` shows), not in the process that starts commands; and a key
can be given without ever being an argument (`--api-key-file`, `--api-key -`)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import BIN, run
from tests.support.fake_openai import FakeOpenAI, text, tools

# Every process from the command up to the app (bash, its reaper, the reaper server,
# hermes-tui): `ps`, their environment and their arguments. Only these: the output stays
# whole on a busy machine, and nothing beyond the app is read.
SNOOP = (
    "ps auxww | grep -a 'look aroun[d]'; p=$$; while [ $p -gt 1 ]; do "
    "tr '\\0' ' ' < /proc/$p/environ; echo; tr '\\0' ' ' < /proc/$p/cmdline; echo; "
    "grep -aq 'hermes-tu[i].chat' /proc/$p/cmdline && break; "
    "p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2); done"
)


@pytest.fixture
def unconfined(home: Path) -> None:
    """These tests read the app's processes from a command: the layer under test is the one
    that holds without the sandbox (whose own process namespace would hide them all)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("terminal:\n  sandbox: false\n")


def secret() -> str:
    return f"sk-test-SECRET-{secrets.token_hex(8)}"  # no other process on the machine has it


def tool_output(fake: FakeOpenAI) -> str:
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    return json.loads(result["content"])["output"]


@pytest.mark.e2e  # the installed command as a process: its own process is read
def test_a_model_that_reads_every_process_gets_no_key(
    unconfined: None, cli_env: dict[str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    key = fake.api_key = secret()
    fake.add(tools(("terminal", {"command": SNOOP})), text("nothing found"))
    env = {**cli_env, "OPENAI_API_KEY": key, "GITHUB_TOKEN": key + "-gh"}
    args = ("chat", "look around", "--base-url", fake.url, "--api-key", key)
    out = run(env, *args, cwd=tmp_path, process=True)  # the app's own process is read
    assert out.returncode == 0, out.stderr
    seen = tool_output(fake)
    assert "--api-key" in seen and "look around" in seen  # the app's own command line was read
    assert "reaper.py" in seen and "omitted" not in seen and "pytest" not in seen
    assert key not in seen


@pytest.mark.e2e  # the installed command as a process: its own /proc files are read
def test_the_running_app_shows_neither_key_in_proc(
    unconfined: None, cli_env: dict[str, str], fake: FakeOpenAI, tmp_path: Path
) -> None:
    key = fake.api_key = secret()
    # the model asks for the app's own /proc files: the terminal's command runs while it waits
    reads = "p=$(pgrep -of 'look-at-m[e]'); tr '\\0' '\\n' < /proc/$p/environ; cat /proc/$p/cmdline"
    fake.add(tools(("terminal", {"command": reads})), text("done"))
    env = {**cli_env, "OPENAI_API_KEY": key}
    args = ("chat", "look-at-me", "--base-url", fake.url, "--api-key", key)
    out = run(env, *args, cwd=tmp_path, process=True)  # the app's own /proc files are read
    assert out.returncode == 0, out.stderr
    seen = tool_output(fake)
    assert "--api-key" in seen and key not in seen
    if "OPENAI_API_KEY" not in seen:  # without CAP_SYS_PTRACE even root cannot read it
        assert "Permission denied" in seen or seen.strip().endswith("look-at-me")


@pytest.mark.e2e  # the installed command as a process: a key piped to its stdin
def test_api_key_file_and_stdin(cli_env: dict[str, str], fake: FakeOpenAI, tmp_path: Path) -> None:
    key = fake.api_key = secret()
    key_file = tmp_path / "key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    fake.add(text("one"), text("two"), text("three"))
    out = run(cli_env, "chat", "hi", "--base-url", fake.url, "--api-key-file", str(key_file))
    assert out.returncode == 0, out.stderr
    assert fake.requests[0]["auth"] == f"Bearer {key}" and "warning" not in out.stderr
    key_file.chmod(0o644)
    out = run(cli_env, "chat", "hi", "--base-url", fake.url, "--api-key-file", str(key_file))
    assert out.returncode == 0 and fake.requests[1]["auth"] == f"Bearer {key}"
    assert f"{key_file} is readable by other users" in out.stderr and key not in out.stderr
    # one line from stdin is the key; the next lines are the conversation
    piped = subprocess.run(
        [str(BIN / "hermes-tui"), "chat", "--base-url", fake.url, "--api-key", "-"],
        env=cli_env, input=f"{key}\nthird question\n", capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert fake.requests[2]["auth"] == f"Bearer {key}"
    assert fake.requests[2]["messages"][-1]["content"] == "third question"


def test_a_key_file_that_cannot_be_read_is_a_usage_error(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    out = run(cli_env, "chat", "hi", "--api-key-file", str(tmp_path / "none"))
    assert out.returncode == 2 and "--api-key-file" in out.stderr and "No such file" in out.stderr
    both = run(cli_env, "chat", "hi", "--api-key", "k", "--api-key-file", "f")
    assert both.returncode == 2 and "one way" in both.stderr


HOLD = """
import sys
from workbench.core.own_process import harden, hide_arguments
harden()
hide_arguments(sys.argv[2:3])  # argv[0] is "-c"
print("ready", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def hardened():
    """A process that hardened itself, with a secret in its environment and its arguments;
    it waits until its stdin closes."""

    def start(key: str, prefix: list[str] = ()) -> subprocess.Popen:
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
               "OPENAI_API_KEY": key, "LANG": "C.UTF-8"}  # fmt: skip
        child = subprocess.Popen(
            [*prefix, sys.executable, "-c", HOLD, "--api-key", key],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            cwd=Path(__file__).parents[2],
        )  # fmt: skip
        started.append(child)
        assert child.stdout.readline() == "ready\n"
        return child

    started: list[subprocess.Popen] = []
    yield start
    for child in started:
        child.stdin.close()
        child.wait(timeout=60)


def test_its_environment_block_and_arguments_no_longer_hold_the_key(hardened) -> None:
    key = secret()
    child = hardened(key)
    try:
        environ = Path(f"/proc/{child.pid}/environ").read_bytes()
    except PermissionError:  # no CAP_SYS_PTRACE: a non-dumpable process is closed to root too
        environ = b""
    else:
        assert b"OPENAI_API_KEY=\0" in environ and b"LANG=C.UTF-8" in environ
    assert key.encode() not in environ
    cmdline = Path(f"/proc/{child.pid}/cmdline").read_bytes()
    assert b"--api-key\0" in cmdline and key.encode() not in cmdline


def test_another_process_of_the_same_user_cannot_read_its_environment(
    hardened, other_user: list[str]
) -> None:
    child = hardened(secret(), other_user)  # setpriv runs it in its own process
    snoop = subprocess.run(
        [*other_user, "cat", f"/proc/{child.pid}/environ"], capture_output=True, text=True
    )
    assert snoop.returncode != 0 and "Permission denied" in snoop.stderr
