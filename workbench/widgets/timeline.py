"""The timeline: every tool call as a bar on a time axis, in parallel lanes.

Calls that ran at the same time sit in different lanes; sequential ones follow each other.
Bars are coloured by status, live while calls run (the clock ticks only then). Only the
visible cells are drawn and bars are found by bisection, so 10,000 calls scroll and select
as fast as ten.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

COLOURS = {
    "running": "yellow",
    "approval": "bright_yellow",
    "ok": "green",
    "error": "red",
    "invalid": "red",
    "timeout": "bright_red",
    "cancelled": "magenta",
    "skipped": "grey50",
    "denied": "red3",
    "blocked": "red3",
}
AXIS = Style(dim=True)
MIN_SCALE = 0.005  # seconds a cell shows, at most zoomed in
TICK_CELLS = 10  # cells between time labels on the axis


@dataclass
class Bar:
    call_id: str
    name: str
    start: float
    lane: int
    segment: int = 0
    parallel: bool = False
    reason: str = ""
    label: str = ""
    arguments: Any = None
    end: float | None = None
    status: str = "running"
    content: Any = ""
    spilled: str | None = None
    parent: str = ""  # a sub-agent's call: the delegate_task call that started it
    conversation: str | None = None  # a delegate_task call: its sub-agent's transcript

    def until(self, now: float) -> float:
        return self.end if self.end is not None else now


@dataclass
class TimelineModel:
    """Bars in start order, lanes assigned greedily: a call takes the first lane free at its
    start among its agent's lanes. A sub-agent's lanes sit together, right under the lane of
    the delegate_task call that started it."""

    bars: list[Bar] = field(default_factory=list)
    by_id: dict[str, Bar] = field(default_factory=dict)
    lanes: list[list[Bar]] = field(default_factory=list)  # per lane, in start order
    lane_starts: list[list[float]] = field(default_factory=list)
    busy_until: list[float] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)  # per lane: "" main agent, else a sub-agent
    origin: float | None = None

    def started(self, event: Any) -> Bar:
        at = event.at
        self.origin = at if self.origin is None else self.origin
        owner, parent = event.label, event.parent
        lane = next(
            (i for i, t in enumerate(self.busy_until) if t <= at and self.owners[i] == owner),
            None,
        )
        if lane is None:
            lane = self._new_lane(owner, parent)
        self.busy_until[lane] = float("inf")
        bar = Bar(
            event.call_id,
            event.name,
            at,
            lane,
            event.segment,
            event.parallel,
            event.reason,
            event.label,
            event.arguments,
            parent=parent,
        )
        self.bars.append(bar)
        self.by_id[bar.call_id] = bar
        self.lanes[lane].append(bar)
        self.lane_starts[lane].append(at)
        return bar

    def _new_lane(self, owner: str, parent: str) -> int:
        """A lane for `owner`: after its own lanes, or under its parent's call, or at the end."""
        mine = [i for i, o in enumerate(self.owners) if o == owner]
        parent_bar = self.by_id.get(parent)
        if owner and mine:
            position = mine[-1] + 1
        elif owner and parent_bar is not None:
            position = parent_bar.lane + 1
            while position < len(self.owners) and self.owners[position] not in (
                "",
                parent_bar.label,
            ):
                position += 1  # past sibling sub-agents' lanes already under that call
        else:
            position = len(self.owners)
        for later in self.lanes[position:]:
            for bar in later:
                bar.lane += 1
        self.lanes.insert(position, [])
        self.lane_starts.insert(position, [])
        self.busy_until.insert(position, 0.0)
        self.owners.insert(position, owner)
        return position

    def finished(self, event: Any) -> Bar | None:
        bar = self.by_id.get(event.call_id)
        if bar is None:  # never started (skipped): a zero-length mark where it would have run
            bar = self.started(
                _Started(event.call_id, event.name, event.at, event.label, parent=event.parent)
            )
        bar.end, bar.status = event.at, event.status
        bar.content = event.content
        bar.spilled = str(event.spilled) if getattr(event, "spilled", None) else None
        self.busy_until[bar.lane] = event.at
        return bar

    @property
    def running(self) -> int:
        return sum(1 for b in self.busy_until if b == float("inf"))

    def visible(self, lane: int, left: float, right: float) -> list[Bar]:
        """Bars of `lane` overlapping [left, right] (bars start in order; ends may be open)."""
        starts, bars = self.lane_starts[lane], self.lanes[lane]
        high = bisect.bisect_right(starts, right)
        low = max(0, bisect.bisect_left(starts, left) - 1)
        return [b for b in bars[low:high] if b.end is None or b.end >= left]


@dataclass(frozen=True)
class _Started:
    call_id: str
    name: str
    at: float
    label: str = ""
    segment: int = 0
    parallel: bool = False
    reason: str = "never started"
    arguments: Any = None
    parent: str = ""


