"""Programs the rules do not know, given places outside the working directory.

Without a rule, what a program does with its operands is not known: `bzip2 -f ~/.bashrc`
replaces the file, `iconv -o ~/.bashrc` overwrites it, `fallocate -p` punches holes in it.
So a program that is neither known to only read nor judged by a rule is taken to possibly
write each existing place it is given (and the file an output option names): inside the
working directory and the write roots that is free, elsewhere it asks at the severity of the
place (a start-up file or a credential: high; hermes-tui's own state: never). An operand
computed at run time (`xz $(find .. -name x)`, `... | xargs xz`) cannot be judged: it asks,
and it is opaque, so only the sandbox lets `--yes` run it.
"""

from __future__ import annotations

import os
import re

from workbench.core.safety.parser import home_dir
from workbench.core.safety.places import (
    resolved,
    secret_folder,
    state_roots,
    tree_risk,
    within,
)
from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

# Programs that read what they are given and write nothing they are named (their output goes
# to standard output, or to an option the rules judge).
READERS = frozenset(
    {
        # files and text
        "cat", "tac", "less", "more", "most", "head", "tail", "view", "bat", "batcat",
        "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "ugrep", "wc", "nl", "cut",
        "paste", "join", "comm", "column", "fold", "fmt", "rev", "expand", "unexpand", "tr",
        "look", "diff", "diff3", "colordiff", "cmp", "sdiff", "delta", "difft", "strings",
        "od", "hexdump", "hd", "base32", "basenc", "md5sum", "sha1sum", "sha224sum",
        "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "zcat",
        "bzcat", "xzcat", "zstdcat", "lz4cat", "zless", "zmore", "zdiff", "jq", "yq", "gron",
        "xmllint", "file", "stat", "readlink", "realpath", "basename",
        "dirname", "pathchk", "namei", "enca",
        # listing and searching
        "ls", "dir", "vdir", "tree", "exa", "eza", "lsd", "du", "dust", "df", "duf", "ncdu",
        "locate", "plocate", "mlocate", "which", "whereis", "type", "command", "fzf",
        # printing and values
        "echo", "printf", "true", "false", "test", "[", "[[", "seq", "yes", "expr", "bc",
        "dc", "factor", "numfmt", "date", "cal", "sleep", "env", "printenv", "pwd", "id",
        "whoami", "groups", "hostname", "uname", "arch", "nproc", "uptime", "tty", "tput",
        "clear", "reset", "stty", "logname", "users", "who", "w", "last", "getent", "locale",
        "man", "info", "help", "apropos", "whatis", "tldr", "cowsay", "figlet", "lolcat",
        # processes and the system
        "ps", "pgrep", "pidof", "top", "htop", "btop", "free", "vmstat", "iostat", "lsof",
        "lsblk", "lscpu", "lsusb", "lspci", "lsmod", "blkid", "findmnt", "ss", "netstat",
        "ip", "ifconfig", "ping", "ping6", "traceroute", "tracepath", "mtr", "dig", "host",
        "nslookup", "whois", "journalctl", "dmesg", "systemd-analyze", "hostnamectl",
        "timedatectl", "loginctl",
        # binaries and media, read
        "ldd", "nm", "objdump", "readelf", "size", "addr2line", "c++filt", "ffprobe",
        "mediainfo", "exiftool", "identify", "pdfinfo", "sqlite3_analyzer",
        # shell builtins that take names, not files
        "cd", "pushd", "popd", "dirs", "export", "unset", "set", "shopt", "local", "declare",
        "typeset", "readonly", "let", "read", "mapfile", "readarray", "wait", "jobs", "fg",
        "bg", "disown", "exit", "return", "shift", "break", "continue", "getopts", "umask",
        "ulimit", "times", "caller", "builtin", "compgen", "complete", "bind", "suspend",
        "logout", ":",
    }
)  # fmt: skip
# Programs whose operands are inputs: what they write is named by an option (judged in options).
INPUTS_ONLY = frozenset(
    {
        "cc", "gcc", "g++", "c++", "clang", "clang++", "tcc", "rustc", "ld", "as", "nasm",
        "javac", "kotlinc", "swiftc", "tsc", "esbuild", "pandoc", "protoc", "go", "cargo",
        "shellcheck", "hadolint", "yamllint", "jsonlint", "mypy", "pyright", "pylint",
        "flake8", "pyflakes", "bandit", "vulture", "codespell", "tokei", "cloc", "scc",
        "ssh", "scp", "sftp", "rsync", "gpg", "openssl", "base64", "xxd",
    }
)  # fmt: skip
# Options whose value is a file the program writes.
_OUTPUT_OPTIONS = frozenset({"-o", "--output", "--file", "-f", "--outfile", "--output-file"})
_RECURSIVE = re.compile(r"-[a-zA-Z]*[rR][a-zA-Z]*|--recursive")


