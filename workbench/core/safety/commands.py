"""Rules for simple commands: wrappers are peeled off, then the program decides.

Each rule looks at the argument values (None where only run time knows them) and reports
findings through the analyser's context. Text that is only an argument (an `echo`ed
string, a grep pattern, a commit message) is data, never a command.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from workbench.core.safety import archives, cloud, databases, hermes, system
from workbench.core.safety.inline_code import judge_code, language_of
from workbench.core.safety.places import within
from workbench.core.safety.python_code import python_strings
from workbench.core.safety.scripts import GIT_PROGRAM_KEYS, awk_effects, sed_danger
from workbench.core.safety.settings import judge_setting
from workbench.core.safety.unruled import judge_unruled
from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

Node = Any

SHELLS = frozenset(
    {"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "yash"}
)
STDIN_INTERPRETERS = SHELLS | frozenset(
    {
        "python",
        "python2",
        "python3",
        "perl",
        "ruby",
        "node",
        "nodejs",
        "php",
        "lua",
        "deno",
        "bun",
        "pwsh",
        "powershell",
        "osascript",
        "tclsh",
        "Rscript",
        "source",
        ".",
        "at",
        "batch",
    }
)
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "nc", "ncat", "aria2c", "http", "xh"})


# -- program rules ------------------------------------------------------------------------

Rule = Callable[[Context, Cmd], None]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn

    return register


def _shown(values: Sequence[str | None], limit: int = 4) -> str:
    shown = [v if v is not None else "<computed>" for v in values[:limit]]
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return ", ".join(shown) + more


def _targets_finding(
    ctx: Context,
    cmd: Cmd,
    rule_id: str,
    verb: str,
    targets: Sequence[str | None],
    recursive: bool,
    delete: bool = True,
) -> None:
    severity, labels = Severity.NORMAL, []
    for target in targets:
        if target is not None:
            ctx.place(cmd.node, target, verb, delete=delete)
    for target in targets or [None]:
        level, label = ctx.classify(target, recursive)
        if label:
            labels.append(label)
        severity = max(severity, level)
    what = _shown(list(targets)) if targets else "files given on standard input"
    reason = f"{verb} {what}" + (f" ({'; '.join(dict.fromkeys(labels))})" if labels else "")
    writes = tuple(t for t in targets if t)
    opaque = any(t is None for t in targets)  # which files: known only when it runs
    ctx.flag(rule_id, reason, cmd.node, severity, writes, opaque=opaque)


@rule("rm", "srm", "trash-put", "rimraf")
def _rm(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--help", "--version") and not cmd.operands:
        return
    recursive = cmd.has("--recursive", short="rR")
    verb = "recursively deletes" if recursive else "deletes"
    _targets_finding(ctx, cmd, "delete", verb, cmd.operands, recursive)


@rule("rmdir")
def _rmdir(ctx: Context, cmd: Cmd) -> None:
    _targets_finding(ctx, cmd, "delete", "removes directories", cmd.operands, False)


@rule("unlink")
def _unlink(ctx: Context, cmd: Cmd) -> None:
    _targets_finding(ctx, cmd, "delete", "deletes", cmd.operands, False)


@rule("shred", "wipe")
def _shred(ctx: Context, cmd: Cmd) -> None:
    _targets_finding(
        ctx, cmd, "destroy", "irrecoverably overwrites", cmd.operands, False, delete=False
    )


@rule("truncate")
def _truncate(ctx: Context, cmd: Cmd) -> None:
    operands = [
        a
        for i, a in enumerate(cmd.args)
        if a is None
        or (
            not a.startswith("-")
            and not (i and cmd.args[i - 1] in ("-s", "--size", "-r", "--reference"))
        )
    ]
    _targets_finding(ctx, cmd, "truncate", "truncates", operands, False, delete=False)


@rule("dd")
def _dd(ctx: Context, cmd: Cmd) -> None:
    for arg in cmd.args:
        if arg is None:
            ctx.flag("overwrite", "dd with an operand computed at run time", cmd.node, opaque=True)
        elif arg.startswith("of="):
            _overwrite(ctx, cmd.node, arg[3:], "dd overwrites")
        elif arg.startswith("if="):
            ctx.reads(cmd.node, "dd", [arg[3:]])


@rule(
    "mkfs",
    "mke2fs",
    "mkswap",
    "wipefs",
    "mkfs.ext4",
    "mkfs.ext3",
    "mkfs.ext2",
    "mkfs.xfs",
    "mkfs.btrfs",
    "mkfs.vfat",
    "mkfs.fat",
    "mkfs.ntfs",
)
def _mkfs(ctx: Context, cmd: Cmd) -> None:
    ctx.flag("format", f"formats a filesystem ({cmd.name})", cmd.node, Severity.HARDLINE)


@rule("fdisk", "sfdisk", "gdisk", "sgdisk", "parted", "cfdisk", "blkdiscard")
def _partition(ctx: Context, cmd: Cmd) -> None:
    if cmd.name == "fdisk" and cmd.has("-l", "--list"):
        return
    ctx.flag("partition", f"changes disk partitions ({cmd.name})", cmd.node, Severity.HIGH)


@rule("mv")
def _mv(ctx: Context, cmd: Cmd) -> None:
    operands = cmd.operands
    if len(operands) >= 2 and operands[-1] == "/dev/null":
        ctx.flag(
            "destroy",
            f"moves {_shown(operands[:-1])} into /dev/null (destroys it)",
            cmd.node,
            Severity.HIGH,
            tuple(o for o in operands[:-1] if o),
        )
        return
    dest, sources = _destination(cmd)
    for source in sources:
        ctx.place(cmd.node, source, "moves", delete=True)
        level, label = ctx.classify(source, True)
        if level is Severity.HARDLINE:
            moved = (source,) if source is not None else ()
            ctx.flag("move", f"moves {label} away", cmd.node, Severity.HARDLINE, moved)
    if dest is not None:
        ctx.place(cmd.node, dest, "moves onto", tree=tuple(sources))
    if cmd.has("--no-clobber", short="n") and operands and all(o for o in operands):
        return
    severity = Severity.HIGH if ctx.sensitive(dest) else Severity.NORMAL
    ctx.flag(
        "move",
        f"moves {_shown(sources)} onto {dest or '<computed>'} (may overwrite it)",
        cmd.node,
        severity,
        tuple(o for o in operands if o),
        opaque=dest is None or None in sources,
    )


def _destination(cmd: Cmd) -> tuple[str | None, list[str | None]]:
    """cp/mv/install: where they write (the last operand, or -t DIR) and what they take."""
    args = cmd.args
    for i, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and i + 1 < len(args):
            rest = [a for j, a in enumerate(args) if j != i + 1 and (a is None or a[:1] != "-")]
            return args[i + 1], rest
        if arg and arg.startswith("--target-directory="):
            return arg.split("=", 1)[1], [a for a in cmd.operands]
    operands = cmd.operands
    return (operands[-1], operands[:-1]) if len(operands) >= 2 else (None, operands)


@rule("cp", "install")
def _cp(ctx: Context, cmd: Cmd) -> None:
    if cmd.name == "install" and cmd.has("--directory", short="d"):
        for target in cmd.operands:
            ctx.place(cmd.node, target, "install creates")
        return
    dest, sources = _destination(cmd)
    _copy(ctx, cmd, dest, sources)
    if cmd.name == "cp" and cmd.has("--link", "--symbolic-link", short="ls"):
        hard = cmd.has("--link", short="l")
        for source in sources:
            if hard:
                _hard_link(ctx, cmd, source)
            if dest is not None:
                ctx.link(dest, source)  # later writes through it land in the source


def _copy(ctx: Context, cmd: Cmd, dest: str | None, sources: list[str | None]) -> None:
    if dest is not None and cmd.has("--recursive", "--archive", short="rRa"):
        ctx.place(cmd.node, dest, f"{cmd.name} copies into", tree=tuple(sources))
    if dest is None:
        if len(cmd.operands) >= 2:  # `cp x "$(...)"`: where it lands is known at run time
            _overwrite(ctx, cmd.node, None, f"{cmd.name} may overwrite")
        return
    if cmd.has("--no-clobber", short="n") or any(a == "--update=none" for a in cmd.args if a):
        ctx.place(cmd.node, dest, f"{cmd.name} writes")  # a new file: only where it lands
        return
    if "/dev/null" in sources:
        ctx.place(cmd.node, dest, f"{cmd.name} empties")
        ctx.flag(
            "truncate",
            f"empties {dest} by copying /dev/null over it",
            cmd.node,
            Severity.HIGH,
            (dest,) if dest else (),
        )
        return
    _overwrite(ctx, cmd.node, dest, f"{cmd.name} may overwrite")


@rule("sort", "uniq", "shuf")
def _sort(ctx: Context, cmd: Cmd) -> None:
    for i, arg in enumerate(cmd.args):
        if arg in ("-o", "--output") and i + 1 < len(cmd.args):
            _overwrite(ctx, cmd.node, cmd.args[i + 1], f"{cmd.name} -o overwrites")
        elif arg and arg.startswith("--output="):
            _overwrite(ctx, cmd.node, arg.split("=", 1)[1], f"{cmd.name} -o overwrites")
    if cmd.name == "uniq" and len(cmd.operands) == 2:
        _overwrite(ctx, cmd.node, cmd.operands[1], "uniq overwrites")


@rule("tee")
def _tee(ctx: Context, cmd: Cmd) -> None:
    append = cmd.has("--append", short="a")
    for target in cmd.operands:
        if target in ("/dev/null", "/dev/stdout", "/dev/stderr", "-"):
            continue
        if append:
            ctx.place(cmd.node, target, "tee appends to")
            continue
        _overwrite(ctx, cmd.node, target, "tee overwrites")


_XXD_VALUES = frozenset({"-c", "-cols", "-g", "-groupsize", "-l", "-len", "-s", "-seek", "-o"})


@rule("xxd")
def _xxd(ctx: Context, cmd: Cmd) -> None:
    """`xxd [-r] INFILE OUTFILE` writes its second operand."""
    values = _XXD_VALUES | {"-n", "-name"}
    operands = [
        a
        for i, a in enumerate(cmd.args)
        if (a is None or not a.startswith("-") or a == "-")
        and not (i and cmd.args[i - 1] in values)
    ]
    if len(operands) >= 2 and operands[1] != "-":
        _overwrite(ctx, cmd.node, operands[1], "xxd overwrites")


@rule("make", "gmake")
def _make(ctx: Context, cmd: Cmd) -> None:
    """Rules given on the command line (`--eval`) are a makefile of the model's own; a
    makefile written earlier runs as a script does."""
    if any(a is None or a in ("-E", "--eval") or a.startswith("--eval=") for a in cmd.args):
        reason = f"{cmd.name} --eval runs rules given on the command line"
        ctx.flag("inline-code", reason, cmd.node, opaque=True)
    for makefile in _makefiles(cmd):
        ran_file(ctx, cmd, makefile)


def _makefiles(cmd: Cmd) -> list[str]:
    """The makefiles make reads: each -f, or the default names in its -C directory."""
    files, directory = [], ""
    args = cmd.args
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else None
        if arg in ("-f", "--file", "--makefile") and following:
            files.append(following)
        elif arg and arg.startswith(("--file=", "--makefile=")):
            files.append(arg.split("=", 1)[1])
        elif arg and arg.startswith("-f") and len(arg) > 2 and not arg.startswith("--"):
            files.append(arg[2:])
        elif arg in ("-C", "--directory") and following:
            directory = following.rstrip("/") + "/"
        elif arg and arg.startswith("--directory="):
            directory = arg.split("=", 1)[1].rstrip("/") + "/"
    names = files or ["GNUmakefile", "makefile", "Makefile"]
    return [n if n.startswith(("/", "~")) else directory + n for n in names]


# Interpreters whose code is not read here: code given to them inline asks.
_UNREAD_INLINE = {
    "lua": ("-e",),
    "luajit": ("-e",),
    "Rscript": ("-e", "--expr"),
    "R": ("-e",),
    "julia": ("-e", "-E", "--eval", "--print"),
    "osascript": ("-e",),
    "pwsh": ("-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand", "-ec", "-e"),
    "powershell": ("-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand", "-ec"),
    "tclsh": ("-c",),
    "expect": ("-c",),
    "groovy": ("-e",),
    "scala": ("-e",),
    "erl": ("-eval",),
    "elixir": ("-e",),
    "racket": ("-e",),
    "guile": ("-c",),
}


@rule(*_UNREAD_INLINE)
def _unread_inline(ctx: Context, cmd: Cmd) -> None:
    options = _UNREAD_INLINE[cmd.name]
    lowered = {o.lower() for o in options}
    if any(a is None or a in options or a.lower() in lowered for a in cmd.args if a != "--"):
        reason = f"runs {cmd.name} code, which is not read here"
        ctx.flag("inline-code", reason, cmd.node, opaque=True)
    elif cmd.operands and cmd.operands[0] is not None:
        ran_file(ctx, cmd, cmd.operands[0])


@rule("ssh-keygen")
def _ssh_keygen(ctx: Context, cmd: Cmd) -> None:
    """ssh-keygen writes the key file -f names (and removes hosts from it with -R), except
    when it only shows a key: -l (fingerprint), -y (public key), -B, -F (find a host)."""
    if cmd.has(short="lyBF") or cmd.has("--help"):
        return
    for i, arg in enumerate(cmd.args):
        value = cmd.args[i + 1] if arg == "-f" and i + 1 < len(cmd.args) else None
        value = arg[2:] if arg and arg.startswith("-f") and len(arg) > 2 else value
        if arg == "-f" and value is None and i + 1 < len(cmd.args):
            reason = "ssh-keygen writes a key file computed at run time"
            ctx.flag("overwrite", reason, cmd.node, opaque=True)
        elif value is not None:
            ctx.place(cmd.node, value, "ssh-keygen writes", possible=True)


@rule("sponge")
def _sponge(ctx: Context, cmd: Cmd) -> None:
    for target in cmd.operands:
        _overwrite(ctx, cmd.node, target, "sponge overwrites")


@rule("ln")
def _ln(ctx: Context, cmd: Cmd) -> None:
    operands = [
        a
        for i, a in enumerate(cmd.args)
        if (a is None or not a.startswith("-"))
        and not (i and cmd.args[i - 1] in ("-t", "--target-directory", "-S", "--suffix"))
    ]
    directory = next(
        (cmd.args[i + 1] for i, a in enumerate(cmd.args[:-1]) if a in ("-t", "--target-directory")),
        None,
    )
    pairs: list[tuple[str | None, str | None]]  # (where the link is made, what it points at)
    if directory is not None:
        pairs = [(f"{directory}/{(t or 'x').rsplit('/', 1)[-1]}", t) for t in operands]
    elif len(operands) == 1:
        pairs = [((operands[0] or "x").rsplit("/", 1)[-1], operands[0])]
    else:
        pairs = [(operands[-1], t) for t in operands[:-1]]
    for link, target in pairs:
        ctx.place(cmd.node, link, "ln makes a link at", follow=False)
        ctx.link(link, target)
        if not cmd.has("--symbolic", short="s"):
            _hard_link(ctx, cmd, target)
    if cmd.has("--force", short="f") and operands:
        _overwrite(ctx, cmd.node, operands[-1], "ln replaces")


@rule("touch", "mkdir", "mkfifo", "mknod")
def _create(ctx: Context, cmd: Cmd) -> None:
    skip = ("-m", "--mode", "-r", "--reference", "-d", "--date", "-t", "-Z", "--context")
    for i, target in enumerate(cmd.args):
        if target is None or target.startswith("-") or (i and cmd.args[i - 1] in skip):
            continue
        ctx.place(cmd.node, target, f"{cmd.name} creates")
        if cmd.name == "mknod":
            system.judge_change(ctx, cmd)  # a device node, not a FIFO, changes the machine
            break


def _hard_link(ctx: Context, cmd: Cmd, source: str | None) -> None:
    """A hard link is its source under another name: whatever later writes the link (in this
    command or a later one) changes the source, so it is judged as a change of the source
    (outside the working directory: asks; a credential or start-up file: high)."""
    verb = f"{cmd.name} makes a hard link (writes through it change the file) to"
    ctx.place(cmd.node, source, verb, contents=False)


def _overwrite(ctx: Context, node: Node, target: str | None, verb: str) -> None:
    ctx.place(node, target, verb)
    ctx.wrote(target)
    severity = Severity.HIGH if ctx.sensitive(target) else Severity.NORMAL
    label = target if target is not None else "a path computed at run time"
    writes = (target,) if target else ()
    ctx.flag("overwrite", f"{verb} {label}", node, severity, writes, opaque=target is None)


@rule("sed", "gsed")
def _sed(ctx: Context, cmd: Cmd) -> None:
    for i, arg in enumerate(cmd.args[:-1]):
        if arg in ("-f", "--file"):  # a sed script may run commands (`e`) and write (`w`)
            ran_file(ctx, cmd, cmd.args[i + 1])
    if not cmd.has("--sandbox"):
        for script in _sed_scripts(cmd):
            what = sed_danger(script) if script is not None else "a script computed at run time"
            if what:
                ctx.flag("inline-code", f"sed {what}", cmd.node, opaque=script is None)
                break
    _sed_in_place(ctx, cmd)


def _sed_scripts(cmd: Cmd) -> list[str | None]:
    scripts: list[str | None] = []
    explicit = False
    for i, arg in enumerate(cmd.args):
        if arg in ("-e", "--expression") and i + 1 < len(cmd.args):
            scripts.append(cmd.args[i + 1])
            explicit = True
        elif arg and arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
            explicit = True
        elif arg in ("-f", "--file") or (arg and arg.startswith("--file=")):
            explicit = True
    if not explicit:
        first = next(
            (
                a
                for i, a in enumerate(cmd.args)
                if (a is None or not a.startswith("-"))
                and not (i and cmd.args[i - 1] in ("-l", "--line-length"))
            ),
            "",
        )
        scripts.append(first)
    return scripts


def _sed_in_place(ctx: Context, cmd: Cmd) -> None:
    if any(
        a and (a.startswith("--in-place") or re.fullmatch(r"-[nEerszu]*i\S*", a)) for a in cmd.args
    ):
        files = [a for a in cmd.operands[1:]] if cmd.operands else []
        _targets_finding(ctx, cmd, "edit-in-place", "edits in place", files, False, delete=False)


@rule("perl", "ruby", "python", "python2", "python3", "node", "nodejs", "php", "deno", "bun")
def _interpreter(ctx: Context, cmd: Cmd) -> None:
    if cmd.name in ("perl", "ruby") and any(_in_place_option(a) for a in cmd.args):
        ctx.flag("edit-in-place", f"{cmd.name} -i edits files in place", cmd.node)
    language = language_of(cmd.name) or ""
    inline = {
        "python": ("-c",),
        "perl": ("-e", "-E"),
        "ruby": ("-e",),
        "node": ("-e", "-p", "--eval", "--print"),
        "php": ("-r",),
    }.get(language, ())
    letters = "".join(o[1] for o in inline if len(o) == 2)
    has_inline = False
    for i, arg in enumerate(cmd.args):
        bundled = bool(letters) and bool(arg and re.fullmatch(rf"-[a-zA-Z]*[{letters}]", arg))
        if (arg in inline or bundled) and i + 1 < len(cmd.args):
            has_inline = True
            code_finding(ctx, cmd.node, cmd.name, language, cmd.args[i + 1])
    if cmd.name in ("deno", "bun") and cmd.operands[:1] == ["eval"]:
        code_finding(ctx, cmd.node, cmd.name, language, [*cmd.operands, ""][1])
        return
    module = _python_module(cmd) if language == "python" and not has_inline else None
    if module is not None:
        _module(ctx, cmd, *module)
        return
    script = script_operand(cmd, SCRIPT_VALUES.get(language, frozenset())) or ""
    if language and script and not has_inline:
        ran_file(ctx, cmd, script)
        rest = cmd.args[cmd.args.index(script) + 1 :]
        if script.rsplit("/", 1)[-1] == "manage.py":
            databases.django(ctx, cmd, rest, "manage.py")
        elif script.rsplit("/", 1)[-1] == "artisan":
            databases.artisan(ctx, cmd, rest)


# Options whose value is the next word, so it is not the script: `python3 -W ignore x.py`.
SCRIPT_VALUES = {
    "python": frozenset({"-W", "-X", "-Q", "--check-hash-based-pycs"}),
    "perl": frozenset({"-I", "-x"}),
    "ruby": frozenset({"-I", "-r", "-C", "-E", "--encoding"}),
    "node": frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"}),
    "shell": frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}),
}


def script_operand(cmd: Cmd, values: frozenset[str]) -> str | None:
    """The file an interpreter runs: its first operand that is no option's value."""
    skip = False
    for arg in cmd.args:
        if skip:
            skip = False
            continue
        if arg is None:
            return None
        if arg == "--":
            continue
        if arg.startswith(("-", "+")) and arg not in ("-", "+"):
            skip = arg in values
            continue
        return arg
    return None


