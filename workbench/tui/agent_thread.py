"""The agent's own event loop, on its own thread, so the UI's loop only draws and reads keys.

Parsing a stream of thousands of chunks a second (the `openai` client builds a model object
for each) is real work; on the UI's loop it would delay every key press. Coroutines are
handed over with `run`, which the UI awaits without blocking.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class AgentThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="hermes-agent", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run on the agent's loop; awaited from any other loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))

    def call(self, fn: Callable[[], object]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
