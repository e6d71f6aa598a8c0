"""Text bash evaluates as code: the value of a variable or a quoted string read again as an
arithmetic expression, a name, a prompt or a command.

Bash evaluates text in more places than `eval`: an arithmetic context (`$((x))`, `((x))`,
`let`, `for ((...))`, `[[ a -eq b ]]`, an array subscript, an integer variable's assignment)
evaluates the *value* of each variable it names as an expression, and an array subscript in
that expression is expanded, so `x='a[$(rm f)]'; echo $((x))` runs `rm f`. So does a name
given as text (`printf -v`, `read`, `wait -p`, `declare`, `unset`, `test -v`, `${!x}`), prompt
expansion (`${x@P}`, `PS4`), and `compgen -C`/`complete -C`/`mapfile -C` given a command.

Each such context is found in the parse tree. Its text is judged as code: a literal is read
for the command substitutions inside it (judged as commands, so `'a[$(rm f)]'` is judged as
`rm f`); a variable is followed to every assignment of it in the command line, and each
assigned text is judged the same way. A value only run time knows (read from input, a
command's output, a function's arguments) asks, as code built at run time: the finding is
opaque. Numbers and names the command never assigns (the shell's own environment, which the
session sets and the model cannot) are plain arithmetic and stay free.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from workbench.core.safety.assigned import (
    Table,
    Text,
    Unknown,
    assigned_name,
    assigned_value,
    double_parens,
    literal,
    nest,
    option_values,
    output,
    read_names,
    table_of,
    values_of,
    variable,
)
from workbench.core.safety.parser import WORD_TYPES

__all__ = ["Table", "judge", "nest"]

Node = Any
Ctx = Any  # the Analyzer; typed loosely to keep this module free of an import cycle

ARITH, NAME, PROMPT, CODE = "an arithmetic expression", "a name", "a prompt", "a command"
_IDENT = re.compile(r"(?<![\w#])[A-Za-z_]\w*")
_SUBSCRIPTED = re.compile(r"\[([^]]*)\]")
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_MAX_DEPTH = 6  # as the analyser's own nesting limit
_BUDGET = 256  # texts judged for one context, nested values included
_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS4"})  # prompt-expanded when shown
_CONTEXTS = frozenset(
    {
        "arithmetic_expansion",
        "compound_statement",
        "c_style_for_statement",
        "subscript",
        "expansion",
        "test_command",
        "command",
        "declaration_command",
        "unset_command",
        "variable_assignment",
        "array",
        "command_substitution",
    }
)


# -- finding the contexts -------------------------------------------------------------------


def judge(ctx: Ctx, node: Node) -> None:
    """Called by the walk for each node: judge the text `node` makes bash evaluate."""
    kind = node.type
    if kind not in _CONTEXTS:
        return
    if kind in ("arithmetic_expansion", "c_style_for_statement") or double_parens(node):
        _arith_parts(ctx, node, node)
    elif kind == "subscript":
        index = [c for c in node.children[1:] if c.is_named]
        for part in index:
            _arith_parts(ctx, part, node)
    elif kind == "expansion":
        _expansion(ctx, node)
    elif kind == "test_command":
        _test(ctx, node)
    elif kind == "command":
        _command(ctx, node)
    elif kind == "declaration_command":
        _declaration(ctx, node)
    elif kind == "unset_command":
        for word in node.children[1:]:
            if word.is_named and not word.text.startswith(b"-"):
                _evaluate(ctx, word, NAME, node)
    elif kind == "array":  # `( [i]=v )`: each key is an arithmetic expression
        for element in node.children:
            parts = element.children if element.type == "concatenation" else []
            if parts and parts[0].text == b"[":
                for part in itertools.takewhile(lambda p: p.text != b"]", parts[1:]):
                    _evaluate(ctx, part, ARITH, element)
    elif kind == "command_substitution":  # `$((x))` in a here-document reads as `$( (x) )`
        text = node.text.decode("utf-8", errors="replace")
        if text.startswith("$((") and text.endswith("))"):
            _evaluate_value(ctx, text[3:-2], ARITH, node)
    elif kind == "variable_assignment":
        name = assigned_name(node)
        value = assigned_value(node)
        if name and value is not None and name in _PROMPTS:
            _evaluate(ctx, value, PROMPT, node)  # `PS4='$(rm f)'; set -x` runs it
        elif name and value is not None and table_of(ctx).integer(name):
            for element in _elements(value):
                _evaluate(ctx, element, ARITH, node)


def _arith_parts(ctx: Ctx, node: Node, where: Node) -> None:
    """Each operand of an arithmetic expression: its value is evaluated in turn."""
    for operand in _operands(node):
        _evaluate(ctx, operand, ARITH, where)


def _operands(node: Node) -> Iterator[Node]:
    stack = [node] if node.is_named and node.type not in _SCOPES else []
    if not stack:
        stack = [c for c in node.children if c.is_named]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind == "subscript":  # `a[i]`: the element's value is evaluated; i is by the walk
            yield current.children[0]
        elif kind in _OPERANDS:
            yield current
        elif kind not in ("do_group", "compound_statement") or current is node:
            stack.extend(c for c in current.children if c.is_named)


_SCOPES = frozenset({"arithmetic_expansion", "c_style_for_statement", "compound_statement"})
_OPERANDS = frozenset(
    {
        "variable_name",
        "word",
        "raw_string",
        "string",
        "ansi_c_string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "concatenation",
    }
)


def _expansion(ctx: Ctx, node: Node) -> None:
    children = node.children
    kinds = [c.type for c in children]
    name = next((c for c in children if c.type == "variable_name"), None)
    if name is None:
        return
    if "@" in kinds and kinds[kinds.index("@") + 1 : kinds.index("@") + 2] == ["P"]:
        _evaluate(ctx, name, PROMPT, node, indirect=True)  # `${x@P}`: x's value as a prompt
    elif kinds[:3] == ["${", "!", "variable_name"] and kinds[3:4] not in (["*"], ["@"]):
        _evaluate(ctx, name, NAME, node, indirect=True)  # `${!x}`: x's value names one
    if ":" in kinds and kinds[1] != "#":  # `${y:off:len}`: offset and length are arithmetic
        for part in children[kinds.index(":") + 1 :]:
            if part.is_named:
                _evaluate(ctx, part, ARITH, node)


def _test(ctx: Ctx, node: Node) -> None:
    double = bool(node.children) and node.children[0].type == "[["
    stack = list(node.children)
    while stack:
        current = stack.pop()
        operator = next((c for c in current.children if c.type == "test_operator"), None)
        op = operator.text.decode() if operator is not None else ""
        operands = [c for c in current.children if c.is_named and c is not operator]
        if current.type == "binary_expression" and double and op in _ARITH_TESTS:
            for operand in operands:
                _evaluate(ctx, operand, ARITH, node)
        elif current.type == "unary_expression" and op == "-v":
            for operand in operands:
                _evaluate(ctx, operand, NAME, node)
        else:
            stack.extend(c for c in current.children if c.is_named)


def _command(ctx: Ctx, node: Node) -> None:
    """Builtins given a name, an expression or a command as text."""
    name_node = next((c for c in node.children if c.type == "command_name"), None)
    if name_node is None:
        return
    words = [name_node, *(c for c in node.children if c.is_named and c.type != "command_name")]
    words = [w for w in words if w.type in WORD_TYPES or w.type == "command_name"]
    values = [literal(w) for w in words]
    while values and values[0] in ("builtin", "command") and len(values) > 1:
        words, values = words[1:], values[1:]
    program, args, nodes = values[0], values[1:], words[1:]
    if program == "let":
        for word in nodes:
            _evaluate(ctx, word, ARITH, node)
    elif program in ("test", "["):
        for i, arg in enumerate(args[:-1]):
            if arg == "-v":
                _evaluate(ctx, nodes[i + 1], NAME, node)
    elif program == "wait":  # `wait -n -p NAME`
        for word in option_values(args, nodes, "p"):
            _evaluate(ctx, word, NAME, node)
    elif program == "printf":
        for word in option_values(args, nodes, "v"):
            _evaluate(ctx, word, NAME, node)
            _integer_target(ctx, word, node)
    elif program == "read":
        for word in read_names(args, nodes):
            _evaluate(ctx, word, NAME, node)
            _integer_target(ctx, word, node)
    elif program in ("compgen", "complete"):
        for word in option_values(args, nodes, "C"):
            _evaluate(ctx, word, CODE, node)
        for word in option_values(args, nodes, "F"):  # a function: its body is judged
            _evaluate(ctx, word, NAME, node)  # where it is defined, if its name is known
        for word in option_values(args, nodes, "W"):  # the word list is expanded again
            _evaluate(ctx, word, PROMPT, node)
    elif program in ("mapfile", "readarray"):
        for word in option_values(args, nodes, "C"):
            _evaluate(ctx, word, CODE, node)


def _integer_target(ctx: Ctx, word: Node, where: Node) -> None:
    """`declare -i n; read n`: what is read into an integer variable is evaluated."""
    name = (literal(word) or "").partition("[")[0]
    if name and table_of(ctx).integer(name):
        reason = (
            f"bash evaluates what {literal(where.children[0]) or 'it'} puts in the integer "
            f"variable {name} as an arithmetic expression: code built at run time"
        )
        ctx.flag("evaluated-code", reason, where, opaque=True)


def _declaration(ctx: Ctx, node: Node) -> None:
    """`declare 'a[$(rm f)]=1'`, `declare -n r=NAME`, `local -i n=EXPR`."""
    flags = ""
    for child in node.children[1:]:
        text = child.text.decode("utf-8", errors="replace")
        if child.type == "word" and text.startswith(("-", "+")):
            flags += text[1:]
        elif child.type == "variable_assignment":
            value = assigned_value(child)
            if value is not None and "n" in flags:
                _evaluate(ctx, value, NAME, node)
            elif value is not None and "i" in flags:
                for element in _elements(value):
                    _evaluate(ctx, element, ARITH, node)
        elif child.is_named and child.type != "variable_name":
            _evaluate(ctx, child, NAME, node)  # a name given as a quoted or computed word


def _elements(value: Node) -> list[Node]:
    """The words an assigned value is: each element of `(a b)`, or the one word."""
    return [c for c in value.children if c.is_named] if value.type == "array" else [value]


# -- judging what is evaluated --------------------------------------------------------------


def _evaluate(ctx: Ctx, node: Node, mode: str, where: Node, *, indirect: bool = False) -> None:
    """Judge the text bash evaluates in `mode` at `where`: the value `node` stands for, or
    with `indirect`, the value of the variable `node` names."""
    budget = [_BUDGET]
    try:
        if indirect:
            texts = variable(ctx, node.text.decode("utf-8", errors="replace"), set())
        else:
            texts = values_of(ctx, node, set())
        for text in texts:
            _judge_text(ctx, text, mode, where, budget)
    except Unknown as unknown:
        shown = node.text.decode("utf-8", errors="replace")
        reason = (
            f"bash evaluates {'the value of ' if indirect else ''}{shown} as {mode}, "
            f"and it is known only at run time ({unknown.why}): code built at run time"
        )
        ctx.flag("evaluated-code", reason, where, opaque=True)


def _evaluate_value(ctx: Ctx, value: str, mode: str, where: Node) -> None:
    """Judge `value`, text written at `where`, as bash evaluates it in `mode`."""
    try:
        _judge_text(ctx, Text(value), mode, where, [_BUDGET])
    except Unknown as unknown:
        reason = (
            f"bash evaluates {value} as {mode}, and it is known only at run time "
            f"({unknown.why}): code built at run time"
        )
        ctx.flag("evaluated-code", reason, where, opaque=True)


def _judge_text(ctx: Ctx, text: Text, mode: str, where: Node, budget: list[int]) -> None:
    _judge_value(ctx, text.value, _place(ctx, text, where), mode, where, budget)


@dataclass(frozen=True)
class Place:
    """Where a text is written in the outermost command: for the findings' spans."""

    start: int | None  # the offset of its first character, when it is written as it is
    span: tuple[int, int]  # what findings point at otherwise

    def at(self, offset: int) -> Place:
        return Place(None if self.start is None else self.start + offset, self.span)


