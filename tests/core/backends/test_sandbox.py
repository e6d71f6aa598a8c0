"""The terminal's sandbox, for real (bubblewrap): through `hermes-tui call`, as the agent runs.

It is on by default (`terminal.sandbox` unset): a command may write only in its working
directory, the write roots and a private /tmp; HERMES_HOME and the credential folders read as
empty; it sees none of our processes; the host's loopback is reached only with `network: host`.
Every working directory here is under pytest's tmp_path, so under /tmp, which the sandbox
replaces with its own: the working directory is still bound in. A command the sandbox made
fail never leaves it headless or with --yes. Without a working bubblewrap, the default runs
unconfined and says so everywhere; `terminal.sandbox: true` then refuses to run anything.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import sandbox as support
from tests.support.cli import run
from tests.support.sandbox import path_without_bwrap
from workbench.core.backends.sandbox import bwrap_status, writable_roots

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    yield from support.outside_tmp()


@pytest.fixture
def sandboxed(cli_env, home: Path, tmp_path: Path) -> dict[str, str]:
    """A session with the default config (the sandbox on by default); a fake user home,
    with credentials in it, as HOME."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("approvals:\n  timeout: 30\n")
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


def term(env: dict[str, str], cwd: Path, command: str, *flags: str) -> dict:
    args = json.dumps({"command": command})
    out = run(env, "call", "terminal", "--args", args, *(flags or ("--yes",)), cwd=cwd)
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


def test_a_write_root_is_writable_and_nothing_beside_it(
    sandboxed, work: Path, home: Path, outside_tmp: Path
) -> None:
    root, beside = outside_tmp / "notes", outside_tmp / "other"
    root.mkdir()
    beside.mkdir()
    (home / "config.yaml").write_text(f"approvals:\n  write_roots: [{root}]\n")
    out = term(sandboxed, work, f"echo n > {root}/n.txt; echo o > {beside}/o.txt")
    assert (root / "n.txt").read_text() == "n\n" and not (beside / "o.txt").exists()
    assert "Read-only file system" in out["output"]


def test_write_roots_are_those_that_exist_resolved_and_never_a_hidden_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "secret" / "inside").mkdir(parents=True)
    roots = (
        str(tmp_path / "link"),
        str(tmp_path / "real"),
        str(tmp_path / "missing"),
        str(tmp_path / "secret" / "inside"),
        str(tmp_path / "work"),
    )
    hidden = [str(tmp_path / "secret")]
    assert writable_roots(roots, str(tmp_path / "work"), hidden) == [str(tmp_path / "real")]


def test_the_projects_rules_and_plugins_are_read_only(sandboxed, work: Path) -> None:
    """A trusted project's session obeys `.hermes/approvals.yaml` and loads its plugins: a
    command whose target the gate could not read (so --yes runs it confined) must not
    rewrite them."""
    rules = work / ".hermes" / "approvals.yaml"
    rules.parent.mkdir()
    rules.write_text('rules:\n  - deny: "curl *"\n')
    out = term(
        sandboxed,
        work,
        'd=$(echo .her)mes; cat "$d/approvals.yaml"; echo "rules: []" > "$d/approvals.yaml"; '
        'mkdir -p "$d/plugins/evil"; echo ok > inside.txt',
    )
    assert "deny" in out["output"] and "Read-only file system" in out["output"]
    assert rules.read_text() == 'rules:\n  - deny: "curl *"\n'
    assert not (work / ".hermes" / "plugins").exists()
    assert (work / "inside.txt").read_text() == "ok\n"  # the rest of the project stays writable


def test_hermes_home_and_credentials_read_as_nothing(sandboxed, work: Path, home: Path) -> None:
    user = sandboxed["HOME"]
    # named only at run time (the gate never lets --yes read a secret it can name)
    places = [f"{home}/.env", f"{home}/config.yaml", f"{user}/.ssh/id_rsa", f"{user}/.netrc"]
    (work / "places.txt").write_text("\n".join([*places, f"{user}/.aws/credentials"]))
    out = term(sandboxed, work, f"cat places.txt | xargs cat; ls -A {home} {user}/.ssh; echo end")
    shown = out["output"]
    for secret in ("sk-in-dotenv", "PRIVATE KEY", "AWSSECRET", "NETRCSECRET", "timeout: 30"):
        assert secret not in shown, secret
    assert shown.endswith("end\n")
    echo = term(sandboxed, work, f"echo x > {home}/config.yaml")
    assert echo["exit_code"] != 0 and "timeout: 30" in (home / "config.yaml").read_text()


