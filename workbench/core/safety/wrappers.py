"""Programs that run the command they are given: peeled off so the command itself is judged.

`sudo`, `env`, `nice`, `timeout`, `xargs`, tracers (`strace`), privilege and namespace tools
(`setpriv`, `runuser`, `unshare`), launchers (`fakeroot`, `ssh-agent`)... A wrapper that
hands a whole command line to a shell (`script -qc`, `runuser -c`, `env -S`, `watch "..."`)
has that line judged as shell code.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.core.safety import xargs
from workbench.core.safety.settings import judge_setting
from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

_WRAPPER_VALUE_OPTIONS = {
    "sudo": frozenset(
        [
            "-u",
            "-g",
            "-C",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-D",
            "-T",
            "--user",
            "--group",
            "--host",
            "--prompt",
        ]
    ),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "exec": frozenset({"-a"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "xargs": frozenset(  # -i, -l and -e take a value only when it is attached (`-i{}`)
        [
            # -i, -l, -e, --replace, --max-lines and --eof take their value only attached
            "-n",
            "-I",
            "-P",
            "-d",
            "-L",
            "-a",
            "-E",
            "-s",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-chars",
        ]
    ),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "flock": frozenset({"-w", "-E", "--timeout", "-c"}),
    "parallel": frozenset({"-j", "--jobs", "-S", "--sshlogin", "--delay", "--timeout"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    # tracers, privilege and namespace tools, launchers: each runs the command it is given
    "strace": frozenset(
        ["-o", "-e", "-p", "-s", "-u", "-E", "-P", "-I", "-b", "-a", "-X", "-S", "-U", "-O"]
    ),
    "ltrace": frozenset(
        ["-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l", "-x", "-L", "-A", "-D", "-F"]
    ),
    "ssh-agent": frozenset({"-a", "-E", "-t", "-P", "-O"}),
    "fakeroot": frozenset({"-l", "-s", "-i", "-b", "--lib", "--faked"}),
    "setpriv": frozenset(
        [
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--reuid",
            "--regid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
        ]
    ),
    "runuser": frozenset(
        [
            "-u",
            "-g",
            "-G",
            "-s",
            "-w",
            "--user",
            "--group",
            "--supp-group",
            "--shell",
            "--whitelist-environment",
        ]
    ),
    "unshare": frozenset(
        [
            "-S",
            "-G",
            "-R",
            "-w",
            "--setuid",
            "--setgid",
            "--root",
            "--wd",
            "--propagation",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
        ]
    ),
    "nsenter": frozenset(
        ["-t", "-S", "-G", "-r", "-w", "--target", "--setuid", "--setgid", "--root", "--wd"]
    ),
    "firejail": frozenset(),
    "systemd-run": frozenset(
        [
            "-p",
            "-u",
            "-E",
            "-M",
            "-H",
            "--property",
            "--unit",
            "--setenv",
            "--machine",
            "--host",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--working-directory",
            "--nice",
            "--on-calendar",
            "--on-active",
        ]
    ),
    "prlimit": frozenset({"-p", "--pid"}),
    "daemonize": frozenset({"-c", "-e", "-E", "-l", "-o", "-p", "-u"}),
    "numactl": frozenset(
        [
            "-C",
            "-N",
            "-m",
            "-p",
            "-i",
            "-P",
            "--physcpubind",
            "--cpunodebind",
            "--membind",
            "--preferred",
            "--interleave",
        ]
    ),
    "cgexec": frozenset({"-g"}),
    "valgrind": frozenset(),
    "xvfb-run": frozenset(
        ["-n", "-s", "-f", "-e", "-p", "-w", "--server-num", "--server-args", "--auth-file"]
    ),
    "dbus-run-session": frozenset({"--config-file", "--dbus-daemon"}),
    "sshpass": frozenset({"-p", "-f", "-d", "-P"}),
    "torsocks": frozenset({"-u", "-p", "-a", "-P"}),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "faketime": frozenset(),
    "trickle": frozenset({"-d", "-u", "-w", "-t", "-l", "-n"}),
    "cpulimit": frozenset({"-l", "-p", "-e", "--limit", "--pid", "--exe"}),
    "time": frozenset({"-o", "-f", "--output", "--format"}),
    "rlwrap": frozenset({"-a", "-f", "-H", "-l", "-p", "-s", "-S", "-t", "-w", "-z"}),
}
# Wrappers whose option hands a whole command line to a shell: `su -c`, `script -qc CMD`.
_PAYLOAD_OPTIONS = {
    "runuser": ("-c", "--command"),
    "script": ("-c", "--command"),
    "flock": ("-c", "--command"),
    "sg": ("-c",),
    "env": ("-S", "--split-string"),
}
# The letters that may come before the payload's in one word (`env -iS'...'`): options that
# take no value, so what follows the payload's letter is the payload.
_PAYLOAD_FLAGS = {"env": "iv0", "script": "aefq", "runuser": "lmpf", "flock": "sxneuoF"}
_SIMPLE_WRAPPERS = frozenset(
    {
        "nohup",
        "command",
        "builtin",
        "setsid",
        "busybox",
        "toybox",
        "unbuffer",
        "pkexec",
        "run0",
        "caffeinate",
        "catchsegv",
        "eatmydata",
        "nocache",
        "chronic",
        "ifne",
        "tsp",
        "with-contenv",
        "dbus-launch",
    }
)


# Package and environment runners: (the subcommand that runs a program, or None when the
# program comes first, and the options that take a value). `npx rimraf dist`, `bundle exec
# rake db:drop`, `poetry run python -c ...` run the program named after them.
_RUNNERS: dict[str, tuple[frozenset[str] | None, frozenset[str]]] = {
    "npx": (None, frozenset({"-p", "--package", "--registry", "--cache", "-w", "--workspace"})),
    "pnpx": (None, frozenset({"-p", "--package"})),
    "bunx": (None, frozenset({"-p", "--package"})),
    "uvx": (None, frozenset({"--from", "--with", "-p", "--python", "--index", "--index-url"})),
    "pipx": (frozenset({"run"}), frozenset({"--spec", "--python", "--index-url"})),
    "npm": (frozenset({"exec", "x"}), frozenset({"-p", "--package", "-w", "--workspace"})),
    "pnpm": (frozenset({"exec", "dlx"}), frozenset({"-C", "--dir", "--filter", "-F"})),
    "yarn": (frozenset({"exec", "dlx"}), frozenset({"-p", "--package"})),
    "bundle": (frozenset({"exec"}), frozenset({"--gemfile"})),
    "poetry": (frozenset({"run"}), frozenset({"-C", "--directory", "-P", "--project"})),
    "uv": (
        frozenset({"run"}),
        frozenset(
            [
                "--with",
                "--python",
                "-p",
                "--project",
                "--directory",
                "--env-file",
                "--package",
                "--group",
                "--extra",
                "--index",
                "--index-url",
                "--from",
            ]
        ),
    ),
    "pipenv": (frozenset({"run"}), frozenset()),
    "pdm": (frozenset({"run"}), frozenset({"-p", "--project"})),
    "hatch": (frozenset({"run"}), frozenset({"-e", "--env"})),
    "rye": (frozenset({"run"}), frozenset()),
    "conda": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix"})),
    "mamba": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix"})),
    "devbox": (frozenset({"run"}), frozenset({"-c", "--config"})),
    "mise": (frozenset({"exec", "x"}), frozenset()),
    "asdf": (frozenset({"exec"}), frozenset()),
    "sail": (None, frozenset()),
    "bun": (frozenset({"x"}), frozenset()),
}


# `yarn prisma migrate reset`: yarn, pnpm and bun run a package's program named first when it
# is not one of their own commands.
_OWN_COMMANDS = frozenset(
    [
        "add",
        "remove",
        "rm",
        "install",
        "i",
        "up",
        "update",
        "upgrade",
        "run",
        "exec",
        "dlx",
        "x",
        "test",
        "t",
        "link",
        "unlink",
        "why",
        "list",
        "ls",
        "outdated",
        "audit",
        "publish",
        "pack",
        "init",
        "create",
        "config",
        "cache",
        "store",
        "prune",
        "dedupe",
        "rebuild",
        "import",
        "patch",
        "info",
        "view",
        "bin",
        "root",
        "env",
        "setup",
        "server",
        "deploy",
        "fetch",
        "licenses",
        "version",
        "start",
        "node",
        "npm",
        "workspace",
        "workspaces",
        "global",
        "plugin",
        "set",
        "constraints",
        "explain",
        "search",
        "stage",
        "unplug",
        "help",
        "login",
        "logout",
        "owner",
        "tag",
        "team",
        "upgrade-interactive",
        "build",
    ]
)
_BY_NAME = frozenset({"yarn", "pnpm", "bun"})


def _runner(cmd: Cmd, programs: frozenset[str] = frozenset()) -> int | None:
    """Where the program a runner runs starts in its arguments; None: it runs none."""
    subs, with_values = _RUNNERS[cmd.name]
    args, i = cmd.args, 0
    if subs is not None:
        while i < len(args) and _is_option(args[i]):
            i += 2 if args[i] in with_values else 1
        if i >= len(args):
            return None
        if args[i] not in subs:
            by_name = cmd.name in _BY_NAME and args[i] not in _OWN_COMMANDS
            return i if by_name and args[i] in programs else None
        i += 1
    while i < len(args) and _is_option(args[i]):
        if args[i] == "--":
            return i + 1 if i + 1 < len(args) else None
        i += 2 if args[i] in with_values else 1
    return i if i < len(args) else None


def _is_option(word: str | None) -> bool:
    """A word written out that starts with a dash (a computed word is no option)."""
    return word is not None and word.startswith("-")


def _judged_programs() -> frozenset[str]:
    from workbench.core.safety.commands import RULES  # the rules import this module's users

    return frozenset(RULES)


def unwrap(ctx: Context, cmd: Cmd) -> Cmd | None:
    """Peel `sudo`, `env`, `nice`, `timeout`, `xargs`... off; report what the wrappers do."""
    for _ in range(16):
        if cmd.name == "xargs":  # a program, code or script taken from its input asks
            checked = xargs.check(ctx, cmd)
            if checked is None:
                return None
            cmd = checked
        if cmd.name in _RUNNERS:
            start = _runner(cmd, _judged_programs())
            if start is None:
                return cmd
            inner = cmd.rest(start)
            if inner is None:
                ctx.flag(
                    "dynamic-command",
                    "runs a program whose name is computed at run time",
                    cmd.nodes[start],
                )
                return None
            cmd = inner
            continue
        if cmd.name == "sudo" or cmd.name == "doas":
            _sudo_findings(ctx, cmd)
        if cmd.name == "command" and cmd.has("-v", "-V"):
            return None  # `command -v x` only looks x up
        if cmd.name in _PAYLOAD_OPTIONS and _payload_option(ctx, cmd):
            return None
        if cmd.name in ("script", "sg"):
            if cmd.name == "sg":
                _group_shell(ctx, cmd)
            return None
        if cmd.name in _LAUNCHERS:
            launched = _LAUNCHERS[cmd.name](ctx, cmd)
            if launched is None:
                return None
            cmd = launched
            continue
        if cmd.name in _SIMPLE_WRAPPERS:
            start = next((i for i, a in enumerate(cmd.args) if not (a and a.startswith("-"))), None)
        elif cmd.name in _WRAPPER_VALUE_OPTIONS:
            start = _after_options(cmd, _WRAPPER_VALUE_OPTIONS[cmd.name], ctx)
        else:
            return cmd
        if start is None:
            return None
        if _changes_directory(cmd, start):
            ctx.set_cwd(None)  # the program runs in another folder: relative paths unknown
        inner = cmd.rest(start)
        if inner is None:
            if start < len(cmd.args):  # the wrapped program's name is computed at run time
                ctx.flag(
                    "dynamic-command",
                    "runs a program whose name is computed at run time",
                    cmd.nodes[start],
                )
            return None
        if re.search(r"\s|[;&|<>()$`]", inner.name):  # `watch "rm f"`: a command line
            ctx.shell_payload(cmd.node, " ".join(a for a in cmd.args[start:] if a))
            return None
        cmd = _xargs_items(ctx, cmd, inner) if cmd.name == "xargs" else inner
    return cmd


def _xargs_items(ctx: Context, xargs: Cmd, inner: Cmd) -> Cmd:
    """The command xargs runs, with the items it reads put where xargs puts them: at the end,
    or in place of -I's replacement string. An item is known only at run time (None) unless
    what feeds xargs is a listing inside the working directory (see `computed_operand`)."""
    item = ctx.computed_operand(xargs.node)
    own = _words(xargs)[: len(xargs.args) - len(inner.args) - 1]  # xargs's options only
    replace = None
    for i, word in enumerate(own):
        if word in ("-I", "--replace") and i + 1 < len(own):
            replace = own[i + 1]
        elif word.startswith(("--replace=", "-I", "-i")) and len(word) > 2:
            replace = word.split("=", 1)[1] if word.startswith("--") else word[2:]
        elif word in ("-i", "--replace"):
            replace = "{}"
    if replace:
        words = _words(inner)
        args = [item if replace in w else a for a, w in zip(inner.args, words, strict=True)]
        return Cmd(inner.name, args, inner.nodes, inner.node, inner.program)
    return Cmd(
        inner.name, [*inner.args, item], [*inner.nodes, xargs.node], inner.node, inner.program
    )


def _words(cmd: Cmd) -> list[str]:
    """Each argument as written where its value is not known (`{}` reads as a brace
    expansion, so its value is None)."""
    nodes = [*cmd.nodes, *[None] * (len(cmd.args) - len(cmd.nodes))]
    return [a if a is not None else _text(n) for a, n in zip(cmd.args, nodes, strict=False)]


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def _bwrap(ctx: Context, cmd: Cmd) -> Cmd | None:
    """`bwrap --bind / / rm -rf x`: the command after bubblewrap's options (each takes a
    known number of values; one it does not know makes the command unknown)."""
    i, args = 0, cmd.args
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return cmd.rest(i + 1)
        if arg is None or not arg.startswith("--"):
            return _launched(ctx, cmd, i)
        count = _BWRAP_VALUES.get(arg)
        if count is None and arg not in _BWRAP_FLAGS:
            ctx.flag("dynamic-command", f"bwrap option {arg} is not known here", cmd.node)
            return None
        i += 1 + (count or 0)
    return None


_BWRAP_FLAGS = frozenset(
    [
        "--unshare-all",
        "--unshare-user",
        "--unshare-user-try",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup",
        "--unshare-cgroup-try",
        "--share-net",
        "--die-with-parent",
        "--as-pid-1",
        "--new-session",
        "--clearenv",
        "--disable-userns",
        "--assert-userns-disabled",
        "--help",
        "--version",
        "--level-prefix",
    ]
)
_BWRAP_TWO = ("--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind")
_BWRAP_VALUES = {
    **dict.fromkeys(_BWRAP_TWO, 2),
    **dict.fromkeys(("--ro-bind-try", "--symlink", "--file", "--bind-data"), 2),
    **dict.fromkeys(("--ro-bind-data", "--setenv", "--chmod"), 2),
    "--overlay": 3,
    **dict.fromkeys(
        [
            "--tmpfs",
            "--proc",
            "--dev",
            "--dir",
            "--remount-ro",
            "--chdir",
            "--unsetenv",
            "--uid",
            "--gid",
            "--hostname",
            "--lock-file",
            "--sync-fd",
            "--info-fd",
            "--json-status-fd",
            "--block-fd",
            "--userns-block-fd",
            "--seccomp",
            "--add-seccomp-fd",
            "--exec-label",
            "--file-label",
            "--cap-add",
            "--cap-drop",
            "--argv0",
            "--mqueue",
            "--overlay-src",
            "--tmp-overlay",
            "--ro-overlay",
            "--size",
            "--perms",
            "--userns",
            "--userns2",
            "--pidns",
            "--args",
        ],
        1,
    ),
}


def _start_stop_daemon(ctx: Context, cmd: Cmd) -> Cmd | None:
    """`start-stop-daemon --start --exec PROG -- ARGS`: PROG runs with ARGS."""
    if not cmd.has("--start", short="S"):
        return None
    program = None
    for i, arg in enumerate(cmd.args[:-1]):
        if arg in ("--exec", "-x", "--startas", "-a"):
            program = cmd.args[i + 1]
    rest = cmd.args[cmd.args.index("--") + 1 :] if "--" in cmd.args else []
    if program is None:
        ctx.flag("dynamic-command", "start-stop-daemon starts a program not known here", cmd.node)
        return None
    return Cmd(program.rsplit("/", 1)[-1], rest, [cmd.node] * len(rest), cmd.node, program)


# tmux commands whose operands are a shell command, and those that type keys into a pane.
_TMUX_RUNS = frozenset(
    [
        "new-session",
        "new",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
        "display-popup",
        "popup",
        "pipe-pane",
        "pipep",
        "if-shell",
        "if",
    ]
)
_TMUX_KEYS = frozenset({"send-keys", "send", "paste-buffer", "pasteb", "set-buffer", "setb"})
_TMUX_VALUES = frozenset({"-c", "-e", "-F", "-n", "-s", "-t", "-x", "-y", "-f", "-l", "-T"})
_TMUX_GLOBAL = frozenset({"-L", "-S", "-f", "-T"})


def _tmux(ctx: Context, cmd: Cmd) -> Cmd | None:
    """tmux runs the shell command its session, window and run commands are given, and keys
    sent to a pane run there; commands chained with `;` are each judged."""
    args = list(cmd.args)
    for i, arg in enumerate(args[:-1]):
        if arg == "-c" and all(a is None or a.startswith("-") for a in args[:i]):
            ctx.shell_payload(cmd.node, args[i + 1])  # `tmux -c CMD`: the shell runs CMD
            return None
    start = 0
    while start < len(args) and (args[start] or "").startswith("-"):
        start += 2 if args[start] in _TMUX_GLOBAL else 1
    segment: list[str | None] = []
    for arg in [*args[start:], ";"]:
        if arg != ";":
            segment.append(arg)
            continue
        _tmux_command(ctx, cmd, segment)
        segment = []
    return None


def _tmux_command(ctx: Context, cmd: Cmd, words: list[str | None]) -> None:
    if not words:
        return
    name, rest = words[0], words[1:]
    if name in _TMUX_KEYS:
        ctx.flag("inline-code", f"tmux {name} types into a pane, where it may run", cmd.node)
    elif name is None or name in _TMUX_RUNS:
        line, skip = [], False
        for word in rest:
            if skip:
                skip = False
            elif word is not None and word.startswith("-"):
                skip = word in _TMUX_VALUES
            else:
                line.append(word)
        if line:
            text = " ".join(w for w in line if w is not None) if all(line) else None
            ctx.shell_payload(cmd.node, text)


_SCREEN_VALUES = frozenset({"-S", "-c", "-t", "-p", "-e", "-h", "-T", "-s", "-Logfile"})


def _screen(ctx: Context, cmd: Cmd) -> Cmd | None:
    """`screen -dm CMD`: the command it starts; `-X` sends a command to a session (`stuff`
    types keys), which is not read here."""
    if "-X" in cmd.args:
        ctx.flag("inline-code", "screen -X sends a command to a running session", cmd.node)
        return None
    skip = False
    for i, arg in enumerate(cmd.args):
        if skip:
            skip = False
        elif arg is not None and arg.startswith("-"):
            skip = arg in _SCREEN_VALUES
        else:
            return _launched(ctx, cmd, i)
    return None


def _launched(ctx: Context, cmd: Cmd, i: int) -> Cmd | None:
    """The command a launcher runs from its i-th word (a computed name asks)."""
    inner = cmd.rest(i)
    if inner is None:
        ctx.flag("dynamic-command", f"{cmd.name} runs a program computed at run time", cmd.node)
    return inner


_LAUNCHERS = {
    "bwrap": _bwrap,
    "start-stop-daemon": _start_stop_daemon,
    "tmux": _tmux,
    "screen": _screen,
}


def wrapper_start(name: str, args: list[str | None]) -> int | None:
    """For the rules, which peel wrappers without judging them: where the command a plain
    wrapper (`nohup`, `sudo -u x`, `timeout 5`, `busybox`...) runs starts in its
    arguments; -1 when `name` is no such wrapper, None when it runs nothing known."""
    cmd = Cmd(name, list(args), [None] * len(args), None)
    if name in _SIMPLE_WRAPPERS:
        return next((i for i, a in enumerate(args) if not (a and a.startswith("-"))), None)
    if name in _WRAPPER_VALUE_OPTIONS:
        return _after_options(cmd, _WRAPPER_VALUE_OPTIONS[name])
    return -1


def _payload_option(ctx: Context, cmd: Cmd) -> bool:
    """Judge the shell code given to `-c` (bundled as in `-qc`, or `--command=...`)."""
    names = _PAYLOAD_OPTIONS[cmd.name]
    letters = "".join(n[1] for n in names if len(n) == 2)
    for i, arg in enumerate(cmd.args):
        if arg is None:
            continue
        for name in names:
            if name.startswith("--") and arg.startswith(name + "="):
                ctx.shell_payload(cmd.node, arg[len(name) + 1 :])
                return True
        bundled = bool(re.fullmatch(rf"-[a-zA-Z]*[{letters}]", arg)) if letters else False
        # `env -S'rm -rf x'`: the value in the same word as the option's letter
        flags = _PAYLOAD_FLAGS.get(cmd.name, "")
        joined = re.fullmatch(rf"-[{flags}]*[{letters}](.+)", arg, re.DOTALL) if letters else None
        if joined and not arg.startswith("--"):
            ctx.shell_payload(cmd.node, joined.group(1))
            return True
        if arg in names or bundled:
            value = cmd.args[i + 1] if i + 1 < len(cmd.args) else None
            node = cmd.nodes[i + 1] if i + 1 < len(cmd.nodes) else cmd.node
            ctx.shell_payload(node, value)
            return True
    return False


def _group_shell(ctx: Context, cmd: Cmd) -> None:
    """`sg GROUP COMMAND`: the command is one string run by a shell."""
    operands = [a for a in cmd.args if a != "-"]
    if len(operands) >= 2:
        ctx.shell_payload(
            cmd.node, " ".join(a for a in operands[1:] if a) if all(operands) else None
        )
    return None


# wrappers that run their program in another folder (`env -C DIR`, `sudo -D DIR`)
_CHDIR_OPTIONS = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}


def _changes_directory(cmd: Cmd, start: int) -> bool:
    """The wrapper's own options (before `start`) move its program to another folder."""
    options = _CHDIR_OPTIONS.get(cmd.name, ())
    for arg in cmd.args[:start]:
        if arg is None or not arg.startswith("-"):
            continue
        if arg.startswith("--"):
            if arg.split("=", 1)[0] in options:
                return True
        elif any(o[1] in arg[1:] for o in options if len(o) == 2):
            return True  # alone, bundled (`-iC`) or with its value attached (`-Cdir`)
    return False