def _python_module(cmd: Cmd) -> tuple[str | None, list[str | None]] | None:
    """`python -m MODULE ARGS`: the module and its arguments (None: not run with -m)."""
    for i, arg in enumerate(cmd.args):
        if arg is None or not arg.startswith("-") or arg == "-":
            return None  # a script comes first: -m after it is the script's
        if arg == "-m" or re.fullmatch(r"-[a-zA-Z]*m", arg):
            return (cmd.args[i + 1] if i + 1 < len(cmd.args) else None), cmd.args[i + 2 :]
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:], cmd.args[i + 1 :]
    return None


def _module(ctx: Context, cmd: Cmd, module: str | None, args: list[str | None]) -> None:
    """What a module run with `python -m` does: a program the rules know (`pip`), the
    standard library's archivers and `venv --clear`, or a module the session wrote."""
    if module is None:
        ctx.flag("dynamic-command", f"{cmd.name} -m runs a module computed at run time", cmd.node)
        return
    inner = Cmd(module, args, [cmd.node] * len(args), cmd.node)
    operands = inner.operands
    if module in RULES and module not in ("python", "python3"):
        ctx.judge(inner)
    elif module == "venv" and inner.has("--clear"):
        _targets_finding(ctx, inner, "delete", "clears the environment", operands, True)
    elif module == "venv":  # it makes (or updates) the folders it is given
        for folder in operands:
            ctx.place(cmd.node, folder, f"{cmd.name} -m venv makes", tree=())
    elif module in ("zipfile", "tarfile") and inner.has("--extract", short="e"):
        if operands:
            ctx.place(cmd.node, operands[-1], f"{module} extracts into", tree=())
    else:
        ran_file(ctx, cmd, module.replace(".", "/") + ".py")


