"""The terminal's approval prompt: the rules on offer, and answers that pick one."""

from __future__ import annotations

import time

from workbench.cli.prompt import parse, question
from workbench.core.execution.approval import ApprovalRequest
from workbench.core.policy import Action, CallFacts
from workbench.core.policy.offer import History, offers
from workbench.core.safety import analyze_command


def request(command: str = "git push --force origin") -> ApprovalRequest:
    facts = CallFacts("terminal", "terminal", command=command)
    verdict = analyze_command(command, cwd="/p")
    history = History()
    history.add(
        CallFacts("terminal", "terminal", command="git push origin dev"), "git push origin dev"
    )
    return ApprovalRequest(
        1, "terminal", command, "why", verdict, "/p", "", 60.0, time.monotonic() + 60,
        allow_offers=offers(facts, verdict, history, Action.ALLOW),
        deny_offers=offers(facts, None, history, Action.DENY),
    )  # fmt: skip


def test_the_prompt_lists_the_rules_and_what_they_match() -> None:
    text = "\n".join(question(request()))
    assert "rule 1: allow the command `git push --force origin`" in text
    assert "rule 4: allow commands starting with `git` (only for: git-push)" in text
    assert "also matches earlier: git push origin dev" in text
    assert "[n]ever" in text


def test_a_numbered_answer_picks_that_rule_and_a_wrong_number_denies() -> None:
    req = request()
    assert parse("a2", req) == ("a", req.allow_offers[1].rule)
    assert parse("n3", req) == ("n", req.deny_offers[2].rule)
    assert parse("s1", req) == ("s", req.allow_offers[0].rule)
    assert parse("a9", req) == ("deny", None)
    assert parse("a", req) == ("a", None)  # the broker saves the first offer
    assert parse("a 2", req) == ("a 2", None)  # not an answer: denies


async def test_a_command_the_sandbox_refused_is_asked_with_x_as_the_only_yes() -> None:
    """On a TTY (chat, call), as in the modal: `x` runs it once outside; `o`, `a` or
    anything else keeps it in the sandbox, and nothing is saved."""
    import asyncio

    from workbench.core.execution.approval import ApprovalBroker, Choice

    for answer, choice in (("x", Choice.OUTSIDE), ("o", Choice.DENY), ("a", Choice.DENY)):
        broker, shown = ApprovalBroker(), []

        def front_end(r: ApprovalRequest, b=broker, a=answer, seen=shown) -> None:
            seen.append("\n".join(question(r)))
            b.answer(r.id, *parse(a, r))

        broker.attach(front_end)
        decision = await asyncio.wait_for(
            broker.ask_to_leave("npm view x", "the sandbox refused a write (EROFS)"), 10
        )
        assert decision.choice is choice and decision.rule is None
        assert "Run it once outside the sandbox? [x] yes" in shown[0]
        assert "[a]lways" not in shown[0] and "why:   the sandbox refused a write" in shown[0]
        assert broker.book.session == []


def test_the_scripts_a_command_let_out_would_run_are_shown_with_what_changed() -> None:
    from workbench.core.edits.diffs import unified
    from workbench.core.execution.scripts import Script

    changed = Script(
        "/p/x.sh", "changed since this turn's checkpoint", unified("x.sh", "a\n", "b\n")
    )
    req = request("./x.sh && ./y.sh")
    req.scripts = (changed, Script("/p/y.sh"))
    text = "\n".join(question(req))
    assert "  script: /p/x.sh (changed since this turn's checkpoint)" in text
    assert "      -a\n      +b" in text
    assert "  script: /p/y.sh\n" in text


async def test_clarify_on_a_terminal_asks_on_stderr_and_the_line_read_answers(
    monkeypatch, capsys
) -> None:
    """`chat` on a TTY: the agent's question, with its choices, goes to stderr; the line
    typed is the answer, through the same asker as every other question."""
    import io
    import sys

    from workbench.cli.prompt import TerminalQuestion
    from workbench.core.asking import ANSWERED, Ask, Asker, AskKind, Question

    monkeypatch.setattr(sys, "stdin", io.StringIO("blue\n"))
    asker = Asker()
    asker.attach(TerminalQuestion(asker), [AskKind.CLARIFY])
    asked = Question(asker.next_id(), "Which colour?", ("red", "blue"), asker.deadline(30))
    assert await asker.ask(Ask.about(AskKind.CLARIFY, asked), None) == ("blue\n", ANSWERED)
    assert "? Which colour? [red / blue]" in capsys.readouterr().err
