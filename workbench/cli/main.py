"""`hermes-tui`: the full-screen workbench, and headless commands over the same core.

Only the chosen command's imports are paid for: the headless commands never import Textual,
and `hermes-tui tools --json` stays a fraction of a second. The workbench itself (no
command, `view`, `serve`) is started through the `Workbench` the entry point hands in
(`workbench/__main__.py`): the command line imports nothing of the Textual front end.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from workbench import __version__
from workbench.core.commands import CommandFailed, Done, plugin_extras, plugin_summary

if TYPE_CHECKING:
    import argparse

    from workbench.core.agent.offered import Costs, ToolCost
    from workbench.core.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Workbench(Protocol):
    """The Textual front end as the command line starts it: each returns the exit status."""

    def run_app(self, view: str | None = None, model_flags: dict[str, str] | None = None) -> int:
        """The workbench in this terminal (a file in the viewer, the model's flags)."""
        ...

    def serve(self, args: argparse.Namespace) -> int:
        """`hermes-tui serve`: the workbench to a web browser."""
        ...


def build_parser() -> argparse.ArgumentParser:
    import argparse  # not for the workbench itself, which `main` starts without a parser

    parser = argparse.ArgumentParser(
        prog="hermes-tui",
        description=(
            "A terminal workbench for the tools of an LLM agent. With no command, opens the "
            "full-screen workbench; the commands below use the same core without a UI."
        ),
        epilog="Configuration lives in $HERMES_HOME/config.yaml (default ~/.hermes).",
    )
    parser.add_argument("--version", action="version", version=f"hermes-tui {__version__}")
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="continue a session (the latest if no ID)",
    )
    from workbench.cli import chat as chat_cli

    chat_cli.add_model_arguments(parser)  # for the workbench's session (and --resume)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    tools = sub.add_parser(
        "tools",
        help="list every tool by source and toolset, with availability, size in tokens and "
        "whether it is sent in full or deferred behind tool_search; switch one tool off or on, "
        "or between sent in full (eager) and deferred (persisted)",
    )
    tools.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "enable", "disable", "defer", "eager", "usage"],
    )
    tools.add_argument(
        "name",
        nargs="?",
        help="tool to enable, disable, defer or send in full (an MCP tool also as server:tool)",
    )
    tools.add_argument("--json", action="store_true", help="machine-readable output (list, usage)")
    tools.add_argument(
        "--dry-run", action="store_true", help="say what it would change per request; save nothing"
    )
    tools.add_argument(
        "--sessions",
        type=_positive,
        default=None,
        metavar="N",
        help="usage: read the last N sessions (default 20)",
    )
    tools.add_argument(
        "--apply",
        metavar="TOOL",
        help="usage: save the suggestion for TOOL (as previewed by `tools usage`)",
    )

    call = sub.add_parser("call", help="call one tool through the same path the agent uses")
    call.add_argument("name", help="tool name, e.g. read_file")
    call.add_argument("--args", default="{}", help="arguments as a JSON object (default: {})")
    call.add_argument("--cwd", default=None, help="working directory for path arguments")
    call.add_argument(
        "--yes",
        action="store_true",
        help="approve what would ask, without asking (hardline commands and what a deny "
        "rule refuses still never run)",
    )

    toolsets = sub.add_parser("toolsets", help="list toolsets, or enable/disable one (persisted)")
    toolsets.add_argument(
        "action", nargs="?", default="list", choices=["list", "enable", "disable"]
    )
    toolsets.add_argument("name", nargs="?", help="toolset to enable or disable")
    toolsets.add_argument("--json", action="store_true", help="machine-readable output (list)")
    toolsets.add_argument(
        "--dry-run", action="store_true", help="say what it would change per request; save nothing"
    )

    plugins = sub.add_parser(
        "plugins",
        help="list plugins, enable/disable one, or pick the memory provider (persisted)",
    )
    plugins.add_argument(
        "action", nargs="?", default="list", choices=["list", "enable", "disable", "memory"]
    )
    plugins.add_argument(
        "name",
        nargs="?",
        help="plugin key, manifest name or folder name (memory: a provider plugin's, or builtin)",
    )
    plugins.add_argument("--json", action="store_true", help="machine-readable output (list)")

    chat = sub.add_parser(
        "chat", help="talk to the model headless: the reply on stdout, tools on stderr"
    )
    chat_cli.add_arguments(chat)
    sessions = sub.add_parser("sessions", help="list past sessions")
    sessions.add_argument("--json", action="store_true", help="machine-readable output")
    export = sub.add_parser("export", help="write a session as Markdown")
    export.add_argument("id", help="session id (or a unique prefix)")
    export.add_argument("-o", "--output", help="file to write (default: stdout)")

    from workbench.cli import mcp as mcp_cli

    mcp = sub.add_parser(
        "mcp", help="MCP servers' resources and prompts: list, resources, read, prompts, prompt"
    )
    mcp_cli.add_arguments(mcp)

    view = sub.add_parser("view", help="open a file (a spilled result, a log) in the result viewer")
    view.add_argument("path", help="the file to view, however large")

    doctor = sub.add_parser(
        "doctor",
        help="check the home dir, config, tool modules, plugins and MCP; `doctor model`: "
        "probe the model endpoint's tool calls",
    )
    doctor.add_argument("what", nargs="?", choices=["model"], help="model: probe the endpoint")
    doctor.add_argument("--json", action="store_true", help="doctor model: the report as JSON")
    doctor.add_argument("--timeout", type=_positive, help="doctor model: seconds per request")
    chat_cli.add_model_arguments(doctor)
    from workbench.cli import approvals as approvals_cli

    approvals = sub.add_parser(
        "approvals",
        help="approval rules: list them, test what a call would meet (runs nothing), suggest",
    )
    approvals_cli.add_arguments(approvals)
    from workbench.cli import replay as replay_cli

    replay = sub.add_parser(
        "replay",
        help="run saved tool calls (YAML case files) and check their results; exit 1 on a failure",
    )
    replay_cli.add_arguments(replay)
    from workbench.cli import trust as trust_cli

    trust = sub.add_parser(
        "trust",
        help="show what changed in the project's plugins and rules (.hermes) since you "
        "trusted it, and trust it after a yes",
        description=(
            "Project plugins and rules (HERMES_ENABLE_PROJECT_PLUGINS=1) are used only as you "
            "last trusted them: what is new or changed since is not loaded until you agree. "
            "This shows each file's diff against the trusted copy and records your yes."
        ),
    )
    trust_cli.add_arguments(trust)
    from workbench.cli import checkpoints as checkpoints_cli

    checkpoints = sub.add_parser(
        "checkpoints",
        help="the working directory's checkpoints: list them, diff one against now, restore",
        description=(
            "Checkpoints are snapshots of the working directory taken before the agent "
            "changes files. A restore first checkpoints the state it replaces (so it can be "
            "undone) and keeps files changed by hand since unless told to overwrite them."
        ),
    )
    checkpoints_cli.add_arguments(checkpoints)

    serve = sub.add_parser(
        "serve",
        help="serve the workbench to a web browser (loopback only unless --host says otherwise)",
        description=(
            "Serve the workbench to a web browser. Each tab runs its own workbench, which runs "
            "commands as you: every request needs the token in the address printed at start."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (8000)")
    serve.add_argument(
        "--token",
        help="the secret every request must carry (default: $HERMES_TUI_SERVE_TOKEN, else "
        "a random one); at least 16 URL-safe characters",
    )
    serve.add_argument(
        "--no-token",
        action="store_true",
        help="serve without a token (refused beyond loopback)",
    )
    serve.add_argument(
        "--public-url",
        help="the address browsers use, if not http://HOST:PORT (a proxy, another name)",
    )
    return parser


def main(argv: list[str] | None = None, workbench: Workbench | None = None) -> int:
    """Run `argv` (this process's arguments if None); `workbench` starts the full-screen
    front end (None: only the headless commands are there, as when a test calls this)."""
    if argv is None:  # this process's own arguments: it is hermes-tui (not a test calling)
        from workbench.core.own_process import harden

        harden()  # its secrets out of /proc before anything starts a child
    if not (sys.argv[1:] if argv is None else argv):  # the workbench: no commands to parse
        return _workbench(workbench).run_app()
    from workbench.cli import chat as chat_cli
    from workbench.cli import mcp as mcp_cli
    from workbench.cli.secret_args import settle

    parser = build_parser()
    args = parser.parse_args(argv)
    settle(args, parser)  # --api-key hidden from `ps`; --api-key-file, `--api-key -` read
    flags = chat_cli.model_flags(args)
    if args.command is None and args.resume is not None:
        # A resumed session continues in this terminal (`hermes-tui chat --resume`).
        args = parser.parse_args(["chat", "--resume", *([args.resume] if args.resume else [])])
        vars(args).update(flags)
    if args.command is None:
        return _workbench(workbench).run_app(model_flags=flags)
    if flags and args.command not in ("chat",):
        parser.error("--model, --base-url and --api-key apply to the workbench and `chat` only")
    if args.command == "view":
        return _workbench(workbench).run_app(view=args.path)
    if args.command == "serve":
        return _workbench(workbench).serve(args)
    if args.command == "trust":  # the project's files and HERMES_HOME's record: no plugins
        from workbench.cli import trust as trust_cli

        return trust_cli.run(args)
    if args.command == "checkpoints":  # the store and config.yaml: no tools, plugins or MCP
        from workbench.cli import checkpoints as checkpoints_cli

        try:
            return checkpoints_cli.run(args)
        except BrokenPipeError:  # `checkpoints diff | head`
            return EXIT_OK
    from workbench.cli import approvals as approvals_cli
    from workbench.cli import replay as replay_cli
    from workbench.core.runtime import load_runtime

    if _runs_plugins(args):
        _keep_stdout(whole_process=argv is None)
    runtime = load_runtime(load_plugins=_runs_plugins(args))
    if argv is None and runtime.plugins is not None:
        _stop_plugins_on_signal(runtime)
    if _needs_mcp(runtime, args):
        _start_mcp(runtime, args)
    handler = {
        "tools": cmd_tools,
        "call": cmd_call,
        "toolsets": cmd_toolsets,
        "plugins": cmd_plugins,
        "doctor": cmd_doctor,
        "chat": chat_cli.run,
        "sessions": chat_cli.list_sessions,
        "export": chat_cli.export,
        "approvals": approvals_cli.run,
        "mcp": mcp_cli.run,
        "replay": replay_cli.run,
    }
    try:
        return handler[args.command](runtime, args)
    except BrokenPipeError:
        return EXIT_OK
    finally:
        runtime.stop()  # MCP servers, and what plugins started as they loaded


def _keep_stdout(whole_process: bool) -> None:
    """A command's stdout is hermes-tui's alone: what plugin code prints goes to the log and
    to the plugin's output (`plugins` lists it). In a process that is hermes-tui, fd 1
    too (os.write(1, ...), sys.__stdout__, the processes a plugin starts); a test calling
    `main` in its own process keeps its fd 1."""
    from workbench.core import own_output

    if whole_process:
        own_output.take_fd(always=True)
    else:
        own_output.route_stdout()


def _stop_plugins_on_signal(runtime: Runtime) -> None:
    """Ended by SIGTERM or SIGHUP (`timeout`, a closed terminal), hermes-tui still stops
    what plugins started as they loaded, then ends as the signal says."""
    import os
    import signal

    def stop(number: int, _frame: object) -> None:
        if runtime.plugins is not None:
            runtime.plugins.stop()
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)

    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, stop)


