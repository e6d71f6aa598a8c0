"""The sandbox's network (`terminal.network`): the internet, but not the host's loopback.

* `on` (the default): each command gets a network namespace of its own, reaching out through
  slirp4netns (user-mode networking, Debian's `slirp4netns`) started with
  `--disable-host-loopback`: the internet and the machine's other addresses are reachable;
  services of the user's other programs on 127.0.0.1 and abstract unix sockets (`@name`,
  which belong to a network namespace) are not. Its own loopback works (a server the
  command starts is reachable from the same command). DNS goes to slirp4netns's resolver,
  named in an /etc/resolv.conf of its own. Without slirp4netns (or /dev/net/tun, which
  it needs: a container may have none, a sandbox has none) it is `host`, and said so.
* `host`: the host's network, loopback and abstract sockets too.
* `off`: none, loopback aside (`terminal.sandbox_network: false` means this).

The reaper starts slirp4netns on the namespace bubblewrap made before the command runs
(see handshake.py) and it ends with the command.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from workbench.core.backends.handshake import RESOLV_FD

MODES = ("on", "host", "off")
DNS = "10.0.2.3"  # slirp4netns's resolver with --configure (10.0.2.0/24)
RESOLV_CONF = "/etc/resolv.conf"
NO_SLIRP = "slirp4netns is not installed (Debian: apt-get install slirp4netns)"
TUN = "/dev/net/tun"
NO_TUN = f"there is no {TUN}, which slirp4netns needs"


def network_mode(get: Any, problems: list[str]) -> str:
    """`terminal.network`, else the older `terminal.sandbox_network`; a value that cannot
    be read takes the network away, and is named in `problems`."""
    value = get("terminal.network")
    key = "terminal.network"
    if value is None:
        value, key = get("terminal.sandbox_network"), "terminal.sandbox_network"
        if value is None:
            return "on"
    if isinstance(value, bool):  # YAML reads a bare on/off as true/false
        return "on" if value else "off"
    if isinstance(value, str) and value.strip().lower() in MODES:
        return value.strip().lower()
    problems.append(f"{key} must be on, host or off, not {value!r}: the network is off")
    return "off"


def slirp4netns() -> str | None:
    return shutil.which("slirp4netns")


def effective(mode: str) -> tuple[str, str]:
    """The network commands get, and why it is not the one asked for ("" when it is)."""
    if mode != "on":
        return mode, ""
    if slirp4netns() is None:
        return "host", NO_SLIRP
    if not os.path.exists(TUN):  # a container without it, or hermes-tui in a sandbox
        return "host", NO_TUN
    return mode, ""


def network_args(mode: str) -> list[str]:
    """bubblewrap's part for the network (after /run is made private)."""
    if mode == "host":
        return [
            arg
            for resolver in ("/run/systemd/resolve", "/run/resolvconf")
            if os.path.isdir(resolver)  # /etc/resolv.conf often points in here
            for arg in ("--ro-bind", resolver, resolver)
        ]
    resolv = _resolv_conf() if mode == "on" else None
    if resolv is not None:
        return ["--unshare-net", "--ro-bind-data", str(RESOLV_FD), resolv]
    return ["--unshare-net"]


def _resolv_conf() -> str | None:
    """Where /etc/resolv.conf leads (a link into /run, often: the private /run holds ours)."""
    return os.path.realpath(RESOLV_CONF) if os.path.lexists(RESOLV_CONF) else None


def network_request(mode: str) -> dict[str, Any]:
    """What the reaper does for the network: start slirp4netns on the sandbox's network
    namespace and the user namespace that owns it ({netns}, {userns}, {ready_fd},
    {exit_fd} are filled in there) and give bubblewrap the resolv.conf."""
    path = slirp4netns() if mode == "on" else None
    if path is None:
        return {}
    argv = [path, "--configure", "--mtu=65520", "--disable-host-loopback"]
    argv += ["--userns-path={userns}", "--netns-type=path"]
    argv += ["--ready-fd={ready_fd}", "--exit-fd={exit_fd}", "{netns}", "tap0"]
    request: dict[str, Any] = {"slirp4netns": argv}
    if _resolv_conf() is not None:
        request["files"] = {str(RESOLV_FD): f"nameserver {DNS}\n"}
    return request


def network_label(mode: str) -> str:
    """Fewer words, for a header ("" for the default)."""
    shown, why = effective(mode)
    missing = {NO_SLIRP: " (no slirp4netns)", NO_TUN: f" (no {TUN})"}.get(why, "")
    return {"on": "", "host": "host network", "off": "no network"}[shown] + missing


def network_line(mode: str) -> str:
    """A few words for the backend's line."""
    shown, why = effective(mode)
    if why:
        return f"network: the HOST's, loopback too ({why})"
    return {
        "on": "network on (not the host's loopback)",
        "host": "network: the host's, loopback too",
        "off": "network off",
    }[shown]