def test_the_command_sees_none_of_our_processes(sandboxed, work: Path) -> None:
    out = term(sandboxed, work, "ps -eo pid=,comm=,args=")
    rows = [line.split(None, 2) for line in out["output"].splitlines() if line.strip()]
    assert out["exit_code"] == 0 and any(r[1] == "ps" for r in rows), out
    # bwrap's own init holds the sandbox's argv (the home's entries' names among it)
    theirs = " ".join(r[2] for r in rows if r[1] != "bwrap")
    assert "hermes-tui" not in theirs and "python" not in theirs, out
    assert len(rows) <= 5, out  # its own namespace: bwrap's init, bash and what it runs


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
    server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
    server.close()
    thread.join(timeout=5)


def test_the_hosts_loopback_is_reached_only_with_the_hosts_network(
    sandboxed, work: Path, home: Path, listener
) -> None:
    port, accepted = listener
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    by_default = term(sandboxed, work, probe)  # on: the internet, not the host's loopback
    assert by_default["exit_code"] != 0 and "connected" not in by_default["output"]
    assert accepted == []
    (home / "config.yaml").write_text("terminal:\n  network: host\n")
    assert term(sandboxed, work, probe)["output"] == "connected\n"
    assert len(accepted) == 1
    (home / "config.yaml").write_text("terminal:\n  sandbox_network: false\n")
    out = term(sandboxed, work, probe)
    assert out["exit_code"] != 0 and "connected" not in out["output"] and len(accepted) == 1
    # bash's /dev/tcp is no program the analysis knows: its output reads like the sandbox's
    assert out["sandbox"].startswith("the output reads like a network failure")
    out = term(sandboxed, work, f"curl -sS http://127.0.0.1:{port}/")
    assert out["exit_code"] != 0 and len(accepted) == 1
    assert out["sandbox"].startswith(
        "it runs curl, which needs the network, and the sandbox has none (terminal.network: off)"
    )


def test_sandbox_true_without_bubblewrap_runs_nothing(
    sandboxed, home: Path, work: Path, tmp_path: Path
) -> None:
    """Fail closed: a sandbox asked for that cannot start never becomes a command run
    unsandboxed."""
    (home / "config.yaml").write_text("terminal:\n  sandbox: true\n")
    env = {**sandboxed, "PATH": path_without_bwrap(tmp_path)}
    out = term(env, work, "touch ran")
    assert out["status"] == "refused" and "bwrap is not installed" in out["error"]
    assert not (work / "ran").exists()
    doctor = run(env, "doctor")
    assert doctor.returncode == 1 and "terminal.sandbox is on, but bwrap" in doctor.stdout


def test_by_default_without_bubblewrap_it_runs_unconfined_and_says_so(
    sandboxed, work: Path, tmp_path: Path
) -> None:
    env = {**sandboxed, "PATH": path_without_bwrap(tmp_path)}
    out = term(env, work, "touch ran")
    assert out["exit_code"] == 0 and (work / "ran").exists() and "sandbox" not in out
    doctor = run(env, "doctor").stdout
    assert (
        "terminal  local, NOT confined: no sandbox here (bwrap is not installed (Debian: "
        "apt-get install bubblewrap)); the approval gate alone decides"
    ) in doctor


def test_doctor_says_the_sandbox_is_on_and_working(sandboxed) -> None:
    doctor = run(sandboxed, "doctor").stdout
    assert (
        "terminal  sandbox (bubblewrap: writes only in the working directory, network on (not "
        "the host's loopback); limits: 1024 MB memory, 600 s CPU, 256 processes, 1024 MB /tmp)"
    ) in doctor


def test_sandbox_false_runs_unconfined_and_says_so(sandboxed, home: Path, work: Path) -> None:
    (home / "config.yaml").write_text("terminal:\n  sandbox: false\n")
    doctor = run(sandboxed, "doctor").stdout
    assert "terminal  local, NOT confined: terminal.sandbox is false; the approval gate" in doctor


def test_a_value_that_cannot_be_read_keeps_it_on(sandboxed, home: Path) -> None:
    (home / "config.yaml").write_text("terminal:\n  sandbox: maybe\n")
    doctor = run(sandboxed, "doctor").stdout
    assert "terminal  sandbox (bubblewrap" in doctor
    assert "terminal.sandbox must be auto, true or false, not 'maybe': it is on" in doctor


