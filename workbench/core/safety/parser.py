"""Parsing shell text with tree-sitter-bash, and reading the literal value of a word.

A word's value is what bash would pass to the program after quote removal. When it depends
on something only known at run time (a variable other than HOME, a substitution) its value
is None: the analyser treats unknown values as the worst case where that matters.
"""

from __future__ import annotations

import functools
import itertools
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
    """Parsed text with a byte→character offset map (tree-sitter counts bytes).

    Line continuations (backslash-newline) are removed before parsing, as bash removes them
    before it splits words (`r\\<newline>m` is `rm`); offsets still point into `text`.
    """

    text: str
    root: Node
    _ascii: bool
    _parsed: str = ""
    _origin: list[int] | None = None  # parsed character -> character in `text`

    @classmethod
    def parse(cls, text: str) -> Source:
        parsed, origin = join_continuations(text)
        data = parsed.encode("utf-8")
        return cls(text, _parser().parse(data).root_node, len(data) == len(parsed), parsed, origin)

    def char(self, byte_offset: int) -> int:
        if self._ascii:
            index = byte_offset
        else:
            data = (self._parsed or self.text).encode("utf-8")
            index = len(data[:byte_offset].decode("utf-8", errors="ignore"))
        return self._origin[min(index, len(self._origin) - 1)] if self._origin else index

    def span(self, node: Node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def raw(self, node: Node) -> str:
        text: str = node.text.decode("utf-8", errors="replace")
        return text


def join_continuations(text: str) -> tuple[str, list[int] | None]:
    """`text` without backslash-newline pairs (outside single quotes and comments), and where
    each remaining character was."""
    if "\\\n" not in text:
        return text, None
    out: list[str] = []
    origin: list[int] = []
    i, quote, n = 0, "", len(text)
    while i < n:
        c = text[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out += [c, text[i + 1]]
            origin += [i, i + 1]
            i += 2
            continue
        elif c == "#" and not quote and (i == 0 or text[i - 1] in " \t\n;&|("):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            origin += range(i, end)
            i = end
            continue
        elif c == "'" and not quote:
            quote = "'"
        elif c == '"':
            quote = "" if quote == '"' else '"'
        out.append(c)
        origin.append(i)
        i += 1
    origin.append(n)
    return "".join(out), origin


_BRACE_LIMIT = 256


def expand_braces(word: str) -> list[str] | None:
    """Bash's brace expansion of a literal word (`{rm,-rf,/}`, `f{1..3}`); None if it cannot
    be done here (quotes, expansions, too many words)."""
    if any(c in word for c in "'\"\\$`") or "{" not in word:
        return None
    words = _expand(word)
    return words if words is not None and len(words) <= _BRACE_LIMIT else None


def _expand(word: str) -> list[str] | None:
    for start, c in enumerate(word):
        if c != "{":
            continue
        depth, commas = 0, []
        for end in range(start, len(word)):
            if word[end] == "{":
                depth += 1
            elif word[end] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif word[end] == "," and depth == 1:
                commas.append(end)
        else:
            return [word]
        inner = word[start + 1 : end]
        choices: list[str] | None
        if commas:
            bounds = [start, *commas, end]
            choices = [word[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            choices = _sequence(inner)
            if choices is None:
                continue
            if not choices:
                return None  # a sequence too long to judge word by word
        results: list[str] = []
        for choice in choices:
            for tail in _expand(word[:start] + choice + word[end + 1 :]) or []:
                results.append(tail)
                if len(results) > _BRACE_LIMIT:
                    return None
        return results
    return [word]


def _sequence(inner: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", inner)
    if match is None:
        return None
    first, last, step = match.group(1), match.group(2), abs(int(match.group(3) or 1)) or 1
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    if first.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step > _BRACE_LIMIT:
            return []
        return [str(v) for v in range(a, b + (1 if b >= a else -1), step if b >= a else -step)]
    a, b = ord(first), ord(last)
    return [chr(v) for v in range(a, b + (1 if b >= a else -1), step if b >= a else -step)]


_IFS = re.compile(r"^\$(?:IFS|\{IFS\})$")


def split_word(node: Node, env: Mapping[str, str | None] | None = None) -> list[str | None]:
    """The words bash makes of one word node: brace expansion and unquoted `$IFS` split it."""
    kind = node.type
    if kind in ("concatenation", "brace_expression", "word") and b"{" in node.text:
        text = node.text.decode("utf-8", errors="replace")
        expanded = expand_braces(text)
        if expanded is not None and expanded != [text]:
            return list(expanded)
    if kind == "concatenation" and b"IFS" in node.text and any(_is_ifs(c) for c in node.children):
        words: list[str | None] = [""]
        for child in node.children:
            if _is_ifs(child):
                words.append("")
                continue
            value = word_value(child, env)
            if value is None or words[-1] is None:
                words[-1] = None
            else:
                words[-1] += value
        return [w for w in words if w != ""]
    if env and "IFS" in env and kind in ("simple_expansion", "expansion", "concatenation"):
        return _split_on(node, env, env["IFS"])  # `IFS=_; x=rm_-rf_d; $x`
    value = word_value(node, env)
    if kind in ("simple_expansion", "expansion") and value and any(c in value for c in " \t\n"):
        return list(value.split())  # an unquoted variable is split into words (`$a` = 'rm -rf')
    return [value]


def _split_on(node: Node, env: Mapping[str, str | None], ifs: str | None) -> list[str | None]:
    """The words an unquoted expansion makes with the command's own IFS: each of its
    characters ends a word (literal text around the expansion is not split)."""
    parts = node.children if node.type == "concatenation" else [node]
    words: list[str | None] = [""]
    for part in parts:
        value = word_value(part, env)
        if value is None or words[-1] is None or ifs is None:
            words[-1] = None  # what the command runs is known only at run time
            continue
        if part.type not in ("simple_expansion", "expansion") or not ifs:
            words[-1] += value
            continue
        pieces = re.split("[" + re.escape(ifs) + "]", value)
        words[-1] += pieces[0]
        words += pieces[1:]
    return [w for w in words if w != ""] or [""]


def _is_ifs(node: Node) -> bool:
    return node.type in ("simple_expansion", "expansion") and bool(_IFS.match(node.text.decode()))


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
    text: str = node.text.decode("utf-8", errors="replace")
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
