"""Diffs on screen: coloured, escaped, bounded on a card, whole in the detail and the modal."""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.support.pilot import ModalHost, stop_the_clock, wait_until
from workbench.core.edits import diffs
from workbench.core.execution.approval import ApprovalRequest
from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.tui.screens.session import describe_bar
from workbench.tui.widgets.chat import CARD_DIFF_LINES, ChatLog
from workbench.tui.widgets.diff_view import diff_text
from workbench.tui.widgets.timeline import Timeline, TimelineModel

OLD = "".join(f"setting_{n} = {n}\n" for n in range(40))
NEW = OLD.replace("setting_3 = 3", "setting_3 = 33").replace("setting_30 = 30\n", "")


def sample() -> diffs.FileDiff:
    return diffs.unified("/work/project/settings.py", OLD, NEW)


def styles(text) -> dict[str, str]:
    """Each line of the text and its style."""
    found = {}
    for span in text.spans:
        found[text.plain[span.start : span.end].rstrip("\n")] = str(span.style)
    return found


def test_lines_are_coloured_by_kind_and_control_characters_are_escaped() -> None:
    text = diff_text(sample())
    style = styles(text)
    assert style["-setting_3 = 3"] == "red" and style["+setting_3 = 33"] == "green"
    assert style["@@ -1,7 +1,7 @@"] == "cyan"
    assert "settings.py  +1 -2" in text.plain
    hostile = diffs.unified("x.txt", None, "\x1b[2Jgone\u202eevil\n")
    shown = diff_text(hostile).plain
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "\\x1b[2Jgone\\u202eevil" in shown


def test_notes_and_the_rest_of_a_long_diff_are_said() -> None:
    note = diffs.FileDiff("/tmp/blob.bin", note="binary file (300 bytes): no diff")
    assert diff_text(note).plain == "/tmp/blob.bin  binary file (300 bytes): no diff"
    many = diffs.unified("many.txt", None, "".join(f"{n}\n" for n in range(1000)))
    text = diff_text(many, limit=5, hint=" (Enter)").plain
    assert text.endswith(f"… {1003 - 5:,} more lines (Enter)")


class CardHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat-log")


async def test_a_write_card_shows_its_diff_and_all_of_it_when_expanded() -> None:
    app = CardHost()
    async with app.run_test(size=(100, 60)) as pilot:
        log = app.query_one(ChatLog)
        args = {"path": "settings.py", "content": NEW}
        card = await log.card("w1", "write_file", args)
        many = diffs.unified("settings.py", None, NEW)  # 39 added lines: more than a card shows
        card.finish("ok", 0.004, '{"bytes_written": 600}', None, many)
        await pilot.pause()
        shown = str(card.query_one(".card-diff", Static).render())
        assert "+setting_0 = 0" in shown and "more lines (Enter)" in shown
        assert len(shown.splitlines()) == 1 + CARD_DIFF_LINES + 1
        card.focus()
        await pilot.press("enter")
        shown = str(card.query_one(".card-diff", Static).render())
        assert "+setting_39 = 39" in shown and "more lines" not in shown


async def test_the_call_detail_shows_the_diff() -> None:
    model = TimelineModel()
    model.started(ToolCallStarted("p1", "patch", {"path": "settings.py"}, 0, False, "", 1.0))
    model.finished(ToolCallFinished("p1", "patch", "ok", "{}", 1.0, 1.002, diff=sample()))
    bar = model.by_id["p1"]
    text = describe_bar(bar, Timeline(model))
    assert "-setting_3 = 3" in text.plain and "+setting_3 = 33" in text.plain


def write_request(diff: diffs.FileDiff) -> ApprovalRequest:
    return ApprovalRequest(
        id=1,
        tool="write_file",
        command=f"write_file {diff.path}",
        reason="writes outside the working directory",
        verdict=None,
        cwd="/work/project",
        label="",
        timeout=600,
        deadline=time.monotonic() + 600,
        diff=diff,
    )


async def test_the_approval_modal_shows_the_diff_it_would_make() -> None:
    app = ModalHost(write_request(sample()))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query("#approval-diff")))
        shown = "".join(str(s.render()) for s in app.screen.query("#approval-diff Static"))
        assert "-setting_3 = 3" in shown and "+setting_3 = 33" in shown
        assert app.screen.focused.id == "deny"  # the diff changes nothing about the default


def test_approval_modal_with_a_diff_snapshot(snap_compare, monkeypatch) -> None:
    old = "[server]\nhost = 127.0.0.1\nport = 8080\ndebug = false\nworkers = 4\n"
    new = old.replace("debug = false", "debug = true").replace("workers = 4", "workers = 16")
    request = write_request(diffs.unified("/etc/app/server.ini", old, new))
    request.timeout = 60
    assert snap_compare(ModalHost(stop_the_clock(monkeypatch, request)), terminal_size=(120, 40))