def _place(ctx: Ctx, text: Text, where: Node) -> Place:
    owner, node = ctx, where
    if text.node is not None:
        assert text.owner is not None  # a text found in a node is given the node's analyser
        owner, node = text.owner, text.node
    start, end = owner.source.span(node)
    raw = owner.text[start:end]
    offset = None
    if raw == text.value:
        offset = start
    elif len(raw) >= 2 and raw[0] in "'\"" and raw[1:-1] == text.value:
        offset = start + 1
    exact = offset is not None and owner.base is not None
    return Place(offset + owner.base if exact else None, owner._map((start, end)))


def _judge_value(
    ctx: Ctx,
    value: str,
    place: Place,
    mode: str,
    where: Node,
    budget: list[int],
    seen: frozenset[str] = frozenset(),
) -> None:
    """Judge `value` as bash evaluates it in `mode`: each substitution in it is run (and
    in an arithmetic expression or a name its output is evaluated too), and each variable
    an arithmetic expression names is evaluated in turn."""
    budget[0] -= 1
    if budget[0] < 0:
        raise Unknown("too many values to follow")
    if mode == CODE:
        _run(ctx, value, place)
        return
    pieces = _scan(value)
    for kind, start, end, *_ in pieces:
        inner, at = value[start:end], place.at(start)
        if kind == "command":
            judged = _run(ctx, inner, at)
            if mode != PROMPT:  # its output is part of the expression
                printed = output(judged, judged.source.root)
                if printed is None:
                    raise Unknown(f"what `{inner.strip()}` prints is evaluated in turn")
                _judge_value(ctx, printed, place, ARITH, where, budget)
        elif kind == "backquoted":
            unquoted = re.sub(r"\\([$`\\])", r"\1", inner)
            judged = _run(ctx, unquoted, at if unquoted == inner else Place(None, place.span))
            if mode != PROMPT:
                printed = output(judged, judged.source.root)
                if printed is None:
                    raise Unknown(f"what `{unquoted.strip()}` prints is evaluated in turn")
                _judge_value(ctx, printed, place, ARITH, where, budget)
        else:  # `$((...))`, `${...}`: read as an expression, which covers what they expand
            _judge_value(ctx, inner, at, ARITH, where, budget)
    blank = _blank(value, pieces)
    if mode == ARITH:
        names = _IDENT.findall(blank)
    elif mode == NAME:
        names = [n for inner in _SUBSCRIPTED.findall(blank) for n in _IDENT.findall(inner)]
    else:
        return
    for name in dict.fromkeys(n for n in names if n not in seen):  # bash stops a cycle too
        _judge_variable(ctx, name, where, budget, seen)