# Letters after which the rest of a perl or ruby option bundle is that option's value
# (`-rfileutils`, `-MFile::Path`), so an `i` there is not -i.
_VALUE_LETTERS = frozenset("rIMmxCDlF0EKT")


def _in_place_option(arg: str | None) -> bool:
    if not arg or not arg.startswith("-") or arg.startswith("--"):
        return False
    for letter in arg[1:]:
        if letter == "i":
            return True
        if letter in _VALUE_LETTERS or not letter.isalpha():
            return False
    return False


_HERMES = re.compile(r"\.hermes(?![\w.-])")  # the folder, not `.hermes-cache`


def names_app_state(code: str) -> bool:
    """Whether text names hermes-tui's own state (its folder's name, its variable or path),
    also as a pattern (`~/.her*/config.yaml`) or, in Python, strings put together
    (`".her" "mes"`, `".herm" + "es"`)."""
    from workbench.core.safety.places import state_roots

    roots = state_roots()
    if "HERMES_HOME" in code or _HERMES.search(code) or any(r in code for r in roots):
        return True
    if any(_HERMES.search(text) for text in python_strings(code)):
        return True
    patterns = [
        t
        for t in re.split(r"[\s'\"(),;=<>|&`]+", code)
        if t[:1] in "~/" and any(c in t for c in "*?[")
    ]
    for pattern in patterns[:16] if len(code) <= 65536 else ():
        expanded = os.path.expanduser(pattern)
        if any(within(os.path.realpath(m), r) for m in glob.glob(expanded)[:64] for r in roots):
            return True
    return False


def code_finding(ctx: Context, node: Node, program: str, language: str, code: str | None) -> None:
    """Flag interpreter code that changes files, runs programs or cannot be followed."""
    if code is None:
        ctx.flag("inline-code", f"runs {program} code computed at run time", node, opaque=True)
        return
    for found in judge_code(language, code):
        if found.kind == "module":  # only a module the session wrote matters
            ran, contextual = ctx.ran_written_file(found.path)
            if ran:
                reason = f"{program} code {found.what}, which was written earlier"
                ctx.flag("run-written", reason, node, contextual=contextual)
            continue
        if found.fork_bomb:
            ctx.flag("fork-bomb", f"{program} {found.what}", node, Severity.HARDLINE)
        elif found.kind == "shell" and found.command is not None:
            ctx.shell_payload(node, found.command)  # the command is judged as shell code
        elif found.kind == "sql" and found.command is not None:
            databases.judge_sql_text(ctx, node, program, found.command)
        elif names_app_state(code):
            reason = (
                f"{program} code that changes files ({found.what}) names hermes-tui's own state"
            )
            ctx.flag("app-state", reason, node, Severity.HARDLINE)
        elif found.kind == "delete" and found.path is not None:
            ctx.place(node, found.path, f"{program} deletes", delete=True)
            level, label = ctx.classify(found.path, found.recursive)
            what = f"{program} code deletes {found.path}" + (f" ({label})" if label else "")
            ctx.flag("inline-code", what, node, level, (found.path,))
        elif found.kind == "write" and found.path is not None:
            risk = ctx.place(node, found.path, f"{program} writes")
            if not found.recursive or risk is not None or ctx.sensitive(found.path):
                _overwrite(ctx, node, found.path, f"{program} code overwrites")
        else:
            opaque = _unread(language, found)
            what = found.what
            if found.kind in ("delete", "write") and found.path is None:
                what += " of a path computed at run time"
            ctx.flag("inline-code", f"{program} code: {what}", node, opaque=opaque)


