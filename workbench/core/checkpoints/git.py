"""Running git against the shadow store, never the user's repository or configuration.

Every call sets `GIT_DIR` (the store), `GIT_WORK_TREE` (the project) and `GIT_INDEX_FILE`
(the project's own index), nulls the global and system configuration, drops every other
`GIT_*` variable the app was started with (a `GIT_DIR` inherited from a hook would point
elsewhere), and runs with the C locale so its messages can be read. The store's own config
turns hooks, signing, reflogs and automatic gc off (see `shadow.init_store`).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 60.0
# Only to word the message: whether the store is damaged is never read from git's text (a
# project's file names appear in it), but from the store itself (`shadow.damage`).
_DISK_FULL = re.compile(r"no space left on device|disk quota exceeded|file too large", re.I)


class GitFailed(Exception):
    """git exited non-zero; `disk_full` when its message says the disk is full."""

    def __init__(self, args: list[str], code: int, stderr: str) -> None:
        self.args_run, self.code, self.stderr = args, code, stderr.strip()
        self.disk_full = bool(_DISK_FULL.search(stderr))
        super().__init__(self.line)

    @property
    def line(self) -> str:
        last = [ln for ln in self.stderr.splitlines() if ln.strip()]
        detail = last[-1] if last else f"exit status {self.code}"
        return f"git {self.args_run[0]} failed: {detail}"


@dataclass(frozen=True)
class Git:
    store: Path
    work_tree: str | None = None
    index: Path | None = None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.store),
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_SYSTEM=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_NO_REPLACE_OBJECTS="1",
            GIT_AUTHOR_NAME="hermes-tui",
            GIT_AUTHOR_EMAIL="checkpoints@hermes-tui.invalid",
            GIT_COMMITTER_NAME="hermes-tui",
            GIT_COMMITTER_EMAIL="checkpoints@hermes-tui.invalid",
            LC_ALL="C",
            LANGUAGE="C",
        )
        if self.work_tree is not None:
            env["GIT_WORK_TREE"] = self.work_tree
        if self.index is not None:
            env["GIT_INDEX_FILE"] = str(self.index)
        return env

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        ok: tuple[int, ...] = (0,),
        timeout: float = TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run `git ARGS`; a code outside `ok` raises GitFailed. Output is bytes."""
        command = ["git", *args]
        try:
            done = subprocess.run(
                command,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                env={**self.env(), **(env or {})},
                cwd=self.work_tree or self.store.parent,
                timeout=timeout,
                check=False,
                umask=0o077,  # the store is private: what git makes in it is 0600 / 0700
            )
        except subprocess.TimeoutExpired as exc:
            raise GitFailed(list(args), -1, f"timed out after {timeout:g}s") from exc
        except OSError as exc:  # git missing, or the working directory went away
            raise GitFailed(list(args), -1, str(exc)) from exc
        if done.returncode not in ok:
            raise GitFailed(list(args), done.returncode, done.stderr.decode(errors="replace"))
        return done

    def text(
        self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
    ) -> str:
        out = self.run(*args, stdin=stdin, env=env).stdout
        return out.decode("utf-8", errors="surrogateescape")
