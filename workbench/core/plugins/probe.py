"""Probing plugins in a child process before they load in this one.

A plugin is our own code's guest: its import may loop forever, its `register` may call
`os._exit`. Neither can be survived in-process, so before a plugin's code first runs here,
a child process imports it and calls its `register` under a time limit. A plugin that does
not finish in time, or ends the process, is reported failed and never loaded here; one
that finishes (even by raising: that is reported as usual) is loaded.

The verdict is kept in `state/plugin-probes.json`, keyed by a fingerprint of the plugin's
files (paths, sizes, modification times) and settings, so an unchanged plugin costs a few
`stat` calls, and an edited one is probed again. All the plugins to probe share one child;
after a failure the rest go on in a new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from workbench.core.plugins.sources import PluginManifest

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0  # seconds for one plugin's import and register
START_TIMEOUT = 60.0  # for the child to start at all (a loaded machine is slow)
MAX_FILES = 2000  # files fingerprinted per directory plugin
CACHE_NAME = "plugin-probes.json"


class ProbeFailed(Exception):
    """The plugin hung or ended the process in the probe; it was not loaded here."""


@dataclass(frozen=True)
class Verdict:
    ok: bool
    error: str = ""
    at: float = 0.0  # when it was probed


class Prober:
    def __init__(self, cache: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.cache = cache
        self.timeout = timeout
        self.probed = 0  # plugins probed in a child by this prober (not from the cache)
        self._memo: dict[str, dict[str, Any]] = {}  # this process's verdicts, saved or not

    def check(
        self, manifests: list[PluginManifest], settings: dict[str, Any] | None = None
    ) -> dict[str, Verdict]:
        """A verdict per plugin key: the cached one if the plugin is unchanged, else probed.

        `settings` maps a key to the plugin's config section (it is part of the fingerprint
        and the probe's ctx.config).
        """
        settings = settings or {}
        known = {**self._read(), **self._memo}
        prints = {m.key: fingerprint(m, settings.get(m.key)) for m in manifests}
        verdicts: dict[str, Verdict] = {}
        todo = []
        for manifest in manifests:
            entry = known.get(manifest.key)
            if isinstance(entry, dict) and entry.get("fingerprint") == prints[manifest.key]:
                verdicts[manifest.key] = Verdict(
                    bool(entry.get("ok")), str(entry.get("error") or ""), entry.get("at", 0.0)
                )
            else:
                todo.append(manifest)
        if todo:
            fresh = probe(todo, settings, self.timeout)
            self.probed += len(fresh)
            verdicts.update(fresh)
            kept = {k: {"fingerprint": prints[k], **asdict(v)} for k, v in fresh.items() if v.at}
            self._memo.update(kept)
            self._write(kept)
        return verdicts

    def forget(self, key: str) -> None:
        """Probe this plugin again next time (the user asked to enable it again)."""
        self._memo.pop(key, None)
        self._write({key: None})

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, changes: Mapping[str, dict[str, Any] | None]) -> None:
        from workbench.core.storage.atomic import atomic_write_text, locked
        from workbench.core.storage.private import private_dir

        try:
            private_dir(self.cache.parent)
            with locked(self.cache):
                data = self._read()
                for key, value in changes.items():
                    if value is None:
                        data.pop(key, None)
                    else:
                        data[key] = value
                atomic_write_text(self.cache, json.dumps(data, indent=1), mode=0o600)
        except OSError as exc:  # a read-only home: probed again next time, that is all
            logger.info("plugin probe verdicts not saved: %s", exc)


def fingerprint(manifest: PluginManifest, settings: Any = None) -> str:
    """What the verdict depends on: the plugin's files, its settings, this interpreter."""
    from workbench import __version__

    digest = hashlib.sha256()
    for part in (manifest.key, manifest.source, manifest.entry_point, manifest.version,
                 sys.executable, __version__, json.dumps(settings, sort_keys=True, default=str)):  # fmt: skip
        digest.update(f"{part}\0".encode())
    if manifest.path is not None:
        for line in _files(manifest.path):
            digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _files(root: Path) -> list[str]:
    lines: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(directory, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            lines.append(f"{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}\n")
            if len(lines) >= MAX_FILES:
                return lines
    return lines


# -- the parent side -----------------------------------------------------------------


def probe(
    manifests: list[PluginManifest], settings: dict[str, Any], timeout: float
) -> dict[str, Verdict]:
    """Import and register each plugin in child processes; a verdict for each."""
    verdicts: dict[str, Verdict] = {}
    pending = list(manifests)
    while pending:
        done = _one_child(pending, settings, timeout)
        if not done:  # the child could not even start: nothing is known, nothing is cached
            for manifest in pending:
                verdicts[manifest.key] = Verdict(False, "the plugin probe could not start")
            break
        verdicts.update(done)
        pending = [m for m in pending if m.key not in verdicts]
    return verdicts


def _one_child(
    manifests: list[PluginManifest], settings: dict[str, Any], timeout: float
) -> dict[str, Verdict]:
    """Probe in order until one fails; the verdicts reached (the failing one included)."""
    read_fd, write_fd = os.pipe()
    payload = [{**_manifest_fields(m), "settings": settings.get(m.key) or {}} for m in manifests]
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "workbench.core.plugins.probe", str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write_fd,),
            start_new_session=True,  # its whole group is killed on a timeout
        )
    except OSError as exc:
        logger.warning("plugin probe could not start: %s", exc)
        os.close(read_fd)
        os.close(write_fd)
        return {}
    os.close(write_fd)
    verdicts: dict[str, Verdict] = {}
    try:
        assert child.stdin is not None  # stdin=PIPE
        with contextlib.suppress(BrokenPipeError):
            child.stdin.write(json.dumps(payload, default=str).encode())
            child.stdin.close()
        _follow(child, read_fd, timeout, verdicts)
    finally:
        os.close(read_fd)
        _kill(child)
    return verdicts


