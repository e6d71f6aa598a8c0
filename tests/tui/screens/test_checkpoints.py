"""The checkpoints view with a pilot: opened from the session (F9) over a real store, its list,
a file's diff, and restores confirmed in the modal, checked on disk."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Static

from tests.support.checkpoints import agent_turn, files, make_project
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.pilot import loaded, open_session, send, wait_until
from workbench.core.checkpoints import CheckpointStore, RestoreResult
from workbench.core.events import CheckpointSkipped, CheckpointTaken
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.checkpoints import CheckpointsScreen
from workbench.tui.screens.restore import RestoreScreen
from workbench.tui.screens.session import SessionScreen
from workbench.tui.widgets.chat import ChatLog
from workbench.tui.widgets.checkpoints import ChangeList, CheckpointList
from workbench.tui.widgets.diff_view import DiffPane
from workbench.tui.widgets.timeline import TimelineModel


@pytest.fixture
def project(home: Path, tmp_path: Path, monkeypatch) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = make_project(tmp_path / "project")
    monkeypatch.chdir(path)  # the workbench's working directory
    return path


def text_of(widget: Static) -> str:
    return str(widget.content)


def notes(session: SessionScreen) -> list[str]:
    return [text_of(s) for s in session.query_one(ChatLog).query(Static)]


async def open_checkpoints(pilot, app: WorkbenchApp) -> tuple[SessionScreen, CheckpointsScreen]:
    session = await open_session(pilot, app)
    await pilot.press("f9")
    await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
    await wait_until(pilot, lambda: bool(app.screen.query(CheckpointList)))
    return session, app.screen


async def test_the_list_shows_what_changed_a_files_diff_and_restore_brings_it_back(
    home: Path, project: Path
) -> None:
    original = files(project)
    first = agent_turn(CheckpointStore(home), project)
    (project / "src" / "app.py").write_text("mine\n")  # a hand edit, after the agent's turn
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        session, screen = await open_checkpoints(pilot, app)
        listing = screen.query_one(CheckpointList)
        await wait_until(pilot, lambda: first.id in listing.counts)
        assert listing.counts[first.id] == {"added": 1, "changed": 2, "deleted": 1}
        changes = screen.query_one(ChangeList)
        await wait_until(pilot, lambda: len(changes.changes) == 4)
        assert {(c.path, c.kind) for c in changes.changes} == {
            ("a.txt", "changed"), ("b.txt", "deleted"), ("c.txt", "added"),
            ("src/app.py", "changed"),
        }  # fmt: skip
        changes.focus()
        changes.highlighted = [c.path for c in changes.changes].index("a.txt")
        pane = screen.query_one(DiffPane).query_one(Static)
        await wait_until(pilot, lambda: "+ALPHA" in text_of(pane))
        assert "-alpha" in text_of(pane)

        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreScreen))
        modal = app.screen
        plan = text_of(modal.query_one("#restore-plan Static", Static))
        assert plan.index("Deletes 1 file") < plan.index("c.txt") < plan.index("Writes back")
        assert "src/app.py  ⚠ changed by hand since" in plan
        assert modal.query_one("#restore-overwrite", Button)
        assert modal.focused is modal.query_one("#restore-cancel", Button)
        await pilot.press("y")  # restore, keep the hand edit

        await wait_until(pilot, lambda: not (project / "c.txt").exists())
        await wait_until(pilot, lambda: any("restored checkpoint" in n for n in notes(session)))
        assert files(project) == original | {"src/app.py": "mine\n"}
        (said,) = [n for n in notes(session) if "restored checkpoint" in n]
        assert f"restored checkpoint {first.id} (turn 1)" in said
        assert "kept your edits to src/app.py" in said and "restore it to undo" in said
        await wait_until(pilot, lambda: len(listing.checkpoints) == 2)  # the backup, on top
        assert listing.checkpoints[0].reason.startswith("before restore")
        assert said.endswith(f"checkpoint {listing.checkpoints[0].id}: restore it to undo")


async def test_one_file_is_restored_and_a_cancelled_restore_changes_nothing(
    home: Path, project: Path
) -> None:
    first = agent_turn(CheckpointStore(home), project)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        _, screen = await open_checkpoints(pilot, app)
        changes = screen.query_one(ChangeList)
        await wait_until(pilot, lambda: len(changes.changes) == 3)
        changes.focus()
        changes.highlighted = [c.path for c in changes.changes].index("b.txt")
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreScreen))
        plan = text_of(app.screen.query_one("#restore-plan Static", Static))
        assert "Writes back 1 file" in plan and "b.txt" in plan and "a.txt" not in plan
        assert not app.screen.query("#restore-overwrite")  # nothing hand-edited to ask about
        await pilot.press("y")
        await wait_until(pilot, lambda: (project / "b.txt").exists())
        assert (project / "b.txt").read_text() == "beta\n"
        assert (project / "a.txt").read_text() == "ALPHA, by the agent\n" and (
            project / "c.txt"
        ).exists()

        before = files(project)
        listing = screen.query_one(CheckpointList)
        await wait_until(pilot, lambda: len(listing.checkpoints) == 2)
        listing.highlighted = [c.id for c in listing.checkpoints].index(first.id)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreScreen))
        await pilot.press("x")  # not an answer: cancels
        await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreScreen))
        await pilot.press("enter")  # on Cancel, which has the focus
        await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await pilot.pause()
        assert files(project) == before
        assert len(CheckpointStore(home).list(str(project))) == 2


async def test_with_checkpoints_off_and_none_taken_the_view_says_how_to_turn_them_on(
    home: Path, project: Path
) -> None:
    (home / "config.yaml").write_text("checkpoints:\n  enabled: false\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        app.open_checkpoints()  # what the command palette's "Checkpoints" does
        await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await wait_until(pilot, lambda: bool(app.screen.query("#checkpoints-status")))
        status = app.screen.query_one("#checkpoints-status", Static)
        await wait_until(pilot, lambda: "checkpoints are off" in text_of(status))
        assert "checkpoints.enabled: true" in text_of(status)
        assert not app.screen.query_one("#checkpoints-panes").display
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CheckpointsScreen))


class SessionHost(App[None]):
    def on_mount(self) -> None:
        self.push_screen(SessionScreen(timeline=TimelineModel()))


async def test_checkpoint_events_are_one_quiet_line_each(home: Path, project: Path) -> None:
    taken = agent_turn(CheckpointStore(home), project)
    app = SessionHost()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await screen.agent_event(CheckpointTaken(taken))
        await screen.agent_event(CheckpointSkipped(str(project), f"no change since {taken.id}"))
        await screen.agent_event(CheckpointSkipped(str(project), "failed: disk full", True))
        await pilot.pause()
        assert notes(screen)[-3:] == [
            f"checkpoint {taken.id} taken before write_file a.txt",
            f"no checkpoint: no change since {taken.id}",
            "no checkpoint: failed: disk full",
        ]


async def test_a_note_that_comes_as_the_app_closes_is_dropped(home: Path, project: Path) -> None:
    """A restore's note (or the core's last events) may reach the session screen after the
    closing app removed its widgets: dropped, not an error."""
    taken = agent_turn(CheckpointStore(home), project)
    app = SessionHost()
    async with app.run_test(size=(120, 40)):
        screen = app.screen
    assert not screen.query(ChatLog)  # the app has closed: its widgets are gone
    await screen.restored(taken, RestoreResult(None, ("a.txt",), (), ()))
    await screen.agent_event(CheckpointTaken(taken))


async def test_an_agents_write_is_checkpointed_said_in_the_chat_and_restored(
    fake: FakeOpenAI, home: Path, project: Path
) -> None:
    (home / "config.yaml").write_text(fake.model_config())
    fake.add(tools(("write_file", {"path": "a.txt", "content": "rewritten\n"})), text("Done."))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        session = await open_session(pilot, app)
        await send(pilot, session, "rewrite a.txt")
        await wait_until(pilot, lambda: "answered" in text_of(session.query_one("#turn-line")))
        assert (project / "a.txt").read_text() == "rewritten\n"
        (taken,) = CheckpointStore(home).list(str(project))
        said = [n for n in notes(session) if "checkpoint" in n]
        assert said == [f"checkpoint {taken.id} taken before write_file a.txt"]

        await pilot.press("f9")
        await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await wait_until(pilot, lambda: bool(app.screen.query(CheckpointList)))
        listing = app.screen.query_one(CheckpointList)
        await wait_until(pilot, lambda: taken.id in listing.counts)
        assert listing.counts[taken.id] == {"added": 0, "changed": 1, "deleted": 0}
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreScreen))
        assert not app.screen.query("#restore-overwrite")  # the agent's write: no hand edit
        await pilot.press("y")
        await wait_until(pilot, lambda: (project / "a.txt").read_text() == "alpha\n")
        await wait_until(pilot, lambda: any("restored checkpoint" in n for n in notes(session)))


async def test_no_restore_starts_while_the_agents_turn_runs(
    fake: FakeOpenAI, home: Path, project: Path
) -> None:
    (home / "config.yaml").write_text(fake.model_config())
    agent_turn(CheckpointStore(home), project)
    before = files(project)
    # the model's answer is held until the test is done: the turn runs as long as it must
    # (a timed stream ended before a busy machine had opened the view)
    answer = threading.Event()
    fake.add(text("Done.", hold=answer))
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        session = await open_session(pilot, app)
        await send(pilot, session, "tell me a long story")
        await wait_until(pilot, lambda: session.busy)
        await pilot.press("f9")
        await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await wait_until(pilot, lambda: bool(app.screen.query(CheckpointList)))
        listing = app.screen.query_one(CheckpointList)
        await wait_until(pilot, lambda: bool(listing.checkpoints))
        await pilot.press("r")
        await wait_until(
            pilot, lambda: any("turn is running" in n.message for n in app._notifications)
        )
        assert isinstance(app.screen, CheckpointsScreen) and files(project) == before
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is session)  # a key pressed sooner is lost
        await pilot.press("escape")  # cancels the turn
        await wait_until(pilot, lambda: not session.busy)
        answer.set()  # the server's side of the cancelled stream ends


async def test_o_in_the_modal_overwrites_the_hand_edits_too(home: Path, project: Path) -> None:
    original = files(project)
    agent_turn(CheckpointStore(home), project)
    (project / "src" / "app.py").write_text("mine\n")
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        _, screen = await open_checkpoints(pilot, app)
        await wait_until(pilot, lambda: bool(screen.query_one(CheckpointList).checkpoints))
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreScreen))
        await pilot.press("o")
        await wait_until(pilot, lambda: (project / "src" / "app.py").read_text() == "print('hi')\n")
        assert files(project) == original


async def test_a_damaged_store_is_said_in_the_view(home: Path, project: Path) -> None:
    agent_turn(CheckpointStore(home), project)
    (CheckpointStore(home).location(project) / "HEAD").unlink()
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        app.open_checkpoints()
        await wait_until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        await wait_until(pilot, lambda: bool(app.screen.query("#checkpoints-status")))
        status = app.screen.query_one("#checkpoints-status", Static)
        await wait_until(pilot, lambda: "damaged" in text_of(status))
        assert not app.screen.query_one(CheckpointList).checkpoints
