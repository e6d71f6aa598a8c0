"""Text bash evaluates as code: the value of a variable or a quoted string read again as an
arithmetic expression, a name, a prompt or a command.

Bash evaluates text in more places than `eval`: an arithmetic context (`$((x))`, `((x))`,
`let`, `for ((...))`, `[[ a -eq b ]]`, an array subscript, an integer variable's assignment)
evaluates the *value* of each variable it names as an expression, and an array subscript in
that expression is expanded, so `x='a[$(rm f)]'; echo $((x))` runs `rm f`. So does a name
given as text (`printf -v`, `read`, `wait -p`, `declare`, `unset`, `test -v`, `${!x}`), prompt
expansion (`${x@P}`), and `compgen`/`complete`/`mapfile` given a command (`-C`, `-F`).

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
from dataclasses import dataclass, field
from typing import Any

from workbench.core.safety.parser import WORD_TYPES, split_word, word_value

Node = Any
Ctx = Any  # the Analyzer; typed loosely to keep this module free of an import cycle

ARITH, NAME, PROMPT, CODE = "an arithmetic expression", "a name", "a prompt", "a command"
_IDENT = re.compile(r"(?<![\w#])[A-Za-z_]\w*")
_SUBSCRIPTED = re.compile(r"\[([^]]*)\]")
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# Parameters whose value is a number or the shell's own (never text the model wrote).
_SPECIAL = frozenset("#?$!-0")
_NUMERIC_VARS = frozenset(
    {"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "OPTIND"}
    | {"EPOCHSECONDS", "BASH_SUBSHELL", "SHLVL", "COLUMNS", "LINES", "HISTCMD"}
)
_READ_VALUE_OPTIONS = frozenset("dinNptu")  # read's options that take a value
_MAX_TEXTS = 32
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


class Unknown(Exception):
    """A value only run time knows."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class Text:
    """One value a word may have, and where it is written (for the finding's span)."""

    value: str
    owner: Ctx | None = None  # the analyser whose text holds `node`
    node: Node | None = None


@dataclass
class Table:
    """Every assignment in a command line, by variable name (order ignored: a loop may run
    a later assignment before an earlier use)."""

    values: dict[str, list[Node | str | Unknown]] = field(default_factory=dict)
    integers: set[str] = field(default_factory=set)  # declared `-i`: assignments are arithmetic
    owner: Ctx | None = None  # the analyser whose parse tree the nodes are in
    collected: bool = False
    parent: Table | None = None  # the table of the text this one was read out of
    # why any variable may be set where this text cannot see (a sourced file, a name
    # reference to a name only run time knows); "" when none may be
    anything: str = ""
    refs: dict[str, set[str]] = field(default_factory=dict)  # `declare -n r=x`: x -> {r}

    def lookup(self, name: str) -> list[tuple[Node | str | Unknown, Ctx]] | None:
        """What the command line assigns to `name`, and through name references to it."""
        found: list[tuple[Node | str | Unknown, Ctx]] = []
        assigned = False
        table: Table | None = self
        while table is not None:
            for each in (name, *table.refs.get(name, ())):
                if each in table.values:
                    assigned = True
                    found += [(item, table.owner) for item in table.values[each]]
            table = table.parent
        return found if assigned else None

    def integer(self, name: str) -> bool:
        return name in self.integers or bool(self.parent and self.parent.integer(name))

    def set_anywhere(self) -> str:
        return self.anything or (self.parent.set_anywhere() if self.parent else "")


def nest(outer: Ctx, inner: Ctx) -> None:
    """`inner` reads a payload of `outer`'s command (`eval`, `bash -c`, a trap): the
    variables `outer`'s command line assigns are followed into it."""
    inner.evaluated = Table(owner=inner, parent=_table(outer) if outer.source else None)


# -- finding the contexts -------------------------------------------------------------------


