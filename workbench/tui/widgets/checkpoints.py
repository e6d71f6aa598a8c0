"""The checkpoints view's lists: the checkpoints of a working directory, and one's files.

They draw what they are given (the store's `Checkpoint` and `FileChange` records, read by
their fields) and keep nothing else; the screen reads the store on its workers.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.core.checkpoints.wording import KINDS
from workbench.core.printable import escape

KIND_STYLE = {"added": "green", "changed": "yellow", "deleted": "red"}
KIND_MARK = {"added": "+", "changed": "~", "deleted": "-"}


def checkpoint_row(checkpoint: Any, counts: dict[str, int] | None, mine: bool) -> Text:
    """`turn 3  12-01 15:40  write_file a.py` over `+1 ~2 -0 since` (counts to come: …)."""
    text = Text()
    when = time.strftime("%m-%d %H:%M", time.localtime(checkpoint.created))
    turn = f"turn {checkpoint.turn}" if checkpoint.turn is not None else "—"
    text.append(f"{turn:<8}", "bold" if mine else "")
    text.append(f" {when}  ", "dim")
    text.append(escape(checkpoint.reason))
    text.append("\n  ")
    if counts is None:
        text.append("…", "dim")
    elif not any(counts.values()):
        text.append("no change since", "dim")
    else:
        for kind in KINDS:
            text.append(f"{KIND_MARK[kind]}{counts[kind]} ", KIND_STYLE[kind])
        text.append("since", "dim")
    text.append(f"  {checkpoint.id}", "dim")
    return text


class CheckpointList(OptionList):
    """Newest first; the session's own checkpoints in bold. Highlighting one selects it."""

    DEFAULT_CSS = """
    CheckpointList {
        height: 1fr;
        border: round $primary 50%;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }

    CheckpointList:focus {
        border: round $primary;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.checkpoints: list[Any] = []
        self.counts: dict[str, dict[str, int]] = {}
        self.session: str | None = None

    def show(self, checkpoints: list[Any], session: str | None) -> None:
        """Draw `checkpoints`; the one selected before stays selected if it is still there."""
        keep = self.selected()
        self.checkpoints, self.session = list(checkpoints), session
        self.clear_options()
        self.add_options([Option(self._row(c), id=c.id) for c in self.checkpoints])
        if self.checkpoints:
            ids = [c.id for c in self.checkpoints]
            self.highlighted = ids.index(keep.id) if keep is not None and keep.id in ids else 0

    def set_counts(self, checkpoint_id: str, counts: dict[str, int]) -> None:
        """What changed since one checkpoint, counted by kind (arrives after the list)."""
        self.counts[checkpoint_id] = counts
        for checkpoint in self.checkpoints:
            if checkpoint.id == checkpoint_id:
                self.replace_option_prompt(checkpoint_id, self._row(checkpoint))

    def _row(self, checkpoint: Any) -> Text:
        mine = self.session is not None and checkpoint.session == self.session
        return checkpoint_row(checkpoint, self.counts.get(checkpoint.id), mine)

    def selected(self) -> Any | None:
        index = self.highlighted
        return (
            self.checkpoints[index] if index is not None and index < len(self.checkpoints) else None
        )


class ChangeList(OptionList):
    """A checkpoint's files as they differ now: added, changed or deleted since."""

    DEFAULT_CSS = """
    ChangeList {
        height: auto;
        max-height: 12;
        border: round $primary 50%;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }

    ChangeList:focus {
        border: round $primary;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.changes: list[Any] = []

    def show(self, changes: list[Any]) -> None:
        self.changes = list(changes)
        self.clear_options()
        self.add_options(
            [
                Option(
                    Text.assemble((f"{c.kind:<8}", KIND_STYLE.get(c.kind, "")), escape(c.path)),
                    id=c.path,
                )
                for c in self.changes
            ]
        )
        if self.changes:
            self.highlighted = 0

    def selected(self) -> Any | None:
        index = self.highlighted
        return self.changes[index] if index is not None and index < len(self.changes) else None
