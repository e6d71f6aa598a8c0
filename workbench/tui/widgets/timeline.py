"""The timeline: every tool call as a bar on a time axis, in parallel lanes.

Calls that ran at the same time sit in different lanes; sequential ones follow each other.
Bars are coloured by status, live while calls run (the clock ticks only then). Every call
has a bar of at least one cell, however short it was (denied and skipped ones too), and its
name and target ("read_file a.txt") are written inside it or, when the bar is too narrow,
just after it in its colour. A finished turn is zoomed to fit the width. Only the visible
cells are drawn and bars are found by bisection, so 10,000 calls scroll and select as fast
as ten.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
MIN_SCALE = 0.0001  # seconds a cell shows, at most zoomed in
TICK_CELLS = 10  # cells between time labels on the axis
REUSE_GAP = 0.5  # seconds a lane stays free before a new call may take it
SPREAD = 6  # lanes an agent's quick calls spread over before they share
LABEL_ROOM = 24  # cells kept free right of a fitted turn for its last bars' labels
TARGET_KEYS = ("path", "command", "pattern", "url", "urls", "query", "goal", "name")

if TYPE_CHECKING:  # the core's event vocabulary, for types only
    from workbench.core.events import ToolCallFinished, ToolCallStarted


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
    diff: Any = None  # a file write: what it changed (workbench.core.edits.diffs.FileDiff)
    progress: str = ""  # what a running MCP call last reported, e.g. "3/4 step three"
    via: str = ""  # a deferred tool's call: the tool_call (bridge) call it was made through
    waiting: str = ""  # it waits for a person: "waiting for approval" ("" when not)

    def until(self, now: float) -> float:
        return self.end if self.end is not None else now

    @property
    def title(self) -> str:
        """The tool and what it works on: `read_file a.txt`, `terminal ls -la`."""
        aim = target(self.arguments)
        title = f"{self.name} {aim}" if aim else self.name
        title = f"↳ {title}" if self.via else title  # made through the bridge call above it
        said = self.waiting or self.progress
        return f"{title} [{said}]" if said and self.end is None else title


def target(arguments: Any, limit: int = 40) -> str:
    """The argument a call is about, on one line: a path, a command, a pattern..."""
    if not isinstance(arguments, dict):
        return ""
    calls = arguments.get("calls")
    if isinstance(calls, list) and calls:  # a tool_call: the tool it runs
        named = [str(c.get("name")) for c in calls if isinstance(c, dict) and c.get("name")]
        return _cut_text("→ " + " ".join(named), limit) if named else ""
    value = next((arguments[k] for k in TARGET_KEYS if arguments.get(k)), None)
    if value is None:
        value = next((v for v in arguments.values() if isinstance(v, str) and v), "")
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return _cut_text(" ".join(str(value).split()), limit)


def _cut_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    turn_start: int = 0  # index in `bars` of the latest turn's first call
    # calls waiting for a person, by call id: an ask may be told before its call's bar is made
    waiting: dict[str, str] = field(default_factory=dict)

    def new_turn(self) -> None:
        """The next calls belong to a new turn: a finished one is zoomed to fit on its own."""
        self.turn_start = len(self.bars)

    def started(self, event: ToolCallStarted | _Started) -> Bar:
        at = event.at
        self.origin = at if self.origin is None else self.origin
        owner, parent = event.label, event.parent
        lane = self._under_bridge(getattr(event, "via", ""), owner, at)
        lane = self._free_lane(owner, at) if lane is None else lane
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
            via=getattr(event, "via", ""),
            waiting=self.waiting.get(event.call_id, ""),
        )
        self.bars.append(bar)
        self.by_id[bar.call_id] = bar
        self.lanes[lane].append(bar)
        self.lane_starts[lane].append(at)
        return bar

    def _under_bridge(self, via: str, owner: str, at: float) -> int | None:
        """A deferred tool's call sits right under its bridge call's bar when that lane is
        free (the bridge call is its parent row)."""
        bridge = self.by_id.get(via) if via else None
        below = bridge.lane + 1 if bridge is not None else len(self.owners)
        if below < len(self.owners) and self.owners[below] == owner:
            return below if self.busy_until[below] <= at else None
        return None

    def _free_lane(self, owner: str, at: float) -> int | None:
        """A lane of `owner` free at `at`, and free for a while: a call that follows another
        within REUSE_GAP takes a lane of its own (up to SPREAD lanes), so that a fast call's
        label is not hidden by the next one's bar. Past SPREAD, the lane free the longest."""
        mine = [i for i, o in enumerate(self.owners) if o == owner]
        free = [i for i in mine if self.busy_until[i] <= at]
        settled = [i for i in free if self.busy_until[i] <= at - REUSE_GAP]
        if settled:
            return settled[0]
        if free and len(mine) >= SPREAD:
            return min(free, key=lambda i: self.busy_until[i])
        return None

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

    def wait(self, call_id: str, waiting: str) -> None:
        """The call waits for a person (`waiting` says for what), or no longer ("")."""
        if waiting:
            self.waiting[call_id] = waiting
        else:
            self.waiting.pop(call_id, None)
        bar = self.by_id.get(call_id)
        if bar is not None:
            bar.waiting = waiting

    def finished(self, event: ToolCallFinished) -> Bar | None:
        bar = self.by_id.get(event.call_id)
        if bar is None:  # never started (skipped): a zero-length mark where it would have run
            bar = self.started(
                _Started(event.call_id, event.name, event.at, event.label, parent=event.parent)
            )
        bar.end, bar.status = event.at, event.status
        self.waiting.pop(event.call_id, None)  # a call that ended waits no more
        bar.waiting = ""
        bar.content = event.content
        bar.spilled = str(event.spilled) if getattr(event, "spilled", None) else None
        bar.diff = getattr(event, "diff", None)
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

    def on_resize(self) -> None:
        if self.follow:  # fitted to the width it has now
            self._tick()

    def changed(self) -> None:
        """The model changed (the app writes it; this widget only draws it): tick while
        calls run, redraw."""
        if self.model.running and self._ticker is None:
            self._ticker = self.set_interval(0.2, self._tick)
        elif not self.model.running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._tick()

    def _tick(self) -> None:
        if self.follow:
            self._fit()
        self._resize()
        if self.follow and self.model.bars:
            if self.model.running:
                x = self.virtual_size.width - LABEL_ROOM - self.size.width
            else:
                x = self._x(self._fit_from())
            self.scroll_to(x=max(0, x), animate=False, immediate=True)
        self.refresh()

    def _resize(self) -> None:
        """Room for every call and, right of the last, for its label."""
        self.virtual_size = Size(self._x(self._now()) + 2 + LABEL_ROOM, len(self.model.lanes) + 1)

    def _now(self) -> float:
        bars = self.model.bars
        if not bars:
            return 0.0
        return time.monotonic() if self.model.running else max(b.until(0) for b in bars[-50:])

    def _fit(self) -> None:
        """Auto-scale. Live: the latest calls fill most of the width. Finished: the latest
        turn fits the width, with room on the right for its last bars' labels."""
        bars = self.model.bars
        if not bars:
            return
        first = self._fit_from()
        span = max(self._now() - first, MIN_SCALE * 10)
        room = self.size.width - (self._label_room() if not self.model.running else 0)
        self.scale = max(MIN_SCALE, span / max(10, room, self.size.width * 0.5))

    def _label_room(self) -> int:
        """Cells for the labels of the turn's last calls, right of the fitted turn."""
        last = self.model.bars[-SPREAD:]
        return min(LABEL_ROOM, 1 + max(len(bar.title) for bar in last))

    def _fit_from(self) -> float:
        """Where the fitted view starts: the latest turn's first call, else recent calls."""
        bars = self.model.bars
        if self.model.running or self.model.turn_start >= len(bars):
            return bars[-20:][0].start
        return min(b.start for b in bars[self.model.turn_start :][-2000:])

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
        # from a label's width to the left: a bar that starts off screen keeps its label
        left = origin + (left_cell - LABEL_ROOM) * self.scale
        right = origin + (left_cell + width) * self.scale
        chosen = self.model.bars[self.selected] if self.selected is not None else None
        row = _Row(width)
        shown = self.model.visible(lane, left, right)
        for n, bar in enumerate(shown):
            start = self._x(bar.start) - left_cell
            end = max(start + 1, self._x(bar.until(now)) - left_cell)
            following = shown[n + 1] if n + 1 < len(shown) else None
            limit = self._x(following.start) - left_cell - 1 if following else width + 999
            row.bar(bar, start, end, limit, chosen is bar)
        return row.strip()

    def _axis(self, left_cell: int, width: int) -> Strip:
        text = []
        for cell in range(0, width, TICK_CELLS):
            seconds = (left_cell + cell) * self.scale
            text.append(f"|{seconds_label(seconds, self.scale)}".ljust(TICK_CELLS)[:TICK_CELLS])
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
        self._resize()
        self.refresh()

    def action_follow(self) -> None:
        self.follow = True
        self._tick()


