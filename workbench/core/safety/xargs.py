"""xargs given a program, shell code or a script by its input.

`xargs CMD ARGS` runs CMD with ARGS and words read from its input after them; with `-I R`
(or `-i`, `--replace`) each R in CMD and ARGS is a line of input instead. When the input
supplies the program (`xargs -I{} {}`, `xargs env`), the code a shell runs
(`xargs -I{} sh -c '{}'`) or the script it runs (`xargs bash`), what runs is a command known
only at run time: it asks, as a finding the gate could not read (opaque).
"""

from __future__ import annotations

import re
from typing import Any

from workbench.core.safety.words import Cmd, Context

Node = Any

# options whose value is the next word when it is not attached (`-n 1`, `-n1`)
_SHORT_VALUES = frozenset("nPdsaLEI")
# options whose value, if any, must be attached (`-i{}`, `-e`, `-l5`)
_SHORT_OPTIONAL = frozenset("iel")
_LONG_VALUES = frozenset(
    {"--max-args", "--max-procs", "--delimiter", "--max-lines", "--arg-file", "--eof"}
    | {"--max-chars", "--process-slot-var"}
)
_INPUT = "\0input"  # stands for the words xargs reads, while the command is peeled


def check(ctx: Context, cmd: Cmd) -> Cmd | None:
    """`cmd` (an xargs) with its `-I{}`-like words read as the text they are, or None when
    what it runs is taken from its input (then it asks: a command known only at run time).
    Where the input's items go in the command it runs is left to the wrapper peeling."""
    args = [
        a if a is not None else _brace_word(n) for a, n in zip(cmd.args, cmd.nodes, strict=False)
    ]
    start, replace = _options(args)
    if start is None:
        return cmd  # `xargs` alone runs echo
    program = args[start]
    if program is None or (replace and replace in program):
        _flag(ctx, cmd, "xargs runs a program taken from its input")
        return None
    why = _runs_input(ctx, cmd, program, args[start + 1 :], replace)
    if why:
        _flag(ctx, cmd, why)
        return None
    return Cmd(cmd.name, [*args[:start], *cmd.args[start:]], cmd.nodes, cmd.node, cmd.program)


def _options(args: list[str | None]) -> tuple[int | None, str | None]:
    """Where the command starts, and the replace string (-I) if there is one."""
    replace, i = None, 0
    while i < len(args):
        arg = args[i]
        if arg is None or arg == "-" or not arg.startswith("-"):
            return i, replace
        if arg == "--":
            return (i + 1 if i + 1 < len(args) else None), replace
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            if key == "--replace":
                replace = value if eq else "{}"
            elif key in _LONG_VALUES and not eq:
                i += 1
            i += 1
            continue
        for j, letter in enumerate(arg[1:], 1):
            attached = arg[j + 1 :]
            if letter in _SHORT_VALUES:
                given = attached or (args[i + 1] if i + 1 < len(args) else None)
                if not attached:
                    i += 1
                if letter == "I":
                    replace = given or "{}"
                break
            if letter in _SHORT_OPTIONAL:
                if letter == "i":
                    replace = attached or "{}"
                break
        i += 1
    return None, replace


def _runs_input(
    ctx: Context, cmd: Cmd, program: str, rest: list[str | None], replace: str | None
) -> str | None:
    """Why the input is run as code by `program rest...`, or None."""
    from workbench.core.safety.commands import SHELLS
    from workbench.core.safety.wrappers import unwrap

    name = program.rsplit("/", 1)[-1]
    if name in SHELLS:
        code = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if _has_c(a)), None)
        if not any(_has_c(a) for a in rest):
            return f"xargs gives its input to {name} as the script to run"
        if code is None or (replace and replace in code):
            return f"xargs gives its input to {name} as code"
        return None
    # a wrapper whose program the input supplies: `xargs env`, `xargs sudo`, `xargs nice -n5`
    probe = Cmd(name, [*rest, _INPUT], [cmd.node] * (len(rest) + 1), cmd.node, program)
    inner = unwrap(_Quiet(ctx), probe)
    if inner is not None and inner.program == _INPUT:
        return f"xargs runs a program taken from its input (through {name})"
    return None


def _has_c(arg: str | None) -> bool:
    return arg is not None and bool(re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg))


def _brace_word(node: Node) -> str | None:
    """`-I{}` is one word of literal text to bash (tree-sitter reads braces in it)."""
    text = node.text.decode("utf-8", errors="replace")
    return text if re.fullmatch(r"[\w{}%@:.,+=/-]+", text) else None


def _flag(ctx: Context, cmd: Cmd, why: str) -> None:
    ctx.flag("input-command", f"{why}: a command known only at run time", cmd.node, opaque=True)


class _Quiet:
    """A context that keeps no findings: the probe above only looks where a program is."""

    def __init__(self, real: Context) -> None:
        self._real = real

    def flag(self, *args: Any, **kwargs: Any) -> None:
        pass

    def shell_payload(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
