"""What a sandboxed command may use: memory, CPU, processes and the size of its /tmp.

Hermes's bubblewrap backend sets its limits with `prlimit` in front of bwrap; its keys are
read here, with defaults chosen by measurement (`bench/bench_sandbox_limits.py`, and
docs/security.md for the numbers); 0 switches one off:

* `terminal.bubblewrap_memory_mb` (`TERMINAL_BUBBLEWRAP_MEMORY_MB`), default 1024: each
  process's RLIMIT_DATA, its private writable memory. Hermes sets RLIMIT_AS (256), the
  address space, which also counts what V8, the JVM and WebAssembly only reserve: `node -e 1`
  needs 719 MB of it (63 MB of data), npm 1039 MB (127), `java -version` 4028 MB (495).
* `terminal.bubblewrap_cpu_seconds` (`TERMINAL_BUBBLEWRAP_CPU_SECONDS`), default 600: each
  process's RLIMIT_CPU. The terminal's own timeout (180 s, at most 600 s) already ends every
  process a command started; a single pytest of this project's core tests takes 97 s of CPU,
  so Hermes's 30 would end it. At 600 only a process with several busy threads reaches it
  before the timeout does.
* `terminal.bubblewrap_max_procs` (`TERMINAL_BUBBLEWRAP_MAX_PROCS`), default 256: processes
  and threads inside the sandbox. RLIMIT_NPROC, set by the reaper on the sandbox's first
  process inside its user namespace (set in front of bwrap, as Hermes does, the kernel would
  count every process of the user outside the sandbox too). The kernel never holds it for
  root (uid 0 is exempt, in a user namespace too), so as root a pids cgroup per command holds
  it instead; where none can be made that is said (`problems`, the header, doctor).
* `terminal.sandbox_tmp_mb` (ours), default 1024: the size of each of /tmp, /var/tmp and
  /dev/shm inside (tmpfs, RAM), so filling one fails with "No space left on device".

The reaper sets them (builtins/terminal/confine.py) from the request `limits_request` makes.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MB = 1 << 20
CGROUP_ROOT = "/sys/fs/cgroup"


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024
    cpu_seconds: int = 600
    max_procs: int = 256
    tmp_mb: int = 1024


DEFAULT = Limits()
NONE = Limits(0, 0, 0, 0)

# field -> (Hermes's key, its environment variable)
KEYS = {
    "memory_mb": ("terminal.bubblewrap_memory_mb", "TERMINAL_BUBBLEWRAP_MEMORY_MB"),
    "cpu_seconds": ("terminal.bubblewrap_cpu_seconds", "TERMINAL_BUBBLEWRAP_CPU_SECONDS"),
    "max_procs": ("terminal.bubblewrap_max_procs", "TERMINAL_BUBBLEWRAP_MAX_PROCS"),
    "tmp_mb": ("terminal.sandbox_tmp_mb", "TERMINAL_SANDBOX_TMP_MB"),
}


def limits_from(setting: Callable[[str, str], Any], problems: list[str]) -> Limits:
    """The limits config.yaml (or the environment) sets; a value that cannot be read keeps
    the default, which is a limit, and is named in `problems`."""
    found: dict[str, int] = {}
    for name, (key, env) in KEYS.items():
        value = setting(key, env)
        if value is None or value == "":
            continue
        number = _count(value)
        if number is None:
            default = getattr(Limits(), name)
            problems.append(f"{key} must be a whole number (0: no limit), not {value!r}: {default}")
            continue
        found[name] = number
    return Limits(**found)


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def tmpfs_args(limits: Limits) -> list[str]:
    """bubblewrap's private /tmp, /var/tmp and /dev/shm, each of the size set (after `--dev`)."""
    size = ["--size", str(limits.tmp_mb * MB)] if limits.tmp_mb else []
    return [arg for place in ("/tmp", "/var/tmp", "/dev/shm") for arg in (*size, "--tmpfs", place)]