def unruled(name: str) -> bool:
    """No rule judges `name` and it is not known to only read its operands."""
    return name not in READERS and name not in INPUTS_ONLY and not name.startswith("mkfs.")


def judge_unruled(ctx: Context, cmd: Cmd) -> None:
    """A program without a rule: each existing place it is given may be written."""
    recursive = any(a and _RECURSIVE.fullmatch(a) for a in cmd.args)
    verb = f"{cmd.name} (no rule says what it does with its operands) may change"
    skip = False
    for i, arg in enumerate(cmd.args):
        if skip:
            skip = False
            continue
        if arg is None:
            item = ctx.computed_operand(cmd.nodes[i] if i < len(cmd.nodes) else None)
            if item is None:
                reason = f"{cmd.name} is given a path computed at run time, and no rule says what it does with it"
                ctx.flag("unruled-write", reason, cmd.nodes[i], opaque=True)
                continue
            arg = item
        if arg in _OUTPUT_OPTIONS and i + 1 < len(cmd.args):
            _judge_output(ctx, cmd, cmd.args[i + 1], i + 1)
            skip = True
            continue
        if arg.startswith("--file="):
            _judge_output(ctx, cmd, arg.split("=", 1)[1], i)
            continue
        if arg.startswith("-") or arg in ("-", ""):
            continue
        path = ctx.resolve(arg)
        if path is None or not ctx.exists(path):
            continue  # nothing there to change (a name, a URL, a file it would create)
        tree = () if recursive and os.path.isdir(path) else None
        if tree is not None:
            _judge_tree(ctx, cmd, resolved(path))
        ctx.place(cmd.node, arg, verb, tree=tree, remember=False, possible=True)


def _judge_tree(ctx: Context, cmd: Cmd, real: str) -> None:
    """A recursive change of a whole tree by a program without a rule: over hermes-tui's own
    state it never runs; over credentials, a home or a git folder its effect on what the
    tree holds is not understood, so it asks as opaque (only the sandbox lets `--yes` run it)."""
    label = f"{cmd.name} (no rule says what it does) recursively changes {real}"
    if any(within(root, real) or within(real, root) for root in state_roots()):
        ctx.flag(
            "app-state", f"{label}, which holds hermes-tui's own state", cmd.node, Severity.HARDLINE
        )
        return
    homes = {home_dir().rstrip("/"), os.path.realpath(home_dir())}
    if (
        secret_folder(real)
        or tree_risk(real) is not None
        or any(within(h, real) for h in homes if h)
        or real in ("/", "/home")
    ):
        reason = f"{label}, which holds credentials or a home"
        ctx.flag("sensitive-write", reason, cmd.node, Severity.HIGH, opaque=True)


def _judge_output(ctx: Context, cmd: Cmd, value: str | None, i: int) -> None:
    if value is None:
        reason = f"{cmd.name} writes to a file computed at run time"
        ctx.flag(
            "unruled-write", reason, cmd.nodes[i] if i < len(cmd.nodes) else cmd.node, opaque=True
        )
    elif value not in ("-", "/dev/null", "/dev/stdout"):
        verb = f"{cmd.name} may write"
        ctx.place(cmd.node, value, verb, remember=False, possible=True)
