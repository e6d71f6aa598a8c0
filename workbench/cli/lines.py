"""The one reader of stdin for a chat on a terminal: its prompts and every question asked
(approvals, `clarify`) take their lines from it.

A reader thread per question could not be called back: one whose question was settled
elsewhere (its deadline, its call cancelled) went on waiting for a line, and took the next
one typed, meant for the question asked after it. Here one thread reads, only while someone
waits for a line, and hands each line to the question shown when it comes. Questions wait in
the order they ask, one shown at a time; one settled elsewhere is withdrawn, and the next is
shown. A line that comes when no one waits any more was typed for a question that is gone: it
is dropped, and said so. At the end of input every question gets an empty line (which denies,
or answers nothing).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from workbench.core.asking import Asker, Settled

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Waiting:
    key: object  # the ask's id, or a prompt's own token
    show: Callable[[], None]  # writes the question (on stderr), once it is the one asked
    take: Callable[[str], object]  # gets the line read (on the reader's thread)


class Lines:
    """Lines from stdin for whoever asks, one at a time, oldest first. With an `asker`, a
    question whose ask settles without its line (its key is the ask's id) is withdrawn."""

    def __init__(self, asker: Asker | None = None) -> None:
        self._lock = threading.Lock()
        self._waiting: list[_Waiting] = []  # the first is the question shown
        self._reading = False  # the reader thread is running
        self._ended = False  # stdin is at its end
        if asker is not None:
            asker.listen(self._settled)

    def want(self, key: object, show: Callable[[], None], take: Callable[[str], object]) -> None:
        """`take(line)` gets the next line read once the questions before it have theirs;
        `show()` is called when it becomes the question asked."""
        waiting = _Waiting(key, show, take)
        with self._lock:
            ended = self._ended
            if not ended:
                self._waiting.append(waiting)
                first = len(self._waiting) == 1
                start, self._reading = not self._reading, True
        if ended:
            take("")
            return
        if first:
            show()
        if start:
            threading.Thread(target=self._read, name="stdin-lines", daemon=True).start()

    async def line(self, show: Callable[[], None]) -> str:
        """The next line for a prompt (never withdrawn), awaited."""
        loop = asyncio.get_running_loop()
        got: asyncio.Future[str] = loop.create_future()

        def settle(text: str) -> None:
            if not got.done():
                got.set_result(text)

        def take(text: str) -> None:
            loop.call_soon_threadsafe(settle, text)

        self.want(object(), show, take)
        return await got

    def withdraw(self, key: object, why: str = "") -> None:
        """The question no longer waits (settled elsewhere): the next one is asked."""
        with self._lock:
            index = next((i for i, w in enumerate(self._waiting) if w.key == key), None)
            if index is None:
                return
            del self._waiting[index]
            following = self._waiting[0] if index == 0 and self._waiting else None
        if index == 0:
            _say(f"\nhermes-tui: that question is no longer asked ({why or 'settled'})\n")
        if following is not None:
            following.show()

    def _settled(self, event: object) -> None:
        if isinstance(event, Settled):
            self.withdraw(event.ask.id, event.why)

    def _read(self) -> None:
        while True:
            line = sys.stdin.readline()
            with self._lock:
                if not line:  # the end of input: every question gets an empty line
                    self._ended, self._reading = True, False
                    taken, self._waiting = self._waiting, []
                    following = None
                else:
                    taken = self._waiting[:1]
                    del self._waiting[:1]
                    following = self._waiting[0] if self._waiting else None
                    self._reading = bool(self._waiting)
            for waiting in taken:
                try:
                    waiting.take(line)
                except Exception:  # one question's failure must not stop the reading
                    logger.exception("a question failed to take its line")
            if line and not taken:
                _say("\nhermes-tui: a line came after its question was settled; it was dropped\n")
            if following is not None:
                following.show()
            if not line or following is None:
                return


def _say(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
