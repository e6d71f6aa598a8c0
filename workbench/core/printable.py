"""Text shown to a person asked to approve it: every character visible, every line shown.

A command can hide itself from a terminal or a screen: `rm -rf x #\\r\\x1b[2K ls -la` shows as
`ls -la` if the carriage return and the escape sequence are printed raw, and bidi overrides
reorder what is read. `escape` turns control characters (C0, DEL, C1), bidi and other
invisible format characters, and Unicode line separators into visible escapes (`\\r`,
`\\x1b`, `\\u202e`); only `\\n` and tabs stay as they are, so each line is shown as its own line.
Both approval front ends (the terminal prompt and the modal) use it.
"""

from __future__ import annotations

import re
import unicodedata

_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x00": "\\0", "\x1b": "\\x1b"}
_PLAIN = re.compile(r"[\n\t\x20-\x7e]*")


def _hidden(char: str) -> bool:
    if char in "\n\t":
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs")


def _escape_char(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def escape(text: str) -> str:
    """`text` with every control or invisible character written as a visible escape."""
    if _PLAIN.fullmatch(text):
        return text
    return "".join(_escape_char(c) if _hidden(c) else c for c in text)


def escape_with_spans(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """`escape(text)`, and `spans` (character offsets into `text`) moved to match it."""
    if _PLAIN.fullmatch(text):
        return text, list(spans)
    pieces, positions, at = [], [], 0
    for char in text:
        positions.append(at)
        piece = _escape_char(char) if _hidden(char) else char
        pieces.append(piece)
        at += len(piece)
    positions.append(at)
    last = len(text)
    moved = [(positions[min(s, last)], positions[min(e, last)]) for s, e in spans]
    return "".join(pieces), moved
