"""The backend interface, the local backend and the refusal of a backend we do not run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.backends.environment import scrubbed_env

if TYPE_CHECKING:
    from workbench.core.backends.sandbox_cause import Layout
    from workbench.core.backends.ssh import RemoteFiles


DEFAULT_COMMAND_TIMEOUT = 180  # Hermes's terminal.timeout default


class BackendError(Exception):
    """This call cannot run where the user said commands run; nothing ran, the message says why."""


@dataclass(frozen=True)
class Spawn:
    """How to start one terminal command: argv, its whole environment, the local directory,
    and what the reaper sets up around it (a sandbox's limits and network: limits.py,
    netns.py; JSON, carried in the reaper's request)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None  # None: a remote command changes directory itself
    release: Callable[[], None] | None = None  # call once the command has ended
    confine: dict[str, Any] = field(default_factory=dict)


@dataclass
class Backend:
    name: str = "local"
    passthrough: tuple[str, ...] = ()  # terminal.env_passthrough
    problems: list[str] = field(default_factory=list)  # reported by doctor, not fatal
    # terminal.timeout (or TERMINAL_TIMEOUT): a command's seconds when the model names none
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT

    # When set, nothing runs: every terminal and file call returns this.
    refusal: str = ""

    @property
    def remote(self) -> RemoteFiles | None:
        """Where the file tools run instead of here (None: here)."""
        return None

    @property
    def sandboxed(self) -> bool:
        """Commands run here in a sandbox that works (the one fact the gate reads)."""
        return False

    def working(self) -> tuple[bool, str]:
        """Whether calls can run here at all, and why not."""
        return not self.refusal, self.refusal

    def shell(self, command: str, cwd: str, timeout: float, *, session: str) -> Spawn:
        """How to run `command` in `cwd` (from `place`); `session` is the session's working
        directory, the one a sandbox lets it write (with the write roots), whatever `cwd`."""
        raise NotImplementedError

    def place(self, workdir: str | None, local_cwd: str) -> str:
        """Where a call's command runs, from its `workdir` (the local one already resolved)."""
        return local_cwd

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return scrubbed_env(self.passthrough, extra)

    def describe(self) -> str:
        """One line for the status line, the approval modal and doctor."""
        return self.name

    def label(self) -> str:
        """A few words for a screen's header: where the terminal runs."""
        return f"terminal: {self.name}"

    def outside(self) -> Backend | None:
        """The same place without the sandbox, for a command the user let out (None: none)."""
        return None

    def layout(self, session: str) -> Layout | None:
        """What a command of the session working in `session` may write and see, from the
        sandbox's own settings (None: no sandbox, nothing is laid out)."""
        return None

    def output_suggests(self, result: str) -> str | None:
        """What a failed command's output reads like when it reads like the sandbox's
        refusal: a possibility only, since the command printed it (None: it does not)."""
        return None


@dataclass
class LocalBackend(Backend):
    # Why commands run here unconfined ("" only for a backend no config chose: a tool called
    # directly, a test): said wherever the backend is shown, never silently.
    unconfined: str = ""

    def shell(self, command: str, cwd: str, timeout: float, *, session: str) -> Spawn:
        return Spawn(["bash", "-c", command], self.env(), cwd)

    def describe(self) -> str:
        if not self.unconfined:
            return "local (no sandbox)"
        return f"local, NOT confined: {self.unconfined}; the approval gate alone decides"

    def label(self) -> str:
        return (
            f"terminal: NOT confined: {self.unconfined}" if self.unconfined else "terminal: local"
        )


@dataclass
class RefusedBackend(Backend):
    """A backend Hermes has and we do not run: refuse, never fall back to local."""

    def __post_init__(self) -> None:
        self.refusal = self.refusal or (
            f"terminal.backend is '{self.name}', which hermes-tui does not run; nothing was "
            "run (here or anywhere). Set terminal.backend to local or ssh in config.yaml."
        )

    def shell(self, command: str, cwd: str, timeout: float, *, session: str) -> Spawn:
        raise BackendError(self.refusal)

    def describe(self) -> str:
        return f"{self.name} (not run by hermes-tui: terminal and file tools refused)"

    def label(self) -> str:
        return f"terminal: {self.name} REFUSED"
