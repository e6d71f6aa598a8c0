"""What the variables of a command line may hold: every assignment of each name, and the
values a word may stand for when bash expands it.

Read for `evaluated.py`, which judges text bash evaluates again. Assignments are collected
over the whole command line, order ignored (a loop may run a later assignment before an
earlier use). A value only run time knows (read from input, a command's output, a
function's arguments) is `Unknown`; a name the command line never assigns holds what the
session's environment gave it, which the model does not write.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.safety.parser import WORD_TYPES, split_word, word_value

Node = Any
Ctx = Any  # the Analyzer; typed loosely to keep this module free of an import cycle

# Parameters whose value is a number or the shell's own (never text the model wrote).
_SPECIAL = frozenset("#?$!-0")
_NUMERIC_VARS = frozenset(
    {"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "OPTIND"}
    | {"EPOCHSECONDS", "BASH_SUBSHELL", "SHLVL", "COLUMNS", "LINES", "HISTCMD"}
)
_READ_VALUE_OPTIONS = frozenset("dinNptu")  # read's options that take a value
_MAX_TEXTS = 32


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
    # what judging a variable's values found, by name and the names it was reached through:
    # None when they are plain, else why they are known only at run time
    judged: dict[tuple[str, frozenset[str]], Any] = field(default_factory=dict)

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
    inner.evaluated = Table(owner=inner, parent=table_of(outer) if outer.source else None)


def double_parens(node: Node) -> bool:
    """`(( expr ))`: a command that is an arithmetic expression."""
    return (
        node.type == "compound_statement" and bool(node.children) and node.children[0].type == "(("
    )


_SPLIT = frozenset({"word", "concatenation", "brace_expression"})


def option_values(args: list[str | None], nodes: list[Node], letters: str) -> list[Node]:
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


def read_names(args: list[str | None], nodes: list[Node]) -> list[Node]:
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


# -- values ---------------------------------------------------------------------------------


def values_of(ctx: Ctx, node: Node, seen: set[str]) -> list[Text]:
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
        printed = output(ctx, node)
        if printed is None:
            raise Unknown("a command's output")
        return [Text(printed)]
    if kind in ("string", "concatenation"):
        parts = [c for c in node.children if c.type not in ('"', "$")]
        if len(parts) == 1 and parts[0].type != "string_content":
            return values_of(ctx, parts[0], seen)  # `"$x"`: x's values, where they are written
        choices = [[t.value for t in values_of(ctx, p, seen)] or ["0"] for p in parts]
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
        return variable(ctx, name, seen)
    if len(kinds) > 1 and kinds[1] == "#":
        return []  # `${#x}`: a length
    name_node = next((c for c in node.children if c.type == "variable_name"), None)
    special = next((c for c in node.children if c.type == "special_variable_name"), None)
    if name_node is None:
        if special is not None:
            return variable(ctx, special.text.decode("utf-8", errors="replace"), seen)
        if any(c.type == "subscript" for c in node.children):
            sub = next(c for c in node.children if c.type == "subscript")
            return variable(ctx, sub.children[0].text.decode(), seen)  # `${a[i]}`: a's values
        raise Unknown("a computed expansion")
    name = name_node.text.decode("utf-8", errors="replace")
    rest = [c for c in node.children if c.type not in ("${", "}", "variable_name")]
    if not rest:
        return variable(ctx, name, seen)
    operator = rest[0].type
    if operator in (":-", "-", ":=", "="):
        texts = variable(ctx, name, seen)
        for word in rest[1:]:
            texts += values_of(ctx, word, seen)
        return texts
    if operator in (":+", "+"):
        return [t for word in rest[1:] for t in values_of(ctx, word, seen)]
    raise Unknown("the variable is rewritten as it is expanded")


def variable(ctx: Ctx, name: str, seen: set[str]) -> list[Text]:
    """Every value the command line assigns to `name`; none for one it never assigns."""
    name = name.partition("[")[0]
    if name in seen or name in _NUMERIC_VARS or name in _SPECIAL:
        return []
    if name in ("@", "*") or name.isdigit():
        raise Unknown("a function's or script's arguments")
    if name == "_":
        raise Unknown("the last word of the command before")
    seen = seen | {name}
    found = table_of(ctx).lookup(name)
    if found is None:
        if name in ctx.vars:  # assigned by the command a payload is part of (`eval`)
            value = ctx.vars[name]
            if value is None:
                raise Unknown("assigned a value only run time knows")
            return [Text(value)]
        anywhere = table_of(ctx).set_anywhere()
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
            texts += values_of(owner, item, seen)
    unique = {(t.value, t.node.id if t.node is not None else None): t for t in reversed(texts)}
    return list(reversed(unique.values()))  # `i=0` in ten loops is one value to judge


def output(ctx: Ctx, node: Node) -> str | None:
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


def table_of(ctx: Ctx) -> Table:
    table: Table | None = ctx.evaluated
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
                    name = assigned_name(child) if child.type == "variable_assignment" else None
                    if child.type == "variable_name":
                        name = child.text.decode()
                    if name:
                        table.integers.add(name)
            if "n" in flags:
                _record_references(node, table)
        elif kind == "command":
            _record_reads(node, table)
            program = node.children[0].text if node.children else b""
            if program in (b"source", b"."):
                table.anything = "a file the command sources"


def _record_references(node: Node, table: Table) -> None:
    """`declare -n r=x`: what is assigned to r is assigned to x. A reference whose target is
    not written out may make any variable's value anything."""
    for child in node.children:
        target = assigned_value(child) if child.type == "variable_assignment" else None
        name = assigned_name(child) if child.type == "variable_assignment" else None
        value = word_value(target) if target is not None else None
        if name and value and re.fullmatch(r"[A-Za-z_]\w*", value):
            table.refs.setdefault(value, set()).add(name)
        elif child.type in ("variable_name", "variable_assignment"):
            table.anything = "a name reference"


