"""`hermes-tui chat`: the agent in a plain terminal (a script, CI, or a quick question).

The reply streams to stdout; tool activity, approvals and the turn's usage go to stderr.
With a prompt it runs one turn; without one it reads prompts line by line until EOF.
Ctrl-C cancels the running turn (the stream and the tool calls stop).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from workbench.cli.lines import Lines
    from workbench.core.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_CANCELLED = 0, 1, 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", nargs="?", help="one prompt (omit for a conversation on stdin)")
    parser.add_argument(
        "--resume", nargs="?", const="", metavar="ID", help="continue a session (latest if no ID)"
    )
    add_model_arguments(parser)
    parser.add_argument("--max-rounds", type=int, help="tool-call rounds before a final answer")
    parser.add_argument("--cwd", help="working directory for the tools")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="approve what would ask, without asking (never hardline commands or what a deny "
        "rule refuses)",
    )


MODEL_FLAGS = ("model", "base_url", "api_key")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """--model, --base-url and --api-key, for `chat` and the full-screen app alike.

    No defaults are set: a subcommand's parser would otherwise overwrite a value given
    before the subcommand's name.
    """
    import argparse

    unset = argparse.SUPPRESS
    parser.add_argument("--model", default=unset, help="model name (overrides config.yaml)")
    parser.add_argument(
        "--base-url",
        default=unset,
        help="OpenAI-compatible endpoint (overrides model.provider, model.base_url and "
        "OPENAI_BASE_URL)",
    )
    parser.add_argument(
        "--api-key",
        default=unset,
        help="API key for the endpoint (overrides the configured one); `-` reads it from "
        "stdin (one line; asked without echo at a terminal). Hidden from `ps` once parsed; "
        "--api-key-file or `-` never show it",
    )
    from workbench.cli.secret_args import add_key_file_argument

    add_key_file_argument(parser)


def model_flags(args: argparse.Namespace) -> dict[str, str]:
    """The model arguments given on the command line (only those given)."""
    return {k: v for k in MODEL_FLAGS if (v := getattr(args, k, None))}


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class Printer:
    """Turns the agent's events into terminal output."""

    def __init__(self) -> None:
        self._progress = ""  # the last progress line said (the same is not said twice)

    def __call__(self, event: object) -> None:  # any of the session's: those below are shown
        from workbench.core.agent.transcript import not_saved
        from workbench.core.checkpoints import wording as checkpoints_text
        from workbench.core.events import (
            CheckpointSkipped,
            CheckpointTaken,
            ContextCompressed,
            ContextNotice,
            ModelProgress,
            TextDelta,
            ToolCallFinished,
            ToolCallStarted,
            TranscriptFailed,
            VenvChanged,
        )
        from workbench.core.printable import escape

        match event:
            case TextDelta(text=text):
                sys.stdout.write(text)
                sys.stdout.flush()
            case ModelProgress():
                line = event.describe()
                if line != self._progress:
                    self._progress = line
                    _err(f"  … {line}")
            case ToolCallStarted():
                args = (
                    json.dumps(event.arguments, ensure_ascii=False)
                    if event.arguments is not None
                    else ""
                )
                parallel = " (parallel)" if event.parallel else ""
                _err(f"\n  ⚙ {event.name} {args[:200]}{parallel}")
            case ContextCompressed():
                _err(f"\n  ──── {event.describe()} ────")
                if event.problem:
                    _err(f"  ! {event.problem}")
            case ContextNotice():
                _err(f"\n  ! {event.text}")
            case TranscriptFailed():
                _err(f"\nhermes-tui: {not_saved(event.reason)}")
            case CheckpointTaken():
                _err(f"  {checkpoints_text.taken(event.checkpoint)}")
            case CheckpointSkipped():
                _err(f"  {checkpoints_text.skipped(event.note)}")
            case VenvChanged():
                _err(f"  ! {escape(event.note)}")
            case ToolCallFinished():
                mark = "✔" if event.status == "ok" else "✖"
                note = f" → {event.spilled}" if event.spilled else ""
                _err(f"  {mark} {event.name} {event.status} {event.duration * 1000:.0f} ms{note}")


