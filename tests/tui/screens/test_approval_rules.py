"""The approval modal shows the rule "always" and "never" would save, with the session's
calls it matches; `p` and `w` change it; the rule saved is the rule shown."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from textual import on
from textual.app import App
from textual.widgets import Static

from tests.support.waiting import PATIENCE
from workbench.core.asking import Asker
from workbench.core.config import load_config
from workbench.core.execution.approval import ApprovalBroker, Choice
from workbench.core.policy import CallFacts, RuleBook
from workbench.core.safety import analyze_command
from workbench.tui.messages import CoreEventArrived
from workbench.tui.screens.asks import AskQueue

COMMAND = "git push --force origin main"


class Host(App[None]):
    """The app's way: the asker's events reach the one queue as messages, the modal answers."""

    def __init__(self, broker: ApprovalBroker) -> None:
        super().__init__()
        self.broker = broker
        self.queue = AskQueue(self, broker.asker)
        self.decisions: list = []

    def on_mount(self) -> None:
        self.broker.asker.listen(lambda event: self.post_message(CoreEventArrived(event)))
        self.broker.asker.attach()
        self.run_worker(self._ask())

    async def _ask(self) -> None:
        facts = CallFacts("terminal", "terminal", command=COMMAND)
        verdict = analyze_command(COMMAND, cwd="/p")
        self.decisions.append(await self.broker.decide("terminal", COMMAND, verdict, facts=facts))

    @on(CoreEventArrived)
    def _event(self, message: CoreEventArrived) -> None:
        self.queue.event(message.event)  # type: ignore[arg-type]


def make_broker(tmp_path: Path, trusted: bool = False) -> ApprovalBroker:
    (tmp_path / "config.yaml").write_text("")
    book = RuleBook(load_config(tmp_path / "config.yaml"), project=tmp_path, trusted=trusted)
    broker = ApprovalBroker(book=book, asker=Asker())
    for earlier in ("git push origin dev", "git status", "git push -f origin main"):
        broker.note(CallFacts("terminal", "terminal", command=earlier), earlier)
    return broker


async def wait_for(pilot, condition, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await pilot.pause(0.05)


def rule_text(app: Host) -> str:
    return str(app.screen.query_one("#approval-rule", Static).render())


async def test_always_saves_exactly_the_rule_the_modal_showed(tmp_path: Path) -> None:
    app = Host(make_broker(tmp_path))
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#approval-rule"))
        first = rule_text(app)
        assert f"a saves allow the command `{COMMAND}` in config.yaml" in first
        assert f"n saves deny the command `{COMMAND}`" in first
        assert "p another rule (1 of 4)" in first
        await pilot.press("p", "p")  # the third offer: `git push`
        shown = rule_text(app)
        assert "a saves allow commands starting with `git push` (only for: git-push)" in shown
        assert "also matches earlier: git push -f origin main, git push origin dev" in shown
        assert "git status" not in shown
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions)
    (decision,) = app.decisions
    assert decision.choice is Choice.ALWAYS
    assert load_config(tmp_path / "config.yaml").get("approvals.rules") == [
        {"action": "allow", "command_prefix": "git push", "risks": ["git-push"]}
    ]


async def test_never_denies_and_saves_the_deny_rule_shown(tmp_path: Path) -> None:
    app = Host(make_broker(tmp_path))
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#approval-rule"))
        await pilot.press("p", "p", "p")  # `git`
        assert "n saves deny commands starting with `git` in config.yaml" in rule_text(app)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.decisions)
    assert not app.decisions[0].approved
    assert load_config(tmp_path / "config.yaml").get("approvals.rules") == [
        {"action": "deny", "command_prefix": "git"}
    ]


async def test_w_saves_in_a_trusted_projects_rules(tmp_path: Path) -> None:
    app = Host(make_broker(tmp_path, trusted=True))
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#approval-rule"))
        assert "w where to save" in rule_text(app)
        await pilot.press("w")
        assert "in this project's rules" in rule_text(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions)
    assert app.decisions[0].choice is Choice.ALWAYS
    assert COMMAND in (tmp_path / ".hermes" / "approvals.yaml").read_text()
    assert "git" not in (tmp_path / "config.yaml").read_text()


async def test_an_untrusted_project_is_not_offered(tmp_path: Path) -> None:
    app = Host(make_broker(tmp_path))
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#approval-rule"))
        assert "w where to save" not in rule_text(app)
        await pilot.press("w", "d")  # w changes nothing; d denies
        await wait_for(pilot, lambda: app.decisions)
        await asyncio.sleep(0)
    assert not app.decisions[0].approved
    assert not (tmp_path / ".hermes").exists() and (tmp_path / "config.yaml").read_text() == ""