def limits_request(limits: Limits) -> dict[str, Any]:
    """What the reaper sets: rlimits in the command's process before it execs bubblewrap,
    the process limit inside the sandbox (`nproc`) or, as root, its pids cgroup."""
    rlimits = []
    if limits.memory_mb:
        rlimits.append(["DATA", limits.memory_mb * MB, limits.memory_mb * MB])
    if limits.cpu_seconds:  # SIGXCPU at the soft limit ("CPU time limit exceeded"), then KILL
        rlimits.append(["CPU", limits.cpu_seconds, limits.cpu_seconds + 1])
    request: dict[str, Any] = {"rlimits": rlimits}
    if not limits.max_procs:
        return request
    if os.geteuid() != 0:
        request["nproc"] = limits.max_procs
    else:
        parent = pids_cgroup()[0]
        if parent is not None:
            request["pids_cgroup"] = {"parent": parent, "max": limits.max_procs}
    return request


def process_limit_missing(limits: Limits) -> str:
    """Why the process limit does not hold here ("" when it does or is switched off)."""
    if not limits.max_procs or os.geteuid() != 0:
        return ""
    why = pids_cgroup()[1]
    if not why:
        return ""
    return (
        "no process limit: as root the kernel does not hold RLIMIT_NPROC "
        f"(terminal.bubblewrap_max_procs), and no pids cgroup can be made here ({why})"
    )


def limits_line(limits: Limits) -> str:
    """A few words for the backend's line: what holds, and what is switched off."""
    parts = [
        f"{limits.memory_mb} MB memory" if limits.memory_mb else "no memory limit",
        f"{limits.cpu_seconds} s CPU" if limits.cpu_seconds else "no CPU limit",
        f"{limits.max_procs} processes" if limits.max_procs else "no process limit",
        f"{limits.tmp_mb} MB /tmp" if limits.tmp_mb else "/tmp of any size",
    ]
    if process_limit_missing(limits):
        parts[2] = "NO process limit (root, no pids cgroup)"
    return "limits: " + ", ".join(parts)


@functools.cache
def pids_cgroup() -> tuple[str | None, str]:
    """The folder under which a command's pids cgroup can be made, or why none can: tried
    once by making (and removing) one."""
    return find_pids_cgroup(CGROUP_ROOT, _own_cgroups())


def find_pids_cgroup(root: str, own: dict[str, str]) -> tuple[str | None, str]:
    """cgroup v1's pids hierarchy, or v2's with the pids controller, below our own cgroup
    (`own`: controller -> path, "" for v2) where that is visible, else at its top."""
    v1 = os.path.join(root, "pids")
    if os.path.isfile(os.path.join(v1, "cgroup.procs")):
        return _try(_below(v1, own.get("pids", "/")))
    if "pids" in _read(os.path.join(root, "cgroup.controllers")).split():
        parent = _below(root, own.get("", "/"))
        _enable_pids(parent)
        return _try(parent)
    return None, f"neither cgroup v1's {v1} nor cgroup v2's pids controller in {root}"


def _below(mount: str, path: str) -> str:
    place = os.path.join(mount, path.lstrip("/"))
    return place if os.path.isdir(place) else mount  # another namespace's path: the top is ours


def _enable_pids(parent: str) -> None:
    """v2 gives a child the pids controller only if its parent's subtree has it."""
    control = os.path.join(parent, "cgroup.subtree_control")
    if "pids" in _read(control).split():
        return
    try:
        with open(control, "w") as handle:
            handle.write("+pids")
    except OSError:
        pass  # the probe says what is missing


def _try(parent: str) -> tuple[str | None, str]:
    probe = os.path.join(parent, f"hermes-tui-probe-{os.getpid()}")
    try:
        os.mkdir(probe)
    except OSError as exc:
        return None, f"cannot make a cgroup in {parent}: {exc.strerror or exc}"
    try:
        if not os.path.isfile(os.path.join(probe, "pids.max")):
            return None, f"a cgroup made in {parent} has no pids.max"
        return parent, ""
    finally:
        os.rmdir(probe)


def _own_cgroups() -> dict[str, str]:
    """/proc/self/cgroup: controller -> path ("" is cgroup v2's line)."""
    found: dict[str, str] = {}
    for line in _read("/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") or [""]:
                found.setdefault(controller, parts[2])
    return found


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""
