"""The `ssh` backend: commands and files on another machine, through the system's OpenSSH client.

Every terminal command and every file operation is one `ssh` run: a small POSIX shell
script on the remote side (cd, head, cat, mv, find, grep, tar), with file contents on
stdin or stdout, never on a command line. `BatchMode` is always on (nothing may prompt
for a password over the workbench's screen); a host seen for the first time is added to
the known hosts, a changed host key is refused (`StrictHostKeyChecking accept-new`).
"""

from __future__ import annotations

import io
import os
import posixpath
import shlex
import subprocess
import tarfile
from dataclasses import dataclass, field
from typing import Any

from workbench.core.backends.base import Backend, BackendError, Spawn

CONNECT_TIMEOUT = 15
FILE_OP_TIMEOUT = 120.0
KILL_GRACE = 5  # seconds the remote `timeout` waits after TERM before KILL
MISSING, IS_DIR, UNREADABLE = 44, 45, 46  # exit codes our scripts use to say what they found


@dataclass
class SshBackend(Backend):
    name: str = "ssh"
    host: str = ""
    user: str = ""
    port: int | None = None
    key: str = ""
    options: list[str] = field(default_factory=list)
    cwd: str = ""  # remote working directory ("" = the remote home)

    @property
    def remote(self) -> RemoteFiles:
        return RemoteFiles(self)

    def target(self) -> str:
        where = f"{self.user}@{self.host}" if self.user else self.host
        return f"{where}:{self.port}" if self.port else where

    def describe(self) -> str:
        return f"ssh {self.target()}" + (f" in {self.cwd}" if self.cwd else "")

    def label(self) -> str:
        return f"terminal: ssh {self.target()}"

    # -- commands -----------------------------------------------------------------------

    def argv(self, script: str) -> list[str]:
        """ssh running `script` with /bin/sh on the remote side, whatever the login shell."""
        argv = ["ssh", "-T", "-o", "BatchMode=yes"]
        for option in self.options:  # the user's first: for ssh, the first value given wins
            argv += ["-o", option]
        argv += ["-o", "StrictHostKeyChecking=accept-new", "-o", "LogLevel=ERROR"]
        argv += ["-o", f"ConnectTimeout={CONNECT_TIMEOUT}"]
        if self.port:
            argv += ["-p", str(self.port)]
        if self.key:
            argv += ["-i", os.path.expanduser(self.key), "-o", "IdentitiesOnly=yes"]
        if self.user:
            argv += ["-l", self.user]
        return [*argv, "--", self.host, "exec /bin/sh -c " + shlex.quote(script)]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The ssh client's own environment: the allowlist and the user's agent, no secrets."""
        agent = {k: os.environ[k] for k in ("SSH_AUTH_SOCK",) if k in os.environ}
        return super().env({**agent, **(extra or {})})

    def place(self, workdir: str | None, local_cwd: str) -> str:
        """The remote directory a call runs in, as a shell word (expanded there)."""
        return remote_path(workdir or ".", self.cwd)

    def shell(self, command: str, cwd: str, timeout: float, *, session: str) -> Spawn:
        exports = "".join(
            f"export {name}={shlex.quote(os.environ[name])}; "
            for name in self.passthrough
            if name in os.environ
        )
        run = shlex.quote(command)
        script = (
            f"cd -- {cwd} || exit 1; {exports}"
            "if command -v timeout >/dev/null 2>&1; then "
            f"exec timeout -k {KILL_GRACE} {int(timeout) + 1} bash -c {run}; "
            f"else exec bash -c {run}; fi"
        )
        return Spawn(self.argv(script), self.env(), None)

    def run(
        self, script: str, data: bytes | None = None, timeout: float = FILE_OP_TIMEOUT
    ) -> subprocess.CompletedProcess[bytes]:
        """Run a file operation's script; raise BackendError when ssh itself fails."""
        try:
            done = subprocess.run(
                self.argv(script),
                input=data if data is not None else b"",
                capture_output=True,
                env=self.env(),
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise BackendError(f"ssh {self.target()}: no answer in {timeout:g}s") from None
        except OSError as exc:
            raise BackendError(f"cannot run ssh: {exc.strerror or exc}") from None
        if done.returncode == 255:  # ssh's own failure: connection, authentication, host key
            reason = done.stderr.decode(errors="replace").strip().splitlines()
            raise BackendError(f"ssh {self.target()}: {reason[-1] if reason else 'failed'}")
        return done


def remote_path(path: str, cwd: str) -> str:
    """A path as a remote shell word: `~` becomes "$HOME", relative ones join the cwd."""
    if path == "~" or path.startswith("~/"):
        return '"$HOME"' + shlex.quote(path[1:]) if len(path) > 1 else '"$HOME"'
    if not path.startswith("/") and cwd:
        if cwd == "~" or cwd.startswith("~/"):
            return remote_path(posixpath.join(cwd, path), "")
        path = posixpath.join(cwd, path)
    return shlex.quote(posixpath.normpath(path))


class RemoteFiles:
    """The file tools' operations on the remote machine, each one ssh run."""

    def __init__(self, backend: SshBackend) -> None:
        self.backend = backend

    def where(self, path: str) -> str:
        return remote_path(path, self.backend.cwd)

    def shown(self, path: str) -> str:
        """The path as messages name it (the remote side's own words)."""
        if path.startswith(("/", "~")) or not self.backend.cwd:
            return path
        return posixpath.normpath(posixpath.join(self.backend.cwd, path))

    def read_bytes(self, path: str, limit: int) -> bytes:
        p = self.where(path)
        script = f"[ -e {p} ] || exit {MISSING}; [ -d {p} ] && exit {IS_DIR}; exec head -c {limit} -- {p}"
        done = self.backend.run(script)
        self._check(done, path)
        return done.stdout

    def write_bytes(self, path: str, data: bytes) -> bool:
        """Replace the file (through a link, its target), atomically; True if it was created."""
        p = self.where(path)
        script = (
            f"[ -d {p} ] && exit {IS_DIR}; t=$(readlink -f -- {p} 2>/dev/null) || t={p}; "
            '[ -e "$t" ]; new=$?; mkdir -p -- "$(dirname -- "$t")" || exit 1; '
            'tmp="$t.hermes-tui.$$"; cat > "$tmp" || { rm -f -- "$tmp"; exit 1; }; '
            '[ "$new" = 0 ] && chmod --reference="$t" "$tmp" 2>/dev/null; '
            'mv -f -- "$tmp" "$t" || { rm -f -- "$tmp"; exit 1; }; echo "$new"'
        )
        done = self.backend.run(script, data)
        self._check(done, path)
        return done.stdout.strip() == b"1"

    def is_dir(self, path: str) -> bool:
        done = self.backend.run(f"[ -d {self.where(path)} ]")
        return done.returncode == 0

    def find(
        self, root: str, prune: frozenset[str], name_glob: str | None
    ) -> list[tuple[float, str]]:
        """Regular files under `root` (pruned folders and hidden ones skipped), newest first."""
        names = " -o ".join(f"-name {shlex.quote(n)}" for n in sorted(prune))
        match = f"-name {shlex.quote(name_glob)} " if name_glob else ""
        p = self.where(root)
        script = (
            f"[ -e {p} ] || exit {MISSING}; find {p} -mindepth 1 -type d \\( {names} "
            f"-o -name '.*' \\) -prune -o -type f {match}-printf '%T@ %p\\0'"
        )
        done = self.backend.run(script)
        self._check(done, root)
        found = []
        for item in done.stdout.split(b"\0"):
            stamp, _, name = item.decode(errors="replace").partition(" ")
            if name:
                found.append((float(stamp), name))
        return found

    def grep(self, paths: list[str], pattern: str, fixed: bool) -> list[str] | None:
        """The files among `paths` whose text grep finds `pattern` in (binary ones skipped),
        so only those cross the network; None when the remote grep cannot read the pattern."""
        if not paths:
            return []
        word = shlex.quote(pattern)
        kind = "-F" if fixed else "-P"
        script = (
            f"printf '' | grep -q {kind} -e {word} 2>/dev/null; [ $? -eq 2 ] && exit {UNREADABLE}; "
            f"xargs -0 grep -lIZs {kind} -e {word} --; exit 0"
        )
        done = self.backend.run(script, b"".join(p.encode() + b"\0" for p in paths))
        if done.returncode == UNREADABLE:
            return None
        return [p.decode(errors="replace") for p in done.stdout.split(b"\0") if p]

    def read_many(self, paths: list[str], limit: int) -> dict[str, bytes]:
        """Several files at once (a tar stream), each cut at `limit` bytes."""
        if not paths:
            return {}
        listing = b"".join(p.encode() + b"\0" for p in paths)
        done = self.backend.run("exec tar -cf - --null --no-recursion -T - 2>/dev/null", listing)
        asked = {p.lstrip("/"): p for p in paths}  # tar drops the leading slash
        out: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(done.stdout), mode="r:") as archive:
            for member in archive:
                handle = archive.extractfile(member) if member.isfile() else None
                if handle is not None and member.name in asked:
                    out[asked[member.name]] = handle.read(limit)
        return out

    def _check(self, done: subprocess.CompletedProcess[bytes], path: str) -> None:
        if done.returncode == MISSING:
            raise FileNotFoundError(2, "No such file or directory", self.shown(path))
        if done.returncode == IS_DIR:
            raise IsADirectoryError(21, "Is a directory", self.shown(path))
        if done.returncode != 0:
            reason = done.stderr.decode(errors="replace").strip().splitlines()
            raise OSError(f"{reason[-1] if reason else f'exit {done.returncode}'}")


