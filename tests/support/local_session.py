"""One session turn on the bundled local model in a process of its own (as each
`hermes-tui chat PROMPT` is), printing what the tests assert as one JSON line: how the
fixed prompt reached the server (restored, saved...) and the server's own counters of each
round (prompt tokens from its cache and read anew).

    python -m tests.support.local_session CWD PROMPT   (HERMES_HOME set by the caller)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path


async def main(cwd: str, prompt: str) -> dict:
    from workbench.core.agent.loop import ServerTimings
    from workbench.core.model.settings import resolve
    from workbench.core.runtime import load_runtime
    from workbench.core.session import ChatSession

    runtime = load_runtime(Path(os.environ["HERMES_HOME"]))
    settings = resolve(runtime.config, env={})
    rounds: list[dict] = []

    def seen(event: object) -> None:
        if isinstance(event, ServerTimings):
            rounds.append({"cached": event.cached, "evaluated": event.evaluated})

    session = ChatSession(runtime, settings, on_event=seen, cwd=cwd)
    await session.start()
    try:
        finished = await session.turn(prompt)
    finally:
        await session.close()
    return {"primed": session.primed, "rounds": rounds, "reason": finished.reason}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