def seconds_label(seconds: float, scale: float) -> str:
    """An axis time as precise as the zoom: `1.25s`, `120ms`, `3.5ms`."""
    if scale * TICK_CELLS >= 0.1 or seconds >= 10:
        return f"{seconds:.2f}s"
    if scale * TICK_CELLS >= 0.01:
        return f"{seconds * 1000:.0f}ms"
    return f"{seconds * 1000:.1f}ms"


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(0, room - 1)] + "…" if room > 0 else ""


class _Row:
    """One lane's cells, painted left to right. A bar takes at least one cell, after the
    previous bar if they would share a cell; its title goes inside when it fits, else just
    after it in the bar's colour, as far as the next bar."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.cells: list[tuple[str, Style | None]] = [(" ", None)] * width
        self.cursor = -(10**9)  # the first cell after the last bar drawn (screen cells)

    def bar(self, bar: Bar, start: int, end: int, limit: int, chosen: bool) -> None:
        start = max(start, self.cursor)
        end = max(end, start + 1)
        self.cursor = end
        colour = COLOURS["approval"] if bar.waiting else COLOURS.get(bar.status, "white")
        ink = "bright_white" if chosen else "black"
        style = Style(bgcolor=colour, color=ink, bold=chosen, underline=chosen)
        title, cells = bar.title, end - start
        fill = "▁" if bar.status == "running" else " "
        room = limit - end - 1  # cells free after the bar, before the next one
        if len(title) <= cells or room < min(len(title), 8):
            inside = title if len(title) <= cells else _cut(title, cells if cells >= 4 else 0)
            self._paint(start, inside.ljust(cells, fill), style)
            return
        self._paint(start, fill * cells, style)
        label = Style(color=colour, bold=chosen, underline=chosen, reverse=chosen)
        self._paint(end + 1, _cut(title, room), label)

    def _paint(self, start: int, text: str, style: Style) -> None:
        for offset, char in enumerate(text):
            if 0 <= start + offset < self.width:
                self.cells[start + offset] = (char, style)

    def strip(self) -> Strip:
        segments = [Segment(char, style) for char, style in self.cells]
        return Strip(Segment.simplify(segments), self.width)