def _add(table: Table, name: str, item: Node | str | Unknown) -> None:
    table.values.setdefault(name, []).append(item)


def assigned_name(node: Node) -> str | None:
    target = node.children[0] if node.children else None
    if target is None:
        return None
    if target.type == "subscript":
        target = target.children[0]
    return target.text.decode("utf-8", errors="replace") if target.type == "variable_name" else None


def assigned_value(node: Node) -> Node | None:
    return next((c for c in node.children[1:] if c.is_named and c.type not in ("subscript",)), None)


def _record_assignment(node: Node, table: Table) -> None:
    name = assigned_name(node)
    if name is None:
        return
    value = assigned_value(node)
    operator = next((c.type for c in node.children if not c.is_named), "=")
    if value is None:
        _add(table, name, "")
    elif value.type == "array":
        for element in (c for c in value.children if c.is_named):
            # `( [k]=v )`: the element's value; its key is a subscript the walk judges
            element = assigned_value(element) if element.type == "variable_assignment" else element
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
        return double_parens(parent)
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
    values = [literal(w) for w in words]
    if not values:
        return
    program, args, nodes = values[0], values[1:], words[1:]
    why = Unknown(f"what {program} reads or prints")
    targets: Sequence[str | None]
    if program == "read":
        targets = [literal(n) for n in read_names(args, nodes)] or ["REPLY"]
    elif program in ("mapfile", "readarray"):
        operands = [a for a in args if a and not a.startswith("-")]
        targets = operands[-1:] or ["MAPFILE"]
    elif program == "getopts":
        targets = [*args[1:2], "OPTARG"]
    elif program == "printf":
        targets = [literal(n) for n in option_values(args, nodes, "v")]
    elif program == "select":
        targets = args[:1]
    else:
        return
    for target in targets:
        if target:
            _add(table, target.partition("[")[0], why)


def literal(node: Node) -> str | None:
    return word_value(node) if node.type not in ("command_name",) else _name(node)


def _name(node: Node) -> str | None:
    return word_value(node.children[0]) if node.children else None
