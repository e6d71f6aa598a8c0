"""Options whose value is something a program runs: `man -P CMD`, `rsync -e CMD`,
`ssh -o ProxyCommand=CMD`, `gdb -ex 'shell ...'`, `go test -exec CMD`, `make CC=CMD`.

A value that is a command line is judged as shell code; one in a language not read here
(a debugger's commands, wget's settings) asks; one naming a file the session wrote asks as
running that file does.
"""

from __future__ import annotations

import re

from workbench.core.safety.runners import COMPILERS
from workbench.core.safety.settings import COMMAND_VARIABLES, judge_setting
from workbench.core.safety.words import Cmd, Context

SHELL, UNREAD, FILE = "shell", "unread", "file"

# Per program: its options and what their value is.
_OPTIONS: dict[str, dict[str, str]] = {
    "man": {"-P": SHELL, "--pager": SHELL, "-H": SHELL, "--html": SHELL},
    "zip": {"-TT": SHELL, "--unzip-command": SHELL},
    "rsync": {"-e": SHELL, "--rsh": SHELL, "--rsync-path": SHELL},
    "sort": {"--compress-program": UNREAD},  # it pipes the data to it: `sh` runs the data
    "gdb": {
        "-ex": UNREAD,
        "--eval-command": UNREAD,
        "-iex": UNREAD,
        "--init-eval-command": UNREAD,
        "-x": FILE,
        "--command": FILE,
        "-ix": FILE,
    },
    "lldb": {"-o": UNREAD, "--one-line": UNREAD, "-O": UNREAD, "-s": FILE, "--source": FILE},
    "wget": {"-e": UNREAD, "--execute": UNREAD},
    "curl": {"-K": FILE, "--config": FILE},
    "pytest": {"-p": FILE},
    "npm": {"--script-shell": SHELL},
    "xterm": {"-e": SHELL},
    "gnome-terminal": {"-e": SHELL, "--": SHELL},
    "konsole": {"-e": SHELL},
    "kitty": {"-e": SHELL},
    "alacritty": {"-e": SHELL},
    "urxvt": {"-e": SHELL},
    "ssh": {"-F": FILE},
    "scp": {"-F": FILE, "-S": SHELL},
    "sftp": {"-F": FILE, "-S": SHELL},
}
# ssh's settings (`-o Key=Value`) whose value is a command line ssh runs here.
_SSH_COMMANDS = frozenset(
    {"proxycommand", "localcommand", "knownhostscommand", "remotecommand", "match"}
)
_GO_EXEC = frozenset({"run", "test", "build", "generate", "vet"})


# Programs whose -o names the file they write (for any program, --output does).
_WRITES_O = frozenset(
    {"cc", "gcc", "g++", "c++", "clang", "clang++", "tcc", "rustc", "ld", "as", "pandoc"}
    | {"nasm", "javac", "kotlinc", "swiftc", "zig", "protoc", "wkhtmltopdf", "jq", "yq"}
    | {"base64", "xz", "zstd", "lz4", "openssl", "gpg", "pdftotext", "magick", "cmake"}
)
_OUTPUT = re.compile(r"--(?:output|output-file|outfile|out-file|out)(?:=(.*))?", re.DOTALL)


def _outputs(ctx: Context, cmd: Cmd) -> None:
    """The file an option names for a program's output is judged where it lands
    (`pandoc x.md -o ~/.bashrc`, `gcc -o ~/.local/bin/ls`)."""
    if cmd.name in ("sort", "uniq", "shuf", "curl", "wget", "tar", "find"):
        return  # their rules judge their outputs
    for i, arg in enumerate(cmd.args):
        following = cmd.args[i + 1] if i + 1 < len(cmd.args) else None
        match = _OUTPUT.fullmatch(arg or "")
        if match:
            target = match.group(1) if match.group(1) is not None else following
        elif cmd.name in _WRITES_O and arg == "-o":
            target = following
        elif cmd.name in _WRITES_O and arg and arg.startswith("-o") and len(arg) > 2:
            target = arg[2:]
        else:
            continue
        if target and target != "-":  # a compiler's program counts as written only when
            # its source was (see runners): building and running one's own code is free
            remember = cmd.name not in COMPILERS
            ctx.place(cmd.node, target, f"{cmd.name} writes its output to", remember=remember)


def judge_options(ctx: Context, cmd: Cmd) -> None:
    _outputs(ctx, cmd)
    options = _OPTIONS.get(cmd.name, {})
    for i, arg in enumerate(cmd.args):
        if arg is None or not arg.startswith("-"):
            continue
        kind, value = _option(cmd, i, options)
        if kind:
            _judge(ctx, cmd, arg, kind, value)
    if cmd.name in ("ssh", "scp", "sftp"):
        _ssh_settings(ctx, cmd)
    elif cmd.name == "go" and cmd.operands[:1] and cmd.operands[0] in _GO_EXEC:
        _value_of(ctx, cmd, ("-exec", "-toolexec"), SHELL)
    elif cmd.name == "cargo":
        _cargo_config(ctx, cmd)
    elif cmd.name in ("make", "gmake"):
        for arg in cmd.args:  # `make CC='rm -rf x'`: make runs its variables' programs
            name, sep, value = (arg or "").partition("=")
            if sep and name in COMMAND_VARIABLES:
                judge_setting(ctx, cmd.node, name, value)
            elif sep and name == "SHELL":  # the program that runs every recipe
                ctx.shell_payload(cmd.node, value)
    elif cmd.name == "npm" and cmd.operands[:2] in (["config", "set"], ["config", "edit"]):
        ctx.flag("app-settings", "npm config changes npm's settings (~/.npmrc)", cmd.node)
    if cmd.name == "perf" and cmd.operands[:1] in (["record"], ["stat"], ["trace"]):
        _perf(ctx, cmd)


