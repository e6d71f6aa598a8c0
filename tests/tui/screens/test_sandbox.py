"""The sandbox in the workbench, with a pilot: where commands run is in the headers, and a
command the sandbox made fail is offered, once, a run outside it (`x`)."""

from __future__ import annotations

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


@needs_bwrap
async def test_a_write_the_sandbox_refused_is_offered_a_run_outside_and_x_runs_it(
    home: Path, tmp_path: Path, outside_tmp: Path, monkeypatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    target = outside_tmp / "made.txt"
    (project / "w.sh").write_text(f"echo made > {target}\n")  # the gate does not read it
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        assert "terminal: sandboxed" in (await loaded(pilot, app)).sub_title
        form = await run_in_form(pilot, app, "sh ./w.sh")
        # the modal and its buttons (pushed, then composed)
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query("#deny"),
            timeout=30,
        )
        modal = app.screen
        assert not target.exists()  # it ran in the sandbox, and failed there
        assert modal.request.only_leave and "Read-only file system" in modal.request.reason
        assert modal.query("#outside") and not modal.query("#once") and not modal.query("#always")
        title = str(modal.query_one("#approval-title").render())
        assert title == "⚠ terminal failed in the sandbox"
        assert modal.focused.id == "deny"
        await pilot.press("x")
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("ok"), 30
        )
        assert target.read_text() == "made\n"
        assert "ran outside the sandbox" in str(form.query_one("#form-result").content.code)


@needs_bwrap
async def test_denied_the_run_outside_keeps_the_failure_and_writes_nothing(
    home: Path, tmp_path: Path, outside_tmp: Path, monkeypatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    (project / "w.sh").write_text(f"echo made > {outside_tmp}/made.txt\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        form = await run_in_form(pilot, app, "sh ./w.sh")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("o")  # not a yes here: only x lets it out
        await wait_until(
            pilot, lambda: str(form.query_one("#form-status").content).startswith("ok"), 30
        )  # the command ran (in the sandbox) and failed: a result, not a refusal
        assert not (outside_tmp / "made.txt").exists()
        assert "It stayed in the sandbox: denied by the user" in str(
            form.query_one("#form-result").content.code
        )


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
