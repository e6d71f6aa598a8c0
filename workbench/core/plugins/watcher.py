"""Hot reload: watch the enabled directory plugins and reload the one whose files changed.

Runs in its own thread (never on the UI's event loop). A burst of saves reloads once: the
watcher waits for `debounce_ms` of quiet, far below watchfiles' 1.6 s default. A deleted
plugin directory removes its tools; a new one is listed (disabled until enabled).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from workbench.core.plugins.manager import PluginManager

logger = logging.getLogger(__name__)

DEBOUNCE_MS = 60
STEP_MS = 20


class HotReloader:
    def __init__(self, manager: PluginManager, *, debounce_ms: int = DEBOUNCE_MS) -> None:
        self.manager = manager
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()  # set once the watcher is watching

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="plugin-hot-reload", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        import watchfiles

        roots = self.manager.watch_roots()
        if not roots:
            self.ready.set()
            return
        try:
            for changes in watchfiles.watch(
                *roots,
                debounce=self.debounce_ms,
                step=STEP_MS,
                stop_event=self._stop,
                yield_on_timeout=True,
                rust_timeout=200,
            ):
                self.ready.set()
                if changes:
                    self.handle({Path(path) for _, path in changes})
        except Exception:
            logger.exception("plugin watcher stopped")

    def handle(self, paths: set[Path]) -> None:
        """Reload each plugin touched by `paths` once; drop plugins whose directory is gone."""
        keys = {self.manager.key_for_path(p) for p in paths}
        new_dirs = {p for p in paths if self.manager.key_for_path(p) is None}
        for key in sorted(k for k in keys if k):
            state = self.manager.states.get(key)
            if state is None or state.manifest.path is None:
                continue
            if not state.manifest.path.is_dir():
                self.manager.remove(key)
            elif state.enabled:
                self.manager.reload(key)
        if new_dirs:
            self.manager.discover()
