"""The backend the user chose, read from config.yaml with Hermes's keys (or its TERMINAL_* env).

```yaml
terminal:
  backend: local            # local (default) or ssh; docker, modal, ... are refused
  sandbox: auto             # auto (default): bubblewrap where it works, else unconfined and
                            # said so; true: bubblewrap or refuse; false: unconfined
  network: on               # on (default): the internet, not the host's loopback or
                            # abstract sockets (slirp4netns); host: the host's; off: none
  bubblewrap_memory_mb: 1024     # Hermes's keys (or TERMINAL_BUBBLEWRAP_*): per process;
  bubblewrap_cpu_seconds: 600    # 0 switches one off (see limits.py)
  bubblewrap_max_procs: 256
  sandbox_tmp_mb: 1024      # the size of /tmp, /var/tmp and /dev/shm inside
  home_allow: [.config/nvim]      # dot entries of the home commands may read (Hermes's
                                  # bubblewrap_home_allow too); credential stores never
  bubblewrap_hide: [~/Documents/keys]   # covered in the sandbox besides the defaults
  env_passthrough: [GITHUB_TOKEN]   # variables the terminal gets besides the allowlist
  ssh_host: build.example.org
  ssh_user: me
  ssh_port: 22
  ssh_key: ~/.ssh/id_ed25519
  ssh_options: [UserKnownHostsFile=~/.ssh/known_hosts_work]   # more `ssh -o` options
  cwd: /srv/project         # where remote commands run (default: the remote home)
  timeout: 180              # a command's seconds when the model names none (or TERMINAL_TIMEOUT)
```
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.core import hermes_keys
from workbench.core.backends.base import Backend, LocalBackend, RefusedBackend
from workbench.core.backends.environment import passthrough_names
from workbench.core.backends.limits import KEYS, limits_from, process_limit_missing
from workbench.core.backends.netns import effective, network_mode
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status
from workbench.core.config import Config, hermes_home
from workbench.core.safety import secrets

KNOWN_ELSEWHERE = ("docker", "singularity", "modal", "daytona", "podman", "kubernetes", "e2b")
_DEFAULT = LocalBackend()


def backend_for(kw: dict[str, Any]) -> Backend:
    """The backend a tool call runs in (the executor passes the session's)."""
    backend = kw.get("backend")
    backend = backend if isinstance(backend, Backend) else _DEFAULT
    if kw.get("outside_sandbox"):  # the user let this one command out of the sandbox
        return backend.outside() or backend
    return backend


# Settings that widen what a command may reach: an untrusted config.yaml (a second hard
# link, another owner: see `Config.untrusted`) may have been written by the agent itself.
_WIDENING = (
    "terminal.sandbox",
    "terminal.env_passthrough",
    "approvals.write_roots",
    "terminal.home_allow",
    "terminal.bubblewrap_home_allow",
    "terminal.network",
    *(key for key, _ in KEYS.values()),
)
HOME_ALLOW = ("terminal.home_allow", "terminal.bubblewrap_home_allow")


def backend_from_config(config: Config, home: Path | None = None) -> Backend:
    get, untrusted = _trusted_get(config)
    names, problems = passthrough_names(get("terminal.env_passthrough"))
    problems = [*untrusted, *problems, *_home_allow(get)]
    passthrough = tuple(names)
    name = str(_setting(get, "backend", "TERMINAL_ENV") or "local").strip().lower()
    if name == "ssh":
        from workbench.core.backends.ssh import ssh_backend

        backend: Backend = ssh_backend(get, passthrough, problems)
    elif name == "local":
        backend = _local(get, passthrough, home or hermes_home(), problems)
    else:
        backend = RefusedBackend(name=name, passthrough=passthrough)
    backend.problems.extend(problems)
    timeout = hermes_keys.read(get, hermes_keys.TERMINAL_TIMEOUT).value  # doctor says a bad one
    if timeout is not None:
        backend.command_timeout = int(timeout)
    return backend


def _trusted_get(config: Config) -> tuple[Any, list[str]]:
    """`config.get`, less the widening settings when the file is not trusted."""
    if not config.untrusted:
        return config.get, []

    def get(dotted: str, default: Any = None) -> Any:
        return default if dotted in _WIDENING else config.get(dotted, default)

    ignored = ", ".join(_WIDENING)
    return get, [f"{config.path} is not trusted ({config.untrusted}): {ignored} not read"]


def _local(get: Any, passthrough: tuple[str, ...], home: Path, problems: list[str]) -> Backend:
    """Confined where bubblewrap works, unless the user said `terminal.sandbox: false`."""
    sandbox = get("terminal.sandbox")
    if sandbox is False:
        return LocalBackend(passthrough=passthrough, unconfined="terminal.sandbox is false")
    auto = sandbox is None or (isinstance(sandbox, str) and sandbox.strip().lower() == "auto")
    if not auto and sandbox is not True:
        # Fail closed: a value we cannot read may have meant "on".
        problems.append(f"terminal.sandbox must be auto, true or false, not {sandbox!r}: it is on")
    works, why = bwrap_status()
    if auto and not works:  # said in the headers, chat's first line and doctor
        return LocalBackend(passthrough=passthrough, unconfined=f"no sandbox here ({why})")
    backend = SandboxBackend(
        passthrough=passthrough,
        network=network_mode(get, problems),
        limits=limits_from(lambda key, env: _value(get, key, env), problems),
        hermes_home=home.absolute(),
        write_roots=write_roots(get("approvals.write_roots")),
        hide=secrets.user_hidden(),  # terminal.bubblewrap_hide, as _home_allow read it
    )
    # What the sandbox cannot hold here is said (doctor, the session's first notes).
    why = effective(backend.network)[1]
    if why:
        problems.append(
            f"terminal.network is on, but {why}: sandboxed commands get the host's network, "
            "its loopback and abstract sockets too"
        )
    missing = process_limit_missing(backend.limits)
    if missing:
        problems.append(f"terminal.bubblewrap_max_procs: {missing}")
    return backend


def _home_allow(get: Any) -> list[str]:
    """What the home shows besides the defaults, and what the user hides besides them (the
    gate and the file tools read both too, sandbox or not): set on every read of the
    config; what cannot be shown is said."""
    problems: list[str] = []
    units = [unit for key in HOME_ALLOW for unit in _paths(get, key, problems)]
    secrets.hide_also(_paths(get, "terminal.bubblewrap_hide", problems))
    return [*problems, *secrets.show_also(units)]


def _paths(get: Any, key: str, problems: list[str]) -> tuple[str, ...]:
    value = get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problems.append(f"{key} must be a list of paths; it is not read")
        return ()
    return tuple(value)


def write_roots(value: Any) -> tuple[str, ...]:
    """`approvals.write_roots`: directories besides the working one where writes need no
    approval and a sandboxed command may write."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(
        os.path.abspath(os.path.expanduser(str(v))) for v in value if isinstance(v, str) and v
    )


def _setting(get: Any, key: str, env_name: str) -> Any:
    return _value(get, f"terminal.{key}", env_name)


def _value(get: Any, dotted: str, env_name: str) -> Any:
    """config.yaml's value, else the environment's (Hermes's TERMINAL_* variables)."""
    value = get(dotted)
    return value if value not in (None, "") else os.environ.get(env_name)
