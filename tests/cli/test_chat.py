"""`hermes-tui chat`, `sessions`, `export` and `--resume`, as processes against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.fake_openai import FakeOpenAI, error, text, tools


@pytest.fixture
def env(cli_env, fake: FakeOpenAI) -> dict[str, str]:
    return {**cli_env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": fake.api_key}


def test_chat_streams_the_reply_and_reports_tools(env, fake: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    fake.add(tools(("read_file", {"path": "notes.txt"})), text("You need milk."))
    out = run(env, "chat", "what do my notes say?", "--model", "gpt-test", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "You need milk."
    assert "⚙ read_file" in out.stderr and "✔ read_file ok" in out.stderr
    assert "answered · 22 in / 14 out tokens" in out.stderr
    assert fake.requests[0]["model"] == "gpt-test"


def test_destructive_calls_are_denied_headless(env, fake: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "keep.log").write_text("x")  # a log: no checkpoint holds it, so rm asks
    fake.add(tools(("terminal", {"command": "rm keep.log"})), text("I could not delete it."))
    out = run(env, "chat", "delete keep.log", cwd=tmp_path)
    assert out.returncode == 0 and (tmp_path / "keep.log").exists()
    assert "✖ terminal denied" in out.stderr


def test_a_trusted_projects_deny_rule_holds_for_tools_run_there(
    env, fake: FakeOpenAI, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".hermes").mkdir(parents=True)
    (project / ".hermes" / "approvals.yaml").write_text(
        "rules:\n  - {action: deny, command_prefix: touch}\n"
    )
    fake.add(tools(("terminal", {"command": "touch x"})), text("Done."))
    env = {**env, "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    out = run(env, "chat", "touch x", "--yes", "--cwd", str(project), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "✖ terminal denied" in out.stderr and not (project / "x").exists()


def test_with_config_yaml_unreadable_the_model_is_offered_no_tool_it_may_have_switched_off(
    env, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("tools:\n  disabled: [terminal\n")  # does not parse
    fake.add(text("I have no tools."))
    out = run(env, "chat", "delete build", "--model", "gpt-test", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    offered = {t["function"]["name"] for t in fake.requests[0].get("tools", [])}
    assert offered.isdisjoint({"terminal", "read_file", "write_file", "patch", "search_files"})
    assert "config.yaml" in out.stderr and "line 3" in out.stderr
    assert "the model is offered none of the tools you can switch off" in out.stderr


def test_endpoint_errors_exit_non_zero_with_a_message(env, fake: FakeOpenAI) -> None:
    fake.add(error(404, "no such model"))
    out = run(env, "chat", "hi")
    assert out.returncode == 1 and "Not found (404)" in out.stderr and "Traceback" not in out.stderr


def test_sessions_export_and_resume(env, fake: FakeOpenAI, home: Path, tmp_path: Path) -> None:
    fake.add(text("first answer"), text("second answer"), text("third answer"))
    assert run(env, "chat", "first question").returncode == 0
    listing = json.loads(run(env, "sessions", "--json").stdout)
    assert (
        len(listing) == 1 and listing[0]["title"] == "first question" and listing[0]["turns"] == 1
    )
    session_id = listing[0]["id"]
    assert run(env, "chat", "--resume", session_id[:15], "second question").returncode == 0
    assert [m["content"] for m in fake.requests[-1]["messages"]] == [
        "first question",
        "first answer",
        "second question",
    ]
    out = run(
        {**env}, "--resume"
    )  # top level: the latest session, continued in this terminal (stdin ends)
    assert out.returncode == 0 and f"session {session_id}" in out.stderr
    exported = tmp_path / "session.md"
    assert run(env, "export", session_id, "-o", str(exported)).returncode == 0
    markdown = exported.read_text()
    assert "## You\n\nfirst question" in markdown and "## Assistant\n\nsecond answer" in markdown
    assert run(env, "export", "no-such-id").returncode == 2
    assert run(env, "chat", "--resume", "nope", "x").returncode == 2


@pytest.mark.e2e  # the installed command as a process: a conversation piped to its stdin
def test_stdin_conversation(env, fake: FakeOpenAI) -> None:
    import subprocess

    from tests.support.cli import BIN

    fake.add(text("one"), text("two"))
    out = subprocess.run(
        [str(BIN / "hermes-tui"), "chat"],
        input="hello\nagain\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout.split() == ["one", "two"]


@pytest.mark.e2e  # the installed command as a process: a conversation piped to its stdin
def test_a_failed_turn_makes_the_conversation_exit_1_after_a_good_one(
    env, fake: FakeOpenAI
) -> None:
    import subprocess

    from tests.support.cli import BIN

    fake.add(error(404, "no such model"), text("two"))
    out = subprocess.run(
        [str(BIN / "hermes-tui"), "chat"],
        input="hello\nagain\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["two"] and "Not found (404)" in out.stderr
    assert out.returncode == 1, out.stderr


def test_a_session_leaves_only_private_state(env, fake: FakeOpenAI, home: Path, tmp_path) -> None:
    """After a chat with a spilled result, a session index and logs, nothing in HERMES_HOME is
    readable by others, and a home an older version created 0755 has been tightened."""
    import os
    import stat

    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    (home / "config.yaml").write_text(  # a small budget spills; no skills so none is compressed
        "model:\n  context_window: 4000\nagent:\n  disabled_toolsets: [skills]\n"
    )
    os.chmod(home / "config.yaml", 0o644)
    fake.add(
        tools(("terminal", {"command": "seq 1 20000"})),
        tools(  # sent in full by default: auto defers it only when the request gets smaller
            ("session_search", {"query": "count"}),
            ("memory", {"action": "add", "content": "n"}),
        ),
        text("done"),
    )
    assert run(env, "chat", "count", cwd=tmp_path).returncode == 0
    assert run(env, "sessions", "--json").returncode == 0
    spilled = list((home / "state" / "results").rglob("*.txt"))
    assert spilled, "the test needs a spilled result"
    for made in ("sessions/index.sqlite", "memories/MEMORY.md", "logs/hermes-tui.log"):
        assert (home / made).exists(), made
    loose = []
    for root, dirs, files in os.walk(home):
        for name in dirs + files:
            info = os.lstat(Path(root) / name)
            want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
            if stat.S_IMODE(info.st_mode) & ~want:
                loose.append(f"{Path(root, name).relative_to(home)} {info.st_mode & 0o777:o}")
    assert loose == [] and stat.S_IMODE(os.stat(home).st_mode) == 0o700


def test_damaged_sessions_are_skipped_and_said(env, fake: FakeOpenAI, home: Path) -> None:
    """Bad lines, a directory and a FIFO named like sessions: listed, exported and resumed
    without a crash or a hang, each problem said once."""
    import os

    from tests.support.transcripts import write_damaged_session

    session_id = write_damaged_session(home)
    (home / "sessions" / "x.jsonl").mkdir()
    os.mkfifo(home / "sessions" / "20240101-130000-fifo00.jsonl")
    listing = run(env, "sessions", "--json")
    assert listing.returncode == 0, listing.stderr
    assert [s["id"] for s in json.loads(listing.stdout)] == [session_id]
    assert f"{session_id}.jsonl: 5 line(s) could not be read" in listing.stderr
    assert "skipped x.jsonl" in listing.stderr and "20240101-130000-fifo00.jsonl" in listing.stderr
    exported = run(env, "export", session_id)
    assert exported.returncode == 0 and "## You\n\nread both" in exported.stdout
    assert "5 damaged line(s)" in exported.stderr and "Traceback" not in exported.stderr
    fake.add(text("resumed"))
    resumed = run(env, "chat", "--resume", session_id, "go on")
    assert resumed.returncode == 0 and resumed.stdout.strip() == "resumed"
    assert "1 tool call(s) had no result" in resumed.stderr


def test_a_nul_byte_path_is_a_clear_error(env) -> None:
    out = run(env, "call", "read_file", "--args", '{"path": "a\\u0000b"}')
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "contains a NUL byte" in json.loads(out.stdout)["message"]


@pytest.mark.e2e  # the installed command as a process: a conversation piped to its stdin
def test_a_long_chat_is_compressed_and_says_so_then_resumes(
    env, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    """A conversation of reads several times the server's window: no request refused, the
    compression said on stderr, the context in use on each turn's line; resume goes on."""
    import subprocess

    from tests.support.cli import BIN
    from workbench.core.agent.compress import SUMMARY_SYSTEM

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n  context_window: 6000\n  max_tokens: 1024\n"
        "agent:\n  disabled_toolsets: [terminal, web]\n"
    )
    fake.window = 6000
    fake.route(SUMMARY_SYSTEM[:40], *[text("The user had notes read.")] * 20)
    prompts = []
    for n in range(8):
        (tmp_path / f"notes{n}.txt").write_text(
            f"TOP{n}\n" + "".join(f"note {i}: keep calm and carry on\n" for i in range(900))
        )
        fake.add(tools(("read_file", {"path": f"notes{n}.txt"})), text(f"read {n}"))
        prompts.append(f"read notes{n}.txt")
    out = subprocess.run(
        [str(BIN / "hermes-tui"), "chat", "--cwd", str(tmp_path)],
        input="\n".join(prompts) + "\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [w for n in range(8) for w in ("read", str(n))]
    assert fake.refused == [] and fake.overflows == []
    assert "──── context compressed " in out.stderr
    assert out.stderr.count(" / 6k]") == 8  # "· context 3.1k / 6k]" on each turn's line
    fake.add(text("resumed"))
    again = run(env, "chat", "--resume", "", "and now?")
    assert again.returncode == 0 and again.stdout.strip() == "resumed"
    sent = fake.requests[-1]["messages"]
    # the first request, then the summary (sent with it as one user message)
    assert (
        sent[0]["content"].startswith("read notes0.txt\n\n") and sent[-1]["content"] == "and now?"
    )
    assert any("[Summary of the earlier conversation" in (m.get("content") or "") for m in sent)
    assert fake.refused == []
    exported = run(env, "export", listing_id(env))
    assert (
        "> *context compressed " in exported.stdout
        and "## You\n\nread notes7.txt" in exported.stdout
    )


def listing_id(env: dict[str, str]) -> str:
    return json.loads(run(env, "sessions", "--json").stdout)[-1]["id"]


def test_a_full_disk_keeps_the_session_going_in_memory(
    env, fake: FakeOpenAI, full_filesystem
) -> None:
    mount, fill = full_filesystem
    home = mount / "home"
    env = {**env, "HERMES_HOME": str(home)}
    assert run(env, "tools").returncode == 0  # the home is made while there is room
    fill()
    # a file outside HERMES_HOME: the sandbox hides that from the file tools too
    fake.add(tools(("read_file", {"path": "/etc/os-release"})), text("It is a config."))
    out = run(env, "chat", "what is in my config?")
    assert out.returncode == 0 and out.stdout.strip() == "It is a config."
    assert "The transcript is not being saved (cannot write" in out.stderr
    assert "No space left on device); the session goes on in memory." in out.stderr
    assert "Traceback" not in out.stderr and "Logging error" not in out.stderr
    assert "✔ read_file ok" in out.stderr  # the tools still ran
    doctor = run(env, "doctor")
    assert doctor.returncode == 1 and "cannot be written (No space left on device)" in doctor.stdout


def test_a_read_only_home_keeps_the_session_going(
    env, fake: FakeOpenAI, home: Path, make_read_only
) -> None:
    assert run(env, "tools").returncode == 0
    make_read_only(home)
    fake.add(text("hello"))
    out = run(env, "chat", "hi")
    assert out.returncode == 0 and out.stdout.strip() == "hello"
    assert "The transcript is not being saved" in out.stderr and "Traceback" not in out.stderr
    doctor = run(env, "doctor")
    assert doctor.returncode == 1 and "cannot be written" in doctor.stdout


@pytest.mark.e2e  # the installed command as a process: run as another user
def test_a_home_the_user_cannot_read(env, fake: FakeOpenAI, other_user) -> None:
    """Root's private home met by another user: every command reports it, none crashes."""
    import os
    import subprocess
    import tempfile

    from tests.support.cli import BIN

    shared = Path(tempfile.mkdtemp(prefix="hermes-other-"))
    try:
        os.chmod(shared, 0o755)
        home = shared / "home"
        env = {**env, "HERMES_HOME": str(home)}
        assert run(env, "tools").returncode == 0  # made by root, 0700
        fake.add(text("hello"))
        for args in (["doctor"], ["tools"], ["sessions"], ["chat", "hi"]):
            out = subprocess.run(
                [*other_user, str(BIN / "hermes-tui"), *args],
                env=env,
                cwd=shared,
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            assert "Traceback" not in out.stderr, (args, out.stderr)
            if args == ["doctor"]:
                assert "cannot be read (Permission denied)" in out.stdout
            if args == ["chat", "hi"]:
                assert out.returncode == 0 and out.stdout.strip() == "hello"
                assert "The transcript is not being saved" in out.stderr
    finally:
        subprocess.run(["rm", "-rf", str(shared)])


# -- a Hermes user's model -----------------------------------------------------------------


def first_line(stderr: str) -> str:
    return stderr.lstrip("\n").splitlines()[0]


@pytest.mark.parametrize(
    ("model", "name_from"),
    [
        ("model: hermes-model\n", "config.yaml model"),  # a plain string, with OPENAI_BASE_URL
        ("model:\n  default: hermes-model\n  provider: custom\n  base_url: {url}\n"
         "  api_key_env: FAKE_KEY\n", "config.yaml model.default"),
        ("model:\n  model: hermes-model\n  provider: llama.cpp\n  base_url: {url}\n"
         "  api_key_env: FAKE_KEY\n", "config.yaml model.model"),
    ],
    ids=["plain-string", "custom-default", "alias-model"],
)  # fmt: skip
def test_a_hermes_config_talks_to_its_endpoint_with_its_key_from_dotenv(
    cli_env, fake: FakeOpenAI, home: Path, model: str, name_from: str
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(model.format(url=fake.url))
    (home / ".env").write_text(
        f"# keys\nexport FAKE_KEY='{fake.api_key}'\nOPENAI_BASE_URL={fake.url}\n"
        f'OPENAI_API_KEY="{fake.api_key}"\n'
    )
    fake.add(text("hello from the configured model"))
    out = run(cli_env, "chat", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hello from the configured model"
    assert fake.requests[0]["model"] == "hermes-model"  # the configured name, sent as is
    assert fake.requests[0]["auth"] == f"Bearer {fake.api_key}"
    said = first_line(out.stderr)
    assert said.startswith(f"[hermes-model via custom ({fake.url}), key ")
    assert "from $HERMES_HOME/.env" in said and f"model from {name_from}" in said
    assert fake.api_key not in out.stderr  # the key's name is said, never the key


def test_the_environment_wins_over_dotenv(cli_env, fake: FakeOpenAI, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  default: m\n  provider: custom\n  base_url: {fake.url}\n"
        "  api_key_env: FAKE_KEY\n"
    )
    (home / ".env").write_text("FAKE_KEY=stale-key-from-the-file\n")
    fake.add(text("ok"))
    out = run({**cli_env, "FAKE_KEY": fake.api_key}, "chat", "hi")
    assert out.returncode == 0, out.stderr
    assert fake.requests[0]["auth"] == f"Bearer {fake.api_key}"
    assert "key FAKE_KEY from the environment" in first_line(out.stderr)


def test_a_missing_key_is_named_and_nothing_else_answers(
    cli_env, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n  default: openai/gpt-4o-mini\n  provider: openrouter\n"
    )
    out = run(cli_env, "chat", "hi")
    assert out.returncode == 2 and out.stdout == ""
    assert "OPENROUTER_API_KEY" in out.stderr and "$HERMES_HOME/.env" in out.stderr
    assert "Traceback" not in out.stderr and not (home / "sessions").exists()


def test_model_flags_override_the_config(cli_env, fake: FakeOpenAI, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("model:\n  default: a/b\n  provider: anthropic\n")
    fake.add(text("from the flags"))
    out = run(
        cli_env, "chat", "hi", "--model", "flag-model", "--base-url", fake.url,
        "--api-key", fake.api_key,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert fake.requests[0]["model"] == "flag-model"
    assert "key --api-key — model from --model, endpoint from --base-url" in out.stderr


def test_the_first_line_says_whether_commands_run_confined(
    env, fake: FakeOpenAI, tmp_path: Path
) -> None:
    """Where commands run is said before anything runs: sandboxed where bubblewrap works,
    and without it, unconfined with the reason; never silently."""
    from tests.support.sandbox import path_without_bwrap
    from workbench.core.backends.sandbox import bwrap_status

    fake.add(text("Hi."), text("Hi."))
    first = run(env, "chat", "hi", cwd=tmp_path).stderr.splitlines()[0]
    if bwrap_status()[0]:
        assert first.endswith(" · terminal: sandboxed]"), first
    unconfined = {**env, "PATH": path_without_bwrap(tmp_path)}
    first = run(unconfined, "chat", "hi", cwd=tmp_path).stderr.splitlines()[0]
    assert first.endswith(
        " · terminal: NOT confined: no sandbox here (bwrap is not installed (Debian: "
        "apt-get install bubblewrap))]"
    ), first


def test_chat_says_on_stderr_how_far_the_model_has_read(env, fake: FakeOpenAI) -> None:
    # a llama.cpp server's `prompt_progress`, as the bundled one sends when asked
    fake.add(text("Four.", progress=[(256, 700, 0), (512, 700, 0), (700, 700, 0)]))
    done = run(env, "chat", "2+2?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Four."
    said = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("…")]
    assert said == [
        "… reading the prompt: 256 / 700 tokens (36%)",
        "… reading the prompt: 512 / 700 tokens (73%)",
        "… reading the prompt: 700 / 700 tokens (100%)",
        "… generating…",
    ]


CLARIFY_IN_A_SECOND = (  # the process as installed, its clarify question waiting one second
    "import sys\n"
    "from workbench.core.agent import own_tools\n"
    "own_tools.CLARIFY_TIMEOUT = 1.0\n"
    "from workbench.__main__ import main\n"
    "sys.exit(main())\n"
)


@pytest.mark.e2e  # the installed command as a process: on a pseudo-terminal
def test_on_a_terminal_the_answer_typed_goes_to_the_question_asked_after_a_clarify_timed_out(
    env, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    import os
    import pty
    import subprocess
    import sys
    import threading

    from tests.support.procs import wait_until

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "terminal:\n  sandbox: false\ncheckpoints:\n  enabled: false\n"
    )
    (tmp_path / "keep.log").write_text("x")
    fake.add(
        tools(("clarify", {"question": "Which colour?", "choices": ["red", "blue"]})),
        tools(("terminal", {"command": "rm keep.log"})),
        text("deleted"),
    )
    terminal, stdin = pty.openpty()  # questions are asked only when stdin is a terminal
    process = subprocess.Popen(
        [sys.executable, "-c", CLARIFY_IN_A_SECOND, "chat", "delete keep.log"],
        env=env,
        cwd=tmp_path,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(stdin)
    said: list[bytes] = []
    reader = threading.Thread(target=lambda: said.extend(iter(process.stderr.read1, b"")))
    reader.start()
    try:
        wait_until(lambda: b"needs your approval" in b"".join(said), what="the approval asked")
        assert b"? Which colour? [red / blue]" in b"".join(said)
        os.write(terminal, b"o\n")  # typed once the approval is the question asked
        process.wait(timeout=120)  # its stdout, a few words, fits the pipe
    finally:
        process.kill()
        reader.join()
        os.close(terminal)
    out = process.stdout.read()
    process.stdout.close()
    process.stderr.close()
    stderr = b"".join(said).decode()
    assert process.returncode == 0, stderr
    assert out.decode().strip() == "deleted"
    assert not (tmp_path / "keep.log").exists() and "✔ terminal ok" in stderr
    assert "that question is no longer asked (no answer in time)" in stderr
    clarified = json.loads(fake.requests[1]["messages"][-1]["content"])
    assert clarified["answer"] == "" and "no answer" in clarified["note"]


def test_approvals_mode_smart_is_said_once_to_fall_back_to_ask(
    env, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("approvals:\n  mode: smart\n")
    fake.add(tools(("terminal", {"command": "rm -rf build"})), text("I could not."))
    out = run(env, "chat", "clean up", cwd=tmp_path)
    said = [ln for ln in out.stderr.splitlines() if "approvals.mode: smart" in ln]
    assert said == [
        "hermes-tui: approvals.mode: smart (Hermes's default: an auxiliary model approves "
        "low-risk commands) is not supported by hermes-tui: every call that needs approval "
        "asks you (mode ask)"
    ]
    assert "✖ terminal denied" in out.stderr  # asked, and headless no one answers: denied
