"""Whether a tool is available now: its `check_fn`, run lazily and cached for a short time.

A check result is kept `ttl` seconds, never longer: there is no grace period that keeps
advertising a tool whose check now fails. The cache is keyed by the check callable (tools
sharing one check run it once) and is pruned to the checks of live tools, so the new
closures an MCP refresh makes do not pile up. A check that raises means unavailable,
whatever it raised; `ToolUnavailable` carries the reason to show.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

DEFAULT_CHECK_TTL_SECONDS = 5.0

CheckFn = Callable[[], Any]


class ToolUnavailable(Exception):
    """Raised by a `check_fn` to say the tool is unavailable and why."""


@dataclass(frozen=True, slots=True)
class Availability:
    available: bool
    reason: str = ""


AVAILABLE = Availability(True)


@dataclass(slots=True)  # not frozen: one is made per check run, and frozen ones are slower
class CheckResult:
    ok: bool
    reason: str
    expires: float  # time.monotonic() after which the check runs again


class CheckCache:
    """Check callable → its last result, for `ttl` seconds.

    Readers add to the cache without the registry's lock; every change replaces the dict
    in one step, so a reader never iterates one that is being changed. `epoch` goes up
    whenever results are dropped, so whoever built something from them knows to rebuild.
    """

    def __init__(self, ttl: float = DEFAULT_CHECK_TTL_SECONDS) -> None:
        self.ttl = ttl
        self.results: dict[CheckFn, CheckResult] = {}
        self.epoch = 0

    def invalidate(self) -> None:
        """Forget every result: the next read runs each check again."""
        self.results = {}
        self.epoch += 1

    def prune(self, live: Collection[CheckFn]) -> None:
        """Keep only the results of `live` checks (the table's, after a change)."""
        results = dict(self.results)  # copied in one step: readers add to it unlocked
        if any(fn not in live for fn in results):
            self.results = {fn: r for fn, r in results.items() if fn in live}

    def run(self, fn: CheckFn, now: float) -> CheckResult:
        """The cached result of `fn` if still fresh at `now`, else a new one."""
        cached = self.results.get(fn)
        if cached is not None and cached.expires > now:
            return cached
        try:
            ok, reason = bool(fn()), ""
            if not ok:
                reason = f"{_check_name(fn)} returned False"
        except BaseException as exc:  # a check that raises means unavailable, whatever it raised
            ok = False
            reason = (
                str(exc) if isinstance(exc, ToolUnavailable) else f"{type(exc).__name__}: {exc}"
            )
        result = CheckResult(ok, reason, now + self.ttl)
        self.results[fn] = result
        return result

    def availability(
        self, fn: CheckFn | None, requires_env: Collection[str], now: float
    ) -> Availability:
        """A tool's availability from its check, with the missing variables as the reason
        when a check that names none fails and the tool declares them."""
        if fn is None:
            return AVAILABLE
        result = self.run(fn, now)
        if result.ok:
            return AVAILABLE
        missing = [v for v in requires_env if not os.environ.get(v)]
        if missing and result.reason.endswith(" returned False"):
            return Availability(False, "missing environment variable: " + ", ".join(missing))
        return Availability(False, result.reason)


def _check_name(fn: CheckFn) -> str:
    name = getattr(fn, "__name__", "")
    return f"{name}()" if name and name != "<lambda>" else "check_fn"
