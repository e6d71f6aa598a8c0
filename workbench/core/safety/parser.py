"""Parsing shell text with tree-sitter-bash, and reading the literal value of a word.

A word's value is what bash would pass to the program after quote removal. When it depends
on something only known at run time (a variable other than HOME, a substitution) its value
is None: the analyser treats unknown values as the worst case where that matters.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Node = Any  # tree_sitter.Node; imported lazily so the core starts fast

WORD_TYPES = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "ansi_c_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "translated_string",
    }
)
_PLAIN_VAR = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")
_KNOWN_VARS = re.compile(r"^\$\{?(HOME|HERMES_HOME)(?:[:?+=-][^}]*)?\}?$")


@functools.cache
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@dataclass
class Source:
    """Parsed text with a byte→character offset map (tree-sitter counts bytes)."""

    text: str
    root: Node
    _ascii: bool

    @classmethod
    def parse(cls, text: str) -> Source:
        data = text.encode("utf-8")
        return cls(text, _parser().parse(data).root_node, len(data) == len(text))

    def char(self, byte_offset: int) -> int:
        if self._ascii:
            return byte_offset
        return len(self.text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))

    def span(self, node: Node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def raw(self, node: Node) -> str:
        return node.text.decode("utf-8", errors="replace")


def home_dir() -> str:
    return os.environ.get("HOME") or os.path.expanduser("~")


def _hermes_home() -> str:
    from workbench.core.config import hermes_home

    return str(hermes_home())


def word_value(node: Node, env: Mapping[str, str | None] | None = None) -> str | None:
    """The literal value of a word node, HOME expanded; None when only run time knows it.

    `env` holds variables the command assigned earlier (`H=~/.hermes; ... $H/x`). A brace
    expansion (`{a,b}`) stands for several words, so its value is None.
    """
    kind = node.type
    text = node.text.decode("utf-8", errors="replace")
    if kind == "word":
        return _unescape(text)
    if kind == "number":
        return text
    if kind == "raw_string":
        return text[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(text[2:-1])
    if kind == "string":
        return _join((c for c in node.children if c.type not in ('"',)), env)
    if kind == "concatenation":
        if any(c.type == "word" and c.text in (b"{", b"}") for c in node.children):
            return None
        return _join(node.children, env)
    if kind in ("simple_expansion", "expansion"):
        assigned = _PLAIN_VAR.match(text)
        if env and assigned and assigned.group(1) in env:
            return env[assigned.group(1)]
        known = _KNOWN_VARS.match(text)
        if known is None:
            return None
        return home_dir() if known.group(1) == "HOME" else _hermes_home()
    if kind == "string_content":
        return text.replace('\\"', '"').replace("\\$", "$").replace("\\\\", "\\")
    return None


def _join(children: Any, env: Mapping[str, str | None] | None = None) -> str | None:
    parts = []
    for child in children:
        value = word_value(child, env)
        if value is None:
            return None
        parts.append(value)
    return "".join(parts)


_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def _unescape(text: str) -> str:
    return _ESCAPED.sub(r"\1", text) if "\\" in text else text


def _ansi_c(text: str) -> str | None:
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return None


def has_error(node: Node) -> bool:
    return bool(node.has_error)


def error_nodes(node: Node) -> list[Node]:
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            found.append(current)
        elif current.has_error:
            stack.extend(current.children)
    return found