def _judge_variable(
    ctx: Ctx, name: str, where: Node, budget: list[int], seen: frozenset[str]
) -> None:
    """Judge each value of `name` as an arithmetic expression, once per command line."""
    judged = table_of(ctx).judged
    key = (name, seen)
    if key not in judged:
        try:
            for text in variable(ctx, name, set()):
                place = _place(ctx, text, where)
                _judge_value(ctx, text.value, place, ARITH, where, budget, seen | {name})
            judged[key] = None
        except Unknown as unknown:
            judged[key] = unknown
    if judged[key] is not None:
        raise judged[key]


def _blank(value: str, pieces: list[tuple[str, int, int, int, int]]) -> str:
    """`value` with its substitutions blanked out (they are judged on their own)."""
    for *_, start, end in pieces:
        value = value[:start] + " " * (end - start) + value[end:]
    return value


_OPENERS: tuple[tuple[str, str, str], ...]
_OPENERS = (("$((", "arithmetic", "))"), ("$(", "command", ")"), ("${", "parameter", "}"))
_OPENERS += (("$[", "arithmetic", "]"), ("`", "backquoted", "`"))


def _scan(value: str) -> list[tuple[str, int, int, int, int]]:
    """The substitutions in `value` read as bash reads a double-quoted string: each as
    (kind, start, end) of what is inside it, and where it starts and ends. Quotes outside
    them are kept as text."""
    found, i = [], 0
    while i < len(value):
        if value[i] == "\\":
            i += 2
            continue
        opener = next((o for o in _OPENERS if value.startswith(o[0], i)), None)
        if opener is None:
            i += 1
            continue
        start = i + len(opener[0])
        end = _closing(value, start, opener[2])
        if end is None and opener[0] == "$((":  # `$((a) (b))` is a command after all
            opener, start = _OPENERS[1], i + 2
            end = _closing(value, start, ")")
        if end is None:
            raise Unknown("a substitution that is not closed")
        found.append((opener[1], start, end, i, end + len(opener[2])))
        i = end + len(opener[2])
    return found