def _unread(language: str, found: Any) -> bool:
    """Code whose effect was not read: it cannot be followed, or what it acts on (a file, a
    command, SQL) is computed, or, outside Python, the call's arguments are not read at all."""
    if found.unreadable or (found.kind != "call" and found.command is None and found.path is None):
        return True
    return language != "python" and found.kind != "module"


@rule(*sorted(SHELLS))
def _shell(ctx: Context, cmd: Cmd) -> None:
    for i, arg in enumerate(cmd.args):
        if arg and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg):
            payload = _command_string(cmd, i + 1)  # `sh -c -- CMD`, `bash -c -e CMD`
            if payload < len(cmd.args):
                ctx.shell_payload(cmd.nodes[payload], cmd.args[payload])
            return
    script = script_operand(cmd, SCRIPT_VALUES["shell"])
    if script is not None and script != "-":
        ran_file(ctx, cmd, script)
    for i, arg in enumerate(cmd.args[:-1]):
        if arg in ("--rcfile", "--init-file"):  # bash runs it first
            ran_file(ctx, cmd, cmd.args[i + 1])
    if any(n.type == "process_substitution" for n in cmd.nodes):
        reason = f"{cmd.name} runs the output of a process substitution as code"
        ctx.flag("remote-code", reason, cmd.node, opaque=True)


def _command_string(cmd: Cmd, i: int) -> int:
    """Where a shell's `-c` command string is: its first operand after the options."""
    while i < len(cmd.args):
        arg = cmd.args[i]
        if arg is None or not arg.startswith(("-", "+")) or arg in ("-", "+"):
            return i
        i += 2 if arg in SCRIPT_VALUES["shell"] else 1
    return i


@rule("source", ".")
def _source(ctx: Context, cmd: Cmd) -> None:
    if any(n.type == "process_substitution" for n in cmd.nodes):
        reason = "sources the output of a process substitution as code"
        ctx.flag("remote-code", reason, cmd.node, opaque=True)
    elif cmd.operands:
        ran_file(ctx, cmd, cmd.operands[0])


def ran_file(ctx: Context, cmd: Cmd, path: str | None) -> None:
    """Running a file written earlier (in this command or this session) asks: what it does
    was never shown to the person as a command."""
    ran, contextual = ctx.ran_written_file(path)
    if ran:
        when = "earlier in this session" if contextual else "earlier in this command"
        ctx.flag(
            "run-written", f"runs {path}, which was written {when}", cmd.node, contextual=contextual
        )


@rule("eval")
def _eval(ctx: Context, cmd: Cmd) -> None:
    if not cmd.args:
        return
    if len(cmd.args) == 1:
        ctx.shell_payload(cmd.nodes[0], cmd.args[0])
    elif all(a is not None for a in cmd.args):
        ctx.shell_payload(cmd.node, " ".join(a for a in cmd.args if a))
    else:
        ctx.flag("dynamic-command", "eval of text computed at run time", cmd.node)


@rule("su")
def _su(ctx: Context, cmd: Cmd) -> None:
    for i, arg in enumerate(cmd.args):
        if arg in ("-c", "--command") and i + 1 < len(cmd.args):
            ctx.shell_payload(cmd.nodes[i + 1], cmd.args[i + 1])
            return
    ctx.flag("root-shell", "opens an interactive shell as another user", cmd.node, Severity.HIGH)


_SSH_VALUE_OPTIONS = frozenset(
    [
        "-p",
        "-i",
        "-l",
        "-o",
        "-F",
        "-J",
        "-L",
        "-R",
        "-D",
        "-b",
        "-c",
        "-E",
        "-e",
        "-m",
        "-O",
        "-Q",
        "-S",
        "-W",
        "-w",
        "-B",
    ]
)


def _ssh_remote(cmd: Cmd) -> list[str | None]:
    _, host = cmd.sub(_SSH_VALUE_OPTIONS)
    return cmd.args[host + 1 :]


@rule("ssh")
def _ssh(ctx: Context, cmd: Cmd) -> None:
    remote = _ssh_remote(cmd)
    if remote:
        if all(r is not None for r in remote):
            ctx.shell_payload(cmd.node, " ".join(r for r in remote if r))
        else:
            ctx.flag("dynamic-command", "runs a remote command computed at run time", cmd.node)


def inner_command(cmd: Cmd) -> Cmd | None:
    """The command `ssh HOST CMD`, `docker exec C CMD` or `kubectl exec P -- CMD` runs."""
    if cmd.name == "ssh":
        remote = [w for r in _ssh_remote(cmd) if r for w in r.split()]
        if not remote:
            return None
        args: list[str | None] = list(remote[1:])
        return Cmd(remote[0].rsplit("/", 1)[-1], args, [cmd.node] * len(args), cmd.node)
    words = [a for a in cmd.args if a and not a.startswith("-")]
    if cmd.name in ("kubectl", "oc") and words[:1] == ["exec"] and "--" in cmd.args:
        return cmd.rest(cmd.args.index("--") + 1)
    if cmd.name in ("docker", "podman") and words[:1] in (["exec"], ["run"]):
        return _docker_inner(cmd)
    return None


_GIT_CONFIG_VALUES = frozenset(
    {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url"}
)
_GIT_CONFIG_READS = frozenset({"get", "list", "unset", "remove-section", "rename-section", "edit"})


def _git_config_sets_a_program(cmd: Cmd) -> bool:
    """`git config alias.x '!rm f'` or `core.hooksPath`: later git calls would run it unasked
    (also `git config -f .git/config ...` and git 2.46's `git config set ...`)."""
    keys = [
        a
        for i, a in enumerate(cmd.args)
        if a and not a.startswith("-") and not (i and cmd.args[i - 1] in _GIT_CONFIG_VALUES)
    ]
    if keys[:1] == ["set"]:
        keys = keys[1:]
    elif keys[:1] and keys[0] in _GIT_CONFIG_READS:
        return False
    key = keys[0].lower() if keys else ""
    if (
        cmd.has("--get", "--get-all", "--list", "--unset", "--get-regexp", short="l")
        or len(keys) < 2
    ):
        return False
    return key.startswith("alias.") or bool(GIT_PROGRAM_KEYS.match(key))


GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"}
)


def _git_config(ctx: Context, cmd: Cmd) -> dict[str, str]:
    """`git -c key=value`: aliases it defines; a program it sets asks."""
    aliases: dict[str, str] = {}
    for i, arg in enumerate(cmd.args):
        if arg not in ("-c", "--config-env") or i + 1 >= len(cmd.args):
            continue
        setting = cmd.args[i + 1]
        if setting is None:
            ctx.flag("dynamic-command", "git -c with a setting computed at run time", cmd.node)
            continue
        key, _, value = setting.partition("=")
        key = key.lower()
        if key.startswith("alias."):
            aliases[key[len("alias.") :]] = value
        elif arg == "--config-env" or GIT_PROGRAM_KEYS.match(key):
            ctx.flag("git-config", f"git -c {key}: sets a program for git to run", cmd.node)
    return aliases


@rule("git")
def _git(ctx: Context, cmd: Cmd) -> None:
    aliases = _git_config(ctx, cmd)
    for i, arg in enumerate(cmd.args):
        if arg is not None and (arg == "--git-dir" or arg.startswith("--git-dir=")):
            value = arg.partition("=")[2] or (cmd.args[i + 1] if i + 1 < len(cmd.args) else None)
            judge_setting(ctx, cmd.node, "GIT_DIR", value)
    sub, at = cmd.sub(GIT_VALUE_OPTIONS)
    if sub in aliases:
        alias, rest = aliases[sub], cmd.args[at + 1 :]
        if alias.startswith("!"):
            line = " ".join([alias[1:], *(a for a in rest if a)]) if all(rest) else None
            ctx.shell_payload(cmd.node, line)
            return
        words = alias.split() + [a for a in rest]
        # a computed first word is no subcommand we know, as Cmd.sub says of one
        sub, args = (words[0] or "", words[1:]) if words else ("", [])
        inner = Cmd(sub, args, [cmd.node] * len(args), cmd.node)
        reason = _git_reason(sub, inner)
        if reason:
            ctx.flag(f"git-{sub}", f"git {sub} (an alias): {reason}", cmd.node)
        return
    inner = Cmd(sub, cmd.args[at + 1 :], cmd.nodes[at + 1 :], cmd.node)
    _git_runs(ctx, sub, inner)
    _git_writes(ctx, sub, inner)
    if sub == "mv":
        _git_mv(ctx, inner)
    reason = _git_reason(sub, inner)
    if reason:
        ctx.flag(f"git-{sub}", f"git {sub}: {reason}", cmd.node)