def test_a_working_directory_inside_hermes_home_is_refused(sandboxed, home: Path) -> None:
    out = term(sandboxed, home, "ls -A")
    assert out["status"] == "refused" and "which the sandbox hides" in out["error"]
    assert ".env" not in out["output"]


@pytest.mark.parametrize("flags", [("--yes",), ()], ids=["yes", "no-tty"])
def test_headless_a_command_the_sandbox_refused_stays_in_and_says_why(
    sandboxed, work: Path, home: Path, outside_tmp: Path, flags: tuple[str, ...]
) -> None:
    """No TTY to ask, or --yes: never out of the sandbox; the result says, in hermes-tui's
    words, what the sandbox refused and who can let it out. (A write outside asks first, so
    headless without --yes the command is one the gate lets run: curl, with no network.)"""
    if flags:
        out = term(sandboxed, work, f"echo x > {outside_tmp}/escaped.txt", *flags)
        assert out["exit_code"] != 0 and not (outside_tmp / "escaped.txt").exists()
        assert out["sandbox"].startswith(f"it writes {outside_tmp}/escaped.txt, outside the")
    else:
        (home / "config.yaml").write_text("terminal:\n  sandbox_network: false\n")
        out = term(sandboxed, work, "curl -sS http://127.0.0.1:9/", "--cwd", str(work))
        assert out["exit_code"] != 0
        assert out["sandbox"].startswith("it runs curl, which needs the network")
    assert (
        "a person can let it out once with x in the workbench, or set terminal.sandbox: "
        in (out["sandbox"])
    )
    assert "Read-only" not in out["sandbox"] and "refused" not in out["sandbox"].split(".")[0]


def test_a_script_that_prints_the_sandboxs_words_gets_no_offer(
    sandboxed, work: Path, outside_tmp: Path
) -> None:
    """The analysis cannot see inside a script: what it printed is said to the model as a
    possibility, with no way out of the sandbox offered (also when it really wrote outside)."""
    (work / "fake.sh").write_text("echo 'bash: /etc/x: Read-only file system' >&2; exit 1\n")
    (work / "real.sh").write_text(f"echo x > {outside_tmp}/escaped.txt\n")
    for script in ("fake.sh", "real.sh"):
        out = term(sandboxed, work, f"sh ./{script}")
        assert out["exit_code"] != 0 and not (outside_tmp / "escaped.txt").exists()
        assert out["sandbox"].startswith("the output reads like a write refused as read-only")
        assert "no run outside was offered" in out["sandbox"] and "x in the" not in out["sandbox"]


async def test_the_person_may_let_one_command_out_of_the_sandbox(
    tmp_path: Path, home: Path, outside_tmp: Path
) -> None:
    """Allowed once, `rm` of a file outside the project fails inside the sandbox; allowed
    "outside the sandbox" (the modal's extra choice), that one command runs unconfined."""
    from workbench.core.backends.sandbox import SandboxBackend
    from workbench.core.execution.approval import ApprovalBroker, Choice
    from workbench.core.execution.executor import Executor
    from workbench.core.tools.registry import registry

    project = tmp_path / "project"
    project.mkdir()
    victim = outside_tmp / "victim.txt"
    victim.write_text("x")
    broker, asked = ApprovalBroker(), []
    answers = iter([Choice.ONCE, Choice.DENY, Choice.OUTSIDE])
    broker.attach(lambda r: (asked.append(r), broker.answer(r.id, next(answers))))
    backend = SandboxBackend(hermes_home=home)
    executor = Executor(registry, broker=broker, cwd=str(project), backend=backend)
    command = {"command": f"rm {victim}"}
    (inside,) = await executor.run([{"id": "1", "name": "terminal", "arguments": command}])
    assert victim.exists() and json.loads(inside.content)["exit_code"] != 0
    assert asked[0].can_leave and asked[0].where.startswith("sandbox (bubblewrap")
    # it failed because of the sandbox: asked once more, with x as the only yes; denied
    assert asked[1].only_leave and f"it writes {victim}, outside the" in asked[1].reason
    assert "It stayed in the sandbox: denied by the user" in json.loads(inside.content)["sandbox"]
    (outside,) = await executor.run([{"id": "2", "name": "terminal", "arguments": command}])
    assert outside.decision.choice is Choice.OUTSIDE and not victim.exists()
    victim.write_text("x")  # and it was this command only: the next one asks again
    (again,) = await executor.run([{"id": "3", "name": "terminal", "arguments": command}])
    assert len(asked) == 4 and again.status == "denied" and victim.exists()
    executor.shutdown()


