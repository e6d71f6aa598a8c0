"""SVG snapshots of the session screen, the approval modal and the viewer at 120×40.

The session is replayed from fixed agent events (fixed clock times), so the picture is the
same on every run. Update with --snapshot-update only after looking at the report."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.widgets import Footer, Static

from tests.support.pilot import ModalHost, ViewerHost, request, stop_the_clock, wait_until
from workbench.core.agent.compress import ContextCompressed
from workbench.core.agent.loop import ContextUsage, TextDelta, TurnFinished
from workbench.core.execution.executor import ToolCallFinished, ToolCallStarted
from workbench.tui.app import write_timeline
from workbench.tui.screens.session import SessionScreen
from workbench.tui.widgets.chat import ChatLog, PromptArea
from workbench.tui.widgets.reply import AssistantMessage
from workbench.tui.widgets.timeline import Timeline, TimelineModel

SIZE = (120, 40)
T0 = 1000.0
CALLS = [  # id, name, arguments, segment, parallel, reason, start, end, status
    ("c1", "read_file", {"path": "a.txt"}, 0, True, "", 0.00, 0.40, "ok"),
    ("c2", "read_file", {"path": "b.txt"}, 0, True, "", 0.01, 0.90, "ok"),
    ("c3", "search_files", {"pattern": "TODO"}, 0, True, "", 0.02, 0.60, "error"),
    ("c4", "terminal", {"command": "rm -rf build"}, 1, False, "terminal runs alone", 0.95, 2.2,
     "denied"),
    ("c5", "write_file", {"path": "a.txt"}, 2, False, "conflicts with read_file a.txt", 2.3,
     3.1, "timeout"),
]  # fmt: skip


# A picture is taken when Textual guesses the app is idle (its process uses little CPU), which
# on a busy machine can come before the screen has drawn what the test set up. So each step
# below waits for exactly what the picture shows; the bound only ends a test that hangs.
SETTLED = 60.0


class SessionHost(App[None]):
    def on_mount(self) -> None:
        self.push_screen(SessionScreen(timeline=TimelineModel()))


async def session_screen(pilot) -> SessionScreen:
    """The session screen once its own first note is written (then cleared by the test: not
    written after it)."""
    app = pilot.app

    def noted() -> bool:
        screen = app.screen
        return isinstance(screen, SessionScreen) and any(
            log.children for log in screen.query(ChatLog)
        )

    await wait_until(pilot, noted, SETTLED)
    return app.screen


async def drawn_whole(pilot, log: ChatLog) -> None:
    """The reply is rendered whole (it streams in pieces, drawn on its own message loop)."""

    def whole() -> bool:
        replies = list(log.query(AssistantMessage))
        return bool(replies) and all(reply.whole for reply in replies)

    await wait_until(pilot, whole, SETTLED)


async def arrive(screen: SessionScreen, event: object) -> None:
    """An event as the app hands it on: the app writes the timeline, the screen draws."""
    changed = write_timeline(screen.timeline_model, event)
    if changed:
        screen.timeline_changed(new_turn=changed == "turn")
    await screen.agent_event(event)


async def replay(pilot) -> None:
    screen = await session_screen(pilot)
    log = screen.query_one(ChatLog)
    await log.remove_children()
    await log.user("Read a.txt and b.txt, find the TODOs, clean the build and fix a.txt.")
    for call_id, name, args, segment, parallel, reason, start, _, _ in CALLS:
        event = ToolCallStarted(call_id, name, args, segment, parallel, reason, T0 + start)
        await arrive(screen, event)
    for call_id, name, _, _, _, _, start, end, status in CALLS:
        content = '{"content": "alpha"}' if status == "ok" else f'{{"error": "{status}"}}'
        event = ToolCallFinished(call_id, name, status, content, T0 + start, T0 + end)
        await arrive(screen, event)
    reply = "I read **both** files. The search failed, I did *not* delete `build`."
    for word in reply.split(" "):
        await screen.agent_event(TextDelta(word + " "))
    await screen._finish_reply()
    await drawn_whole(pilot, log)
    timeline = screen.query_one(Timeline)
    timeline.focus()
    footer = screen.query_one(Footer)
    await wait_until(pilot, lambda: "Previous call" in keys(footer), SETTLED)
    await pilot.press("left")  # select the last call
    detail = screen.query_one("#call-detail", Static)
    await wait_until(pilot, lambda: "write_file" in str(detail.render()), SETTLED)


def keys(footer: Footer) -> list[str]:
    """The descriptions the footer shows (it redraws them after the focus moves)."""
    return [key.description for key in footer.query("FooterKey")]


def test_session_with_cards_and_timeline(snap_compare) -> None:
    assert snap_compare(SessionHost(), terminal_size=SIZE, run_before=replay)


async def compressed(pilot) -> None:
    """A turn whose conversation was compressed: the divider, then the context in use."""
    screen = await session_screen(pilot)
    screen.query_one(PromptArea).cursor_blink = False  # the picture never depends on when
    log = screen.query_one(ChatLog)
    await log.remove_children()

    async def play(event: object) -> None:
        await screen.agent_event(event)

    await log.user("Read notes.txt and tell me what it says.")
    await play(ContextUsage(25_130, 32_768))
    await play(ContextCompressed(25_130, 9_840, 32_768, 6, 14, 0, "…", "threshold"))
    await play(ContextUsage(9_840, 32_768))
    await play(TextDelta("It says to keep calm and carry on."))
    await screen._finish_reply()
    await drawn_whole(pilot, log)
    screen._turn_line(TurnFinished("answered", "", 9_840, 12, 2.5, 2, "", 12_345, 32_768))
    await pilot.pause()


def test_session_with_a_compressed_context(snap_compare) -> None:
    assert snap_compare(SessionHost(), terminal_size=SIZE, run_before=compressed)


def test_approval_modal(snap_compare, monkeypatch) -> None:
    long = "find . -name '*.tmp' -print0 | xargs -0 rm -f && rm -rf ./build ./dist " + "x" * 80
    host = ModalHost(stop_the_clock(monkeypatch, request(long, timeout=600)))
    assert snap_compare(host, terminal_size=SIZE)


def test_viewer(snap_compare, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the title shows the path: keep it the same on every run
    path = Path("result.txt")
    path.write_text("".join(f"row {n}: value={n * n} status=ok\n" for n in range(1, 400)))

    matching = sum(str(n * n).startswith("1") for n in range(1, 400))

    async def search(pilot) -> None:
        await pilot.pause()
        await pilot.press("slash", *"value=1", "enter")
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.match_total == matching, SETTLED)
        await pilot.pause()  # drawn with the cursor on the first match

    assert snap_compare(ViewerHost(path), terminal_size=SIZE, run_before=search)


class FixedCheckpoints:
    """Checkpoints with fixed ids and times, so the picture is the same on every run (the
    pilot tests in test_checkpoints.py use the real store)."""

    enabled = True

    def __init__(self) -> None:
        from workbench.core.checkpoints import Checkpoint, FileChange

        at = 1_767_000_000.0
        self.found = [
            Checkpoint("9c1d2e3f4a5b", "/work/project", at + 300, "before restore of 3f2a1b2c3d4e",
                       None, None, 41),
            Checkpoint("7b6a5f4e3d2c", "/work/project", at + 120, "terminal: xz notes.txt", "s1",
                       2, 41),
            Checkpoint("3f2a1b2c3d4e", "/work/project", at, "write_file src/app.py", "s1", 1, 40),
        ]  # fmt: skip
        self.by_id = {
            "9c1d2e3f4a5b": [],
            "7b6a5f4e3d2c": [FileChange("notes.txt", "deleted"), FileChange("notes.txt.xz", "added")],
            "3f2a1b2c3d4e": [FileChange("src/app.py", "changed"), FileChange("notes.txt", "deleted"),
                             FileChange("notes.txt.xz", "added")],
        }  # fmt: skip

    def list(self, cwd: str) -> list:
        return self.found

    def changes(self, cwd: str, checkpoint_id: str) -> list:
        return self.by_id[checkpoint_id]

    def file_diff(self, cwd: str, checkpoint_id: str, path: str):
        from workbench.core.edits.diffs import unified

        old = "def main():\n    print('hello')\n\n\nmain()\n"
        return unified(path, old, old.replace("'hello'", "'hello, world'"))


class CheckpointsHost(App[None]):
    def on_mount(self) -> None:
        from workbench.tui.screens.checkpoints import CheckpointsScreen

        self.push_screen(CheckpointsScreen(FixedCheckpoints(), "/work/project", "s1"))


def test_checkpoints_list(snap_compare, monkeypatch) -> None:
    import time

    monkeypatch.setenv("TZ", "UTC")  # the times shown are local
    time.tzset()

    async def shown(pilot) -> None:
        from textual.widgets import Static

        from workbench.tui.widgets.checkpoints import ChangeList, CheckpointList
        from workbench.tui.widgets.diff_view import DiffPane

        screen = pilot.app.screen
        listing = screen.query_one(CheckpointList)
        await wait_until(pilot, lambda: len(listing.counts) == 3)
        listing.highlighted = 2  # the oldest: its files and the first one's diff
        diff = screen.query_one(DiffPane).query_one(Static)
        await wait_until(pilot, lambda: len(screen.query_one(ChangeList).changes) == 3)
        await wait_until(pilot, lambda: "world" in str(diff.content))
        await pilot.pause()

    try:
        assert snap_compare(CheckpointsHost(), terminal_size=SIZE, run_before=shown)
    finally:
        monkeypatch.undo()
        time.tzset()