def _git_writes(ctx: Context, sub: str, cmd: Cmd) -> None:
    """Files and folders git is told to write: `git config --file F` (unless it only reads
    it) and the folder `git worktree add DIR` makes, judged where they land."""
    if sub == "config" and not _git_config_reads(cmd):
        for i, arg in enumerate(cmd.args):
            value = cmd.args[i + 1] if arg in ("-f", "--file") and i + 1 < len(cmd.args) else None
            value = arg.split("=", 1)[1] if arg and arg.startswith("--file=") else value
            if value is not None and value != "-":
                ctx.place(cmd.node, value, "git config writes")
    if sub == "worktree" and cmd.operands[:1] == ["add"]:
        values = {"-b", "-B", "--reason", "--orphan"}
        folder = next(
            (
                a
                for j, a in enumerate(cmd.args)
                if j > cmd.args.index("add")
                and a
                and not a.startswith("-")
                and cmd.args[j - 1] not in values
            ),
            None,
        )
        if folder is not None:
            ctx.place(cmd.node, folder, "git worktree add makes", tree=())


def _git_config_reads(cmd: Cmd) -> bool:
    """`git config --get`, `--list`, `get`, or a key alone: it only reads its file."""
    keys = [a for a in cmd.args if a and not a.startswith("-")]
    if cmd.has("--get", "--get-all", "--get-regexp", "--list", "--get-urlmatch", short="l"):
        return True
    if keys[:1] in (["get"], ["list"]):
        return True
    changes = ("--unset", "--unset-all", "--add", "--replace-all", "--remove-section")
    return len(keys) < 2 and keys[:1] != ["edit"] and not cmd.has(*changes, "--rename-section")


def _git_mv(ctx: Context, cmd: Cmd) -> None:
    """`git mv` moves files in the working tree as mv does, but over an existing file
    only with -f."""
    operands = [o for o in cmd.operands if o != "--"]
    if len(operands) < 2:
        return
    dest, sources = operands[-1], operands[:-1]
    for source in sources:
        ctx.place(cmd.node, source, "git mv moves", delete=True)
    ctx.place(cmd.node, dest, "git mv moves onto", tree=tuple(sources))
    if cmd.has("--force", short="f"):
        ctx.flag("move", f"git mv -f moves onto {dest} (may overwrite it)", cmd.node)


