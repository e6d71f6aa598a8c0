"""`hermes-tui mcp ...`: a server's resources and prompts, headless.

Only the servers a command names are started, each bounded by `--timeout`. Usage errors (an
unknown server, URI or prompt, arguments that are not JSON) exit 2; a server that cannot be
reached or does not answer in time exits 1 with what it was waiting for.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.mcp import MCPManager
    from workbench.core.mcp.server import ServerStatus
    from workbench.core.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_TIMEOUT = 30.0


class Failed(Exception):
    """Said on stderr; `code` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text)
        command.add_argument("--json", action="store_true", help="machine-readable output")
        command.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            help=f"seconds to wait for the server (default {DEFAULT_TIMEOUT:g})",
        )
        return command

    action("list", "every configured server: state, info, what it offers")
    action("resources", "a server's resources and resource templates").add_argument("server")
    read = action("read", "read one resource (text as is, JSON pretty, binary as size and type)")
    read.add_argument("server")
    read.add_argument("uri")
    action("prompts", "a server's prompts and their arguments").add_argument("server")
    prompt = action("prompt", "get one prompt's messages")
    prompt.add_argument("server")
    prompt.add_argument("name")
    prompt.add_argument("--args", default="{}", help="the prompt's arguments as a JSON object")


def run(runtime: Runtime, args: argparse.Namespace) -> int:
    from workbench.core.mcp import MCPManager
    from workbench.core.mcp.config import parse_servers

    configs = parse_servers(runtime.config.get("mcp_servers"))
    wanted = getattr(args, "server", None)
    if args.timeout <= 0:
        return _fail(Failed("--timeout must be a positive number of seconds", EXIT_USAGE))
    if wanted is not None and wanted not in {c.name for c in configs}:
        known = ", ".join(c.name for c in configs) or "none configured"
        return _fail(Failed(f"no MCP server named {wanted!r} (servers: {known})", EXIT_USAGE))
    arguments = None
    if args.mcp_command == "prompt":
        try:
            arguments = json.loads(args.args)
        except ValueError as exc:
            return _fail(Failed(f"--args is not valid JSON: {exc}", EXIT_USAGE))
    manager = MCPManager(
        runtime.registry,
        [c for c in configs if wanted is None or c.name == wanted],
        log_dir=runtime.home / "logs",
    )
    manager.start()
    try:
        return _dispatch(manager, args, arguments)
    except Failed as failure:
        return _fail(failure)
    finally:
        manager.stop()


def _dispatch(manager: MCPManager, args: argparse.Namespace, arguments: Any) -> int:
    deadline = time.monotonic() + args.timeout
    statuses = _settle(manager, deadline)
    if args.mcp_command == "list":
        return _list(statuses, args.json)
    status = statuses[0]
    if status.state != "ready":
        raise Failed(_not_ready(status, args.timeout))
    if args.mcp_command == "resources":
        return _resources(status, args.json)
    if args.mcp_command == "prompts":
        return _prompts(status, args.json)
    left = max(0.1, deadline - time.monotonic())
    if args.mcp_command == "read":
        return _read(manager, status, args.uri, left, args.json)
    return _prompt(manager, status, args.name, arguments, left, args.json)


def _settle(manager: MCPManager, deadline: float) -> list[ServerStatus]:
    """Wait for each server's first connect and first listing, until the deadline."""
    manager.wait_settled(max(0.0, deadline - time.monotonic()))
    while time.monotonic() < deadline:
        statuses = manager.statuses()
        if all(s.state != "ready" or s.catalog.listed for s in statuses):
            return statuses
        time.sleep(0.02)
    return manager.statuses()


def _not_ready(status: ServerStatus, timeout: float) -> str:
    if status.state in ("starting", "reconnecting"):
        waiting = status.error.split(" (gives up after")[0]
        return f"MCP server {status.name} did not answer within {timeout:g} s (--timeout)" + (
            f": {waiting}" if waiting else ""
        )
    return f"MCP server {status.name} is {status.state}" + (
        f": {status.error}" if status.error else ""
    )


def _list(statuses: list[ServerStatus], as_json: bool) -> int:
    code = EXIT_OK if all(s.state in ("ready", "disabled") for s in statuses) else EXIT_FAILED
    if as_json:
        _out(json.dumps([_status_dict(s) for s in statuses], indent=2, ensure_ascii=False))
        return code
    if not statuses:
        _out("No MCP servers configured (mcp_servers in config.yaml).")
        return EXIT_OK
    for s in statuses:
        info = s.info
        about = f"{info.name} {info.version}".strip()
        _out(f"{s.name}  {s.state}  {s.transport}" + (f"  {about}" if about else ""))
        if s.state == "ready" and not s.catalog.listed:
            _out(f"  {s.tools} tools · resources and prompts not listed yet")
        elif s.state == "ready":
            caps = ", ".join(sorted(info.capabilities)) or "none"
            _out(f"  protocol {info.protocol} · capabilities: {caps}")
            c = s.catalog
            _out(
                f"  {s.tools} tools · {len(c.resources)} resources · "
                f"{len(c.templates)} templates · {len(c.prompts)} prompts"
            )
        elif s.error:
            _out(f"  {s.error}")
        if s.state == "ready":
            for kind, why in s.catalog.errors.items():
                _out(f"  its {kind} could not be listed: {why}")
    return code


