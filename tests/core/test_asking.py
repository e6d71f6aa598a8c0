"""The ask primitive: every question to a person waits in one table, is settled exactly once,
and fails closed (its default) when nobody answers in time, nobody can answer, or the
question is withdrawn."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from workbench.core.asking import (
    ANSWERED,
    NO_ANSWER,
    NO_ONE,
    Ask,
    Asked,
    Asker,
    AskKind,
    Question,
    Settled,
)


def question(asker: Asker, text: str = "Which?", timeout: float = 30.0, call_id: str = "") -> Ask:
    subject = Question(asker.next_id(), text, ("a", "b"), asker.deadline(timeout))
    return Ask.about(AskKind.CLARIFY, subject, call_id)


async def until(condition) -> None:
    """Yield to the loop until `condition()` holds (what is waited for is what is asserted)."""
    while not condition():
        await asyncio.sleep(0)


async def test_the_deadline_fails_closed_with_the_default() -> None:
    asker, events = Asker(), []
    asker.listen(events.append)
    asker.attach()
    ask = question(asker, timeout=0.05)
    assert await asker.ask(ask, "no") == ("no", NO_ANSWER)
    assert asker.pending() == []
    assert events == [Asked(ask), Settled(ask, "no", NO_ANSWER)]
    assert asker.answer(ask.id, "yes") is False  # too late: ignored


async def test_an_answer_from_another_thread_settles_it() -> None:
    asker = Asker()
    asker.attach(lambda ask: threading.Thread(target=asker.answer, args=(ask.id, "b")).start())
    ask = question(asker, call_id="call-1")
    assert await asker.ask(ask, None) == ("b", ANSWERED)
    assert asker.pending() == []


async def test_only_the_first_answer_counts_and_a_second_is_logged(caplog) -> None:
    asker = Asker()
    results: list[bool] = []
    asker.attach(lambda ask: results.extend([asker.answer(ask.id, "a"), asker.answer(ask.id, "b")]))
    logger = logging.getLogger("workbench.core.asking")
    logger.addHandler(caplog.handler)  # the app's log setup may keep it from the root
    try:
        with caplog.at_level(logging.INFO, logger=logger.name):
            assert await asker.ask(question(asker), None) == ("a", ANSWERED)
    finally:
        logger.removeHandler(caplog.handler)
    assert results == [True, False]
    assert "came after it was settled; ignored" in caplog.text


async def test_two_asks_wait_in_the_order_asked_and_settle_apart() -> None:
    asker, shown = Asker(), []
    asker.attach(shown.append)
    first, second = question(asker, "first?"), question(asker, "second?")
    one = asyncio.create_task(asker.ask(first, None))
    two = asyncio.create_task(asker.ask(second, None))
    await until(lambda: len(shown) == 2)
    assert shown == [first, second] and asker.pending() == [first, second]
    assert first.id < second.id
    asker.answer(second.id, "b")  # answering the second leaves the first waiting
    assert await two == ("b", ANSWERED)
    assert asker.pending() == [first] and not one.done()
    asker.answer(first.id, "a")
    assert await one == ("a", ANSWERED)


async def test_with_no_one_to_answer_it_fails_closed_at_once() -> None:
    asker, events = Asker(), []
    asker.listen(events.append)
    asker.attach(kinds=[AskKind.APPROVAL])  # someone answers approvals, not questions
    ask = question(asker)
    assert await asker.ask(ask, None) == (None, NO_ONE)
    assert events == [Settled(ask, None, NO_ONE)] and asker.pending() == []


async def test_the_front_end_going_away_fails_closed_what_waits() -> None:
    asker = Asker()
    detach = asker.attach()
    task = asyncio.create_task(asker.ask(question(asker), "deny"))
    await until(asker.pending)
    detach()
    answer, why = await task
    assert answer == "deny" and why == "the front end that could answer went away"


async def test_closing_fails_closed_and_a_front_end_that_fails_denies() -> None:
    asker = Asker()
    asker.attach()
    task = asyncio.create_task(asker.ask(question(asker), "deny"))
    await until(asker.pending)
    asker.close("the session ended")
    assert await task == ("deny", "the session ended")

    broken = Asker()
    broken.attach(lambda ask: 1 / 0)
    assert await broken.ask(question(broken), "deny") == (
        "deny",
        "the front end failed to show it",
    )


async def test_a_cancelled_call_withdraws_its_ask() -> None:
    asker, events = Asker(), []
    asker.listen(events.append)
    asker.attach()
    ask = question(asker)
    task = asyncio.create_task(asker.ask(ask, "deny"))
    await until(asker.pending)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert asker.pending() == [] and asker.answer(ask.id, "yes") is False
    assert events[-1] == Settled(ask, "deny", "withdrawn: the call was cancelled")


def test_asks_from_two_threads_share_one_table() -> None:
    """The agent's thread and the MCP thread ask at once; a third answers both."""
    asker = Asker()
    asker.attach()
    results: dict[str, tuple] = {}

    def ask_in_a_thread(name: str) -> threading.Thread:
        ask = question(asker, name)
        thread = threading.Thread(
            target=lambda: results.__setitem__(name, asyncio.run(asker.ask(ask, None)))
        )
        thread.start()
        return thread

    threads = [ask_in_a_thread("one"), ask_in_a_thread("two")]
    while len(asker.pending()) < 2:
        threading.Event().wait(0.01)
    for ask in asker.pending():
        assert asker.answer(ask.id, ask.subject.text.upper())
    for thread in threads:
        thread.join(10)
    assert results == {"one": ("ONE", ANSWERED), "two": ("TWO", ANSWERED)}
