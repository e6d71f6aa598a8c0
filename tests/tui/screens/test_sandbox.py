"""The sandbox in the workbench, with a pilot: where commands run is in the headers, and a
command the sandbox made fail is offered, once, a run outside it (`x`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import sandbox as support
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.pilot import loaded, open_form, open_session, send, wait_until
from workbench.core.backends.sandbox import bwrap_status
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.approval import ApprovalScreen
from workbench.tui.widgets.run_form import RunToolForm

NOT_CONFINED = "terminal: NOT confined: no sandbox here (bwrap is not installed"
needs_bwrap = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    yield from support.outside_tmp()


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from support.no_bwrap(tmp_path, monkeypatch)


async def run_in_form(pilot, app, command: str) -> RunToolForm:
    form = await open_form(pilot, await loaded(pilot, app), "terminal", "command")
    form.query_one("#arg-command").value = command
    await pilot.press("ctrl+r")
    return form


async def approval(pilot, app, only_leave: bool) -> ApprovalScreen:
    """The approval modal of the kind asked, once open with its buttons."""
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, ApprovalScreen)
            and app.screen.request.only_leave is only_leave
            and app.screen.query("#deny")
        ),
        timeout=30,
    )
    return app.screen


async def answer_approval(pilot, app, key: str, only_leave: bool) -> None:
    await approval(pilot, app, only_leave)
    await pilot.press(key)


async def result_of(pilot, form: RunToolForm) -> str:
    await wait_until(
        pilot, lambda: str(form.query_one("#form-status").content).startswith("ok"), 30
    )
    return str(form.query_one("#form-result").content.code)


@needs_bwrap
async def test_a_write_the_sandbox_refused_is_offered_a_run_outside_and_x_runs_it(
    home: Path, tmp_path: Path, outside_tmp: Path, monkeypatch
) -> None:
    """Approved once, the command's write outside fails in the sandbox: the offer says so in
    hermes-tui's words (known from the command, not its output) and names the script it
    runs; x runs it outside."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    target = outside_tmp / "made.txt"
    (project / "w.sh").write_text("echo made\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        assert "terminal: sandboxed" in (await loaded(pilot, app)).sub_title
        form = await run_in_form(pilot, app, f"sh ./w.sh > {target}")
        await answer_approval(pilot, app, "o", only_leave=False)
        modal = await approval(pilot, app, only_leave=True)
        assert not target.exists()  # it ran in the sandbox, and failed there
        assert f"it writes {target}, outside the working directory" in modal.request.reason
        assert "Read-only" not in modal.request.reason  # the command's words are not shown as why
        assert modal.query("#outside") and not modal.query("#once") and not modal.query("#always")
        title = str(modal.query_one("#approval-title").render())
        assert title == "⚠ terminal failed in the sandbox"
        assert f"script {project / 'w.sh'}" in str(modal.query_one("#approval-facts").render())
        assert modal.focused.id == "deny"
        await pilot.press("x")
        assert "ran outside the sandbox" in await result_of(pilot, form)
        assert target.read_text() == "made\n"


@needs_bwrap
async def test_denied_the_run_outside_keeps_the_failure_and_writes_nothing(
    home: Path, tmp_path: Path, outside_tmp: Path, monkeypatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        form = await run_in_form(pilot, app, f"echo made > {outside_tmp}/made.txt")
        await answer_approval(pilot, app, "o", only_leave=False)
        await answer_approval(pilot, app, "o", only_leave=True)  # not a yes here: only x is
        # the command ran (in the sandbox) and failed: a result, not a refusal
        assert "It stayed in the sandbox: denied by the user" in await result_of(pilot, form)
        assert not (outside_tmp / "made.txt").exists()


@needs_bwrap
async def test_a_script_faking_the_sandboxs_refusal_is_offered_nothing(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    """`echo '… Read-only file system' >&2; exit 1`, alone or in a planted script: the
    output is the command's own, so no modal opens; the model reads it as a possibility."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    fake = "echo 'bash: /etc/passwd: Read-only file system' >&2; exit 1"
    (project / "planted.sh").write_text(fake + "\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        for command in (fake, "./planted.sh"):
            os.chmod(project / "planted.sh", 0o755)
            form = await run_in_form(pilot, app, command)
            result = await result_of(pilot, form)
            assert not isinstance(app.screen, ApprovalScreen), command
            assert "no run outside was offered" in result, command
            await pilot.press("escape")


async def test_without_bubblewrap_the_headers_say_commands_run_unconfined(
    no_bwrap: str, fake: FakeOpenAI, home: Path, tmp_path: Path, monkeypatch
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(fake.model_config())
    monkeypatch.chdir(tmp_path)
    app = WorkbenchApp()
    async with app.run_test(size=(160, 40)) as pilot:
        main = await loaded(pilot, app)
        await wait_until(pilot, lambda: NOT_CONFINED in main.sub_title)
        session = await open_session(pilot, app)
        fake.add(text("Hello."))
        await send(pilot, session, "hi")  # the session starts with the first prompt
        await wait_until(pilot, lambda: bool(session.sub_title))
        assert NOT_CONFINED in session.sub_title, session.sub_title