async def test_a_command_the_sandbox_refused_runs_outside_once_on_x(
    tmp_path: Path, home: Path, outside_tmp: Path
) -> None:
    """Approved once, it fails in the sandbox (its write outside is known from the command);
    the person is asked, shown the script it runs with what this session wrote in it, `x`
    runs it again outside, and the result says so."""
    from workbench.core.backends.sandbox import SandboxBackend
    from workbench.core.execution.approval import SANDBOX_REFUSED, ApprovalBroker, Choice
    from workbench.core.execution.executor import Executor
    from workbench.core.tools.registry import registry

    project = tmp_path / "project"
    project.mkdir()
    broker, asked = ApprovalBroker(), []
    answers = iter([Choice.ONCE, Choice.OUTSIDE])
    broker.attach(lambda r: (asked.append(r), broker.answer(r.id, next(answers))))
    executor = Executor(
        registry, broker=broker, cwd=str(project), backend=SandboxBackend(hermes_home=home)
    )
    write = {"path": "w.sh", "content": "echo from the script\n"}
    await executor.run([{"id": "0", "name": "write_file", "arguments": write}])
    command = f"sh ./w.sh > {outside_tmp}/made.txt"
    call = {"id": "1", "name": "terminal", "arguments": {"command": command}}
    (done,) = await executor.run([call])
    first, request = asked
    assert not first.only_leave and "written earlier in this session" in first.reason
    assert request.only_leave and request.can_leave and not request.allow_offers
    assert [f.rule for f in request.verdict.findings] == [SANDBOX_REFUSED]
    (script,) = request.scripts
    assert script.path == str(project / "w.sh") and script.why == "written by this session"
    assert script.diff is not None and "+echo from the script" in script.diff.lines
    result = json.loads(done.content)
    assert (
        result["exit_code"] == 0 and (outside_tmp / "made.txt").read_text() == "from the script\n"
    )
    assert result["sandbox"].startswith("ran outside the sandbox, allowed once by the user")
    executor.shutdown()


async def test_rules_and_approvals_off_never_let_a_command_out(
    tmp_path: Path, home: Path, outside_tmp: Path
) -> None:
    """An allow rule for the command approves running it, not leaving the sandbox: the
    person is still asked. With approvals off (--yes) no one is asked, even with a front end
    attached that would say x."""
    from workbench.core.backends.sandbox import SandboxBackend
    from workbench.core.execution.approval import ApprovalBroker, Choice
    from workbench.core.execution.executor import Executor
    from workbench.core.policy import Action, Rule
    from workbench.core.tools.registry import registry

    project = tmp_path / "project"
    project.mkdir()
    command = f"touch {outside_tmp}/made.txt"
    allow = Rule(Action.ALLOW, "command_prefix", "touch")
    for broker, answer in (
        (ApprovalBroker(rules=[allow]), Choice.DENY),
        (ApprovalBroker(mode="off"), Choice.OUTSIDE),
    ):
        asked: list[object] = []
        broker.attach(lambda r, b=broker, a=answer, seen=asked: (seen.append(r), b.answer(r.id, a)))
        executor = Executor(
            registry, broker=broker, cwd=str(project), backend=SandboxBackend(hermes_home=home)
        )
        call = {"id": "1", "name": "terminal", "arguments": {"command": command}}
        (done,) = await executor.run([call])
        executor.shutdown()
        result = json.loads(done.content)
        assert not (outside_tmp / "made.txt").exists() and result["exit_code"] != 0
        if broker.mode == "off":
            assert asked == [] and "never leave it" in result["sandbox"]
        else:
            assert [r.only_leave for r in asked] == [True]
            assert "It stayed in the sandbox: denied by the user" in result["sandbox"]


def test_a_link_in_the_project_does_not_lead_out(sandboxed, work: Path, tmp_path: Path) -> None:
    """A symlink inside the working directory to a folder outside it is read-only in there."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (work / "door").symlink_to(outside)
    out = term(sandboxed, work, "echo x > door/through.txt; echo $?")
    assert not (outside / "through.txt").exists() and out["output"].strip().endswith("1")
