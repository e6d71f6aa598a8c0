"""The approval prompt for the headless CLI on a terminal (the TUI has its own modal)."""

from __future__ import annotations

import sys
import threading

from workbench.core.approval import ApprovalBroker, ApprovalRequest
from workbench.core.printable import escape


class TerminalPrompt:
    """Asks on stderr, reads one line from stdin; anything but o/s/a (or once/session/always) denies."""

    def __init__(self, broker: ApprovalBroker) -> None:
        self.broker = broker
        self._lock = threading.Lock()  # one question at a time

    def __call__(self, request: ApprovalRequest) -> None:
        threading.Thread(target=self._ask, args=(request,), daemon=True).start()

    def _ask(self, request: ApprovalRequest) -> None:
        with self._lock:
            who = f" ({escape(request.label)})" if request.label else ""
            lines = [f"\nhermes-tui: {escape(request.tool)}{who} needs your approval to run:", ""]
            # every line, each control character visible: a command cannot hide itself
            lines += [f"    {line}" for line in escape(request.command).split("\n")]
            lines += ["", f"  why:   {escape(request.reason)}", f"  where: {escape(request.cwd)}"]
            if request.writes:
                lines.append(f"  writes: {escape(', '.join(request.writes))}")
            lines.append(
                f"Allow? [o]nce, [s]ession, [a]lways, [d]eny — anything else denies "
                f"(denied in {request.timeout:g}s): "
            )
            sys.stderr.write("\n".join(lines))
            sys.stderr.flush()
            answer = sys.stdin.readline()
        self.broker.answer(request.id, answer.strip())