def _needs_mcp(runtime: Runtime, args: argparse.Namespace) -> bool:
    """Only what shows or calls MCP tools starts the servers: `call read_file` never waits
    for a server that does not answer."""
    if not runtime.config.get("mcp_servers"):
        return False
    if args.command == "call":
        return runtime.registry.get_entry(args.name) is None  # maybe one of theirs
    if args.command == "approvals":
        from workbench.cli import approvals as approvals_cli

        return approvals_cli.needs_mcp(args)
    if args.command == "replay":
        from workbench.cli import replay as replay_cli

        return replay_cli.needs_mcp(args)
    return args.command in ("tools", "doctor", "chat")


def _start_mcp(runtime: Runtime, args: argparse.Namespace) -> None:
    """Start the servers and wait a bounded time (`mcp_discovery_timeout`, default 10 s) for
    them; name each one still not ready and what it has not answered."""
    from workbench.core.mcp.names import tool_name

    wait = runtime.config.get("mcp_discovery_timeout")
    manager = runtime.start_mcp(on_event=_say_asks)
    if manager is None:
        return
    if args.command == "tools" and args.action == "list":  # its sizes: counted meanwhile
        from workbench.core.costs import start_tokenizer

        start_tokenizer(runtime)
    only = None
    if args.command == "call":  # only the server that would own the tool
        only = [c.name for c in manager.configs if args.name.startswith(tool_name(c.name, ""))]
    elif args.command in ("chat", "replay"):  # a lazy server joins when it is ready
        only = [c.name for c in manager.configs if not c.lazy]
    settled = manager.wait_settled(
        float(wait) if isinstance(wait, int | float) and wait > 0 else 10.0, only
    )
    if not settled and args.command in ("call", "chat", "replay"):  # tools, doctor list them
        for status in manager.statuses():
            if status.state in ("starting", "reconnecting") and (
                only is None or status.name in only
            ):
                _err(f"MCP server {status.name} is not ready: {status.error or status.state}")


