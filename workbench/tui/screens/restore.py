"""The restore confirmation: what a restore would delete (first), what it would write back,
and which of those files were changed by hand since the checkpoint.

Cancel has the focus, and Enter on it, Esc, `n` and any key that is not an answer cancel. `y`
restores and keeps the hand-edited files as they are; `o` restores and overwrites them too
(offered only when there are some; otherwise it cancels). The state now is checkpointed before anything changes,
so the restore can itself be undone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.core.checkpoints import wording as say
from workbench.core.printable import escape

if TYPE_CHECKING:
    from workbench.core.checkpoints import RestorePlan

KEEP, OVERWRITE, CANCEL = "keep", "overwrite", "cancel"
ANSWER_KEYS = frozenset({"y", "o", "n", "escape", "enter"})
MOVE_KEYS = frozenset({"tab", "shift+tab", "left", "right", "up", "down"})
HAND_MARK = "  ⚠ changed by hand since"


def plan_text(plan: RestorePlan) -> Text:
    """Deletes first, then writes; each hand-edited file marked."""
    hand = set(plan.hand_edited)
    text = Text()
    for title, paths, style in (
        ("Deletes", plan.deletes, "red"),
        ("Writes back", plan.writes, "green"),
    ):
        if not paths:
            continue
        what = "added since" if paths is plan.deletes else "changed or deleted since"
        text.append(f"{title} {say.files(len(paths))} ({what}):\n", f"bold {style}")
        for path in paths:
            text.append(f"  {escape(path)}")
            text.append(HAND_MARK if path in hand else "", "bold yellow")
            text.append("\n")
    text.rstrip()
    return text


class RestoreScreen(ModalScreen[tuple[str, ...] | None]):
    """Dismisses with the hand-edited files to overwrite (`()`: keep them all), or None."""

    CSS_PATH = "checkpoints.tcss"  # its layout, with the checkpoints view's
    AUTO_FOCUS = "#restore-cancel"
    BINDINGS = [
        Binding("y", "answer('keep')", "Restore (keep hand edits)", id="restore.keep"),
        Binding(
            "o", "answer('overwrite')", "Restore, overwrite hand edits", id="restore.overwrite"
        ),
        Binding("n,escape", "answer('cancel')", "Cancel", id="restore.cancel"),
    ]

    def __init__(self, plan: RestorePlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(id="restore-box"):
            yield Static(
                Text(f"↺ Restore from checkpoint {say.headline(plan.checkpoint)}", "bold"),
                id="restore-title",
            )
            with VerticalScroll(id="restore-plan"):
                yield Static(plan_text(plan))
            yield Static(self._facts(), id="restore-facts")
            with Horizontal(id="restore-buttons"):
                yield Button("Cancel (n)", id="restore-cancel", variant="primary")
                if plan.hand_edited:
                    yield Button("Restore, keep my edits (y)", id="restore-keep")
                    yield Button(
                        "Restore, overwrite my edits (o)", id="restore-overwrite", variant="error"
                    )
                else:
                    yield Button("Restore (y)", id="restore-keep", variant="warning")

    def _facts(self) -> Text:
        text = Text()
        hand = self.plan.hand_edited
        if hand:
            text.append(
                f"⚠ {escape(', '.join(hand))}: changed since the checkpoint by someone other "
                "than the agent. y restores the rest and keeps your version; o restores "
                f"{'it' if len(hand) == 1 else 'them'} too.\n",
                "yellow",
            )
        text.append(
            "The files as they are now are checkpointed first: the restore can be undone.",
            "dim",
        )
        return text

    def on_key(self, event: events.Key) -> None:
        # fail closed: a key that is not an answer or a way between the buttons cancels
        if event.key not in ANSWER_KEYS | MOVE_KEYS:
            event.stop()
            self.dismiss(None)

    def action_answer(self, answer: str) -> None:
        if answer == KEEP:
            self.dismiss(())
        elif answer == OVERWRITE and self.plan.hand_edited:
            self.dismiss(tuple(self.plan.hand_edited))
        else:  # cancel, and `o` when it is not offered: an answer not understood is a no
            self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        answer = (event.button.id or "").removeprefix("restore-")
        self.action_answer(answer)
