"""The call path: a parallel batch's wall time, and what the path adds per call.

* 8 independent calls that each sleep 200 ms must finish within 1.15 x 200 ms.
* For small results, planning + approval check + events + budgets add under 50 us a call
  (measured on a batch of 500 async no-op calls, minus the same calls awaited directly).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

from harness import fmt

SCHEMA = {
    "description": "bench",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
}


def main() -> int:
    from workbench.core.execution.executor import Executor
    from workbench.core.tools.registry import ToolRegistry

    registry = ToolRegistry()
    registry.register(
        "nap", "bench", SCHEMA, lambda a, **k: time.sleep(0.2) or "ok", parallel_safe=True
    )

    async def noop(args, **kw):
        return "ok"

    registry.register("noop", "bench", SCHEMA, noop, is_async=True, parallel_safe=True)
    events = []
    executor = Executor(registry, on_event=events.append)

    async def batch(name: str, n: int) -> float:
        calls = [{"id": f"c{i}", "name": name, "arguments": json.dumps({"n": i})} for i in range(n)]
        start = time.perf_counter()
        outcomes = await executor.run(calls)
        assert all(o.status == "ok" for o in outcomes)
        return time.perf_counter() - start

    async def direct(n: int) -> float:
        start = time.perf_counter()
        for i in range(n):
            await noop({"n": i})
        return time.perf_counter() - start

    async def measure() -> tuple[float, float]:
        naps = [await batch("nap", 8) for _ in range(5)]
        per_call = []
        for _ in range(7):
            per_call.append((await batch("noop", 500) - await direct(500)) / 500)
        return statistics.median(naps), min(per_call)

    wall, overhead = asyncio.run(measure())
    executor.shutdown()
    print("executor: a parallel batch, and the per-call cost of the call path")
    ratio = wall / 0.2
    print(
        f"  {'8 x sleep(200 ms), one parallel batch (median)':<46} ours {fmt(wall)}  "
        f"ideal    200.00 ms  ours/ideal {ratio:5.2f}x  target <= 1.15x: {'MET' if ratio <= 1.15 else 'MISSED'}"
    )
    print(
        f"  {'overhead per call (plan, gate, events, budget)':<46} ours {fmt(overhead)}  "
        f"target < 50 µs: {'MET' if overhead < 50e-6 else 'MISSED'}"
    )
    return 0 if ratio <= 1.15 and overhead < 50e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