def _status_dict(s: ServerStatus) -> dict[str, Any]:
    c = s.catalog
    return {
        "name": s.name,
        "state": s.state,
        "transport": s.transport,
        "error": s.error,
        "server": {"name": s.info.name, "version": s.info.version},
        "protocol": s.info.protocol,
        "capabilities": s.info.capabilities,
        "tools": s.tools,
        "resources": len(c.resources),
        "templates": len(c.templates),
        "prompts": len(c.prompts),
    }


def _resources(status: ServerStatus, as_json: bool) -> int:
    from dataclasses import asdict

    c = status.catalog
    if as_json:
        payload = {
            "resources": [asdict(r) for r in c.resources],
            "templates": [asdict(t) for t in c.templates],
            "errors": c.errors,
        }
        _out(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    if not status.info.can("resources"):
        _out(f"{status.name} offers no resources.")
        return EXIT_OK
    _out(f"RESOURCES ({len(c.resources)})")
    for r in c.resources:
        _out(f"  {r.uri}  {r.name}  {r.mime_type}".rstrip())
    _out(f"TEMPLATES ({len(c.templates)})")
    for t in c.templates:
        _out(f"  {t.uri_template}  {t.name}  {t.mime_type}".rstrip())
    for kind, why in c.errors.items():
        _err(f"{status.name}: its {kind} could not be listed: {why}")
    return EXIT_OK


def _prompts(status: ServerStatus, as_json: bool) -> int:
    from dataclasses import asdict

    c = status.catalog
    if as_json:
        _out(json.dumps([asdict(p) for p in c.prompts], indent=2, ensure_ascii=False))
        return EXIT_OK
    if not status.info.can("prompts"):
        _out(f"{status.name} offers no prompts.")
        return EXIT_OK
    for p in c.prompts:
        _out(f"{p.name}" + (f"  — {p.description}" if p.description else ""))
        for a in p.arguments:
            need = "required" if a.required else "optional"
            _out(f"    {a.name} ({need})" + (f": {a.description}" if a.description else ""))
    return EXIT_OK


def _read(manager: Any, status: ServerStatus, uri: str, timeout: float, as_json: bool) -> int:
    from workbench.core.mcp import catalog as cat

    parts = _ask(lambda: manager.read_resource(status.name, uri, timeout), status, f"read {uri}")
    if as_json:
        _out(json.dumps({"uri": uri, "contents": [p.as_dict() for p in parts]}, indent=2))
    else:
        _out(cat.render_contents(parts))
    return EXIT_OK


def _prompt(
    manager: Any, status: ServerStatus, name: str, arguments: Any, timeout: float, as_json: bool
) -> int:
    from workbench.core.mcp import catalog as cat

    prompt = status.catalog.prompt(name)
    if prompt is None:
        known = ", ".join(p.name for p in status.catalog.prompts) or "none"
        raise Failed(f"{status.name} has no prompt {name!r} (its prompts: {known})", EXIT_USAGE)
    try:
        values = cat.prompt_arguments(prompt, arguments)
    except ValueError as exc:
        raise Failed(str(exc), EXIT_USAGE) from None
    result = _ask(
        lambda: manager.get_prompt(status.name, name, values, timeout), status, f"get {name}"
    )
    if as_json:
        payload = {"description": result.description, "messages": cat.prompt_messages(result)}
        _out(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        _out(cat.render_prompt(result))
    return EXIT_OK


def _ask(request: Any, status: ServerStatus, what: str) -> Any:
    """The server's refusal is the user's mistake (a URI or argument it does not know):
    exit 2; no answer in time or a lost connection: exit 1."""
    from mcp import MCPError

    from workbench.core.mcp import NotReady

    try:
        return request()
    except TimeoutError as exc:
        raise Failed(f"MCP server {status.name}: {what}: {exc}") from None
    except NotReady as exc:
        raise Failed(str(exc)) from None
    except MCPError as exc:
        code = getattr(getattr(exc, "error", None), "code", None)
        usage = code not in (-32000, -32001)  # connection closed, request timed out
        raise Failed(
            f"MCP server {status.name} refused to {what}: {exc}",
            EXIT_USAGE if usage else EXIT_FAILED,
        ) from None


def _fail(failure: Failed) -> int:
    sys.stderr.write(f"hermes-tui: {failure}\n")
    return failure.code


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")