# Options of git's subcommands whose value is a command line git hands to a shell.
_GIT_COMMAND_OPTIONS = {
    "rebase": ("-x", "--exec"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "clone": ("-u", "--upload-pack"),
    "ls-remote": ("-u", "--upload-pack"),
    "archive": ("--exec",),
    "push": ("--receive-pack", "--exec"),
    "send-pack": ("--receive-pack", "--exec"),
    "fetch-pack": ("--upload-pack", "--exec"),
    "difftool": ("-x", "--extcmd"),
    "grep": ("-O", "--open-files-in-pager"),
    "send-email": ("--to-cmd", "--cc-cmd", "--sendmail-cmd"),
}
# Subcommands followed by a command they run: `git bisect run CMD`, `git submodule foreach CMD`.
_GIT_RUNS_REST = {"bisect": "run", "submodule": "foreach"}


def _git_runs(ctx: Context, sub: str, cmd: Cmd) -> None:
    """Command lines a git subcommand runs: `rebase -x`, `fetch --upload-pack`, `grep -O`,
    `bisect run`, `submodule foreach`, and the `ext::` transport, whose URL is a command."""
    names = _GIT_COMMAND_OPTIONS.get(sub, ())
    for i, arg in enumerate(cmd.args):
        if arg is None:
            continue
        if arg.startswith("ext::"):
            ctx.flag("git-ext", f"git {sub} runs the command in an ext:: URL", cmd.node)
        for name in names:
            if arg == name and i + 1 < len(cmd.args) and name != "-O":
                ctx.shell_payload(cmd.nodes[i + 1], cmd.args[i + 1])
            elif arg.startswith(name + "=") and name.startswith("--"):
                ctx.shell_payload(cmd.node, arg[len(name) + 1 :])
            elif len(name) == 2 and arg.startswith(name) and len(arg) > 2:
                ctx.shell_payload(cmd.node, arg[2:])  # `-O'cmd'`, `-x'cmd'`
    word = _GIT_RUNS_REST.get(sub)
    ops = cmd.operands
    if word is not None and ops[:1] == [word]:
        start = cmd.args.index(word) + 1
        while start < len(cmd.args) and (cmd.args[start] or "").startswith("--"):
            start += 1  # `submodule foreach --recursive`
        rest = cmd.args[start:]
        if not rest:
            return
        line = shlex.join([a for a in rest if a is not None]) if all(rest) else None
        if sub == "submodule" and len(rest) == 1:
            line = rest[0]  # foreach hands its one argument to a shell as it is
        ctx.shell_payload(cmd.node, line)


def _git_reason(sub: str, cmd: Cmd) -> str:
    ops = cmd.operands
    if sub == "config" and _git_config_sets_a_program(cmd):
        return "saves a setting that runs a program (an alias or a command key) for later git calls"
    if sub == "reset" and cmd.has("--hard", "--merge", "--keep"):
        return "discards uncommitted changes"
    if sub == "clean" and (cmd.has("--force", short="f") or not cmd.has("--dry-run", short="n")):
        return "deletes untracked files"
    if sub == "checkout" and ("--" in cmd.args or "." in ops or cmd.has("--force", short="f")):
        return "discards changes in the working tree"
    if sub == "checkout" and len(_checkout_operands(cmd)) >= 2:
        return "overwrites files with another version, discarding their changes"
    if (sub == "checkout" and cmd.has(short="B")) or (
        sub == "switch" and cmd.has("--force-create", short="C")
    ):
        return "resets an existing branch to another commit"
    if sub == "branch" and cmd.has("--force", short="f") and ops:
        return "resets an existing branch to another commit"
    if sub == "checkout-index" and cmd.has("--force", short="f"):
        return "overwrites files in the working tree"
    if sub == "read-tree" and cmd.has(short="u") and cmd.has("--reset"):
        return "discards changes in the working tree"
    if sub == "prune" and not cmd.has("--dry-run", short="n"):
        return "prunes unreachable objects"
    if sub == "restore" and not (
        cmd.has("--staged", short="S") and not cmd.has("--worktree", short="W")
    ):
        return "discards changes in the working tree"
    if sub == "stash" and ops[:1] in (["drop"], ["clear"]):
        return "deletes stashed changes"
    if sub == "push" and (
        cmd.has("--force", "--force-with-lease", "--mirror", "--delete", "--prune", short="fd")
        or any(o and (o.startswith("+") or o.startswith(":")) for o in ops)
    ):
        return "rewrites or deletes remote history"
    if sub == "branch" and (
        cmd.has(short="D") or (cmd.has("--delete", short="d") and cmd.has("--force", short="f"))
    ):
        return "force-deletes a branch"
    if sub == "branch" and cmd.has(short="MC"):
        return "force-renames or copies a branch over an existing one"
    if sub == "rm":
        return "deletes tracked files"
    if sub in ("filter-branch", "filter-repo"):
        return "rewrites history"
    if sub == "reflog" and ops[:1] in (["expire"], ["delete"]):
        return "deletes reflog entries"
    if sub == "update-ref" and cmd.has(short="d"):
        return "deletes a ref"
    if sub == "gc" and any(a and a.startswith("--prune") for a in cmd.args):
        return "prunes unreachable objects"
    if sub == "tag" and cmd.has("--delete", short="d"):
        return "deletes a tag"
    if sub == "worktree" and ops[:1] == ["remove"] and cmd.has("--force", short="f"):
        return "deletes a worktree with its uncommitted changes"
    if sub == "submodule" and ops[:1] == ["deinit"]:
        return "removes submodules' working trees"
    if sub in ("switch", "checkout") and cmd.has("--discard-changes"):
        return "discards changes in the working tree"
    if sub == "switch" and cmd.has("--force", short="f"):
        return "discards changes in the working tree"
    return ""


def _checkout_operands(cmd: Cmd) -> list[str | None]:
    """`git checkout`'s operands, without the values of -b, -B and --orphan: two of them
    are a commit and the paths to take from it."""
    taking = ("-b", "-B", "--orphan", "--conflict", "--pathspec-from-file")
    return [
        a
        for i, a in enumerate(cmd.args)
        if (a is None or not a.startswith("-")) and not (i and cmd.args[i - 1] in taking)
    ]


_PACKAGE_REMOVAL = {
    "apt": {"remove", "purge", "autoremove"},
    "apt-get": {"remove", "purge", "autoremove"},
    "aptitude": {"remove", "purge"},
    "yum": {"remove", "erase", "autoremove"},
    "dnf": {"remove", "erase", "autoremove"},
    "zypper": {"remove", "rm"},
    "pacman": set(),
    "apk": {"del"},
    "pip": {"uninstall"},
    "pip3": {"uninstall"},
    "pipx": {"uninstall", "uninstall-all"},
    "uv": {"remove"},
    "poetry": {"remove"},
    "npm": {"uninstall", "remove", "rm", "un", "r", "prune"},
    "pnpm": {"remove", "rm", "uninstall"},
    "yarn": {"remove"},
    "brew": {"uninstall", "remove", "rm"},
    "snap": {"remove"},
    "flatpak": {"uninstall"},
    "conda": {"remove", "uninstall"},
    "go": {"clean"},
    "cargo": {"uninstall", "clean"},
    "gem": {"uninstall", "cleanup"},
}
# Caches and environments a package manager deletes: `pip cache purge`, `conda env remove`.
_PACKAGE_CLEANUP = {
    "npm": (("cache", "clean"),),
    "yarn": (("cache", "clean"),),
    "pnpm": (("store", "prune"),),
    "pip": (("cache", "purge"), ("cache", "remove")),
    "pip3": (("cache", "purge"), ("cache", "remove")),
    "uv": (("cache", "clean"), ("cache", "prune")),
    "poetry": (("cache", "clear"), ("env", "remove")),
    "conda": (("env", "remove"), ("clean",), ("remove", "--all")),
    "mamba": (("env", "remove"), ("clean",), ("remove", "--all")),
    "brew": (("cleanup",), ("autoremove",)),
    "pipx": (("uninstall-all",),),
}


@rule(*_PACKAGE_REMOVAL, *_PACKAGE_CLEANUP)
def _packages(ctx: Context, cmd: Cmd) -> None:
    sub, _ = cmd.sub(frozenset({"-c", "-C", "--prefix", "-p"}))
    if sub in _PACKAGE_REMOVAL.get(cmd.name, ()) or (cmd.name == "pacman" and cmd.has(short="R")):
        ctx.flag("package-removal", f"{cmd.name} removes packages", cmd.node)
    if cmd.name == "uv" and sub == "pip" and "uninstall" in cmd.args:
        ctx.flag("package-removal", "uv removes packages", cmd.node)
    words = [a for a in cmd.args if a and (not a.startswith("-") or a == "--all")]
    for path in _PACKAGE_CLEANUP.get(cmd.name, ()):
        if words[: len(path)] == list(path):
            ctx.flag(
                "package-removal",
                f"{cmd.name} {' '.join(path)} deletes caches or environments",
                cmd.node,
            )


@rule("dpkg", "rpm")
def _dpkg(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--remove", "--purge", "--erase", short="rPe" if cmd.name == "dpkg" else "e"):
        ctx.flag("package-removal", f"{cmd.name} removes packages", cmd.node)


@rule("docker", "podman", "nerdctl", "docker-compose", "podman-compose")
def _docker(ctx: Context, cmd: Cmd) -> None:
    words = [a for a in cmd.args if a and not a.startswith("-")]
    if words[:1] in (["exec"], ["run"]) or words[:2] in (["compose", "exec"], ["compose", "run"]):
        _judge_inner(ctx, cmd)
        return
    destructive = {"rm", "rmi", "prune", "kill", "stop", "down", "restart", "reset"}
    hit = next((w for w in words[:3] if w in destructive), None)
    if hit or (words[:2] in (["volume", "rm"], ["system", "prune"])):
        ctx.flag(
            "container",
            f"{cmd.name} {' '.join(words[:3])}: removes or stops containers or data",
            cmd.node,
        )


def _judge_inner(ctx: Context, cmd: Cmd) -> None:
    """`docker exec CONTAINER CMD...`: judge the inner command."""
    inner = _docker_inner(cmd)
    if inner is not None:
        ctx.judge(inner)


def _docker_inner(cmd: Cmd) -> Cmd | None:
    args = cmd.args
    start = (
        args.index("--") + 1
        if "--" in args
        else next(
            (i for i, a in enumerate(args) if a and a.rsplit("/", 1)[-1] in RULES and i > 1), None
        )
    )
    return cmd.rest(start) if start is not None else None


@rule("chmod", "chown", "chgrp", "setfacl")
def _permissions(ctx: Context, cmd: Cmd) -> None:
    operands = cmd.operands
    recursive = cmd.has("--recursive", short="R")
    mode = operands[0] if operands else None
    targets = operands[1:]
    for target in targets:
        ctx.place(cmd.node, target, f"{cmd.name} changes", contents=False)
    levels = [ctx.classify(t, recursive) for t in targets]
    severity = max((level for level, _ in levels), default=Severity.NORMAL)
    if severity is Severity.HARDLINE and not any("home directory" in label for _, label in levels):
        severity = Severity.HARDLINE  # the whole filesystem or a system directory, recursively
    elif severity is Severity.HARDLINE:
        severity = Severity.HIGH
    if recursive and not (cmd.name == "chmod" and _only_grants_reading(mode)):
        ctx.flag(
            "permissions",
            f"{cmd.name} -R changes ownership or permissions of {_shown(targets)}",
            cmd.node,
            severity,
        )
    elif cmd.name == "chmod" and mode and re.fullmatch(r"0?[0-7]?[0-7][0-7]7|[ao]?\+w|0?000", mode):
        ctx.flag("permissions", f"chmod {mode} on {_shown(targets)}", cmd.node, severity)


def _only_grants_reading(mode: str | None) -> bool:
    """`g+r`, `a+rX`, `+r`: a mode that only adds read (and directory search) permission."""
    return bool(mode) and all(
        re.fullmatch(r"[ugoa]*\+[rX]+", clause) for clause in (mode or "").split(",")
    )


@rule("kill")
def _kill(ctx: Context, cmd: Cmd) -> None:
    targets = [
        a for a in cmd.args if a is not None and not re.fullmatch(r"-[A-Za-z]+|-\d{1,2}|-s|-n", a)
    ]
    values = [
        a
        for i, a in enumerate(cmd.args)
        if a is not None and not (i and cmd.args[i - 1] in ("-s", "-n"))
    ]
    if "-1" in values[1:] or (values and values[-1] == "-1" and len(values) > 1):
        ctx.flag("kill", "kills every process you can signal", cmd.node, Severity.HARDLINE)
    elif "1" in targets:
        ctx.flag("kill", "signals process 1 (init)", cmd.node, Severity.HIGH)
    elif cmd.has("-l", "-L", "--list") or "-0" in cmd.args or cmd.args[:2] == ["-s", "0"]:
        return  # listing signals, or signal 0: only checks that a process exists
    else:
        ctx.flag("kill", f"terminates processes {_shown(targets)}", cmd.node)


@rule("pkill", "killall", "skill", "xkill")
def _pkill(ctx: Context, cmd: Cmd) -> None:
    ctx.flag("kill", f"{cmd.name} terminates processes by name", cmd.node)


@rule("shutdown", "reboot", "halt", "poweroff")
def _power(ctx: Context, cmd: Cmd) -> None:
    if cmd.name == "shutdown" and cmd.has("-c"):
        return
    ctx.flag(
        "power", f"{cmd.name}: shuts down or restarts the machine", cmd.node, Severity.HARDLINE
    )


@rule("trap")
def _trap(ctx: Context, cmd: Cmd) -> None:
    """`trap 'CODE' SIGNAL`: the code runs later, in this shell."""
    operands = [a for a in cmd.args if a is None or not a.startswith("-") or a == "-"]
    if len(operands) >= 2 and operands[0] != "-":
        ctx.shell_payload(cmd.nodes[cmd.args.index(operands[0])], operands[0])


@rule("coproc")
def _coproc(ctx: Context, cmd: Cmd) -> None:
    if "{" in cmd.args or "(" in cmd.args or not cmd.args:
        ctx.flag("unparsable", "coproc with a compound command cannot be checked", cmd.node)
    elif cmd.args[0] is not None:
        inner = cmd.rest(0)
        if inner is not None:
            ctx.judge(inner)


@rule("hash")
def _hash(ctx: Context, cmd: Cmd) -> None:
    """`hash -p /bin/rm r` makes `r` run rm: like an alias."""
    for i, arg in enumerate(cmd.args[:-2]):
        if arg == "-p":
            ctx.alias(cmd.args[i + 2], cmd.args[i + 1])


@rule("enable")
def _enable(ctx: Context, cmd: Cmd) -> None:
    if cmd.has(short="f"):
        reason = "enable -f loads a builtin from a shared library"
        ctx.flag("inline-code", reason, cmd.node, opaque=True)


@rule("kexec")
def _kexec(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--exec", "--load", "--force", short="elf") or not cmd.args:
        ctx.flag("power", "kexec replaces the running kernel", cmd.node, Severity.HARDLINE)


@rule("init", "telinit")
def _init(ctx: Context, cmd: Cmd) -> None:
    if any(a in ("0", "6") for a in cmd.args):
        ctx.flag(
            "power",
            f"{cmd.name} {cmd.args[0]}: shuts down or restarts",
            cmd.node,
            Severity.HARDLINE,
        )


@rule("systemctl", "service")
def _systemctl(ctx: Context, cmd: Cmd) -> None:
    words = [a for a in cmd.args if a and not a.startswith("-")]
    if any(w in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue") for w in words[:1]):
        ctx.flag(
            "power", f"{cmd.name} {words[0]}: shuts down or restarts", cmd.node, Severity.HARDLINE
        )
    elif any(
        w in ("stop", "disable", "mask", "restart", "kill", "isolate", "reload") for w in words[:2]
    ):
        ctx.flag(
            "service", f"{cmd.name} {' '.join(words[:2])}: stops or changes a service", cmd.node
        )


@rule("crontab")
def _crontab(ctx: Context, cmd: Cmd) -> None:
    if cmd.has(short="r"):
        ctx.flag("crontab", "removes your crontab", cmd.node)
    elif cmd.operands and not cmd.has(short="l"):
        ctx.flag("crontab", "replaces your crontab", cmd.node)
    elif not cmd.has(short="lerTV") and not cmd.has("--help", "--version"):
        ctx.flag("crontab", "replaces your crontab with what it reads", cmd.node)


@rule("history")
def _history(ctx: Context, cmd: Cmd) -> None:
    if cmd.has(short="cdw"):
        ctx.flag("history", "clears or rewrites shell history", cmd.node)


@rule("rsync")
def _rsync(ctx: Context, cmd: Cmd) -> None:
    operands = cmd.operands
    dest = operands[-1] if len(operands) >= 2 else None
    if dest is not None and not re.match(r"^[^/]*:", dest):  # host:path is another machine
        ctx.place(cmd.node, dest, "rsync writes into", tree=tuple(operands[:-1]))
    if any(
        a and (a.startswith("--delete") or a in ("--remove-source-files", "--del"))
        for a in cmd.args
    ):
        ctx.flag("sync-delete", "rsync deletes files (--delete / --remove-source-files)", cmd.node)


@rule("tar", "bsdtar")
def _tar(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--remove-files", "--unlink-first", "--recursive-unlink"):
        ctx.flag("archive-delete", "tar deletes its source files", cmd.node)
    mode, archive, directory = _tar_parts(cmd)
    if any(
        a
        and a.startswith(
            (
                "--to-command",
                "--use-compress-program",
                "--checkpoint-action",
                "--info-script",
                "--new-volume-script",
                "-I",
            )
        )
        for a in cmd.args
    ):
        ctx.flag("inline-code", "tar runs a program it is given", cmd.node, opaque=True)
    if mode in "cru" and archive not in (None, "-", "/dev/null", "/dev/stdout"):
        risk = ctx.place(cmd.node, archive, "tar writes the archive")
        path = ctx.resolve(archive)
        if mode == "c" and risk is None and path is not None and os.path.lexists(path):
            ctx.flag(
                "overwrite",
                f"tar -c overwrites the existing file {archive}",
                cmd.node,
                writes=(archive,),
            )
    if mode == "x" and directory is not None:
        ctx.place(cmd.node, directory, "tar extracts into", tree=())
    if mode == "x" and _renames(cmd):
        reason = f"{cmd.name} renames members as it unpacks them, so where they land is not known"
        ctx.flag("overwrite", reason, cmd.node, opaque=True)
    elif mode == "x" and archive in (None, "-"):  # no -f: the tape or standard input
        reason = (
            f"{cmd.name} unpacks an archive read from standard input or named at run time,"
            " so what it holds is not known"
        )
        ctx.flag("overwrite", reason, cmd.node, opaque=True)
    elif mode == "x" and archive is not None:  # named, above: read and judged
        _unpacked(ctx, cmd, archive, directory or ".")


_SUBSTITUTION = re.compile(r"s?([^\w\s]).*\1.*\1\w*", re.DOTALL)


def _renames(cmd: Cmd) -> bool:
    """tar --transform/--xform, or bsdtar's `-s /old/new/`: members land under names other
    than those the archive holds (GNU tar's own -s takes no value)."""
    for i, arg in enumerate(cmd.args):
        following = cmd.args[i + 1] if i + 1 < len(cmd.args) else ""
        if arg is None:
            continue
        if arg.startswith(("--transform", "--xform")):
            return True
        if arg == "-s" and (
            cmd.name == "bsdtar" or following is None or _SUBSTITUTION.fullmatch(following)
        ):
            return True
    return False


def _unpacked(ctx: Context, cmd: Cmd, archive: str, folder: str) -> None:
    """Each member of an archive there to read, judged where unpacking puts it."""
    path = ctx.resolve(archive)
    found = archives.members(path) if path is not None and os.path.isfile(path) else None
    written_here = ctx.written_earlier(archive)[0]
    if written_here or (found is None and path is not None and os.path.lexists(path)):
        # made earlier in this command, or in a form not read here: its members are not known
        reason = f"{cmd.name} unpacks {archive}, whose members cannot be read here"
        ctx.flag("overwrite", reason, cmd.node, opaque=True)
        return
    for name, link in found or ():
        if archives.escapes(name) or (link and archives.escapes(link)):
            what = f"{name} -> {link}" if link else name
            reason = f"{cmd.name} unpacks {what}, outside the folder it unpacks into"
            ctx.flag("overwrite", reason, cmd.node, Severity.HIGH)
            continue
        ctx.place(cmd.node, posixpath.join(folder, name), f"{cmd.name} unpacks", tree=())


def _tar_parts(cmd: Cmd) -> tuple[str, str | None, str | None]:
    """tar's mode (c, r, u, x, t or ""), its archive (-f) and its -C directory."""
    mode, archive, directory = "", None, None
    args = cmd.args
    for i, arg in enumerate(args):
        if arg is None:
            continue
        following = args[i + 1] if i + 1 < len(args) else None
        long = {"--create": "c", "--append": "r", "--update": "u", "--extract": "x", "--get": "x"}
        if arg in long:
            mode = mode or long[arg]
        elif arg.startswith("--file="):
            archive = arg.split("=", 1)[1]
        elif arg in ("--file", "-f"):
            archive = following
        elif arg in ("-C", "--directory"):
            directory = following
        elif arg.startswith("--directory="):
            directory = arg.split("=", 1)[1]
        elif (arg.startswith("-") and not arg.startswith("--")) or (i == 0 and arg.isalpha()):
            letters = arg.lstrip("-")
            mode = mode or next((c for c in letters if c in "cruxt"), "")
            if "f" in letters:
                rest = letters[letters.index("f") + 1 :]
                archive = rest if rest and arg.startswith("-") else following
    return mode, archive, directory


@rule("zip")
def _zip(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--move", short="m"):
        ctx.flag("archive-delete", "zip -m deletes the files it archives", cmd.node)


@rule("7z", "7za", "7zr")
def _7z(ctx: Context, cmd: Cmd) -> None:
    if "-sdel" in cmd.args:
        ctx.flag("archive-delete", "7z -sdel deletes the files it archives", cmd.node)
    for arg in cmd.args:  # -oDIR, no space: where x and e unpack
        if arg and arg.startswith("-o") and len(arg) > 2:
            ctx.place(cmd.node, arg[2:], f"{cmd.name} extracts into", tree=())


@rule("pax")
def _pax(ctx: Context, cmd: Cmd) -> None:
    """pax -r unpacks members this gate does not read (renamed too, with -s)."""
    if any(a is None or (a[:1] == "-" and a[1:2] != "-" and "r" in a) for a in cmd.args):
        reason = "pax unpacks an archive whose members are not read here"
        ctx.flag("overwrite", reason, cmd.node, opaque=True)
    judge_unruled(ctx, cmd)  # what else it is given, as for any program without a rule


@rule("cpio")
def _cpio(ctx: Context, cmd: Cmd) -> None:
    """Copy-in (-i) writes each member where its name says, an absolute one too, unless told
    --no-absolute-filenames; -D names the folder, and pass-through (-p) copies a tree into
    the folder it is given."""
    folder = None
    for i, arg in enumerate(cmd.args):
        if arg in ("-D", "--directory") and i + 1 < len(cmd.args):
            folder = cmd.args[i + 1]
        elif arg and arg.startswith("--directory="):
            folder = arg.split("=", 1)[1]
    if cmd.has("--pass-through", short="p"):
        operands = [a for a in cmd.args if a is None or not a.startswith("-")]
        if operands and operands[-1] != folder:
            ctx.place(cmd.node, operands[-1], "cpio copies into", tree=())
        return
    if not cmd.has("--extract", short="i") or cmd.has("--list", short="t"):
        return
    if folder is not None:
        ctx.place(cmd.node, folder, "cpio extracts into", tree=())
    if "--no-absolute-filenames" not in cmd.args:
        ctx.flag(
            "outside-write",
            "cpio -i unpacks each member where its name says, absolute names too "
            "(--no-absolute-filenames keeps them in the folder)",
            cmd.node,
        )


@rule("nc", "ncat", "netcat", "socat")
def _netcat(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--exec", "--sh-exec", short="ec") and cmd.name != "socat":
        ctx.flag(
            "reverse-shell",
            f"{cmd.name} runs a program for a network peer",
            cmd.node,
            Severity.HIGH,
        )
    if cmd.name == "socat" and any(a and re.match(r"(?i)(exec|system):", a) for a in cmd.args):
        ctx.flag(
            "reverse-shell", "socat connects a program to the network", cmd.node, Severity.HIGH
        )


@rule("curl", "wget")
def _download(ctx: Context, cmd: Cmd) -> None:
    cloud.http(ctx, cmd)
    names = ("-o", "--output") if cmd.name == "curl" else ("-O", "--output-document")
    for i, arg in enumerate(cmd.args):
        if arg in names and i + 1 < len(cmd.args):
            target = cmd.args[i + 1]
            if target not in ("-", "/dev/null"):
                _overwrite(ctx, cmd.node, target, f"{cmd.name} downloads over")


@rule("find")
def _find(ctx: Context, cmd: Cmd) -> None:
    roots = []
    for arg in cmd.args:
        if arg is None or arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    if "-delete" in cmd.args:
        _targets_finding(ctx, cmd, "delete", "deletes everything found under", roots or ["."], True)
    for i, arg in enumerate(cmd.args):
        if arg in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(cmd.args):
            _overwrite(ctx, cmd.node, cmd.args[i + 1], "find writes")


@rule("fd", "fdfind")
def _fd(ctx: Context, cmd: Cmd) -> None:
    """`fd PATTERN -x CMD`: CMD runs on every file found, as with find -exec."""
    for i, arg in enumerate(cmd.args):
        if arg in ("-x", "--exec", "-X", "--exec-batch"):
            end = next(
                (j for j in range(i + 1, len(cmd.args)) if cmd.args[j] == ";"), len(cmd.args)
            )
            found = [None if a and "{" in a else a for a in cmd.args[i + 1 : end]]
            inner = Cmd("", found, cmd.nodes[i + 1 : end], cmd.node).rest(0)
            if inner is None and i + 1 < len(cmd.args):
                ctx.flag(
                    "dynamic-command", f"{cmd.name} runs a program computed at run time", cmd.node
                )
            elif inner is not None:
                ctx.judge(inner)


@rule("rclone")
def _rclone(ctx: Context, cmd: Cmd) -> None:
    sub, _ = cmd.sub()
    if sub in ("delete", "deletefile", "purge", "rmdir", "rmdirs", "sync", "move", "cleanup"):
        ctx.flag("sync-delete", f"rclone {sub} deletes or replaces remote files", cmd.node)


@rule("awk", "gawk", "mawk", "nawk", "busybox-awk")
def _awk(ctx: Context, cmd: Cmd) -> None:
    if any(a in ("inplace", "-iinplace") for a in cmd.args if a):
        ctx.flag("edit-in-place", f"{cmd.name} -i inplace edits files in place", cmd.node)
    program, from_file, skip = None, False, False
    for i, arg in enumerate(cmd.args):
        if skip:
            skip = False
            continue
        if arg in ("-f", "--file"):
            from_file, skip = True, True
            ran_file(ctx, cmd, cmd.args[i + 1] if i + 1 < len(cmd.args) else None)
        elif arg in ("-e", "--source"):
            program = cmd.args[i + 1] if i + 1 < len(cmd.args) else ""
            skip = True
        elif arg in ("-F", "-v", "--assign", "--field-separator", "-i", "--include", "-l"):
            skip = True
        elif arg is None or not arg.startswith("-"):
            if program is None and not from_file:
                program = arg if arg is not None else None
                if arg is None:
                    ctx.flag(
                        "dynamic-command",
                        f"{cmd.name} runs a program computed at run time",
                        cmd.node,
                    )
                    return
            break
    for what, command, writes in awk_effects(program or ""):
        if writes:
            _overwrite(ctx, cmd.node, writes, f"{cmd.name} program writes")
        elif writes == "":
            ctx.flag("overwrite", f"{cmd.name} program {what}", cmd.node, opaque=True)
        elif command is None:
            ctx.flag("inline-code", f"{cmd.name} program {what}", cmd.node, opaque=True)
        elif command.split()[:1] and command.split()[0] in STDIN_INTERPRETERS:
            ctx.flag(
                "inline-code", f"{cmd.name} program {what}: {command} runs what it prints", cmd.node
            )
        else:
            ctx.shell_payload(cmd.node, command)


@rule("ex", "ed", "red", "vim", "vi", "nvim", "view", "gvim", "emacs")
def _editor(ctx: Context, cmd: Cmd) -> None:
    """Editors run their own commands from -c, +cmd, a script or standard input."""
    scripted = any(
        a is None
        or a.startswith("+")
        or a in ("-c", "--cmd", "-S", "-s", "-e", "-E", "-es", "-Es", "--headless", "-u")
        or re.fullmatch(r"-[a-zA-Z]*[cSs]", a)
        or a.startswith(("--eval", "-eval", "--funcall", "-f", "--batch", "-batch", "-l", "--load"))
        for a in cmd.args
    )
    if cmd.name in ("ex", "ed", "red") and cmd.operands:
        scripted = True  # their commands come from -c or standard input, not a person
    if scripted:
        takes = ("-c", "--cmd", "-S", "-s", "-u", "--eval", "-l", "--load", "-f", "--funcall")
        files = [
            a
            for i, a in enumerate(cmd.args)
            if a
            and not a.startswith(("-", "+"))
            and not (i and cmd.args[i - 1] in takes)
            and not (i and re.fullmatch(r"-[a-zA-Z]*[cSs]", cmd.args[i - 1] or ""))
        ] or ["files"]
        reason = f"{cmd.name} runs editor commands on {_shown(files)}"
        ctx.flag("edit-in-place", reason, cmd.node, opaque=True)  # commands it does not read


@rule("unzip")
def _unzip(ctx: Context, cmd: Cmd) -> None:
    folder = "."
    for i, arg in enumerate(cmd.args[:-1]):
        if arg == "-d":
            folder = cmd.args[i + 1] or "."
            ctx.place(cmd.node, cmd.args[i + 1], "unzip extracts into", tree=())
    archive = next((a for a in cmd.args if a is not None and not a.startswith("-")), None)
    if archive is not None and not cmd.has(short="lvtZp"):
        _unpacked(ctx, cmd, archive, folder)
    if cmd.has(short="o") and not cmd.has(short="l"):
        ctx.flag("overwrite", "unzip -o overwrites existing files without asking", cmd.node)


@rule("Remove-Item", "remove-item", "ri", "del", "erase", "rd")
def _windows_delete(ctx: Context, cmd: Cmd) -> None:
    recursive = cmd.has("-Recurse", "-recurse", short="") or any(
        a and a.lower() in ("/s", "-recurse") for a in cmd.args
    )
    targets = [a for a in cmd.args if a is None or not a.startswith(("-", "/"))]
    _targets_finding(ctx, cmd, "delete", "deletes", targets, recursive)


@rule("format")
def _format(ctx: Context, cmd: Cmd) -> None:
    if any(a and re.fullmatch(r"[A-Za-z]:", a) for a in cmd.args):
        ctx.flag("format", "formats a drive", cmd.node, Severity.HARDLINE)


@rule("cryptsetup")
def _cryptsetup(ctx: Context, cmd: Cmd) -> None:
    if any(a in ("luksFormat", "erase", "luksErase", "reencrypt") for a in cmd.args):
        ctx.flag(
            "format", "cryptsetup destroys or re-keys an encrypted volume", cmd.node, Severity.HIGH
        )


@rule("passwd", "chpasswd", "usermod")
def _passwords(ctx: Context, cmd: Cmd) -> None:
    if cmd.name == "passwd" and not cmd.has("--delete", "--lock", "--expire", short="dle"):
        return  # changing one's password asks for it on the terminal
    if cmd.name == "usermod" and not cmd.has("--lock", "--expiredate", "--password", short="Lep"):
        return
    ctx.flag(
        "accounts",
        f"{cmd.name} removes, locks or replaces an account's password",
        cmd.node,
        Severity.HIGH,
    )


@rule("userdel", "groupdel", "deluser", "delgroup")
def _users(ctx: Context, cmd: Cmd) -> None:
    ctx.flag("accounts", f"{cmd.name} deletes an account", cmd.node, Severity.HIGH)


RULES.update(databases.RULES)
RULES.update(cloud.RULES)
RULES.update(hermes.RULES)
RULES.update(system.RULES)