def judge(ctx: Ctx, node: Node) -> None:
    """Called by the walk for each node: judge the text `node` makes bash evaluate."""
    kind = node.type
    if kind not in _CONTEXTS:
        return
    if kind in ("arithmetic_expansion", "c_style_for_statement") or _double_parens(node):
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
        name = _assigned_name(node)
        value = _assigned_value(node)
        if name and value is not None and name in _PROMPTS:
            _evaluate(ctx, value, PROMPT, node)  # `PS4='$(rm f)'; set -x` runs it
        elif name and value is not None and _table(ctx).integer(name):
            for element in _elements(value):
                _evaluate(ctx, element, ARITH, node)


def _double_parens(node: Node) -> bool:
    """`(( expr ))`: a command that is an arithmetic expression."""
    return (
        node.type == "compound_statement" and bool(node.children) and node.children[0].type == "(("
    )


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


_SPLIT = frozenset({"word", "concatenation", "brace_expression"})
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
    values = [_literal(w) for w in words]
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
        for word in _option_values(args, nodes, "p"):
            _evaluate(ctx, word, NAME, node)
    elif program == "printf":
        for word in _option_values(args, nodes, "v"):
            _evaluate(ctx, word, NAME, node)
            _integer_target(ctx, word, node)
    elif program == "read":
        for word in _read_names(args, nodes):
            _evaluate(ctx, word, NAME, node)
            _integer_target(ctx, word, node)
    elif program in ("compgen", "complete"):
        for word in _option_values(args, nodes, "C"):
            _evaluate(ctx, word, CODE, node)
        for word in _option_values(args, nodes, "F"):  # a function: its body is judged
            _evaluate(ctx, word, NAME, node)  # where it is defined, if its name is known
        for word in _option_values(args, nodes, "W"):  # the word list is expanded again
            _evaluate(ctx, word, PROMPT, node)
    elif program in ("mapfile", "readarray"):
        for word in _option_values(args, nodes, "C"):
            _evaluate(ctx, word, CODE, node)


