"""The batch planner's accuracy on the labelled batch corpus, ours beside Hermes's.

Each batch is labelled with whether it may run wholly in parallel; Hermes's
`_should_parallelize_tool_batch` and our `may_run_in_parallel` decide the same batches on
the same fixture tree (hard links, symlinks, $HOME spellings, search roots).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from harness import fmt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives with the tests
from tests.support.batch_corpus import build_tree, load_batches


def as_objects(calls: list[dict]) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(id=c["id"], function=SimpleNamespace(**c["function"]), type="function")
        for c in calls
    ]


def main() -> int:
    from agent.tool_dispatch_helpers import _plan_tool_batch_segments

    from workbench.core.execution.scheduler import may_run_in_parallel
    from workbench.core.tools.discovery import discover_builtin_tools

    discover_builtin_tools()

    def hermes(calls: list[dict], cwd: Path) -> bool:
        segments = _plan_tool_batch_segments(as_objects(calls), execution_cwd=cwd)
        return len(calls) > 1 and len(segments) == 1 and segments[0][0] == "parallel"

    with tempfile.TemporaryDirectory(prefix="bench-planner-") as tmp:
        root = Path(tmp)
        build_tree(root)
        os.environ["HOME"] = str(root)
        batches = load_batches(root)
        start = time.perf_counter()
        ours = sum(may_run_in_parallel(calls, cwd=root) == label for label, calls in batches)
        took = (time.perf_counter() - start) / len(batches)
        peer = sum(hermes(calls, root) == label for label, calls in batches)
    n = len(batches)
    print(f"planner: {n} labelled batches")
    print(
        f"  {'accuracy':<46} ours {ours / n:8.3f}     hermes {peer / n:8.3f}     "
        f"target > 0.88: {'MET' if ours / n > 0.88 else 'MISSED'}"
    )
    print(f"  {'time to plan one batch':<46} ours {fmt(took)}")
    return 0 if ours / n > 0.88 else 1


if __name__ == "__main__":
    sys.exit(main())
