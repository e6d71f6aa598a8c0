"""Programs that run a file the session may have written: task runners' files, sources run
at once, and what a compiler builds from them.

Running a file written earlier asks (what it does was never shown as a command). Besides
`bash x.sh` and `./x.sh`, that is `just` with a justfile the session wrote, `npm test` with
its package.json, `deno run x.ts`, and `./prog` built by `cc x.c -o prog` from a source it
wrote.
"""

from __future__ import annotations

import posixpath

from workbench.core.safety.words import Cmd, Context

# Task runners and the files whose commands they run, in the working directory.
_TASK_FILES = {
    "just": ("justfile", "Justfile", ".justfile"),
    "task": ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml"),
    "pre-commit": (".pre-commit-config.yaml",),
    "tox": ("tox.ini",),
    "nox": ("noxfile.py",),
    "invoke": ("tasks.py",),
    "inv": ("tasks.py",),
    "rake": ("Rakefile", "rakefile"),
}
# Package managers' subcommands that run package.json's scripts (lifecycle ones included).
_SCRIPTS = frozenset(
    [
        "run",
        "run-script",
        "test",
        "t",
        "tst",
        "start",
        "stop",
        "restart",
        "install",
        "i",
        "ci",
        "add",
        "rebuild",
        "pack",
        "publish",
    ]
)
_PACKAGE_MANAGERS = frozenset({"npm", "yarn", "pnpm", "bun"})
# Runners of a source file named after a subcommand (`deno run x.ts`) or first.
_SOURCE_AFTER = {"deno": "run", "bun": "run", "go": "run"}
_SOURCE_FIRST = frozenset({"tsx", "ts-node", "esno", "vite-node", "babel-node"})
COMPILERS = frozenset({"cc", "gcc", "g++", "c++", "clang", "clang++", "tcc", "rustc"})


def judge_runner(ctx: Context, cmd: Cmd) -> None:
    if cmd.name in _TASK_FILES:
        _task_file(ctx, cmd, _TASK_FILES[cmd.name])
    elif cmd.name in _PACKAGE_MANAGERS:
        sub, _ = cmd.sub()
        if sub in _SCRIPTS or (cmd.name == "yarn" and not sub):  # bare `yarn` installs
            _task_file(ctx, cmd, ("package.json",))
    if cmd.name in _SOURCE_AFTER and cmd.operands[:1] == [_SOURCE_AFTER[cmd.name]]:
        for source in cmd.operands[1:2] if cmd.name != "go" else cmd.operands[1:]:
            _ran(ctx, cmd, source)
    elif cmd.name in _SOURCE_FIRST and cmd.operands:
        _ran(ctx, cmd, cmd.operands[0])
    elif cmd.name in COMPILERS:
        _compiled(ctx, cmd)


def _task_file(ctx: Context, cmd: Cmd, names: tuple[str, ...]) -> None:
    for name in names:
        ran, contextual = ctx.ran_written_file(name)
        if ran:
            when = "earlier in this session" if contextual else "earlier in this command"
            reason = f"{cmd.name} runs the commands in {name}, which was written {when}"
            ctx.flag("run-written", reason, cmd.node, contextual=contextual)
            return


def _ran(ctx: Context, cmd: Cmd, path: str | None) -> None:
    ran, contextual = ctx.ran_written_file(path)
    if ran:
        when = "earlier in this session" if contextual else "earlier in this command"
        ctx.flag("run-written", f"runs {path}, which was written {when}", cmd.node)


def _compiled(ctx: Context, cmd: Cmd) -> None:
    """A program built from a source written earlier is itself a file written earlier:
    running it asks. `tcc -run x.c` runs the source at once."""
    args = cmd.args
    output = None
    sources = []
    for i, arg in enumerate(args):
        previous = args[i - 1] if i else None
        if previous == "-o":
            output = arg
        elif arg and arg.startswith("-o") and len(arg) > 2:
            output = arg[2:]
        elif arg is not None and not arg.startswith("-") and previous not in _VALUED:
            sources.append(arg)
    if "-run" in args:
        for source in sources:
            _ran(ctx, cmd, source)
        return
    if not any(ctx.ran_written_file(source)[0] for source in sources):
        return
    if output is None:  # rustc names it after the source; the C compilers a.out
        first = sources[0] if sources else "a"
        stem = posixpath.splitext(posixpath.basename(first))[0]
        output = stem if cmd.name == "rustc" else "a.out"
    ctx.wrote(output)


_VALUED = frozenset({"-I", "-L", "-l", "-D", "-U", "-x", "-include", "-MF", "-MT", "--crate-name"})