def _integer_target(ctx: Ctx, word: Node, where: Node) -> None:
    """`declare -i n; read n`: what is read into an integer variable is evaluated."""
    name = (_literal(word) or "").partition("[")[0]
    if name and _table(ctx).integer(name):
        reason = (
            f"bash evaluates what {_literal(where.children[0]) or 'it'} puts in the integer "
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
            value = _assigned_value(child)
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


def _option_values(args: list[str | None], nodes: list[Node], letters: str) -> list[Node]:
    """The words given to one of `letters`' options (`-v NAME`, `-vNAME`, `-C cmd`)."""
    found = []
    for i, arg in enumerate(args):
        if arg is None or not arg.startswith("-") or arg == "--" or len(arg) < 2:
            continue
        if arg[-1] in letters and i + 1 < len(nodes):
            found.append(nodes[i + 1])
        elif arg[1] in letters and len(arg) > 2:
            found.append(nodes[i])  # `-vNAME`: judged as written, the option included
    return found


def _read_names(args: list[str | None], nodes: list[Node]) -> list[Node]:
    names, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg is not None and arg.startswith("-") and len(arg) > 1:
            if arg[-1] in _READ_VALUE_OPTIONS or arg[-1] == "a":
                if arg[-1] == "a" and i + 1 < len(nodes):
                    names.append(nodes[i + 1])
                i += 2
                continue
        else:
            names.append(nodes[i])
        i += 1
    return names


# -- judging what is evaluated --------------------------------------------------------------


def _evaluate(ctx: Ctx, node: Node, mode: str, where: Node, *, indirect: bool = False) -> None:
    """Judge the text bash evaluates in `mode` at `where`: the value `node` stands for, or
    with `indirect`, the value of the variable `node` names."""
    budget = [_BUDGET]
    try:
        if indirect:
            texts = _variable(ctx, node.text.decode("utf-8", errors="replace"), set())
        else:
            texts = _texts(ctx, node, set())
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
    owner, node = (text.owner, text.node) if text.node is not None else (ctx, where)
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
                output = _output(judged, judged.source.root)
                if output is None:
                    raise Unknown(f"what `{inner.strip()}` prints is evaluated in turn")
                _judge_value(ctx, output, place, ARITH, where, budget)
        elif kind == "backquoted":
            unquoted = re.sub(r"\\([$`\\])", r"\1", inner)
            judged = _run(ctx, unquoted, at if unquoted == inner else Place(None, place.span))
            if mode != PROMPT:
                output = _output(judged, judged.source.root)
                if output is None:
                    raise Unknown(f"what `{unquoted.strip()}` prints is evaluated in turn")
                _judge_value(ctx, output, place, ARITH, where, budget)
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
        for text in _variable(ctx, name, set()):
            place = _place(ctx, text, where)
            _judge_value(ctx, text.value, place, ARITH, where, budget, seen | {name})


def _blank(value: str, pieces: list[tuple[str, int, int, int, int]]) -> str:
    """`value` with its substitutions blanked out (they are judged on their own)."""
    for *_, start, end in pieces:
        value = value[:start] + " " * (end - start) + value[end:]
    return value


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
    inner.evaluated = Table(owner=inner, parent=_table(ctx))
    for finding in inner.run():
        ctx._add(finding)
    ctx.looked = ctx.looked or inner.looked
    return inner


# -- values ---------------------------------------------------------------------------------


def _texts(ctx: Ctx, node: Node, seen: set[str]) -> list[Text]:
    """Every value the word `node` may have; Unknown when run time decides."""
    kind = node.type
    if kind in ("variable_name", "number"):
        return [Text(node.text.decode("utf-8", errors="replace"), ctx, node)]
    if kind in ("word", "raw_string", "ansi_c_string", "string_content"):
        value = word_value(node)
        if value is None:
            raise Unknown("a computed word")
        return [Text(value, ctx, node)]
    if kind in ("simple_expansion", "expansion"):
        return _expanded(ctx, node, seen)
    if kind == "arithmetic_expansion":
        return []  # a number; the expression itself is a context of its own
    if kind == "command_substitution":
        output = _output(ctx, node)
        if output is None:
            raise Unknown("a command's output")
        return [Text(output)]
    if kind in ("string", "concatenation"):
        parts = [c for c in node.children if c.type not in ('"', "$")]
        if len(parts) == 1 and parts[0].type != "string_content":
            return _texts(ctx, parts[0], seen)  # `"$x"`: x's values, where they are written
        choices = [[t.value for t in _texts(ctx, p, seen)] or ["0"] for p in parts]
        if any(len(c) > 1 for c in choices):
            if _count(choices) > _MAX_TEXTS:
                raise Unknown("too many values to follow")
            return [Text("".join(p), ctx, None) for p in itertools.product(*choices)]
        value = "".join(c[0] for c in choices)
        return [Text(value, ctx, node)]
    raise Unknown("a computed word")


def _count(choices: list[list[str]]) -> int:
    total = 1
    for choice in choices:
        total *= len(choice)
    return total


def _expanded(ctx: Ctx, node: Node, seen: set[str]) -> list[Text]:
    """`$x`, `${x}`, `${x:-3}`, `${#x}`, `$1`: the values the expansion may have."""
    kinds = [c.type for c in node.children]
    if node.type == "simple_expansion":
        inner = node.children[-1]
        name = inner.text.decode("utf-8", errors="replace")
        return _variable(ctx, name, seen)
    if len(kinds) > 1 and kinds[1] == "#":
        return []  # `${#x}`: a length
    name_node = next((c for c in node.children if c.type == "variable_name"), None)
    special = next((c for c in node.children if c.type == "special_variable_name"), None)
    if name_node is None:
        if special is not None:
            return _variable(ctx, special.text.decode("utf-8", errors="replace"), seen)
        if any(c.type == "subscript" for c in node.children):
            sub = next(c for c in node.children if c.type == "subscript")
            return _variable(ctx, sub.children[0].text.decode(), seen)  # `${a[i]}`: a's values
        raise Unknown("a computed expansion")
    name = name_node.text.decode("utf-8", errors="replace")
    rest = [c for c in node.children if c.type not in ("${", "}", "variable_name")]
    if not rest:
        return _variable(ctx, name, seen)
    operator = rest[0].type
    if operator in (":-", "-", ":=", "="):
        texts = _variable(ctx, name, seen)
        for word in rest[1:]:
            texts += _texts(ctx, word, seen)
        return texts
    if operator in (":+", "+"):
        return [t for word in rest[1:] for t in _texts(ctx, word, seen)]
    raise Unknown("the variable is rewritten as it is expanded")


def _variable(ctx: Ctx, name: str, seen: set[str]) -> list[Text]:
    """Every value the command line assigns to `name`; none for one it never assigns."""
    name = name.partition("[")[0]
    if name in seen or name in _NUMERIC_VARS or name in _SPECIAL:
        return []
    if name in ("@", "*") or name.isdigit():
        raise Unknown("a function's or script's arguments")
    if name == "_":
        raise Unknown("the last word of the command before")
    seen = seen | {name}
    found = _table(ctx).lookup(name)
    if found is None:
        if name in ctx.vars:  # assigned by the command a payload is part of (`eval`)
            value = ctx.vars[name]
            if value is None:
                raise Unknown("assigned a value only run time knows")
            return [Text(value)]
        anywhere = _table(ctx).set_anywhere()
        if anywhere:
            raise Unknown(f"{anywhere} may set it")
        return []  # the shell's environment: set by the session, not by the command
    texts: list[Text] = []
    for item, owner in found:
        if isinstance(item, Unknown):
            raise item
        if isinstance(item, str):
            texts.append(Text(item))
        else:
            texts += _texts(owner, item, seen)
    return texts


def _output(ctx: Ctx, node: Node) -> str | None:
    """What the last command in `node` prints, when it is known to be plain: a number
    (`$(wc -l < f)`, `$(grep -c x f)`, `$(nproc)`) or echo's literal words; None otherwise."""
    commands = [c for c in node.children if c.is_named and c.type != "comment"]
    last = commands[-1] if commands else None
    while last is not None and last.type in ("pipeline", "redirected_statement", "list"):
        named = [c for c in last.children if c.type in ("command", "pipeline")]
        last = named[-1] if named else None
    if last is None or last.type != "command":
        return None
    cmd = ctx.to_cmd(last)
    if cmd is None or any(a is None for a in cmd.args):
        return None
    operands = [a for a in cmd.args if not a.startswith("-")]
    if cmd.name == "echo":
        return " ".join(operands)
    number = (
        (cmd.name == "wc" and not operands)
        or cmd.name == "nproc"
        or (cmd.name == "seq" and all(re.fullmatch(r"-?\d+(\.\d+)?", a) for a in cmd.args))
        or (cmd.name == "date" and cmd.args == ["+%s"])
        or (cmd.name == "id" and cmd.args in (["-u"], ["-g"]))
        or (cmd.name in ("grep", "rg") and _counts(cmd.args, operands))
    )
    return "0" if number else None


def _counts(args: list[str], operands: list[str]) -> bool:
    """grep -c on one file or its input prints a count alone (no file name before it)."""
    counting = any(a == "--count" or re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a) for a in args)
    named = any("H" in a or "with-filename" in a for a in args)
    return counting and len(operands) <= 2 and not named