def run(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.model.settings import ModelConfigError, resolve
    from workbench.core.session import ChatSession, SessionError

    flags: dict[str, Any] = dict(model_flags(args))
    if args.max_rounds:
        flags["max_rounds"] = args.max_rounds
    try:
        settings = resolve(runtime.config, **flags)
    except ModelConfigError as exc:
        _err(f"hermes-tui: the model cannot be used: {exc}")
        return 2
    from workbench.cli.lines import Lines

    lines = Lines(runtime.asker)  # stdin's one reader: prompts, approvals and clarify
    broker = _broker(runtime, args.yes, args.cwd, lines)
    try:
        session = ChatSession(
            runtime,
            settings,
            broker=broker,
            on_event=Printer(),
            resume=args.resume,
            cwd=args.cwd,
        )
    except SessionError as exc:
        _err(f"hermes-tui: {exc}")
        return 2
    return asyncio.run(_converse(session, args.prompt, lines))


def _broker(runtime: Runtime, yes: bool, cwd: str | None, lines: Lines) -> Any:
    from pathlib import Path

    from workbench.core.execution.approval import ApprovalBroker

    # the rules of the project the tools run in, not of the folder the command started in
    project = Path(cwd) if cwd else None
    broker = ApprovalBroker.from_config(
        runtime.config, mode="off" if yes else None, project=project, asker=runtime.asker
    )
    if sys.stdin.isatty():
        from workbench.cli.prompt import TerminalPrompt, TerminalQuestion
        from workbench.cli.trust import TerminalTrust
        from workbench.core.asking import AskKind

        broker.attach(TerminalPrompt(broker, lines))
        runtime.asker.attach(TerminalQuestion(runtime.asker, lines), [AskKind.CLARIFY])
        runtime.asker.attach(TerminalTrust(runtime.asker, lines), [AskKind.TRUST])
    runtime.broker = broker
    return broker


async def _converse(session: Any, prompt: str | None, lines: Lines) -> int:
    from workbench.core.agent.context import short

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, session.cancel)
    code, failed = EXIT_OK, False
    try:
        where = session.executor.backend or session.runtime.backend()  # confined or not, said
        _err(f"[{session.settings.describe()} · session {session.id} · {where.label()}]")
        for note in session.notes:
            _err(f"hermes-tui: {note}")
        await _trust(session)
        await session.start()
        prompts = [prompt] if prompt else None
        while True:
            text = (
                prompts.pop(0)
                if prompts
                else (None if prompts is not None else await _read_prompt(lines))
            )
            if not text:
                break
            finished = await session.turn(text)
            sys.stdout.write("\n")
            context = (
                f" · context {short(finished.context)} / {short(finished.window)}"
                if finished.window
                else ""
            )
            _err(
                f"[{finished.reason} · {finished.prompt_tokens} in / {finished.completion_tokens} out tokens · "
                f"{finished.elapsed:.1f} s · {finished.rounds} round(s){context}]"
            )
            if finished.error:
                _err(f"hermes-tui: {finished.error}")
            code = {"error": EXIT_FAILED, "cancelled": EXIT_CANCELLED}.get(finished.reason, EXIT_OK)
            failed = failed or finished.reason == "error"  # a later good turn does not undo it
            if prompts is not None:
                break
    except Exception as exc:
        _err(f"hermes-tui: {exc}")
        code = EXIT_FAILED
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await session.close()
        if not session.transcript.failure:  # nothing to resume from otherwise
            _err(f"[resume with: hermes-tui chat --resume {session.id}]")
    return EXIT_FAILED if failed else code


async def _trust(session: Any) -> None:
    """Project plugins and rules not as the person last trusted them: asked on a terminal
    (loaded after a yes), said and left out otherwise."""
    from workbench.core.asking import AskKind
    from workbench.core.trust import ask_to_trust

    runtime = session.runtime
    for trust, changes in runtime.untrusted(session.cwd):
        asked = runtime.asker.can_ask(AskKind.TRUST)
        timeout = session.broker.timeout if session.broker is not None else 60.0
        if asked and await ask_to_trust(runtime.asker, trust, timeout):
            await asyncio.to_thread(runtime.trusted_now)
            _err(f"hermes-tui: trusted {trust.project}/.hermes; its plugins and rules are loaded")
        else:
            _err(f"hermes-tui: {trust.not_loaded(changes)}")


async def _read_prompt(lines: Lines) -> str | None:
    tty = sys.stdin.isatty()
    line = await lines.line(lambda: _err("\n> ") if tty else None)
    return line.strip() or None if line else None


def list_sessions(runtime: Runtime, args: argparse.Namespace) -> int:
    import time

    from workbench.core.agent.transcript import list_sessions as sessions

    problems: list[str] = []
    found = sessions(runtime.home, problems)
    for problem in problems:
        _err(f"hermes-tui: {problem}")
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": s.id,
                        "started": s.started,
                        "updated": s.updated,
                        "turns": s.turns,
                        "title": s.title,
                        "model": s.model,
                    }
                    for s in found
                ],
                indent=2,
            )
        )
        return EXIT_OK
    if not found:
        print("no sessions yet (start one with `hermes-tui chat`)")
    for s in found:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated))
        print(f"{s.id}  {when}  {s.turns:>3} turn(s)  {s.title}")
    return EXIT_OK


def export(runtime: Runtime, args: argparse.Namespace) -> int:
    from pathlib import Path

    from workbench.core.agent.transcript import export_markdown, find, read

    path = find(runtime.home, args.id)
    if path is None:
        _err(f"hermes-tui: no session matches '{args.id}' (see `hermes-tui sessions`)")
        return 2
    try:
        records = read(path)
    except OSError as exc:
        _err(f"hermes-tui: cannot read {path}: {exc.strerror or exc}")
        return 1
    if records.skipped:
        _err(f"hermes-tui: {records.skipped} damaged line(s) of {path.name} were left out")
    text = export_markdown(records)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        _err(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK
