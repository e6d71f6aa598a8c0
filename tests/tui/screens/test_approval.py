"""The approval modal fails closed: only o, s and a allow; every other way out denies."""

from __future__ import annotations

import pytest

from tests.support.pilot import ModalHost, request, wait_until
from workbench.core.execution.approval import ApprovalRequest, Choice


async def answer(keys: list[str], req: ApprovalRequest | None = None):
    app = ModalHost(req or request())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # a very short countdown may already have answered (denied) on a loaded machine
        assert app.answers == [Choice.DENY] or app.screen.focused.id == "deny"
        for key in keys:
            await pilot.press(key)
        # every way out answers: waited for, however long a busy machine takes (it was 1 s)
        await wait_until(pilot, lambda: bool(app.answers))
        return app.answers


@pytest.mark.parametrize("key", ["enter", "escape", "d", "x", "space", "y", "ctrl+a"])
async def test_every_key_but_an_allow_key_denies(key: str) -> None:
    assert await answer([key]) == [Choice.DENY]


@pytest.mark.parametrize(
    ("key", "choice"), [("o", Choice.ONCE), ("s", Choice.SESSION), ("a", Choice.ALWAYS)]
)
async def test_each_allow_key_allows_as_it_says(key: str, choice: Choice) -> None:
    assert await answer([key]) == [choice]


async def test_moving_between_buttons_is_not_an_answer_but_enter_on_one_is() -> None:
    assert await answer(["tab", "enter"]) == [Choice.ONCE]


async def test_silence_until_the_countdown_ends_denies() -> None:
    assert await answer([], request(timeout=0.3)) == [Choice.DENY]


async def test_the_whole_command_is_shown_with_its_dangerous_span_and_the_queue() -> None:
    long = "echo " + "x" * 300 + " && rm -rf /tmp/precious"
    app = ModalHost(request(long))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = app.screen.query_one("#approval-command").query_one("Static")
        rendered = shown.render()
        assert str(rendered) == long  # wrapped by the widget, never cut
        styled = [long[s.start : s.end] for s in rendered.spans if "red" in str(s.style)]
        assert any("rm -rf /tmp/precious" in part for part in styled)
        assert "2 more waiting" in str(app.screen.query_one("#approval-countdown").render())
        assert "/work/project" in str(app.screen.query_one("#approval-facts").render())


async def test_control_characters_are_shown_escaped_and_spans_still_fit() -> None:
    command = "rm -rf x #\r\x1b[2K\u202els -la\nsecond line"
    app = ModalHost(request(command))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        rendered = app.screen.query_one("#approval-command").query_one("Static").render()
        text = str(rendered)
        assert text == "rm -rf x #\\r\\x1b[2K\\u202els -la\nsecond line"
        styled = [text[s.start : s.end] for s in rendered.spans if "red" in str(s.style)]
        assert "rm -rf x" in styled


async def test_with_the_sandbox_on_x_runs_once_outside_it_and_says_where() -> None:
    req = request()
    req.where, req.can_leave = "sandbox (bubblewrap: writes only in the working directory)", True
    assert await answer(["x"], req) == [Choice.OUTSIDE]
    app = ModalHost(req)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        facts = str(app.screen.query_one("#approval-facts").render())
        assert "runs   sandbox (bubblewrap" in facts
        assert app.screen.query_one("#outside").label.plain == "Once, outside the sandbox (x)"
        assert app.screen.focused.id == "deny"  # deny stays the default
    assert await answer(["enter"], req) == [Choice.DENY]