def _after_options(cmd: Cmd, with_values: frozenset[str], ctx: Context | None = None) -> int | None:
    skip = False
    for i, arg in enumerate(cmd.args):
        if skip:
            skip = False
            continue
        if arg is None:
            if cmd.name == "xargs" and i < len(cmd.nodes) and _text(cmd.nodes[i])[:1] == "-":
                continue  # `-I{}`: an option whose value reads as a brace expansion
            return i
        if cmd.name == "env" and (arg == "-" or ("=" in arg and not arg.startswith("-"))):
            name, _, value = arg.partition("=")
            if ctx is not None:
                judge_setting(ctx, cmd.node, name, value)
            continue  # NAME=value, or `-` (start with an empty environment)
        if cmd.name in _OPERAND_FIRST and not arg.startswith("-"):
            return i + 1  # a duration, a new root, a lock file, a CPU mask or a time first
        if cmd.name in ("nice", "ionice", "chrt", "taskset") and re.fullmatch(r"-?\d+", arg):
            continue
        if arg == "--":
            return i + 1 if i + 1 < len(cmd.args) else None
        if arg.startswith("-") and arg != "-":
            # a value option, alone or last in a bundle (`strace -fo out cmd`)
            skip = arg in with_values or (
                not arg.startswith("--") and len(arg) > 2 and f"-{arg[-1]}" in with_values
            )
            continue
        return i
    return None


_OPERAND_FIRST = frozenset({"timeout", "chroot", "flock", "taskset", "faketime"})


def _sudo_findings(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--stdin", short="S"):
        ctx.flag("sudo-stdin", "sudo reads a password from standard input", cmd.node, Severity.HIGH)
    if cmd.has("--askpass", short="A"):
        ctx.flag("sudo-askpass", "sudo uses an askpass program", cmd.node)
    start = _after_options(cmd, _WRAPPER_VALUE_OPTIONS["sudo"])
    if start is None and cmd.has("--login", "--shell", short="is"):
        ctx.flag("root-shell", "opens an interactive root shell", cmd.node, Severity.HIGH)
