"""The agent loop: its own cost per round, and keeping up with a fast stream.

* Per round, the loop's own work (building the request, recording, assembling tool calls
  and results; everything but the model and the tools): under 2 ms.
* 2,000 small deltas a second streamed through the loop to its event consumer without
  falling behind: the turn ends within 50 ms of the server writing its last byte.
Both run against the scripted OpenAI-protocol server on 127.0.0.1 used by the tests.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import fmt

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # the scripted server lives with the tests
from tests.support.fake_openai import FakeOpenAI, text, tools


async def rounds_overhead(home: Path, work: Path, rounds: int = 30) -> tuple[float, float]:
    from workbench.core.model.settings import ModelSettings
    from workbench.core.runtime import load_runtime
    from workbench.core.session import ChatSession

    fake = FakeOpenAI().start()
    fake.add(*[tools(("read_file", {"path": "a.txt"})) for _ in range(rounds)], text("done"))
    settings = ModelSettings("m", base_url=fake.url, api_key=fake.api_key, max_rounds=rounds + 1)
    session = ChatSession(load_runtime(home), settings, cwd=str(work))
    await session.start()
    start = time.perf_counter()
    finished = await session.turn("read a.txt many times")
    wall = (time.perf_counter() - start) / finished.rounds
    await session.close()
    fake.stop()
    assert finished.reason == "answered", finished
    return statistics.median(session.agent.overhead), wall


async def stream_rate(
    home: Path, deltas: int = 2000, seconds: float = 1.0
) -> tuple[float, int, float]:
    """(turn time, UI events, lag behind the server's last byte) for `deltas` in ~`seconds`."""
    from workbench.core.agent.loop import TextDelta
    from workbench.core.model.settings import ModelSettings
    from workbench.core.runtime import load_runtime
    from workbench.core.session import ChatSession

    fake = FakeOpenAI().start()
    fake.add(text("tok " * deltas, chunk_size=4, delay=seconds / deltas))
    received: list[str] = []

    def consume(event: object) -> None:
        if isinstance(event, TextDelta):
            received.append(event.text)

    settings = ModelSettings("m", base_url=fake.url, api_key=fake.api_key)
    session = ChatSession(load_runtime(home), settings, on_event=consume)
    await session.start()
    start = time.perf_counter()
    await session.turn("stream")
    done = time.perf_counter()
    await session.close()
    fake.stop()
    assert "".join(received) == "tok " * deltas
    return done - start, len(received), done - fake.stream_ended[-1]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        work.mkdir()
        (work / "a.txt").write_text("alpha\n")
        os.environ["HERMES_HOME"] = str(home)
        overhead, wall = asyncio.run(rounds_overhead(home, work))
        took, events, lag = asyncio.run(stream_rate(home))
    print("agent: the loop's own cost per round, and a 2,000 deltas/s stream")
    ok_overhead, ok_lag = overhead < 2e-3, lag < 0.05
    print(
        f"  {'loop overhead per round (median)':<46} ours {fmt(overhead)}  "
        f"(whole round on loopback, tool included: {fmt(wall)})  target < 2 ms: {'MET' if ok_overhead else 'MISSED'}"
    )
    print(
        f"  {'2,000 deltas: lag behind the stream at its end':<46} ours {fmt(lag)}  "
        f"({2000 / took:,.0f} deltas/s, {events} coalesced UI events)  "
        f"target: keeps up (lag < 50 ms): {'MET' if ok_lag else 'MISSED'}"
    )
    return 0 if ok_overhead and ok_lag else 1


if __name__ == "__main__":
    sys.exit(main())
