"""terminal under fault injection: background jobs that hold the pipe or leave the process
group, huge and endless output, and spill files that cannot be written."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.procs import processes_with, unique_sleep
from workbench.builtins.terminal import terminal_tool
from workbench.builtins.terminal.capture import OutputCapture
from workbench.builtins.terminal.terminal_tool import MAX_OUTPUT_BYTES, REAPER, run_command
from workbench.core.execution.budget import BudgetConfig, SpillSlot, SpillStore
from workbench.core.execution.executor import Executor, ToolCallFinished
from workbench.core.tools.registry import registry

REPO = Path(__file__).resolve().parents[3]


def run(command: str, cwd: Path, timeout: float = 30, spill: SpillSlot | None = None) -> dict:
    return json.loads(run_command(command, cwd, timeout, spill=spill))


def wait_until_gone(arg: str, within: float = 20.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := processes_with(arg)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def slot(tmp_path: Path) -> SpillSlot:
    return SpillSlot(SpillStore(tmp_path / "results", "session-1"), "call_1")


# -- background jobs -------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "sleep {s} & echo started",  # holds the output pipe
        "setsid sleep {s} & echo started",  # holds it, and left the process group
        "sleep {s} >/dev/null 2>&1 & echo started",  # holds nothing: only an orphan
        "bash -c 'setsid sleep {s} >/dev/null 2>&1 &' ; echo started",  # daemonised
        "nohup sleep {s} >/dev/null 2>&1 & disown; echo started",
        "(trap '' TERM HUP INT; sleep {s}) & echo started",  # ignores polite signals
    ],
)
def test_returns_when_bash_exits_and_no_background_job_survives(
    tmp_path: Path, template: str
) -> None:
    marker = unique_sleep()
    out = run(template.format(s=marker), tmp_path, timeout=60)
    # A call that waited for the job would have hit its timeout instead.
    assert out == {"output": "started\n", "exit_code": 0, "error": None}
    assert processes_with(marker) == []  # killed and reaped before the call returned


def test_a_lone_background_job_returns_at_once_and_is_reaped(tmp_path: Path) -> None:
    marker = unique_sleep()
    out = run(f"sleep {marker} >/dev/null 2>&1 &", tmp_path, timeout=60)
    assert out == {"output": "", "exit_code": 0, "error": None}
    assert processes_with(marker) == []


def test_a_timeout_kills_jobs_that_left_the_process_group(tmp_path: Path) -> None:
    marker = unique_sleep()
    out = run(f"setsid sleep {marker} & echo waiting; sleep 600", tmp_path, timeout=1)
    assert out["status"] == "timeout" and out["output"] == "waiting\n"
    assert processes_with(marker) == []


def test_a_command_that_closes_its_output_early_is_still_waited_for(tmp_path: Path) -> None:
    out = run("echo before; exec >&- 2>&-; sleep 0.3; touch done.txt", tmp_path)
    assert out == {"output": "before\n", "exit_code": 0, "error": None}
    assert (tmp_path / "done.txt").exists()


def test_exit_status_and_signals(tmp_path: Path) -> None:
    assert run("exit 7", tmp_path)["exit_code"] == 7
    assert run("kill -9 $$", tmp_path)["exit_code"] == 137
    assert run("no-such-command-xyz", tmp_path)["exit_code"] == 127


def test_a_command_the_system_cannot_take_says_why(tmp_path: Path) -> None:
    # A NUL byte cannot be in an argument or the environment: the reaper's child used to end
    # with its own internal status (70) and not a word.
    out = run("echo a\0b", tmp_path)
    assert out["exit_code"] == 127 and "cannot run bash: embedded null byte" in out["output"]
    odd = json.loads(terminal_tool.run_process(["echo"], tmp_path, 30, env={"A\0": "b"}))
    assert odd["exit_code"] == 127 and "embedded null byte" in odd["output"]


def test_a_command_holds_no_descriptor_of_ours_but_its_input_and_output(tmp_path: Path) -> None:
    """The call's socket and the pipe's writer reach the reaper server as descriptors of its
    own (SCM_RIGHTS): a command that inherited the socket could write a status of its own
    choosing on it, and kept it open past its reaper's end, so the call waited its whole
    timeout while what the command started lived on."""
    assert run("ls /proc/$$/fd; :", tmp_path)["output"].split() == ["0", "1", "2"]  # bash's
    forged = run("echo 0 >&3 && sleep 5; exit 9", tmp_path)
    assert forged["exit_code"] == 9 and "Bad file descriptor" in forged["output"]  # its own


def test_yes_into_head_ends_quietly_on_sigpipe(tmp_path: Path) -> None:
    # The command gets the shell's default SIGPIPE, not Python's ignored one.
    out = run("yes | head -c 10", tmp_path)
    assert out == {"output": "y\ny\ny\ny\ny\n", "exit_code": 0, "error": None}


def test_when_the_tools_process_dies_its_command_tree_goes_too(tmp_path: Path) -> None:
    marker = unique_sleep()
    script = (
        "import sys; from pathlib import Path; "
        "from workbench.builtins.terminal.terminal_tool import run_command; "
        f"run_command('setsid sleep {marker} & echo up; sleep 600', Path(sys.argv[1]), 600)"
    )
    tool = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], cwd=REPO)
    deadline = time.monotonic() + 30
    while not processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker), "the background job never started"
    (server,) = [p for p in children_of(tool.pid) if REAPER in cmdline(p)]
    tool.kill()
    tool.wait()
    assert wait_until_gone(marker) == []
    deadline = time.monotonic() + 20  # its reaper server goes too: its socket closed
    while Path(f"/proc/{server}").exists() and REAPER in cmdline(server):
        assert time.monotonic() < deadline, "the reaper server outlived the tool's process"
        time.sleep(0.05)


def children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid:
                found.append(int(name))
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_for_file(path: Path, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_one_reaper_server_runs_every_command_and_another_starts_if_it_dies(
    tmp_path: Path,
) -> None:
    """Commands are forked by one long-lived server, not each started by an interpreter of
    its own. Killed, it takes no running command with it, and the next command starts a
    new one."""
    assert run("echo one", tmp_path)["output"] == "one\n"
    server = terminal_tool._SERVER._process
    assert server is not None and run("echo two", tmp_path)["output"] == "two\n"
    assert terminal_tool._SERVER._process is server

    waiting = "touch started; while [ ! -e go ]; do sleep 0.02; done; echo finished"
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run, waiting, tmp_path)
        wait_for_file(tmp_path / "started")
        server.kill()
        server.wait()
        (tmp_path / "go").touch()
        assert running.result(timeout=60) == {"output": "finished\n", "exit_code": 0, "error": None}
    assert run("echo three", tmp_path)["output"] == "three\n"
    assert terminal_tool._SERVER._process is not server


def test_commands_run_at_once_from_several_threads_each_get_their_own_output(
    tmp_path: Path,
) -> None:
    def command(n: int) -> str:  # every one is running before any ends
        return f"touch up{n}; while [ $(ls up* | wc -l) -lt 4 ]; do sleep 0.02; done; echo {n}"

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda n: run(command(n), tmp_path), range(4)))
    assert [r["output"] for r in results] == ["0\n", "1\n", "2\n", "3\n"]
    assert all(r["exit_code"] == 0 for r in results)


def test_a_long_command_and_an_odd_environment_reach_bash_whole(tmp_path: Path) -> None:
    text = "é" * 30_000  # 60 KB of the command line, in a JSON line on the call's socket
    env = {**os.environ, "ODD": "tab\there é \udcff"}
    out = json.loads(terminal_tool.run_process(
        ["bash", "-c", f'printf %s "{text}" | wc -c; printf %s "$ODD" | od -An -c | tr -s " "'],
        tmp_path, 30, env=env,
    ))  # fmt: skip
    assert out["output"].splitlines()[0] == "60000"
    assert "t a b \\t h e r e" in out["output"] and "377" in out["output"]


# -- output: streamed, saved whole, bounded in memory ----------------------------------


def test_large_output_is_saved_whole_and_the_model_gets_head_tail_and_the_path(
    tmp_path: Path, slot: SpillSlot
) -> None:
    expected = b"".join(b"line %d\n" % i for i in range(1, 500_001))
    out = run("seq -f 'line %.0f' 1 500000", tmp_path, spill=slot)
    assert slot.path is not None and slot.path.read_bytes() == expected
    assert out["output_file"] == str(slot.path) and out["output_bytes"] == len(expected)
    text = out["output"]
    assert text.startswith("line 1\nline 2\n") and text.endswith("line 500000\n")
    assert f"saved to: {slot.path}" in text
    assert len(text) < MAX_OUTPUT_BYTES + 500
    assert slot.path.stat().st_mode & 0o777 == 0o600


def test_small_output_makes_no_file(tmp_path: Path, slot: SpillSlot) -> None:
    assert run("echo hi", tmp_path, spill=slot) == {"output": "hi\n", "exit_code": 0, "error": None}
    assert slot.path is None and not (tmp_path / "results").exists()


def test_endless_output_until_the_timeout_is_saved_and_bounded(
    tmp_path: Path, slot: SpillSlot
) -> None:
    out = run("cat /dev/zero | tr '\\0' z", tmp_path, timeout=2, spill=slot)
    assert out["status"] == "timeout"
    assert slot.path is not None and slot.path.stat().st_size == out["output_bytes"]
    assert out["output_bytes"] > 10 * MAX_OUTPUT_BYTES
    assert len(out["output"]) < MAX_OUTPUT_BYTES + 500


def test_memory_holds_only_head_and_tail_whatever_goes_through(slot: SpillSlot) -> None:
    capture = OutputCapture(1000, slot)
    chunk = bytes(range(256)) * 256  # 64 KiB
    for _ in range(400):  # 25 MiB
        capture.feed(chunk)
        assert len(capture.head) <= 500 and len(capture.tail) <= 1000 + len(chunk)
    done = capture.finish()
    assert slot.path is not None and slot.path.stat().st_size == 400 * len(chunk)
    assert done.total_bytes == 400 * len(chunk) and done.saved_to == str(slot.path)


def test_a_spill_directory_that_cannot_be_written_cuts_and_says_so(
    tmp_path: Path, make_read_only
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    make_read_only(results)
    slot = SpillSlot(SpillStore(results, "session-1"), "call_1")
    out = run("seq 1 100000", tmp_path, spill=slot)
    assert "omitted and lost" in out["output"] and "could not be saved" in out["output"]
    assert "output_file" not in out and out["output"].endswith("100000\n")


def test_a_disk_nearly_full_stops_saving_and_says_so(slot: SpillSlot) -> None:
    capture = OutputCapture(1000, slot, reserve=1 << 62)  # more than any disk has free
    capture.feed(b"x" * 5000)
    done = capture.finish()
    assert done.saved_to is None and "the disk is nearly full" in (done.save_error or "")
    assert "could not be saved (the disk is nearly full" in done.text
    assert not any((slot.store.directory).iterdir())  # no half file left behind


def test_a_write_error_midway_removes_the_part_and_says_so(tmp_path: Path) -> None:
    # A real write failure: the file size limit makes the spill write fail with EFBIG
    # after 1 MiB, as a full disk would with ENOSPC.
    script = (
        "import json, resource, sys; from pathlib import Path; "
        "from workbench.core.execution.budget import SpillSlot, SpillStore; "
        "from workbench.builtins.terminal.terminal_tool import run_command; "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY)); "
        "slot = SpillSlot(SpillStore(Path(sys.argv[1]), 's'), 'c'); "
        "print(run_command('head -c 5000000 /dev/zero | tr \"\\\\0\" x', Path(sys.argv[1]), 60,"
        " spill=slot))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = json.loads(done.stdout)
    assert out["exit_code"] == 0 and out["output_bytes"] == 5_000_000
    assert "could not be saved (File too large)" in out["output"]
    assert "output_file" not in out and list((tmp_path / "s").iterdir()) == []


def test_through_the_executor_the_call_records_the_full_output_file(tmp_path: Path) -> None:
    events: list[object] = []
    executor = Executor(
        registry,
        store=SpillStore(tmp_path / "results", "session-1"),
        cwd=str(tmp_path),
        on_event=events.append,
    )
    try:
        (outcome,) = asyncio.run(
            executor.run(
                [{"id": "call_9", "name": "terminal", "arguments": {"command": "seq 1 200000"}}]
            )
        )
    finally:
        executor.shutdown()
    assert outcome.status == "ok" and outcome.spilled is not None
    assert outcome.spilled.parent == tmp_path / "results" / "session-1"
    assert outcome.spilled.read_text() == "".join(f"{i}\n" for i in range(1, 200001))
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished[-1].spilled == outcome.spilled
    assert str(outcome.spilled) in json.loads(outcome.content)["output"]


def test_a_saved_outputs_head_and_tail_still_count_in_the_turn_budget(tmp_path: Path) -> None:
    # The head and tail are not a stub: over the turn's budget they are spilled like any
    # result, and the call still points the viewer at the whole output.
    executor = Executor(
        registry,
        budget=BudgetConfig(result_chars=100_000, turn_chars=20_000),
        store=SpillStore(tmp_path / "results", "session-1"),
        cwd=str(tmp_path),
    )
    call = {"id": "call_7", "name": "terminal", "arguments": {"command": "seq 1 200000"}}
    try:
        (outcome,) = asyncio.run(executor.run([call]))
    finally:
        executor.shutdown()
    assert outcome.content.startswith("<persisted-output>") and len(outcome.content) < 20_000
    assert outcome.spilled is not None
    assert outcome.spilled.read_text() == "".join(f"{i}\n" for i in range(1, 200001))
    assert len(list((tmp_path / "results" / "session-1").iterdir())) == 2


def test_cancelling_the_turn_kills_the_command_and_frees_the_next_call(tmp_path: Path) -> None:
    marker = unique_sleep()
    executor = Executor(registry, cwd=str(tmp_path))
    command = f"setsid sleep {marker} & sleep 600"

    async def cancel_once_running() -> list:
        batch = asyncio.create_task(
            executor.run([{"id": "t1", "name": "terminal", "arguments": {"command": command}}])
        )
        while not processes_with(marker):
            await asyncio.sleep(0.05)
        executor.cancel()
        (outcome,) = await batch
        # A terminal call left running would hold the next one back (it may touch anything).
        (after,) = await executor.run(
            [{"id": "t2", "name": "terminal", "arguments": {"command": "echo next"}}]
        )
        return [outcome, after]

    try:
        outcome, after = asyncio.run(asyncio.wait_for(cancel_once_running(), 90))
    finally:
        executor.shutdown()
    assert outcome.status == "cancelled"
    assert wait_until_gone(marker) == []
    assert after.status == "ok" and json.loads(after.content)["output"] == "next\n"


def test_terminal_timeout_is_the_default_for_a_command_that_names_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.core.runtime import load_runtime

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("terminal:\n  timeout: 1\n")
    monkeypatch.setenv("HERMES_HOME", str(home))
    runtime = load_runtime(home, load_plugins=False)
    executor = runtime.executor(broker=None, cwd=str(tmp_path))
    try:
        (unnamed, named) = asyncio.run(
            executor.run(
                [
                    {"id": "1", "name": "terminal", "arguments": {"command": "sleep 30"}},
                    {"id": "2", "name": "terminal", "arguments": {"command": "sleep 2; echo late", "timeout": 5}},
                ]
            )
        )  # fmt: skip
    finally:
        executor.shutdown()
    said = json.loads(unnamed.content)
    assert said["status"] == "timeout" and "timed out after 1s" in said["error"]
    assert named.status == "ok" and "late" in json.loads(named.content)["output"]  # its own wins