# -- where the command line assigns each variable -------------------------------------------


def _table(ctx: Ctx) -> Table:
    table = ctx.evaluated
    if table is None:
        table = ctx.evaluated = Table(owner=ctx)
    if not table.collected and ctx.source is not None:
        table.collected = True
        _collect(ctx.source.root, table)
    return table


def _collect(root: Node, table: Table) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        kind = node.type
        if kind == "variable_assignment":
            _record_assignment(node, table)
        elif kind == "for_statement":
            _record_loop(node, table)
        elif kind == "declaration_command":
            flags = "".join(
                c.text.decode()[1:]
                for c in node.children
                if c.type == "word" and c.text[:1] == b"-"
            )
            if "i" in flags:
                for child in node.children:
                    name = _assigned_name(child) if child.type == "variable_assignment" else None
                    if child.type == "variable_name":
                        name = child.text.decode()
                    if name:
                        table.integers.add(name)
            if "n" in flags:
                _record_references(node, table)
        elif kind == "command":
            _record_reads(node, table)
            name = node.children[0].text if node.children else b""
            if name in (b"source", b"."):
                table.anything = "a file the command sources"


def _record_references(node: Node, table: Table) -> None:
    """`declare -n r=x`: what is assigned to r is assigned to x. A reference whose target is
    not written out may make any variable's value anything."""
    for child in node.children:
        target = _assigned_value(child) if child.type == "variable_assignment" else None
        name = _assigned_name(child) if child.type == "variable_assignment" else None
        value = word_value(target) if target is not None else None
        if name and value and re.fullmatch(r"[A-Za-z_]\w*", value):
            table.refs.setdefault(value, set()).add(name)
        elif child.type in ("variable_name", "variable_assignment"):
            table.anything = "a name reference"