def _follow(
    child: subprocess.Popen[bytes], fd: int, timeout: float, verdicts: dict[str, Verdict]
) -> None:
    """Read the child's progress lines; a plugin that takes too long or ends it fails."""
    current = ""
    deadline = time.monotonic() + START_TIMEOUT
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                if current:
                    verdicts[current] = _failed(f"did not finish loading within {timeout:g} s")
                return
            chunk = os.read(fd, 4096)
            if not chunk:  # the child ended
                if current:
                    verdicts[current] = _failed(_ended(child))
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                event, _, key = line.decode("utf-8", "replace").partition("\t")
                if event == "start":
                    current, deadline = key, time.monotonic() + timeout
                elif event == "done" and key == current:
                    verdicts[key] = Verdict(True, at=time.time())
                    current, deadline = "", time.monotonic() + START_TIMEOUT


def _failed(why: str) -> Verdict:
    return Verdict(False, f"{why} (found by loading it in a separate process)", time.time())


def _ended(child: subprocess.Popen[bytes]) -> str:
    code = _exit_status(child.pid, 5.0)
    if code is None:
        return "closed its output while loading"
    if code < 0:
        return f"ended the process while loading (signal {signal.Signals(-code).name})"
    return f"ended the process while loading (exit code {code})"


def _exit_status(pid: int, timeout: float) -> int | None:
    """How the child ended (a negative signal number, as Popen says it), without reaping
    it: until it is reaped its number, and its group's, are no other process's."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(ChildProcessError):
            done = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if done is not None:
                killed = done.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
                return -done.si_status if killed else done.si_status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


def _kill(child: subprocess.Popen[bytes]) -> None:
    """End the child and every process of its group: what a plugin's `register` started
    there (a daemon) ends with the probe, even when the probe itself ended well. The
    group is killed before the child is reaped, so its number is still the probe's."""
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(5)


def _manifest_fields(manifest: PluginManifest) -> dict[str, Any]:
    return {
        "key": manifest.key,
        "name": manifest.name,
        "source": manifest.source,
        "path": str(manifest.path) if manifest.path is not None else None,
        "entry_point": manifest.entry_point,
        "trusted": manifest.trusted,
    }


# -- the child side ------------------------------------------------------------------


def _child(fd: int) -> None:
    """Import and register each plugin given on stdin, saying when each starts and ends."""
    from workbench.core.own_process import harden
    from workbench.core.plugins import loader

    harden()  # the app's environment, inherited for the plugins: its keys out of /proc
    from workbench.core.plugins.context import PluginContext

    out = os.fdopen(fd, "w", buffering=1, encoding="utf-8")
    for item in json.load(sys.stdin):
        settings = item.pop("settings")
        path = item.pop("path")
        manifest = PluginManifest(**item, path=Path(path) if path else None)
        if manifest.path is not None and manifest.trusted is not None:
            loader.guard(manifest.path, manifest.trusted)  # as in the app: the trusted only
        out.write(f"start\t{manifest.key}\n")
        # A plugin that raises is no danger: it fails in-process too, with its traceback.
        with contextlib.suppress(BaseException):
            loader.load_register(manifest)(PluginContext(manifest, config=settings))
        out.write(f"done\t{manifest.key}\n")
    out.flush()
    os._exit(0)  # a plugin's threads or atexit handlers must not keep the probe alive


if __name__ == "__main__":
    _child(int(sys.argv[1]))