class Timeline(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("left", "select(-1)", "Previous call", id="timeline.previous"),
        Binding("right", "select(1)", "Next call", id="timeline.next"),
        Binding("home", "select_edge(0)", "First call", id="timeline.first"),
        Binding("end", "select_edge(1)", "Last call", id="timeline.last"),
        Binding("plus,equals_sign", "zoom(0.5)", "Zoom in", id="timeline.zoom_in"),
        Binding("minus", "zoom(2)", "Zoom out", id="timeline.zoom_out"),
        Binding("f", "follow", "Follow live", id="timeline.follow"),
    ]

    class Selected(Message):
        def __init__(self, bar: Bar) -> None:
            super().__init__()
            self.bar = bar

    def __init__(self, model: TimelineModel | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model or TimelineModel()
        self.scale = 0.05  # seconds per cell
        self.follow = True  # auto-scale and keep the newest calls in view
        self.selected: int | None = None
        self._ticker: Any = None

    # -- data --------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.changed()

    def started(self, event: Any) -> None:
        self.model.started(event)
        self.changed()

    def finished(self, event: Any) -> None:
        self.model.finished(event)
        self.changed()

    def changed(self) -> None:
        """The model changed (here or elsewhere): tick while calls run, redraw."""
        if self.model.running and self._ticker is None:
            self._ticker = self.set_interval(0.2, self._tick)
        elif not self.model.running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._tick()

    def _tick(self) -> None:
        if self.follow:
            self._fit()
        self.virtual_size = Size(self._x(self._now()) + 2, len(self.model.lanes) + 1)
        if self.follow:
            self.scroll_to(
                x=max(0, self.virtual_size.width - self.size.width), animate=False, immediate=True
            )
        self.refresh()

    def _now(self) -> float:
        bars = self.model.bars
        if not bars:
            return 0.0
        return time.monotonic() if self.model.running else max(b.until(0) for b in bars[-50:])

    def _fit(self) -> None:
        """Auto-scale: the latest burst of calls fills most of the width."""
        bars = self.model.bars
        if not bars:
            return
        recent = bars[-20:]
        span = max(self._now() - recent[0].start, 0.01)
        self.scale = max(MIN_SCALE, span / max(10, self.size.width * 0.8))

    def _x(self, at: float) -> int:
        return int((at - (self.model.origin or 0.0)) / self.scale)

    # -- drawing -----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        left_cell = self.scroll_offset.x
        if y == 0:
            return self._axis(left_cell, width)
        lane = y - 1 + self.scroll_offset.y
        if lane >= len(self.model.lanes):
            return Strip.blank(width)
        origin, now = self.model.origin or 0.0, self._now()
        left = origin + left_cell * self.scale
        right = left + width * self.scale
        cells: list[Segment] = []
        cursor = 0
        chosen = self.model.bars[self.selected] if self.selected is not None else None
        for bar in self.model.visible(lane, left, right):
            start = max(0, self._x(bar.start) - left_cell)
            end = max(start + 1, self._x(bar.until(now)) - left_cell)
            if start >= width:
                break
            if start > cursor:
                cells.append(Segment(" " * (start - cursor)))
                cursor = start
            span = min(end, width) - cursor
            if span <= 0:
                continue
            label = bar.name[:span].ljust(span, "▁" if bar.status == "running" else " ")
            style = Style(
                bgcolor=COLOURS.get(bar.status, "white"),
                color="black",
                bold=bar is chosen,
                reverse=bar is chosen,
                underline=bar is chosen,
            )
            cells.append(Segment(label, style))
            cursor += span
        if cursor < width:
            cells.append(Segment(" " * (width - cursor)))
        return Strip(cells, width)

    def _axis(self, left_cell: int, width: int) -> Strip:
        text = []
        for cell in range(0, width, TICK_CELLS):
            seconds = (left_cell + cell) * self.scale
            text.append(f"|{seconds:.2f}s".ljust(TICK_CELLS)[:TICK_CELLS])
        return Strip([Segment("".join(text)[:width].ljust(width), AXIS)], width)

    # -- navigation --------------------------------------------------------------------

    def action_select(self, step: int) -> None:
        bars = self.model.bars
        if not bars:
            return
        current = len(bars) if self.selected is None else self.selected
        self.select(max(0, min(len(bars) - 1, current + step)))

    def action_select_edge(self, last: int) -> None:
        if self.model.bars:
            self.select(len(self.model.bars) - 1 if last else 0)

    def select(self, index: int) -> None:
        self.selected = index
        bar = self.model.bars[index]
        self.follow = False
        x = self._x(bar.start)
        if not (self.scroll_offset.x <= x < self.scroll_offset.x + self.size.width - 4):
            self.scroll_to(x=max(0, x - self.size.width // 3), animate=False, immediate=True)
        lane_row = bar.lane
        if not (self.scroll_offset.y <= lane_row < self.scroll_offset.y + self.size.height - 1):
            self.scroll_to(y=lane_row, animate=False, immediate=True)
        self.refresh()
        self.post_message(self.Selected(bar))

    def action_zoom(self, factor: float) -> None:
        self.follow = False
        self.scale = max(MIN_SCALE, self.scale * factor)
        self.virtual_size = Size(self._x(self._now()) + 2, len(self.model.lanes) + 1)
        self.refresh()

    def action_follow(self) -> None:
        self.follow = True
        self._tick()