def ssh_backend(get: Any, passthrough: tuple[str, ...], problems: list[str]) -> Backend:
    from workbench.core.backends.base import RefusedBackend

    def setting(key: str, env_name: str) -> Any:
        value = get(f"terminal.{key}")
        return value if value not in (None, "") else os.environ.get(env_name)

    host = str(setting("ssh_host", "TERMINAL_SSH_HOST") or "").strip()
    if not host or host.startswith("-"):
        return RefusedBackend(
            name="ssh",
            passthrough=passthrough,
            refusal="terminal.backend is ssh, but terminal.ssh_host is not set (or is not a "
            "host name); nothing was run, here or anywhere",
        )
    port = setting("ssh_port", "TERMINAL_SSH_PORT")
    try:
        port_number = int(port) if port not in (None, "") else None
    except (TypeError, ValueError):
        problems.append(f"terminal.ssh_port {port!r} is not a number; ssh's default is used")
        port_number = None
    options = get("terminal.ssh_options") or []
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        problems.append("terminal.ssh_options must be a list of `Key=value` strings; ignored")
        options = []
    return SshBackend(
        passthrough=passthrough,
        host=host,
        user=str(setting("ssh_user", "TERMINAL_SSH_USER") or ""),
        port=port_number,
        key=str(setting("ssh_key", "TERMINAL_SSH_KEY") or ""),
        options=list(options),
        cwd=str(get("terminal.cwd") or "") if get("terminal.cwd") not in (".", None) else "",
    )
