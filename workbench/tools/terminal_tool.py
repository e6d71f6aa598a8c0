"""terminal: run a shell command with a timeout, a working directory and an output cap.

Destructive commands need the user's approval. The executor asks (see core/gate.py) and
passes the approved command text in `approved_command`; a dangerous command that reaches
this handler any other way is refused unrun, and a hardline one is refused always.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from workbench.core.errors import tool_error, tool_result
from workbench.core.paths import resolve_path
from workbench.core.registry import registry
from workbench.core.safety import analyze_command

DEFAULT_TIMEOUT = 180
MAX_TIMEOUT = 600
MAX_OUTPUT_BYTES = 50_000

TERMINAL_SCHEMA = {
    "description": (
        "Run a shell command (bash) and return its combined output and exit code. "
        f"Output over {MAX_OUTPUT_BYTES:,} bytes keeps its head and tail. Commands that "
        "change files or state need the user's approval."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {
                "type": "integer",
                "description": f"Seconds to wait (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT})",
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
            },
            "workdir": {
                "type": "string",
                "description": "Working directory (default: the session's)",
            },
        },
        "required": ["command"],
    },
}


def cap_output(data: bytes, limit: int = MAX_OUTPUT_BYTES) -> str:
    """Decode output, keeping the head and tail when it is over `limit` bytes."""
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    half = limit // 2
    dropped = len(data) - 2 * half
    head = data[:half].decode("utf-8", errors="replace")
    tail = data[-half:].decode("utf-8", errors="replace")
    return f"{head}\n\n[... {dropped:,} bytes of output omitted ...]\n\n{tail}"


def terminal(args: dict[str, Any], **kw: Any) -> str:
    command = args["command"]
    cwd = resolve_path(args["workdir"], kw.get("cwd")) if args.get("workdir") else None
    cwd = cwd or Path(kw.get("cwd") or os.getcwd())
    verdict = analyze_command(command, cwd=cwd)
    if verdict.hardline:
        return _blocked(f"blocked (hardline): {'; '.join(verdict.reasons)}", "blocked")
    if verdict.dangerous and kw.get("approved_command") != command:
        return _blocked(
            f"needs the user's approval ({'; '.join(verdict.reasons)})", "approval_required"
        )
    if not cwd.is_dir():
        return tool_error(f"Working directory does not exist: {cwd}")
    timeout = min(int(args.get("timeout") or DEFAULT_TIMEOUT), MAX_TIMEOUT)
    return run_command(command, cwd, timeout)


def _blocked(reason: str, status: str) -> str:
    return tool_result(output="", exit_code=-1, error=f"Command not run: {reason}", status=status)


def run_command(command: str, cwd: Path, timeout: float) -> str:
    try:
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a timeout kills all of it
        )
    except OSError as exc:
        return tool_error(f"Cannot start bash: {exc.strerror or exc}")
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate()
        return tool_result(
            output=cap_output(out or b""),
            exit_code=None,
            error=f"Command timed out after {timeout:g}s and was killed",
            status="timeout",
        )
    except BaseException:
        _kill_group(proc)
        raise
    return tool_result(output=cap_output(out or b""), exit_code=proc.returncode, error=None)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)


registry.register(
    "terminal", "terminal", TERMINAL_SCHEMA, terminal, emoji="💻", max_result_size_chars=100_000
)