def _add(table: Table, name: str, item: Node | str | Unknown) -> None:
    table.values.setdefault(name, []).append(item)


def _assigned_name(node: Node) -> str | None:
    target = node.children[0] if node.children else None
    if target is None:
        return None
    if target.type == "subscript":
        target = target.children[0]
    return target.text.decode("utf-8", errors="replace") if target.type == "variable_name" else None


def _assigned_value(node: Node) -> Node | None:
    return next((c for c in node.children[1:] if c.is_named and c.type not in ("subscript",)), None)


def _record_assignment(node: Node, table: Table) -> None:
    name = _assigned_name(node)
    if name is None:
        return
    value = _assigned_value(node)
    operator = next((c.type for c in node.children if not c.is_named), "=")
    if value is None:
        _add(table, name, "")
    elif value.type == "array":
        for element in (c for c in value.children if c.is_named):
            # `( [k]=v )`: the element's value; its key is a subscript the walk judges
            element = _assigned_value(element) if element.type == "variable_assignment" else element
            if element is not None:
                _add(table, name, element)
    elif operator == "+=" and value.type != "number":
        _add(table, name, Unknown("text appended to it"))
    elif _in_arithmetic(node):
        _add(table, name, "0")  # assigned by arithmetic: a number
    else:
        _add(table, name, value)


def _in_arithmetic(node: Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "compound_statement":
        return _double_parens(parent)
    return parent.type in ("arithmetic_expansion", "c_style_for_statement", "binary_expression")


def _record_loop(node: Node, table: Table) -> None:
    name_node = next((c for c in node.children if c.type == "variable_name"), None)
    if name_node is None:
        return
    name = name_node.text.decode("utf-8", errors="replace")
    values = [
        c for c in node.children if c.is_named and c.type not in ("variable_name", "do_group")
    ]
    if not values:
        _add(table, name, Unknown("the script's arguments"))
    for word in values:
        if word.type == "word" and any(c in word.text for c in b"*?["):
            _add(table, name, Unknown("file names a glob matches"))
            continue
        split = split_word(word) if word.type in _SPLIT else [None]
        if len(split) > 1 and all(v is not None for v in split):
            for value in split:
                _add(table, name, value)
        else:
            _add(table, name, word)


def _record_reads(node: Node, table: Table) -> None:
    """`read x`, `mapfile a`, `getopts o opt`, `printf -v x`: values run time decides."""
    words = [c for c in node.children if c.type in WORD_TYPES or c.type == "command_name"]
    values = [_literal(w) for w in words]
    if not values:
        return
    program, args, nodes = values[0], values[1:], words[1:]
    why = Unknown(f"what {program} reads or prints")
    if program == "read":
        targets = [_literal(n) for n in _read_names(args, nodes)] or ["REPLY"]
    elif program in ("mapfile", "readarray"):
        operands = [a for a in args if a and not a.startswith("-")]
        targets = operands[-1:] or ["MAPFILE"]
    elif program == "getopts":
        targets = [*args[1:2], "OPTARG"]
    elif program == "printf":
        targets = [_literal(n) for n in _option_values(args, nodes, "v")]
    elif program == "select":
        targets = args[:1]
    else:
        return
    for target in targets:
        if target:
            _add(table, target.partition("[")[0], why)


def _literal(node: Node) -> str | None:
    return word_value(node) if node.type not in ("command_name",) else _name(node)


def _name(node: Node) -> str | None:
    return word_value(node.children[0]) if node.children else None