def _option(cmd: Cmd, i: int, options: dict[str, str]) -> tuple[str, str | None]:
    """What the option at `i` takes, and its value (`-P CMD`, `--pager=CMD`, `-PCMD`)."""
    arg = cmd.args[i] or ""
    following = cmd.args[i + 1] if i + 1 < len(cmd.args) else None
    if arg in options:
        return options[arg], following
    name, sep, value = arg.partition("=")
    if sep and name in options and name.startswith("--"):
        return options[name], value
    for option, kind in options.items():  # a short option with its value attached
        if len(option) == 2 and arg.startswith(option) and len(arg) > 2:
            return kind, arg[2:]
    return "", None


def _judge(ctx: Context, cmd: Cmd, option: str, kind: str, value: str | None) -> None:
    if kind == SHELL:
        ctx.shell_payload(cmd.node, value)
    elif kind == UNREAD:
        reason = f"{cmd.name} {option} runs commands of its own, which are not read here"
        ctx.flag("inline-code", reason, cmd.node, opaque=True)
    elif kind == FILE and value:
        path = value if cmd.name != "pytest" else value.replace(".", "/") + ".py"
        ran, contextual = ctx.ran_written_file(path)
        if ran:
            reason = f"{cmd.name} {option} runs {path}, which was written earlier"
            ctx.flag("run-written", reason, cmd.node, contextual=contextual)


def _value_of(ctx: Context, cmd: Cmd, names: tuple[str, ...], kind: str) -> None:
    options = dict.fromkeys(names, kind) | {f"-{n}": kind for n in names}  # go takes --x too
    for i, arg in enumerate(cmd.args):
        if arg is not None and arg.startswith("-"):
            found, value = _option(cmd, i, options)
            if found:
                _judge(ctx, cmd, arg, found, value)


def _ssh_settings(ctx: Context, cmd: Cmd) -> None:
    """`-o ProxyCommand=CMD` (or `-oProxyCommand CMD`): ssh runs CMD here, before connecting."""
    for i, arg in enumerate(cmd.args):
        if arg is None:
            continue
        if arg == "-o":
            setting = cmd.args[i + 1] if i + 1 < len(cmd.args) else None
        elif arg.startswith("-o") and len(arg) > 2:
            setting = arg[2:]
        else:
            continue
        if setting is None:
            ctx.flag("dynamic-command", "ssh -o with a setting computed at run time", cmd.node)
            continue
        match = re.match(r"([A-Za-z]+)\s*(?:=\s*|\s+)(.*)", setting.strip(), re.DOTALL)
        key, value = match.groups() if match else (setting.strip(), "")
        if key.lower() in _SSH_COMMANDS:
            ctx.shell_payload(cmd.node, value.strip() or None)


def _cargo_config(ctx: Context, cmd: Cmd) -> None:
    """`cargo --config 'target.X.runner="CMD"'`: a program cargo runs (runner, wrapper)."""
    for i, arg in enumerate(cmd.args):
        value = None
        if arg == "--config" and i + 1 < len(cmd.args):
            value = cmd.args[i + 1]
        elif arg and arg.startswith("--config="):
            value = arg.partition("=")[2]
        elif arg is None and i and cmd.args[i - 1] == "--config":
            ctx.flag("dynamic-command", "cargo --config computed at run time", cmd.node)
        if value and re.search(r"runner|wrapper|linker|rustc|\balias\.", value):
            ctx.flag("inline-code", "cargo --config sets a program for cargo to run", cmd.node)


_PERF_VALUES = frozenset(
    {"-e", "--event", "-o", "--output", "-p", "--pid", "-t", "--tid", "-F", "--freq", "-c"}
    | {"--count", "-C", "--cpu", "-u", "--uid", "-G", "--cgroup", "-m", "--mmap-pages", "-r"}
    | {"--repeat", "-I", "--interval-print", "-x", "--field-separator", "-j", "--call-graph"}
)


def _perf(ctx: Context, cmd: Cmd) -> None:
    """`perf record [options] CMD`: perf runs CMD."""
    start = cmd.args.index(cmd.operands[0]) + 1
    skip = False
    for i in range(start, len(cmd.args)):
        arg = cmd.args[i]
        if skip:
            skip = False
        elif arg == "--":
            inner = cmd.rest(i + 1)
            break
        elif arg is not None and arg.startswith("-"):
            skip = arg in _PERF_VALUES
        else:
            inner = cmd.rest(i)
            break
    else:
        return
    if inner is None:
        ctx.flag("dynamic-command", "perf runs a program computed at run time", cmd.node)
    else:
        ctx.judge(inner)
