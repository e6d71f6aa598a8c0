"""The session screen: the conversation beside the live timeline of its tool calls.

It draws and asks the controller: `open_session`/`start_session` on the first message,
`send` for each turn, `cancel` on Esc (the stream and the tool calls stop, the prompt comes
back). The controller runs the agent on its own thread; the core's events reach the app,
which writes the timeline and hands this screen the events of the conversation as messages.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Static

from workbench.core.agent.context import short
from workbench.core.agent.transcript import not_saved
from workbench.core.printable import escape
from workbench.tui.messages import CoreEventArrived
from workbench.tui.widgets.chat import ChatLog, PromptArea, ToolCard, head_and_tail
from workbench.tui.widgets.diff_view import diff_text
from workbench.tui.widgets.reply import AssistantMessage
from workbench.tui.widgets.timeline import Bar, Timeline, TimelineModel

if TYPE_CHECKING:
    from workbench.core.checkpoints import Checkpoint, RestoreResult
    from workbench.core.events import (
        CheckpointSkipped,
        CheckpointTaken,
        CoreEvent,
        TurnFinished,
    )
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.controller import Controller, SessionRefused

FLUSH_INTERVAL = 0.1  # seconds between updates of a streaming reply
CONFIGURE = (
    "To use your own model, set `model.default` and `model.provider` in "
    "$HERMES_HOME/config.yaml as in Hermes, with the provider's key in $HERMES_HOME/.env (or "
    "`model.base_url` for any OpenAI-compatible endpoint), or start with --model, --base-url "
    "and --api-key; `hermes-tui doctor` shows the choice."
)


class SessionScreen(Screen[None]):
    CSS_PATH = "session.tcss"  # its layout, beside it
    AUTO_FOCUS = "#prompt"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel the turn", id="session.cancel"),
        # priority: the prompt (a TextArea) would take F6 and F7 to select a line / all
        Binding("f6", "app.pop_screen", "Tools", id="session.tools", priority=True),
        Binding("f7", "focus_timeline", "Timeline", id="session.timeline", priority=True),
        Binding("f8", "focus_prompt", "Prompt", id="session.prompt", priority=True),
        Binding("f9", "checkpoints", "Checkpoints", id="session.checkpoints", priority=True),
    ]

    def __init__(
        self, controller: Controller | None = None, timeline: TimelineModel | None = None
    ) -> None:
        super().__init__()
        self.controller = controller  # None: a screen shown without the core (its tests)
        self.timeline_model = timeline or TimelineModel()  # written by the app, drawn here
        self.session_started = False  # the controller's session is open and started
        self.reply: AssistantMessage | None = None
        self._problems_shown = 0
        self.busy = False
        self.last_prompt = ""
        self._pending = ""  # streamed text not yet on screen
        self._flush_timer: Timer | None = None
        self._reason = ""  # how the last turn ended
        self._turn_text = ""  # the last turn's figures
        self._context_text = ""  # the context in use now, e.g. "context 12.3k / 32k"
        self._progress_text = ""  # what the local model is doing now (loading, reading…)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="session-panes"):
            with Vertical(id="chat-pane"):
                yield ChatLog(id="chat-log")
                yield Static("", id="turn-line")
                yield PromptArea(id="prompt")
            with Vertical(id="timeline-pane"):
                yield Static(
                    Text("Timeline  ← → select · +/- zoom · f follow · v view result", style="dim"),
                    id="timeline-heading",
                )
                yield Timeline(self.timeline_model, id="timeline")
                with VerticalScroll(id="call-detail-box"):
                    yield Static(Text("Select a call to see it.", style="dim"), id="call-detail")
        yield Footer()

    @property
    def workbench(self) -> WorkbenchApp:
        """The app, for the screens it opens (the checkpoints, a result, a conversation)."""
        return cast("WorkbenchApp", self.app)

    async def on_mount(self) -> None:
        if self.controller is None or not self.controller.loaded:
            await self.query_one(ChatLog).note(Text("The workbench is still loading…", style="dim"))
            return
        await self.query_one(ChatLog).note(self._introduction(self.controller))

    def _introduction(self, controller: Controller) -> Text:
        from workbench.core.model.settings import ModelConfigError

        try:
            settings = controller.model()
        except ModelConfigError as exc:
            return Text(f"The configured model cannot be used: {exc}.", style="red")
        chosen = settings.describe()
        if not settings.local:
            return Text(
                f"Talking to {chosen}. Enter sends, ctrl+j adds a line, Esc cancels.", style="dim"
            )
        if controller.local_model_installed(settings):
            return Text(
                f"Talking to {chosen}: it starts with your first message (a few seconds). It is "
                f"small: good at a first tool call, weak at long tasks. {CONFIGURE}",
                style="dim",
            )
        return Text(
            f"No model is configured and the bundled local model is not installed (`make run` "
            f"installs it). {CONFIGURE} The rest of the workbench works without a model.",
            style="yellow",
        )

    # -- sending -----------------------------------------------------------------------

    @on(PromptArea.Submitted)
    async def _submitted(self, message: PromptArea.Submitted) -> None:
        if self.busy:
            self.notify("A turn is running; Esc cancels it.", severity="warning")
            self.query_one(PromptArea).text = message.text
            return
        self.last_prompt = message.text
        await self.query_one(ChatLog).user(message.text)
        self.converse(message.text)

    @work(exclusive=True, group="chat")
    async def converse(self, prompt: str) -> None:
        log = self.query_one(ChatLog)
        self.busy = True
        try:
            if not self.session_started and not await self._start_session(log):
                self.query_one(PromptArea).text = prompt  # nothing typed is lost
                return
            assert self.controller is not None  # a session started: there is one
            finished = await self.controller.send(prompt)
            try:
                await self._finish_reply()
                self._turn_line(finished)
            except NoMatches:  # the app is closing: the transcript has it all
                return
            if finished.error:
                await log.note(Text(finished.error, style="red"))
            if finished.reason == "cancelled":
                await log.note(Text("cancelled", style="magenta"))
            await self._memory_problems(log)
        finally:
            self.busy = False

    async def _memory_problems(self, log: ChatLog) -> None:
        """A memory provider's failing hooks, said under the turn they failed in."""
        if self.controller is None:
            return
        problems = self.controller.memory_problems(self._problems_shown)
        self._problems_shown += len(problems)
        for problem in dict.fromkeys(problems):
            await log.note(Text(problem, style="yellow"))

    async def _start_session(self, log: ChatLog) -> bool:
        from workbench.tui.controller import SessionRefused

        if self.controller is None or not self.controller.loaded:
            await log.note(Text("The workbench is still loading; send again in a moment."))
            return False
        try:
            opening = self.controller.open_session()
        except SessionRefused as exc:
            await log.note(Text(refused(exc), style="red"))
            return False
        for note in opening.notes:
            await log.note(Text(note, style="yellow"))
        if opening.local:
            await log.note(Text("Starting the local model…", style="dim"))
        try:
            started = await self.controller.start_session()
        except SessionRefused as exc:
            await log.note(Text(refused(exc), style="red"))
            return False
        self.session_started = True
        self.sub_title = started.title
        if started.cannot_run:  # said before the first command is refused, not after
            await log.note(Text(f"Commands will not run: {started.cannot_run}", style="yellow"))
        return True

    def action_cancel(self) -> None:
        if self.controller is not None and self.session_started and self.busy:
            self.controller.cancel()
            prompt = self.query_one(PromptArea)
            if not prompt.text:
                prompt.text = self.last_prompt  # the prompt comes back
            prompt.focus()

    def action_focus_timeline(self) -> None:
        self.query_one(Timeline).focus()

    def action_focus_prompt(self) -> None:
        self.query_one(PromptArea).focus()

    def action_checkpoints(self) -> None:
        """The checkpoints of the session's working directory: see, diff, restore."""
        if self.controller is not None:
            self.workbench.open_checkpoints()

    async def restored(self, checkpoint: Checkpoint, result: RestoreResult) -> None:
        """A restore made from the checkpoints view: said in the conversation."""
        from workbench.core.checkpoints.wording import after_restore

        log = self._log()
        if log is not None:
            await log.note(Text(after_restore(checkpoint, result), style="cyan"))

    def _log(self) -> ChatLog | None:
        """The conversation; None once the closing app has removed the screen's widgets (a
        restore's note and the core's last events may still arrive then)."""
        try:
            return self.query_one(ChatLog)
        except NoMatches:
            return None

    # -- events ------------------------------------------------------------------------

    @on(CoreEventArrived)
    async def _agent_event(self, message: CoreEventArrived) -> None:
        await self.agent_event(message.event)

    async def agent_event(self, event: CoreEvent) -> None:
        """One event of the conversation, in the order the core emitted them (the app has
        written the timeline already)."""
        from workbench.core.events import (
            CheckpointSkipped,
            CheckpointTaken,
            ContextCompressed,
            ContextNotice,
            ContextUsage,
            ModelProgress,
            RoundStarted,
            SubagentFinished,
            SubagentStarted,
            TextDelta,
            ToolCallFinished,
            ToolCallStarted,
            TranscriptFailed,
            VenvChanged,
        )

        log = self._log()
        if log is None:
            return
        match event:
            case TextDelta(text=text):
                # fragments are batched: a reply at thousands of tokens a second is re-laid
                # out a few times a second, not for every fragment, so typing stays quick
                self._pending += text
                if self._flush_timer is None:
                    self._flush_timer = self.set_timer(FLUSH_INTERVAL, self._flush)
            case RoundStarted():
                await self._finish_reply()
            case ToolCallStarted():
                await self._finish_reply()
                if self._progress_text:
                    self._progress_text = ""
                    self._render_turn_line()
                await log.card(event.call_id, event.name, event.arguments, event.label)
            case SubagentStarted():
                await log.note(
                    Text.assemble(
                        (f"🧩 {event.name} works on: {event.goal}", "cyan"),
                        ("  (its conversation: v on its call in the timeline)", "dim"),
                    )
                )
            case SubagentFinished():
                ended = f"🧩 {event.name} {event.reason}" + (
                    f": {event.error}" if event.error else ""
                )
                await log.note(Text(ended, style="cyan" if event.reason == "answered" else "red"))
            case ContextUsage():
                self._context_text = f"context {short(event.used)} / {short(event.window)}"
                self._render_turn_line()
            case ModelProgress():
                self._progress_text = event.describe()
                self._render_turn_line()
            case ContextCompressed():
                await self._finish_reply()
                await log.note(Text(event.describe()), classes="divider")
                if event.problem:
                    await log.note(Text(event.problem, style="yellow"))
            case ContextNotice():
                await log.note(Text(event.text, style="yellow"))
            case TranscriptFailed():
                await log.note(Text(not_saved(event.reason), style="yellow"))
            case VenvChanged():  # what the project's python runs, unconfined, later
                await log.note(Text(f"⚠ {escape(event.note)}", style="yellow"))
            case CheckpointTaken() | CheckpointSkipped():
                await self.checkpoint_noted(event)
            case ToolCallFinished():
                card = log.cards.get(event.call_id)
                if card is not None:
                    card.finish(
                        event.status,
                        event.duration,
                        event.content,
                        str(event.spilled or "") or None,
                        event.diff,
                    )

    async def checkpoint_noted(self, event: CheckpointTaken | CheckpointSkipped) -> None:
        """One quiet line: a checkpoint taken before a change, or why none was (a failure
        stands out: the change went ahead without one)."""
        from workbench.core.checkpoints.wording import skipped, taken
        from workbench.core.events import CheckpointTaken

        if isinstance(event, CheckpointTaken):
            line = Text(taken(event.checkpoint), style="dim")
        else:
            line = Text(skipped(event.note), style="yellow" if event.failed else "dim")
        log = self._log()
        if log is not None:
            await log.note(line)

    def timeline_changed(self, new_turn: bool = False) -> None:
        """The app wrote the timeline (a call started or ended, a turn began): redraw it; a
        new turn's calls are followed live."""
        try:
            timeline = self.query_one(Timeline)
        except NoMatches:  # the app is closing: a call's last events still arrive
            return
        if new_turn:
            timeline.follow = True
        timeline.changed()

    async def _flush(self) -> None:
        self._flush_timer = None
        text, self._pending = self._pending, ""
        if not text:
            return
        if self.reply is None:
            log = self._log()
            if log is None:
                return
            self.reply = await log.add(AssistantMessage())
        self.reply.add_fragment(text)

    async def _finish_reply(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.stop()
        await self._flush()
        if self.reply is not None:
            self.reply.finish()
            self.reply = None

    def _turn_line(self, finished: TurnFinished) -> None:
        if finished.window:
            self._context_text = f"context {short(finished.context)} / {short(finished.window)}"
        self._turn_text = (
            f"{finished.rounds} round{'s' * (finished.rounds != 1)} · "
            f"{finished.elapsed:.1f} s · ↑ {finished.prompt_tokens:,} in · "
            f"↓ {finished.completion_tokens:,} out"
        )
        self._reason = finished.reason
        self._progress_text = ""
        self._render_turn_line()

    def _render_turn_line(self) -> None:
        # The reason and the context lead: on a narrow pane the token counts are what gets cut.
        parts = [self._progress_text or self._reason, self._context_text, self._turn_text]
        self.query_one("#turn-line", Static).update(
            Text(" · ".join(p for p in parts if p), style="dim")
        )

    @on(Timeline.Selected)
    def _bar_selected(self, message: Timeline.Selected) -> None:
        self.query_one("#call-detail", Static).update(
            describe_bar(message.bar, self.query_one(Timeline))
        )

    @on(ToolCard.ViewRequested)
    def _view_card(self, message: ToolCard.ViewRequested) -> None:
        bar = self.query_one(Timeline).model.by_id.get(message.call_id)
        self._open(bar)

    def _open(self, bar: Bar | None) -> None:
        if bar is not None and bar.spilled:
            self.workbench.open_viewer(bar.spilled)
        elif bar is not None and bar.conversation:
            self.workbench.open_conversation(bar.conversation)
        else:
            self.notify(
                "This result was small enough to keep in the conversation; nothing was spilled."
            )

    def key_v(self) -> None:
        timeline = self.query_one(Timeline)
        if timeline.has_focus and timeline.selected is not None:
            self._open(timeline.model.bars[timeline.selected])


def refused(exc: SessionRefused) -> str:
    """Why the session did not start; after a failure, how to configure a model."""
    return f"{exc}\n{CONFIGURE}" if exc.failed else str(exc)


def describe_bar(bar: Bar, timeline: Timeline) -> Text:
    origin = timeline.model.origin or bar.start
    text = Text()
    text.append(f"{bar.name}", "bold")
    if bar.label:
        text.append(f"  [{bar.label}]", "cyan")
    text.append(f"  {bar.status}\n")
    duration = (bar.end - bar.start) if bar.end is not None else None
    text.append(f"started +{bar.start - origin:.2f}s", "dim")
    text.append(f" · {duration * 1000:.0f} ms\n" if duration is not None else " · running\n", "dim")
    where = "in parallel with others" if bar.parallel else f"alone: {bar.reason or 'a single call'}"
    text.append(f"segment {bar.segment + 1}, {where}\n")
    if bar.conversation and not bar.spilled:
        text.append("v: open its sub-agent's conversation\n", "bold")
        text.append(f"{bar.conversation}\n", "dim")
    if bar.parent:
        text.append(f"called by {bar.label}, for call {bar.parent}\n", "cyan")
    if bar.spilled:  # first, so a small pane still shows where the whole result is
        text.append("v: open the full result\n", "bold")
        text.append(f"{bar.spilled}\n", "dim")
    if bar.diff is not None:
        text.append_text(diff_text(bar.diff))
        text.append("\n")
    if bar.arguments is not None:
        text.append(json.dumps(bar.arguments, indent=2, ensure_ascii=False) + "\n")
    if bar.content:
        content = bar.content if isinstance(bar.content, str) else json.dumps(bar.content)
        text.append("\nresult\n", "dim")
        text.append(head_and_tail(content, 400))
    return text