def _closing(value: str, start: int, close: str) -> int | None:
    """Where `close` ends what starts at `start`, quotes and nested brackets skipped."""
    depth, i, pairs = 0, start, {"(": ")", "{": "}", "[": "]"}
    opens = {v: k for k, v in pairs.items()}
    while i < len(value):
        c = value[i]
        if close == "`":
            if c == "\\":
                i += 2
                continue
            if c == "`":
                return i
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            end = value.find(c, i + 1) if c == "'" else _string_end(value, i + 1)
            if end < 0:
                return None
            i = end + 1
            continue
        elif depth == 0 and value.startswith(close, i):
            return i
        elif c == opens.get(close[0]):
            depth += 1
        elif c == close[0]:
            depth -= 1
        i += 1
    return None


def _string_end(value: str, i: int) -> int:
    while i < len(value):
        if value[i] == "\\":
            i += 2
            continue
        if value[i] == '"':
            return i
        i += 1
    return -1


def _run(ctx: Ctx, code: str, place: Place) -> Ctx:
    """Judge `code` as a command line written at `place`; the analyser that judged it."""
    if ctx.depth >= _MAX_DEPTH:
        raise Unknown("shell code nested too deeply to check")
    inner = type(ctx)(
        code,
        cwd=ctx.cwd,
        recent_writes=ctx.recent_writes,
        write_roots=ctx.write_roots,
        depth=ctx.depth + 1,
        base=place.start,
        fallback=place.span,
    )
    inner.written, inner.links, inner.aliases = ctx.written, ctx.links, ctx.aliases
    inner.ran, inner.path, inner.vars = ctx.ran, ctx.path, ctx.vars
    inner.runs = ctx.runs
    inner.evaluated = Table(owner=inner, parent=table_of(ctx))
    for finding in inner.run():
        ctx._add(finding)
    ctx.looked = ctx.looked or inner.looked
    return inner
