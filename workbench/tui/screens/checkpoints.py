"""The checkpoints of a working directory: what changed since each, a file's diff, restore.

Opened from the session (F9) or the command palette. The list is newest first, each with its
turn, time, reason and what changed since (files added, changed, deleted: counted after the
list is shown, one checkpoint at a time). Highlighting a checkpoint shows its files; a file,
its diff in the diff view. `r` restores the checkpoint, `f` the highlighted file, each after
the restore modal (deletes listed first, hand-edited files named, kept unless the person says
otherwise). Everything that reads the store runs on a worker thread: git never holds the
screen.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.worker import get_current_worker

from workbench.core.checkpoints import wording as say
from workbench.core.printable import escape
from workbench.tui.widgets.checkpoints import ChangeList, CheckpointList
from workbench.tui.widgets.diff_view import DiffPane

if TYPE_CHECKING:
    from workbench.core.checkpoints import Checkpoint, CheckpointStore, RestorePlan, RestoreResult

Restored = Callable[["Checkpoint", "RestoreResult"], None]
logger = logging.getLogger(__name__)


def _why(exc: Exception) -> str:
    """The store's own sentence; anything else it raised is a fault of its own, logged."""
    from workbench.core.checkpoints import CheckpointError

    if isinstance(exc, CheckpointError):
        return str(exc)
    logger.error("checkpoint store failed", exc_info=exc)
    return f"the checkpoint store failed: {type(exc).__name__}: {exc}"


