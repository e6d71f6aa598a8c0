"""Commands that change the machine itself: kernel settings, network interfaces and routes,
mounts, kernel modules, the clock, device nodes, loop devices, swap, firewall rules, file
capabilities and attributes.

Each program is one entry of data (`CHANGES`): which of its forms change the host (an
option, a subcommand, an operand of a given shape, a number of operands) and which only
read it (`sysctl -a`, `ip addr`, `date`, `mount` alone). A change asks as a system change,
in the sandbox or not: as root, outside it, nothing else stands between such a command and
the machine. An operand known only at run time is taken as a change (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

Rule = Callable[[Context, Cmd], None]
RULES: dict[str, Rule] = {}

SYSTEM_CHANGE = "system-change"


@dataclass(frozen=True)
class Change:
    what: str  # what the program changes, for the reason shown
    always: bool = False  # every form changes it (help and version aside)
    options: tuple[str, ...] = ()  # long options whose presence makes it a change
    short: str = ""  # short option letters that do
    reads: tuple[str, ...] = ()  # long options that make any form only read (a dry run)
    read_short: str = ""
    subs: tuple[str, ...] = ()  # first operands that change (one ending in "-" is a prefix)
    operands: int = 0  # this many operands or more make it a change (0: not a rule)
    operand: str = ""  # a pattern: an operand that matches it makes it a change
    at: tuple[int, str] | None = None  # (index, pattern): that operand decides
    attach: tuple[tuple[str, ...], str] = ((), "")  # options that change once an operand is given
    values: frozenset[str] = frozenset()  # options that take a value (not operands)


_IPTABLES = Change(
    "firewall rules",
    options=("--append", "--insert", "--delete", "--replace", "--new-chain", "--delete-chain",
             "--flush", "--zero", "--policy", "--rename-chain"),
    short="AIDRNXFZPE",
    values=frozenset({"-t", "--table", "-w", "--wait", "-W", "--wait-interval", "-M",
                      "--modprobe"}),
)  # fmt: skip

CHANGES: dict[str, Change] = {
    "sysctl": Change(
        "kernel settings",
        options=("--write", "--load", "--system"),
        short="wp",
        operand=r"=",
    ),
    "ifconfig": Change("network interfaces", operands=2),
    "route": Change(
        "the routing table", subs=("add", "del", "delete", "flush"), values=frozenset({"-A"})
    ),
    "modprobe": Change(
        "kernel modules",
        always=True,
        reads=(
            "--dry-run",
            "--show-depends",
            "--showconfig",
            "--show-config",
            "--resolve-alias",
            "--dump-modversions",
            "--show-modversions",
        ),
        read_short="ncDR",
    ),
    "insmod": Change("kernel modules", always=True),
    "rmmod": Change("kernel modules", always=True),
    "date": Change(
        "the system clock",
        options=("--set",),
        short="s",
        operand=r"^[^+]",  # `date MMDDhhmm`: POSIX's way to set it
        values=frozenset({"-d", "--date", "-f", "--file", "-r", "--reference"}),
    ),
    "hwclock": Change(
        "the hardware clock or the system clock",
        options=("--set", "--systohc", "--hctosys", "--adjust", "--systz", "--param-set"),
        short="wsa",
    ),
    "timedatectl": Change(
        "the clock, time zone or time synchronisation",
        subs=("set-",),
        values=frozenset({"-H", "--host", "-M", "--machine", "-p", "--property"}),
    ),
    "hostname": Change(
        "the host name",
        options=("--file",),
        short="F",
        operands=1,
        values=frozenset({"-F", "--file"}),
    ),
    "hostnamectl": Change(
        "the host name", subs=("set-",), values=frozenset({"-H", "--host", "-M", "--machine"})
    ),
    "mknod": Change(
        "device nodes",
        at=(1, r"^[bcu]$"),  # a block or character device; `p` is a FIFO, as mkfifo
        values=frozenset({"-m", "--mode", "-Z", "--context"}),
    ),
    "losetup": Change(
        "loop devices",
        options=("--detach", "--detach-all", "--set-capacity"),
        short="dDc",
        operands=2,
        attach=(("--find",), "f"),
        values=frozenset(
            {
                "-o",
                "--offset",
                "--sizelimit",
                "-b",
                "--sector-size",
                "-j",
                "--associated",
                "-O",
                "--output",
            }
        ),
    ),
    "swapon": Change(
        "swap",
        options=("--all",),
        short="aLU",
        operands=1,
        values=frozenset({"-p", "--priority", "-o", "--options", "-L", "-U"}),
    ),
    "swapoff": Change("swap", always=True),
    "iptables": _IPTABLES,
    "ip6tables": _IPTABLES,
    "iptables-legacy": _IPTABLES,
    "ip6tables-legacy": _IPTABLES,
    "iptables-nft": _IPTABLES,
    "ip6tables-nft": _IPTABLES,
    "iptables-restore": Change("firewall rules", always=True, reads=("--test",), read_short="t"),
    "ip6tables-restore": Change("firewall rules", always=True, reads=("--test",), read_short="t"),
    "nft": Change(
        "firewall rules",
        options=("--file", "--interactive"),
        short="fi",
        reads=("--check",),
        read_short="c",
        subs=(
            "add",
            "delete",
            "insert",
            "replace",
            "create",
            "flush",
            "reset",
            "destroy",
            "rename",
        ),
    ),
    "ufw": Change(
        "firewall rules",
        subs=(
            "allow",
            "deny",
            "reject",
            "limit",
            "delete",
            "insert",
            "prepend",
            "enable",
            "disable",
            "reset",
            "default",
            "logging",
            "reload",
            "route",
        ),
    ),
    "setcap": Change("file capabilities", always=True, read_short="v"),
    "chattr": Change("file attributes (immutable, append-only, ...)", always=True),
}

# `ip OBJECT VERB`: objects in the order ip matches an abbreviation (`ip a` is address, `ip l`
# link, `ip r` route), and the verbs that change each (an abbreviation of one changes: ip
# takes any prefix, so `ip l s` is `ip link set`, while `ip a s` is `ip addr show`).
_IP_OBJECTS = (
    "address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour", "ntable",
    "ntbl", "link", "l2tp", "fou", "ila", "macsec", "tunnel", "tunl", "tuntap", "tap", "token",
    "tcpmetrics", "tcp_metrics", "monitor", "xfrm", "mroute", "mrule", "netns", "netconf",
    "vrf", "sr", "nexthop", "mptcp", "ioam", "stats", "help",
)  # fmt: skip
_IP_CHANGES = ("add", "change", "chg", "replace", "delete", "del", "set", "flush", "append",
               "prepend", "restore", "attach", "detach", "exec", "push", "flushall")  # fmt: skip
_IP_VERBS = {
    "address": ("add", "change", "chg", "replace", "delete", "flush", "restore"),
    "route": ("add", "change", "replace", "delete", "append", "prepend", "flush", "restore"),
    "rule": ("add", "delete", "flush", "restore"),
    "neighbor": ("add", "change", "replace", "delete", "flush"),
    "neighbour": ("add", "change", "replace", "delete", "flush"),
    "link": ("add", "set", "change", "replace", "delete", "property"),
    "netns": ("add", "delete", "set", "attach", "exec"),
}
_IP_READ_ONLY = frozenset({"monitor", "help", "stats", "netconf"})
_IP_VALUES = frozenset({"-n", "-netns", "-rc", "-rcvbuf", "-l", "-loops", "-f", "-family"})
_IP_BATCH = frozenset({"-b", "-batch"})


def _operands(cmd: Cmd, values: frozenset[str]) -> list[str | None]:
    """The operands, past the options that take a value."""
    found: list[str | None] = []
    skip = False
    for arg in cmd.args:
        if skip:
            skip = False
        elif arg is None or arg == "-" or not arg.startswith("-"):
            found.append(arg)
        elif arg == "--":
            continue
        else:
            skip = arg in values
    return found


def _verb(word: str | None, verbs: tuple[str, ...]) -> bool:
    """`word` (None: known only at run time) is one of `verbs`; one ending in "-" is a prefix."""
    if word is None:
        return True
    first = word.split()[0] if word.split() else word  # `nft 'add rule ...'`: one word
    return any(first.startswith(v) if v.endswith("-") else first == v for v in verbs)


def changes_host(change: Change, cmd: Cmd) -> bool:
    """The form of `cmd` changes what `change` says (not a listing, a check or a dry run)."""
    if cmd.has(*change.reads, short=change.read_short):
        return False
    if change.always or cmd.has(*change.options, short=change.short):
        return True
    operands = _operands(cmd, change.values)
    if change.operands and len(operands) >= change.operands:
        return True
    if change.operand and any(o is None or re.search(change.operand, o) for o in operands):
        return True
    if change.at is not None and len(operands) > change.at[0]:
        value = operands[change.at[0]]
        return value is None or re.search(change.at[1], value) is not None
    long, short = change.attach
    if operands and (long or short) and cmd.has(*long, short=short):
        return True
    return bool(change.subs) and bool(operands) and _verb(operands[0], change.subs)


def judge_change(ctx: Context, cmd: Cmd) -> None:
    change = CHANGES[cmd.name]
    if changes_host(change, cmd):
        ctx.flag(SYSTEM_CHANGE, f"{cmd.name} changes {change.what} of this machine", cmd.node)


_FIREWALLS = frozenset(n for n, c in CHANGES.items() if c.what == "firewall rules")


def _firewall(ctx: Context, cmd: Cmd) -> None:
    """Flushing the rules or dropping everything by default is worse than a change."""
    policy = any(
        a in ("-P", "--policy") and any(v in ("DROP", "REJECT") for v in cmd.args[i + 2 : i + 3])
        for i, a in enumerate(cmd.args)
    )
    if (
        policy
        or cmd.has("--flush", "--delete-chain", short="FX")
        or any(a in ("flush", "reset", "disable") for a in cmd.args)
    ):
        ctx.flag(
            "firewall", f"{cmd.name} flushes or disables firewall rules", cmd.node, Severity.HIGH
        )
    else:
        judge_change(ctx, cmd)


_MOUNT_VALUES = frozenset({"-t", "--types", "-o", "--options", "-O", "--test-opts", "-N",
                           "--namespace", "-T", "--fstab"})  # fmt: skip


def _mounts(ctx: Context, cmd: Cmd) -> None:
    """`mount` alone (or `-l`, `-t TYPE`) lists; given what to mount, `-a`, a label or a
    remount it changes the mounts; `umount` given one, or `-a`, removes one."""
    bind = cmd.has("--bind", "--rbind", short="B") or any(
        a and re.search(r"(?:^|,)r?bind(?:,|$)", a) for a in cmd.args
    )
    if cmd.name == "mount" and bind:  # writes through the mount point land in its source,
        reason = "mount --bind puts one folder over another: writes there land in the first"
        ctx.flag("mounts", reason, cmd.node, Severity.HIGH)  # which no path shows
        return
    changes = (
        bool(_operands(cmd, _MOUNT_VALUES))
        or cmd.has("--all", "--move", "--label", "--uuid", "--source", "--target", short="aLU")
        or any(a and "remount" in a for a in cmd.args)
    )
    if changes:
        ctx.flag("mounts", f"{cmd.name} changes or removes mounted filesystems", cmd.node)


def ip_changes(cmd: Cmd) -> bool:
    """`ip OBJECT VERB ...` changes the network's set-up (a batch file: what it runs)."""
    if any(a in _IP_BATCH for a in cmd.args if a):
        return True
    operands = _operands(cmd, _IP_VALUES)
    if not operands:
        return False
    word = operands[0]
    if word is None:
        return True
    found = next((o for o in _IP_OBJECTS if o.startswith(word)), None)
    if found is None:
        return True  # an object ip has that we do not know: fail closed
    if found in _IP_READ_ONLY or len(operands) < 2:
        return False  # `ip addr`, `ip r`: a listing
    verb = operands[1]
    if verb is None:
        return True
    return any(v.startswith(verb) for v in _IP_VERBS.get(found, _IP_CHANGES))


def _ip(ctx: Context, cmd: Cmd) -> None:
    if ip_changes(cmd):
        ctx.flag(SYSTEM_CHANGE, "ip changes the network set-up of this machine", cmd.node)


for _name in CHANGES:
    RULES[_name] = _firewall if _name in _FIREWALLS else judge_change
del RULES["mknod"]  # commands.py's rule for what it creates calls judge_change
RULES.update(ip=_ip, mount=_mounts, umount=_mounts)
