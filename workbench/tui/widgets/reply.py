"""An assistant's reply: streamed through Textual's Markdown stream, rendered whole at the end.

Textual's Markdown makes a widget of every block and lays them all out again as the reply
grows; past a few kilobytes that work delays the frames of keys typed meanwhile. So a reply
streams into Textual's Markdown for its first SEAL_CHARS, then, at a settled block boundary,
that part is rendered whole and the rest goes on in light parts: a live tail redrawn from
its text, whose settled blocks are sealed into one widget each as it grows.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Heading
from rich.markdown import Markdown as RichMarkdown
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static

SEAL_CHARS = 3000  # the length from which a live part's settled blocks are sealed
_PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def settled_length(text: str) -> int:
    """How many leading characters of `text` hold blocks no further text can change.

    A top-level block is settled once two more top-level blocks follow it: the block after
    it may still grow (a list gaining items, a paragraph turning into a heading), the one
    after that proves it ended. An unclosed code fence is one block to the end."""
    starts = [
        token.map[0]
        for token in _PARSER.parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]
    if len(starts) < 3:
        return 0
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: starts[-2]])


class _Heading(Heading):
    """Headings as Textual's Markdown draws them: left-aligned, no box, the theme's colours."""

    look: Style | None = None  # the theme's, when the Markdown that made it has one

    @classmethod
    def create(cls, markdown: RichMarkdown, token: Any) -> Heading:
        heading = cls(token.tag)
        heading.look = getattr(markdown, "heading_looks", {}).get(token.tag)
        return heading

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text
        if self.look is not None:
            text = Text(text.plain, style=self.look)
        text.justify = "left"
        yield text


class _PartMarkdown(RichMarkdown):
    elements = {**RichMarkdown.elements, "heading_open": _Heading}

    def __init__(self, text: str, theme: dict[str, str]) -> None:
        super().__init__(text)
        self.heading_looks = {f"h{n}": _look(theme, n) for n in range(1, 7)}


def _look(theme: dict[str, str], level: int) -> Style:
    colour = theme.get(f"markdown-h{level}-color", "").removeprefix("ansi_")
    words = theme.get(f"markdown-h{level}-text-style", "bold").replace("none", "")
    try:
        return Style.parse(f"{words} {colour}".strip() or "bold")
    except Exception:  # a theme colour Rich cannot read: keep the emphasis
        return Style(bold=True)


class Part(Static):
    """Part of a long reply past its head, drawn as one widget: sealed or the live tail."""

    def __init__(self, text: str = "", classes: str = "part") -> None:
        super().__init__(classes=classes)
        self.text = text
        self._theme: dict[str, str] | None = None  # known once mounted

    def on_mount(self) -> None:
        self._theme = self.app.theme_variables
        self.show(self.text)

    def show(self, text: str) -> None:
        self.text = text
        if self._theme is not None:
            self.update(_PartMarkdown(text, self._theme))


class AssistantMessage(Vertical):
    """A reply being streamed, then rendered whole; `reply` holds all of its text."""

    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
        layout: stream;
        padding: 0 1;
    }

    AssistantMessage > Markdown {
        layout: stream;
        margin: 0;
        padding: 0;
    }

    AssistantMessage > .sealed {
        margin-bottom: 1;  /* a sealed part ends with a block, the gap the next one starts after */
    }
    """

    def __init__(self) -> None:
        super().__init__(classes="assistant")
        self.reply = ""
        self._written = 0  # how much of `reply` has reached the screen
        self._live_from = 0  # where the live tail starts
        self._next_check = SEAL_CHARS
        self._stream: Any = None
        self._tail: Part | None = None  # once the head has ended: the live part after it
        self.whole = False  # the reply ended and is drawn whole (what a test or export waits for)

    def compose(self) -> ComposeResult:
        yield Markdown("", classes="head")

    @property
    def head(self) -> Markdown:
        return self.query_one(".head", Markdown)

    def add_fragment(self, fragment: str) -> None:
        """Queue a piece of the reply. It is drawn on this widget's own message loop, so the
        screen's loop (keys, frames) never waits for Markdown parsing or mounting."""
        # not `append`: Markdown.append is what the stream itself calls
        self.reply += fragment
        self.call_later(self._write, fragment)

    def finish(self) -> None:
        """The reply ended: render it whole (a stream can leave a block half-made)."""
        self.call_later(self._render_whole)

    async def _write(self, fragment: str) -> None:
        self._written += len(fragment)
        if self._tail is None:
            if self._stream is None:
                self._stream = Markdown.get_stream(self.head)
            await self._stream.write(fragment)
            if self._written >= self._next_check:
                await self._end_head()
            return
        live = self.reply[self._live_from : self._written]
        if len(live) >= self._next_check and (cut := self._settled(live)):
            await self.mount(Part(live[:cut], classes="part sealed"), before=self._tail)
            self._live_from += cut
        self._tail.show(self.reply[self._live_from : self._written])

    def _settled(self, live: str) -> int:
        """Where `live` may be cut (0: not yet; e.g. one long code block, looked at later)."""
        cut = settled_length(live)
        if cut < SEAL_CHARS // 2:
            self._next_check = len(live) + SEAL_CHARS // 4
            return 0
        self._next_check = SEAL_CHARS
        return cut

    async def _end_head(self) -> None:
        cut = self._settled(self.reply[: self._written])
        if not cut:
            return
        await self._stop()
        self._live_from = cut
        await self.head.update(self.reply[:cut])
        self._tail = Part(self.reply[cut : self._written])
        await self.mount(self._tail)

    async def _stop(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def _render_whole(self) -> None:
        if self._tail is None:
            await self._stop()
            await self.head.update(self.reply)
        else:
            self._tail.show(self.reply[self._live_from :])
        self.whole = True