class CheckpointsScreen(Screen[None]):
    """Esc goes back; `on_restored` hears of every restore done here."""

    CSS_PATH = "checkpoints.tcss"  # its layout, beside it
    AUTO_FOCUS = "#checkpoint-list"
    BINDINGS = [
        Binding("escape", "close", "Back", id="checkpoints.close"),
        Binding("r", "restore_all", "Restore the checkpoint", id="checkpoints.restore"),
        Binding("f", "restore_file", "Restore this file", id="checkpoints.restore_file"),
        Binding("g", "reload", "Reload", id="checkpoints.reload"),
        Binding("tab", "app.focus_next", "Next pane", id="checkpoints.next", show=False),
    ]

    def __init__(
        self,
        store: CheckpointStore,
        cwd: str,
        session: str | None = None,
        on_restored: Restored | None = None,
        turn_running: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__()
        self.store = store
        self.cwd = cwd
        self.session = session
        self.on_restored = on_restored
        self.turn_running = turn_running  # the agent may be writing: no restore under it
        self.restoring = False

    def compose(self) -> ComposeResult:
        with Vertical(id="checkpoints-box"):
            yield Static(
                Text.assemble(
                    ("Checkpoints of ", "bold"),
                    (escape(self.cwd), "bold"),
                    ("   ↑↓ select · tab next pane · r restore all · f restore file", "dim"),
                ),
                id="checkpoints-title",
            )
            yield Static(Text("Reading the checkpoints…", style="dim"), id="checkpoints-status")
            with Horizontal(id="checkpoints-panes"):
                yield CheckpointList(id="checkpoint-list")
                with Vertical(id="checkpoint-detail"):
                    yield ChangeList(id="checkpoint-files")
                    yield DiffPane(id="checkpoint-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_close(self) -> None:
        self.app.pop_screen()

    # -- the list ----------------------------------------------------------------------

    def action_reload(self) -> None:
        self._load_list()

    @work(thread=True, exclusive=True, group="checkpoints-list")
    def _load_list(self) -> None:
        try:
            found = self.store.list(self.cwd)
        except Exception as exc:  # the store's or its own failure: said, never a crash
            self.app.call_from_thread(self._status, _why(exc), "red")
            return
        self.app.call_from_thread(self._show_list, found)
        worker = get_current_worker()
        for checkpoint in found:  # what changed since each: one git diff apiece, after the list
            if worker.is_cancelled:  # a reload (after a restore) counts again
                return
            try:
                changes = self.store.changes(self.cwd, checkpoint.id)
            except Exception:
                continue  # said when it is selected
            self.app.call_from_thread(self._show_counts, checkpoint.id, say.counts(changes))

    def _show_list(self, found: list[Checkpoint]) -> None:
        listing = self.query_one(CheckpointList)
        listing.show(found, self.session)
        self.query_one("#checkpoints-panes").display = bool(found)
        if not found:
            self._status(say.no_checkpoints(self.cwd, self.store.enabled), "yellow")
            return
        mine = " (this session's in bold)" if self.session else ""
        off = "" if self.store.enabled else f" · checkpoints are off: {say.HOW_TO_ENABLE}"
        legend = " · +added ~changed -deleted since each"
        self._status(f"{len(found)} checkpoint(s), newest first{mine}{legend}{off}", "dim")

    def _show_counts(self, checkpoint_id: str, counts: dict[str, int]) -> None:
        self.query_one(CheckpointList).set_counts(checkpoint_id, counts)

    def _status(self, text: str, style: str) -> None:
        self.query_one("#checkpoints-status", Static).update(Text(text, style=style))

    # -- a checkpoint's files, a file's diff ------------------------------------------

    @on(OptionList.OptionHighlighted, "#checkpoint-list")
    def _checkpoint_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        checkpoint = self.query_one(CheckpointList).selected()
        if checkpoint is not None:
            self.query_one(DiffPane).say(Text("…", style="dim"))
            self._load_files(checkpoint.id)

    @work(thread=True, exclusive=True, group="checkpoints-files")
    def _load_files(self, checkpoint_id: str) -> None:
        try:
            changes = self.store.changes(self.cwd, checkpoint_id)
        except Exception as exc:  # the store's or its own failure: said, never a crash
            self.app.call_from_thread(self._show_files, checkpoint_id, [], _why(exc))
            return
        self.app.call_from_thread(self._show_files, checkpoint_id, changes, "")

    def _show_files(self, checkpoint_id: str, changes: list[Any], problem: str) -> None:
        selected = self.query_one(CheckpointList).selected()
        if selected is None or selected.id != checkpoint_id:
            return  # another was selected meanwhile
        self.query_one(CheckpointList).set_counts(checkpoint_id, say.counts(changes))
        self.query_one(ChangeList).show(changes)
        if problem or not changes:
            text = problem or "Nothing changed since this checkpoint: the files are as in it."
            self.query_one(DiffPane).say(Text(text, style="red" if problem else "dim"))

    @on(OptionList.OptionHighlighted, "#checkpoint-files")
    def _file_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        checkpoint = self.query_one(CheckpointList).selected()
        change = self.query_one(ChangeList).selected()
        if checkpoint is not None and change is not None:
            self._load_diff(checkpoint.id, change.path)

    @work(thread=True, exclusive=True, group="checkpoints-diff")
    def _load_diff(self, checkpoint_id: str, path: str) -> None:
        try:
            diff = self.store.file_diff(self.cwd, checkpoint_id, path)
        except Exception as exc:  # the store's or its own failure: said, never a crash
            self.app.call_from_thread(self.query_one(DiffPane).say, Text(_why(exc), style="red"))
            return
        self.app.call_from_thread(self.query_one(DiffPane).show, diff)

    # -- restore -----------------------------------------------------------------------

    def _busy(self) -> bool:
        """Say why a restore cannot start now, if it cannot."""
        if self.restoring:
            self.notify("A restore is running", severity="warning")
        elif self.turn_running():
            self.notify(
                "The agent's turn is running: restore when it has ended (Esc in the session "
                "cancels it)",
                severity="warning",
            )
        return self.restoring or self.turn_running()

    def action_restore_all(self) -> None:
        checkpoint = self.query_one(CheckpointList).selected()
        if self._busy():
            return
        if checkpoint is None:
            self.notify("No checkpoint selected", severity="warning")
        else:
            self._plan(checkpoint.id, ())

    def action_restore_file(self) -> None:
        checkpoint = self.query_one(CheckpointList).selected()
        change = self.query_one(ChangeList).selected()
        if self._busy():
            return
        if checkpoint is None or change is None:
            self.notify("No file selected: tab to the files and pick one", severity="warning")
        else:
            self._plan(checkpoint.id, (change.path,))

    @work(thread=True, exclusive=True, group="checkpoints-plan")
    def _plan(self, checkpoint_id: str, files: Sequence[str]) -> None:
        try:
            plan = self.store.plan_restore(self.cwd, checkpoint_id, files)
        except Exception as exc:  # the store's or its own failure: said, never a crash
            self.app.call_from_thread(self.notify, _why(exc), severity="error", timeout=8)
            return
        self.app.call_from_thread(self._confirm, plan)

    def _confirm(self, plan: RestorePlan) -> None:
        from workbench.tui.screens.restore import RestoreScreen

        if not plan.writes and not plan.deletes:
            self.notify(f"Nothing to restore: the files are as in {plan.checkpoint.id}")
            return

        def answered(overwrite: tuple[str, ...] | None) -> None:
            if overwrite is not None:
                self.restoring = True
                self._restore(plan, overwrite)

        self.app.push_screen(RestoreScreen(plan), answered)

    @work(thread=True, group="checkpoints-restore")  # never cancelled halfway
    def _restore(self, plan: RestorePlan, overwrite: tuple[str, ...]) -> None:
        try:
            result = self.store.restore(plan, overwrite=overwrite)
        except Exception as exc:  # the store's or its own failure: said, never a crash
            self.app.call_from_thread(self._failed, _why(exc))
            return
        self.app.call_from_thread(self._restored, plan.checkpoint, result)

    def _failed(self, why: str) -> None:
        self.restoring = False
        self.notify(f"The restore failed: {why}", severity="error", timeout=10)
        self.action_reload()  # what changed since each, as it is now

    def _restored(self, checkpoint: Checkpoint, result: RestoreResult) -> None:
        self.restoring = False
        self.notify(say.after_restore(checkpoint, result), timeout=10)
        if self.on_restored is not None:
            self.on_restored(checkpoint, result)
        self.action_reload()  # the backup is the newest now, and what changed since each moved
