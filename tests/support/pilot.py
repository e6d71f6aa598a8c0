"""Driving the Textual app in tests: waiting for a state, moving in the tree, modal hosts."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App

from tests.support.waiting import PATIENCE
from workbench.core.execution.approval import ApprovalRequest
from workbench.core.safety import analyze_command
from workbench.tui.screens import approval as approval_screen
from workbench.tui.screens.approval import ApprovalScreen
from workbench.tui.screens.main import MainScreen
from workbench.tui.screens.session import SessionScreen
from workbench.tui.screens.viewer import ViewerScreen
from workbench.tui.widgets.chat import PromptArea
from workbench.tui.widgets.run_form import RunToolForm
from workbench.tui.widgets.tools_tree import ToolsTree


async def wait_until(pilot, predicate: Callable[[], bool], timeout: float = PATIENCE) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await pilot.pause(0.02)


def labels(tree: ToolsTree, sizes: bool = False) -> list[str]:
    """The tree's lines; without the sizes in tokens (` · 1.2k`) unless `sizes`, since they
    are measured on a worker and come a moment after the tree."""
    out = []
    for line in range(tree.last_line + 1):
        node = tree.get_node_at_line(line)
        if node is not None:
            out.append(str(node.label) if sizes else unsized(str(node.label)))
    return out


def unsized(label: str) -> str:
    """A tree label without its size in tokens (and the word for a deferred tool with it)."""
    return re.sub(r" · [\d.]+k?(?: deferred(?:, search only)?)?(?=$|  )", "", label)


def move_to(tree: ToolsTree, kind: str, name: str) -> None:
    for line in range(tree.last_line + 1):
        node = tree.get_node_at_line(line)
        if (
            node is not None
            and node.data
            and (node.data.get("kind"), node.data.get("name")) == (kind, name)
        ):
            tree.move_cursor(node)
            return
    raise AssertionError(f"no {kind} {name} in the tree")


async def loaded(pilot, app) -> MainScreen:
    await wait_until(
        pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.controller.loaded
    )
    return app.screen


async def open_session(pilot, app) -> SessionScreen:
    """The workbench loaded, then its chat session (F6)."""
    await loaded(pilot, app)
    await pilot.press("f6")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
    return app.screen


async def send(pilot, screen: SessionScreen, prompt: str) -> None:
    """`prompt` typed into the session's prompt and sent (Enter)."""
    screen.query_one(PromptArea).text = prompt
    screen.query_one(PromptArea).focus()
    await pilot.press("enter")


async def open_form(pilot, screen: MainScreen, tool: str, field: str = "") -> RunToolForm:
    """The run form (F2) of `tool`, chosen in the tree; waits for its `field` (arg-FIELD)."""
    move_to(screen.query_one(ToolsTree), "tool", tool)
    await pilot.press("f2")
    form = screen.query_one(RunToolForm)
    await wait_until(
        pilot, lambda: form.tool == tool and (not field or bool(form.query(f"#arg-{field}")))
    )
    return form


def request(command: str = "rm -rf build", timeout: float = 60.0) -> ApprovalRequest:
    return ApprovalRequest(
        id=1,
        tool="terminal",
        command=command,
        reason="deletes build",
        verdict=analyze_command(command),
        cwd="/work/project",
        label="",
        timeout=timeout,
        deadline=time.monotonic() + timeout,
    )


class StoppedClock:
    """The countdown's clock, stopped: a snapshot never depends on how fast it was taken
    (a loaded machine turned 600s into 599s)."""

    @staticmethod
    def monotonic() -> float:
        return 1000.0


def stop_the_clock(monkeypatch, req: ApprovalRequest) -> ApprovalRequest:
    monkeypatch.setattr(approval_screen, "time", StoppedClock)
    req.deadline = StoppedClock.monotonic() + req.timeout
    return req


class ModalHost(App[None]):
    def __init__(self, req: ApprovalRequest) -> None:
        super().__init__()
        self.req, self.answers = req, []

    def on_mount(self) -> None:
        self.push_screen(ApprovalScreen(self.req, pending=2), self.answers.append)


class ViewerHost(App[None]):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def on_mount(self) -> None:
        self.push_screen(ViewerScreen(self.path))
