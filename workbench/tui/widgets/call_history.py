"""A tool's kept calls, pinned first then newest first, with keys to act on the one selected.

The list draws what it is given (the history's entries: id, status, duration, time, origin,
pinned, arguments) and asks for the actions in messages; the screen does them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.tui.widgets.chat import summarise

STATUS_STYLE = {"ok": "green", "denied": "yellow", "cancelled": "yellow"}
ORIGIN = {"agent": "agent", "form": "by hand", "call": "cli call", "replay": "replay"}


class CallHistoryList(OptionList):
    """Focus it (Tab from the detail, or F4) and use the keys in the footer."""

    DEFAULT_CSS = """
    CallHistoryList, CallHistoryList:focus {
        height: auto;
        max-height: 12;
        border: none;
        padding: 0;
        margin: 0 0 1 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    BINDINGS = [
        Binding("r", "act('rerun')", "Re-run", id="history.rerun"),
        Binding("e", "act('edit')", "Edit and run", id="history.edit"),
        Binding("p", "act('pin')", "Pin/unpin", id="history.pin"),
        Binding("t", "act('save')", "Save as a test", id="history.save"),
    ]

    class Act(Message):
        """Re-run, edit, pin or save the call `call` of `tool`."""

        def __init__(self, action: str, tool: str, call: Any) -> None:
            super().__init__()
            self.action = action
            self.tool = tool
            self.call = call

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool: str | None = None
        self.calls: list[Any] = []

    def show(self, tool: str | None, calls: Sequence[Any]) -> None:
        """Draw `calls` (already in order); the same call stays selected across a redraw."""
        keep = self._selected_id() if tool == self.tool else None
        self.tool, self.calls = tool, list(calls)
        self.clear_options()
        self.add_options([Option(row(c), id=c.id) for c in self.calls])
        self.display = bool(self.calls)
        if self.calls:
            ids = [c.id for c in self.calls]
            self.highlighted = ids.index(keep) if keep in ids else 0

    def _selected_id(self) -> str | None:
        index = self.highlighted
        return self.calls[index].id if index is not None and index < len(self.calls) else None

    def selected(self) -> Any | None:
        index = self.highlighted
        return self.calls[index] if index is not None and index < len(self.calls) else None

    def action_act(self, action: str) -> None:
        call = self.selected()
        if call is not None and self.tool is not None:
            self.post_message(self.Act(action, self.tool, call))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_act("edit")  # Enter loads the call into the run form, to look then run


def row(call: Any) -> Text:
    """`📌 14:02:11  ok        12 ms  by hand  path="a.txt"`."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("📌 " if call.pinned else "   ")
    text.append(when(call.at) + "  ", "dim")
    text.append(f"{call.status:<9}", STATUS_STYLE.get(call.status, "red"))
    text.append(f"{_took(call.duration):>8}  ")
    text.append(f"{ORIGIN.get(call.origin, call.origin):<8} ", "dim")
    if getattr(call, "via", ""):  # a deferred tool, called through the bridge
        text.append("via tool_call ", "dim cyan")
    if call.arguments is None:
        text.append(call.note or "arguments not kept", "dim italic")
    else:
        text.append(summarise(call.arguments, 60))
    return text


def when(at: float) -> str:
    """The time of day for today's calls, the date too for older ones."""
    today = time.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.localtime(at))
    return time.strftime("%H:%M:%S" if today else "%m-%d %H:%M", time.localtime(at))


def _took(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"
