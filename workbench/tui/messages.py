"""The Textual messages that carry the core's events into the workbench.

An event from any thread (the agent's, a tool worker's, the plugin watcher's, the MCP
thread) becomes one `CoreEventArrived` on the UI's loop; its handler dispatches on the
event's class with `match`, so a misspelt event type is an error ruff and mypy (`make lint`) see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from workbench.core.events import CoreEvent


class CoreEventArrived(Message, bubble=False):
    """One event of the core's vocabulary. The controller posts every one to the app, from
    any thread; the app hands the conversation's on to the session screen, in order. It
    stays with the node it was posted to."""

    def __init__(self, event: CoreEvent) -> None:
        super().__init__()
        self.event = event
