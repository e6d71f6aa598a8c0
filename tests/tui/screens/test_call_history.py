"""A tool's kept calls in its detail: kept across restarts, re-run (approvals still ask),
loaded into the run form, pinned, saved as a test case."""

from __future__ import annotations

from pathlib import Path

from tests.support.pilot import loaded, move_to, wait_until
from workbench.core.history import CallHistory, entry
from workbench.core.replay.cases import load
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.approval import ApprovalScreen
from workbench.tui.screens.save_case import SaveCaseScreen
from workbench.tui.widgets.call_history import CallHistoryList, row
from workbench.tui.widgets.run_form import RunToolForm
from workbench.tui.widgets.tools_tree import ToolsTree


def _status(form: RunToolForm) -> str:
    return str(form.query_one("#form-status").content)


async def _open_calls(pilot, app, tool: str) -> CallHistoryList:
    screen = await loaded(pilot, app)
    move_to(screen.query_one(ToolsTree), "tool", tool)
    calls = screen.query_one(CallHistoryList)
    await wait_until(pilot, lambda: calls.tool == tool)
    return calls


async def test_a_call_from_the_form_is_kept_across_a_restart_and_pinned(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        calls = await _open_calls(pilot, app, "read_file")
        assert not calls.display  # nothing kept yet
        await pilot.press("f2")
        form = app.screen.query_one(RunToolForm)
        await wait_until(pilot, lambda: form.tool == "read_file" and form.query("#arg-path"))
        form.query_one("#arg-path").value = "notes.txt"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: _status(form).startswith("ok"))
        await wait_until(pilot, lambda: len(calls.calls) == 1)
        assert calls.display and calls.calls[0].origin == "form"
    # the app has stopped: the call was saved before it ended
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        calls = await _open_calls(pilot, app, "read_file")
        (kept,) = calls.calls
        assert kept.arguments["path"] == "notes.txt" and "alpha" in kept.preview
        await pilot.press("f4")
        assert calls.has_focus
        await pilot.press("p")
        await wait_until(pilot, lambda: calls.calls[0].pinned)
        assert "📌" in str(calls.get_option_at_index(0).prompt)
    (pinned,) = CallHistory(home / "state" / "history").calls("read_file")
    assert pinned.pinned


async def test_rerun_and_edit_go_through_the_form_and_approvals_still_ask(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "victim.log").write_text("x")  # a log: no checkpoint holds it, so rm asks
    history = CallHistory(home / "state" / "history")
    history.add(entry("terminal", {"command": "rm victim.log"}, "ok", "", 0.01, "agent"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        calls = await _open_calls(pilot, app, "terminal")
        await pilot.press("f4", "r")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert app.screen.request.command == "rm victim.log"
        await pilot.press("enter")  # deny
        await wait_until(pilot, lambda: len(calls.calls) == 2)
        assert calls.calls[0].status == "denied" and (tmp_path / "victim.log").exists()
        calls.highlighted = 1  # the agent's call
        await pilot.press("e")
        form = app.screen.query_one(RunToolForm)
        await wait_until(pilot, lambda: form.query_one("#arg-command").value == "rm victim.log")
        assert "ctrl+r runs it" in _status(form)
        form.query_one("#arg-command").value = "echo edited"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: _status(form).startswith("ok"))
        await wait_until(pilot, lambda: len(calls.calls) == 3)
        assert calls.calls[0].arguments["command"] == "echo edited"


async def test_save_as_a_test_appends_a_case_with_the_checks_picked(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    history = CallHistory(home / "state" / "history")
    result = '{"content": "1|alpha", "total_lines": 2}'
    history.add(entry("read_file", {"path": "notes.txt"}, "ok", result, 0.02, "agent"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        await _open_calls(pilot, app, "read_file")
        await pilot.press("f4", "t")
        await wait_until(pilot, lambda: isinstance(app.screen, SaveCaseScreen))
        modal = app.screen
        assert modal.query_one("#case-file").value == "tests/tools/read_file.yaml"
        modal.query_one("#case-json-path").value = "total_lines"
        await wait_until(pilot, lambda: modal.query_one("#case-json-value").value == "2")
        modal.query_one("#case-contains").value = "alpha"
        modal.query_one("#case-seconds").value = "0"
        await pilot.press("ctrl+s")
        assert "positive number" in str(modal.query_one("#case-error").content)
        modal.query_one("#case-seconds").value = "5"
        await pilot.press("ctrl+s")
        saved = tmp_path / "tests" / "tools" / "read_file.yaml"
        await wait_until(pilot, saved.exists)
    (case,) = load(saved)
    assert (case.name, case.tool, case.arguments) == (
        "read_file notes.txt",
        "read_file",
        {"path": "notes.txt"},
    )
    assert case.expect.status == "ok" and case.expect.json == {"total_lines": 2}
    assert case.expect.contains == ("alpha",) and case.expect.max_seconds == 5.0
    assert not list(saved.parent.glob(".*"))  # no lock file left in the project


async def test_a_damaged_history_is_said_and_the_tool_starts_again(home: Path) -> None:
    folder = home / "state" / "history"
    folder.mkdir(parents=True)
    (folder / "read_file.json").write_text("{not json")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        calls = await _open_calls(pilot, app, "read_file")
        assert calls.calls == []
        await wait_until(pilot, lambda: any("was damaged" in n.message for n in app._notifications))
    assert list(folder.glob("read_file.json.corrupt-*"))


async def test_a_call_whose_arguments_were_not_kept_is_not_re_run(home: Path) -> None:
    history = CallHistory(home / "state" / "history")
    history.add(entry("write_file", {"content": "x" * 40_000}, "ok", "", 0.01, "agent"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        calls = await _open_calls(pilot, app, "write_file")
        assert "not kept" in str(calls.get_option_at_index(0).prompt)
        await pilot.press("f4", "r")
        await wait_until(
            pilot, lambda: any("were not kept" in n.message for n in app._notifications)
        )
        assert len(calls.calls) == 1  # nothing ran


async def test_a_json_path_on_a_result_that_is_not_json_is_said(home: Path) -> None:
    history = CallHistory(home / "state" / "history")
    history.add(entry("terminal", {"command": "echo hi"}, "ok", "hi\n", 0.01, "agent"))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 45)) as pilot:
        await _open_calls(pilot, app, "terminal")
        await pilot.press("f4", "t")
        await wait_until(pilot, lambda: isinstance(app.screen, SaveCaseScreen))
        modal = app.screen
        modal.query_one("#case-json-path").value = "output"
        await wait_until(pilot, lambda: "not JSON" in str(modal.query_one("#case-error").content))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SaveCaseScreen))


def test_a_row_says_a_call_came_through_the_bridge() -> None:
    bridged = entry("search_files", {"pattern": "a"}, "ok", "{}", 0.1, "agent", via="call_7")
    assert "via tool_call" in row(bridged).plain
    assert "via" not in row(entry("read_file", {"path": "a"}, "ok", "{}", 0.1, "agent")).plain