def _say_asks(event: object) -> None:
    """With no UI, a server's question is declined or refused: say so, not silently."""
    from workbench.core.events import AskSettled

    if isinstance(event, AskSettled):
        what = "asked for input" if event.kind == "elicitation" else "asked for a completion"
        _err(f"MCP server {event.server} {what}: {event.outcome} ({event.why})")


def _runs_plugins(args: argparse.Namespace) -> bool:
    """Whether the command needs plugin code: disabling one, or reading sessions, never
    does, so a plugin that hangs or kills its process can always be switched off."""
    if args.command in ("sessions", "export", "mcp"):
        return False
    if args.command == "approvals":
        from workbench.cli import approvals as approvals_cli

        return approvals_cli.runs_plugins(args)
    return not (args.command == "plugins" and args.action == "disable")


def _workbench(given: Workbench | None) -> Workbench:
    if given is None:
        _err("this entry has no full-screen workbench; run `hermes-tui` or `python -m workbench`")
        raise SystemExit(EXIT_USAGE)
    return given


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return value


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")


# -- tools -------------------------------------------------------------------------


def cmd_tools(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.commands import set_deferred, set_tool
    from workbench.core.costs import offered_costs
    from workbench.core.report import collect_problems, tool_rows, toolset_rows
    from workbench.core.tools.deferral import ToolSearchSettings

    if args.action == "usage":
        from workbench.cli import usage as usage_cli

        return usage_cli.run(runtime, args)
    if args.action != "list":
        if not args.name:
            _err(f"tools {args.action} needs a tool name")
            return EXIT_USAGE
        on = args.action in ("enable", "defer")
        kind = "tool" if args.action in ("enable", "disable") else "defer"
        if args.dry_run:
            return _dry_run(runtime, kind, args.name, on)
        if kind == "defer":
            code = _report(lambda: set_deferred(runtime, args.name, on))
            auto = ToolSearchSettings.from_config(runtime.config).enabled == "auto"
            held = offered_costs(runtime) if code == EXIT_OK and on and auto else None
            if held is not None and args.name in held.held:
                # auto defers only when the request gets smaller: say so when it does not
                _err(f"note: {held.describe_deferral().removeprefix('; ')}")
            return code
        return _report(lambda: set_tool(runtime, args.name, on))
    rows, costs = tool_rows(runtime), offered_costs(runtime)
    for row in rows:
        cost = costs.tools.get(row["name"])
        row["tokens"] = cost.tokens if cost is not None else None
        row["state"] = cost.state.value if cost is not None and cost.offered else None
        row["per_request"] = cost.per_request if cost is not None and cost.offered else 0
    if args.json:
        offered = {
            "tools": [c.name for c in costs.offered],
            "tokens": costs.total,
            "tokenizer": costs.tokenizer,
            "exact": costs.exact,
            "deferral": {
                "states": {c.name: c.state.value for c in costs.offered},
                "per_request": {c.name: c.per_request for c in costs.offered},
                "deferred": [c.name for c in costs.deferred],
                "bridge_tokens": costs.bridge,
                "listing": costs.listing_form,
                "tokens_all_eager": costs.undeferred,
                # auto's deferrable tools sent in full (deferring them adds tokens), and why
                "held": list(costs.held),
                "reason": costs.held_reason or None,
                "warnings": list(costs.warnings),
            },
        }
        problems = collect_problems(runtime)
        _out(json.dumps({"tools": rows, "offered": offered, "problems": problems}, indent=2))
        return EXIT_OK
    enabled = {r["name"]: r["enabled"] for r in toolset_rows(runtime)}
    _print_tools(rows, costs, enabled)
    for problem in [*costs.warnings, *collect_problems(runtime)]:
        _err(problem)
    return EXIT_OK


def _own_row(cost: ToolCost) -> dict:
    """A row for one of the agent's own tools or the memory provider's (no registry row)."""
    lean = None if cost.offered else "not offered: the lean profile"
    return {"name": cost.name, "toolset": cost.toolset, "source": cost.source,
            "available": True, "reason": None, "tokens": cost.tokens, "enabled": cost.offered,
            "switched_off": lean, "state": cost.state.value if cost.offered else None}  # fmt: skip


def _print_tools(rows: list[dict], costs: Costs, enabled: dict[str, bool]) -> None:
    """By source and toolset, each with its size in tokens; then what the model gets."""
    from workbench.core.agent.context import short
    from workbench.core.agent.offered import AGENT, MEMORY

    by_source: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        by_source.setdefault(row["source"], {}).setdefault(row["toolset"], []).append(row)
    for cost in costs.tools.values():  # the agent's own tools and the memory provider's
        if cost.source in (AGENT, MEMORY):
            by_source.setdefault(cost.source, {}).setdefault(cost.toolset, []).append(
                _own_row(cost)
            )
    width = max((len(name) for name in costs.tools), default=0)
    for source, toolsets in sorted(by_source.items()):
        count = sum(len(v) for v in toolsets.values())
        _out(f"{source} ({_tools(count)}, {short(costs.source(source))} tokens)")
        for toolset, items in sorted(toolsets.items()):
            state = "" if enabled.get(toolset, True) else "  [disabled]"
            _out(f"  {toolset} ({len(items)}){state}  {short(costs.toolset(toolset))} tokens")
            for row in items:
                mark = "✔" if row["available"] else "✖"
                size = short(row["tokens"]) if row["tokens"] is not None else "?"
                off = f"  [{row['switched_off']}]" if row["switched_off"] else ""
                why = f"  — {row['reason']}" if row["reason"] else ""
                said = row.get("state") if costs.deferred else None  # nothing deferred: no word
                state = f"  {STATE_WORDS[said]}" if said else ""
                state = "  sent in full (auto: see below)" if row["name"] in costs.held else state
                _out(f"    {mark} {row['name']:<{width}} {size:>6}{state}{off}{why}")
    _out(
        f"\noffered to the model: {_tools(len(costs.offered))} · {short(costs.total)} tokens "
        f"each request ({costs.describe()})"
    )


# How each state is said beside a tool's size (core.tools.deferral.ToolState).
STATE_WORDS = {
    "eager": "sent in full",
    "listed": "deferred, listed",
    "searchable": "deferred, search only",
}


def _tools(count: int) -> str:
    return f"{count} tool" + ("" if count == 1 else "s")


# -- call --------------------------------------------------------------------------


def cmd_call(runtime: Runtime, args: argparse.Namespace) -> int:
    import asyncio
    from pathlib import Path

    from workbench.core.execution.approval import ApprovalBroker
    from workbench.core.execution.kept import CallKeeper, saving, watching
    from workbench.core.plugins.lifecycle import one_call_session
    from workbench.core.tools.invoke import suggest_tools

    for trust, changes in runtime.untrusted(args.cwd):  # `call` never asks: said, not loaded
        _err(trust.not_loaded(changes))
    if runtime.registry.get_entry(args.name) is None:
        close = suggest_tools(runtime.registry, args.name)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        _err(f"unknown tool '{args.name}'.{hint} (`hermes-tui tools` lists them)")
        return EXIT_USAGE
    availability = runtime.registry.availability(args.name)
    # a tool switched off is refused by the executor, which names the switch (as replay does)
    if not availability.available and args.name not in runtime.off_tools():
        _err(f"tool '{args.name}' is unavailable: {availability.reason}")
        return EXIT_FAILED
    broker = ApprovalBroker.from_config(  # the rules of the project the call runs in
        runtime.config,
        mode="off" if args.yes else None,
        project=Path(args.cwd) if args.cwd else None,
        asker=runtime.asker,
    )
    if broker.mode_note:  # Hermes's `smart`: what it is here instead, said once
        _err(f"hermes-tui: {broker.mode_note}")
    if sys.stdin.isatty():
        from workbench.cli.prompt import TerminalPrompt

        broker.attach(TerminalPrompt(broker))
    executor = runtime.executor(broker=broker, cwd=args.cwd)
    executor.on_event = watching(CallKeeper(saving(runtime.history), "call"), None)
    call = {"id": "cli", "name": args.name, "arguments": args.args}
    try:
        with one_call_session(runtime.hooks, executor.session_id):  # the plugins' session
            (outcome,) = asyncio.run(executor.run([call]))
    finally:
        executor.shutdown()
    content = outcome.content
    _out(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    if outcome.spilled is not None:
        _err(f"the full result is in {outcome.spilled}")
    return EXIT_OK if outcome.status == "ok" else EXIT_FAILED


# -- toolsets ----------------------------------------------------------------------


def cmd_toolsets(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.commands import set_toolset

    if args.action == "list":
        from workbench.core.report import toolset_rows

        rows = toolset_rows(runtime)
        if args.json:
            _out(json.dumps({"toolsets": rows, "effective": runtime.effective_tools()}, indent=2))
            return EXIT_OK
        for row in rows:
            mark = "[x]" if row["enabled"] else "[ ]"
            via = f" (on with {', '.join(row['via'])})" if row["via"] else ""
            _out(f"{mark} {row['name']:<20} {row['source']:<8} {', '.join(row['tools'])}{via}")
        _out(f"\n{len(runtime.effective_tools())} tools offered to the model")
        return EXIT_OK
    if not args.name:
        _err(f"toolsets {args.action} needs a toolset name")
        return EXIT_USAGE
    if args.dry_run:
        return _dry_run(runtime, "toolset", args.name, args.action == "enable")
    return _report(lambda: set_toolset(runtime, args.name, args.action == "enable"))


def _dry_run(runtime: Runtime, kind: str, name: str, enabled: bool) -> int:
    """What switching a tool or a toolset would change on every request; nothing is saved."""
    from workbench.core.agent.context import short, signed
    from workbench.core.costs import offered_costs, preview_defer, preview_tool, preview_toolset

    costs = offered_costs(runtime)
    previews: dict[str, Callable[..., int]] = {
        "toolset": preview_toolset,
        "tool": preview_tool,
        "defer": preview_defer,
    }
    try:
        change = previews[kind](runtime, costs, name, enabled)
    except CommandFailed as exc:
        _err(exc.message)
        return EXIT_USAGE if exc.usage else EXIT_FAILED
    what = (
        f"tool {name} {'deferred' if enabled else 'sent in full'}"
        if kind == "defer"
        else f"{kind} {name} {'on' if enabled else 'off'}"
    )
    _out(
        f"{what}: {signed(change)} tokens each request "
        f"({short(costs.total)} now, {short(costs.total + change)} then; {costs.describe()}); "
        "nothing was saved"
    )
    return EXIT_OK


def _report(command: Callable[[], Done]) -> int:
    """Run one of the core's commands: its sentence on stdout, or why not on stderr."""
    try:
        done = command()
    except CommandFailed as exc:
        _err(exc.message)
        return EXIT_USAGE if exc.usage else EXIT_FAILED
    _out(done.message)
    return EXIT_OK if done.ok else EXIT_FAILED


# -- plugins -----------------------------------------------------------------------


def plugin_rows(runtime: Runtime) -> list[dict]:
    from workbench.core.plugins.hooks import hook_rows
    from workbench.core.report import plugin_conflicts

    rows = []
    for state in runtime.plugins.list() if runtime.plugins else []:
        m = state.manifest
        rows.append(
            {
                "key": state.key,
                "name": m.name,
                "source": m.source,
                "version": m.version,
                "description": m.description,
                "path": str(m.path or m.entry_point),
                "kind": m.kind,
                "enabled": state.enabled,
                "status": state.status,
                "error": state.error or None,
                "tools": state.tools,
                "refused": [{"tool": n, "reason": r} for n, r in state.refused],
                "hooks": hook_rows(state.hooks),  # each with whether hermes-tui runs it
                "middleware": state.middleware,
                "commands": state.commands,
                "cli_commands": state.cli_commands,
                "skills": state.skills,
                "other": state.other,
                "problems": m.problems + state.warnings,
                # what it declares that would replace a package hermes-tui needs
                "conflicts": plugin_conflicts(m),
                "last_change": state.last_change,
                # what its code printed (never on hermes-tui's stdout), and what it started
                "output": state.output,
                "processes": [
                    {"pid": c.pid, "command": c.command, "running": c.running}
                    for c in state.processes
                ],
            }
        )
    return rows


def cmd_plugins(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.commands import SourceAction, act_on_source
    from workbench.core.printable import escape
    from workbench.core.report import plugin_conflicts
    from workbench.core.runtime import plugin_manager, safe_mode

    if runtime.plugins is None:  # safe mode, or `plugins disable`: the list, none of the code
        why = "HERMES_SAFE_MODE is set" if safe_mode() else "not needed to disable a plugin"
        runtime.plugins = plugin_manager(runtime, not_loading=why)
    if args.action == "list":
        rows = plugin_rows(runtime)
        if args.json:
            _out(json.dumps({"plugins": rows}, indent=2))
            return EXIT_OK
        if not rows:
            _out(f"no plugins found (directory plugins go in {runtime.home / 'plugins'})")
        for state in runtime.plugins.list():
            mark = "[x]" if state.enabled else "[ ]"
            _out(f"{mark} {state.key:<24} {state.manifest.source:<10} {plugin_summary(state)}")
            for line in plugin_extras(state):
                _out(f"      {line}")
            for conflict in plugin_conflicts(state.manifest):  # as plugins --json and doctor
                _out(f"      conflict: {escape(conflict)}")
        return EXIT_OK
    if args.action == "memory":
        return _select_memory(runtime, args.name)
    if not args.name:
        _err(f"plugins {args.action} needs a plugin key")
        return EXIT_USAGE
    action = SourceAction(args.action)
    return _report(lambda: act_on_source(runtime, action, args.name))


def _select_memory(runtime: Runtime, name: str | None) -> int:
    """Show the memory provider, or make `name` the one (persisted)."""
    from workbench.core.commands import memory_choices, select_memory

    if not name:
        choices = ", ".join(memory_choices(runtime))
        _out(f"memory provider: {runtime.memory.active_name} (choices: {choices})")
        return EXIT_OK
    return _report(lambda: select_memory(runtime, name))


# -- doctor ------------------------------------------------------------------------


def cmd_doctor(runtime: Runtime, args: argparse.Namespace) -> int:
    if getattr(args, "what", None) == "model":
        return cmd_doctor_model(runtime, args)

    from workbench.core.report import (
        agent_toolsets_left_out,
        collect_problems,
        home_exposure,
        home_io_problem,
        not_in_hermes_tui,
    )

    home = runtime.home
    io_problem = home_io_problem(home)
    private = "private" if not home_exposure(home) else "READABLE BY OTHERS"
    _out(f"home      {home} ({'NOT usable' if io_problem else 'writable'}, {private})")
    try:
        config_state = "ok" if runtime.config.path.exists() else "missing (defaults in use)"
    except OSError as exc:
        config_state = f"cannot be read: {exc.strerror or exc}"
    if runtime.config.untrusted:
        config_state = "NOT TRUSTED (see the problems below)"
    _out(f"config    {runtime.config.path}: {runtime.config.error or config_state}")
    model_line, model_problems = _model_report(runtime)
    _out(model_line)
    tools, modules = len(runtime.registry.snapshot()), len(runtime.discovery.loaded)
    offered = len(runtime.effective_tools())
    _out(f"tools     {tools} registered from {modules} modules, {offered} offered")
    for failure in runtime.discovery.failed:
        _out(f"          FAILED {failure.module}: {failure.error}")
    for name, reason in sorted(
        (n, a.reason) for n, a in runtime.registry.availability_report().items() if not a.available
    ):
        _out(f"          unavailable {name}: {reason}")
    if elsewhere := not_in_hermes_tui(runtime):  # named once: not a problem, Hermes's own
        _out(
            f"toolsets  not in hermes-tui: {', '.join(elsewhere)} (Hermes's, named in "
            "config.yaml: kept there for Hermes, nothing to offer here)"
        )
    if left_out := agent_toolsets_left_out(runtime):
        _out(
            f"toolsets  the agent's own off: {', '.join(left_out)} (platform_toolsets.cli "
            f"does not name them; `hermes-tui toolsets enable {left_out[0]}` switches one on)"
        )
    for line in _terminal_report(runtime) + _sources_report(runtime) + _approvals_report(runtime):
        _out(line)
    problems = ([io_problem] if io_problem else []) + model_problems + collect_problems(runtime)
    problems += _rule_problems(runtime)
    _out("")
    _out("no problems found" if not problems else f"{len(problems)} problem(s):")
    for problem in problems:
        _out(f"  - {problem}")
    return EXIT_FAILED if problems else EXIT_OK


def cmd_doctor_model(runtime: Runtime, args: argparse.Namespace) -> int:
    """The model probe (core.probe): fails when a request got no call the agent can use."""
    import asyncio
    import os

    from workbench.cli import chat as chat_cli
    from workbench.core import probe
    from workbench.core.model.settings import ModelConfigError, resolve

    try:
        flags: dict[str, Any] = dict(chat_cli.model_flags(args))
        settings = resolve(runtime.config, **flags)
    except ModelConfigError as exc:
        _err(f"the model cannot be used: {exc}")
        return EXIT_USAGE

    def say(finding: probe.Finding) -> None:
        _out(f"{finding.label:<22} {finding.kind:<14} {finding.detail}")

    if not args.json:
        _out(f"model     {settings.describe()}")
    report = asyncio.run(
        probe.run(
            runtime, settings, timeout=args.timeout, cwd=os.getcwd(),
            on_finding=None if args.json else say,
        )
    )  # fmt: skip
    if args.json:
        _out(probe.dumps(report))
    else:
        _out("")
        for line in report.advice:
            _out(f"- {line}")
    usable = ("native", "text")  # a call written as text is run as well
    return EXIT_OK if all(f.kind in usable for f in report.findings) else EXIT_FAILED


def _model_report(runtime: Runtime) -> tuple[str, list[str]]:
    """Which model a session would use and why, and what keeps the configured one from use."""
    from workbench.core.model import envfile
    from workbench.core.model.settings import ModelConfigError, resolve

    dotenv = envfile.load(runtime.home)
    problems = list(dotenv.problems)
    try:
        line = f"model     {resolve(runtime.config, dotenv=dotenv.values).describe()}"
    except ModelConfigError as exc:
        line = f"model     CANNOT BE USED: {exc}"
        problems.insert(0, f"model: {exc}")
    return line, problems


def _terminal_report(runtime: Runtime) -> list[str]:
    """Where commands and file tools run, and what environment a command gets."""
    backend = runtime.backend()
    passed = ", ".join(backend.passthrough) or "nothing"
    return [
        f"terminal  {backend.describe()}",
        f"          environment: the allowlist (PATH, HOME, locale, TERM, ...) + {passed} "
        "(terminal.env_passthrough); API keys are never passed on",
    ]


def _sources_report(runtime: Runtime) -> list[str]:
    """What is configured for MCP, and the state of every plugin."""
    statuses = runtime.mcp.statuses() if runtime.mcp is not None else []
    lines = [f"mcp       {len(statuses)} server(s) configured"]
    for st in statuses:
        detail = f"ready, {st.tools} tool(s), {st.transport}" if st.state == "ready" else st.state
        lines.append(f"          {st.name}: {detail}" + (f" — {st.error}" if st.error else ""))
        lines += [f"            stderr: {line}" for line in st.stderr_tail[-3:]]
        lines += [f"            refused {name}: {why}" for name, why in st.refused]
        lines += [f"            {warning}" for warning in st.warnings]
    if runtime.plugins is None:
        return [*lines, "plugins   not loaded (HERMES_SAFE_MODE)"]
    states = runtime.plugins.list()
    lines.append(
        f"plugins   {len(states)} found, {sum(s.status == 'loaded' for s in states)} loaded"
    )
    for state in states:
        lines.append(f"          {state.key} ({state.manifest.source}): {plugin_summary(state)}")
    return lines


def _rule_problems(runtime: Runtime) -> list[str]:
    from workbench.core.policy import RuleBook

    return [f"approval rule: {p}" for p in RuleBook(runtime.config).policy.problems]


def _approvals_report(runtime: Runtime) -> list[str]:
    from workbench.core.execution.approval import ApprovalBroker
    from workbench.core.runtime import write_roots

    broker = ApprovalBroker.from_config(runtime.config)
    roots = write_roots(runtime.config)
    policy = broker.book.policy
    lines = [
        f"approvals mode {broker.mode}, {broker.timeout:g}s to answer (then denied), "
        f"{len(policy.rules)} rule(s) (`hermes-tui approvals list`)",
        "          writes outside the working directory ask"
        + (f", except under {', '.join(roots)} (approvals.write_roots)" if roots else ""),
    ]
    if broker.mode_note:  # Hermes's `smart`: said, not a problem (ask is the safer one)
        lines.append(f"          {broker.mode_note}")
    lines += [f"          {line}" for line in policy.notes]
    return lines


if __name__ == "__main__":
    sys.exit(main())
