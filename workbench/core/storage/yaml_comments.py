"""Comments of a round-trip YAML document kept where they were when a value is changed.

ruamel.yaml keeps a comment with the node it follows: the comment block above a top-level
key is stored in the last item of the section before it, often deep inside a list. Replace
that list, delete that key or append a key after it, and the block is lost or lands above
the wrong key. `anchor_comments` moves every comment that follows a section's last item to
the key it stands above (the next key in the file), before any change is made; the comments
at the end of the file are handed back, to be written after the document. `assign` puts a
list where another was, keeping its style (`[a, b]` stays on one line) and the comments
between its items, each with the item it follows.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

_POST = 2  # in a mapping's comment entry: what follows the key's value
_PRE = 1  # ... the comment lines above the key


def anchor_comments(doc: Any) -> str:
    """Move each comment block that follows a section to the key below it; returns the
    comment lines after the document's last value (detached: the caller writes them)."""
    if not isinstance(doc, CommentedMap | CommentedSeq):
        return ""
    tail = _walk(doc, hoist_tail=True)
    # the indented lines first belong to the last section: they stay at its end; from the
    # first comment at the margin on, they close the file
    cut = next((i for i, t in enumerate(tail) if t.column == 0 and t.value.strip()), len(tail))
    while cut and not tail[cut - 1].value.strip():
        cut -= 1
    if cut:
        _reattach(doc, _text(tail[:cut]))
    return _text(tail[cut:])


def _text(tokens: list[CommentToken]) -> str:
    return "".join(" " * t.column + t.value if t.value.strip() else "\n" for t in tokens)


def _block(node: Any) -> bool:
    """A collection written over lines of its own (its items hold the comments after it)."""
    return isinstance(node, CommentedMap | CommentedSeq) and bool(node) and not node.fa.flow_style()


def _walk(node: CommentedMap | CommentedSeq, hoist_tail: bool) -> list[CommentToken]:
    """Detach the comments between this node's keys (to the next key) and, with
    `hoist_tail`, those after its last item (returned). Comments between a list's items
    stay: they are not above any key."""
    pending: list[CommentToken] = []
    keys = list(node.keys()) if isinstance(node, CommentedMap) else list(range(len(node)))
    for index, key in enumerate(keys):
        last = index == len(keys) - 1
        if pending:  # only in a mapping: the lines between its previous key and this one
            entry = node.ca.items.setdefault(key, [None, None, None, None])
            entry[_PRE] = pending + (entry[_PRE] or [])
            pending = []
        hoist = (hoist_tail or not last) if isinstance(node, CommentedMap) else hoist_tail and last
        value = node[key]
        if _block(value):
            pending = _walk(value, hoist)
        elif hoist:
            pending = _split(node, key, value)
    return pending


def _split(node: CommentedMap | CommentedSeq, key: Any, value: Any) -> list[CommentToken]:
    """The comment lines after the item `key`'s line, taken off it (its end-of-line comment
    stays)."""
    slot = _POST if isinstance(node, CommentedMap) else 0
    entry = node.ca.items.get(key)
    token = entry[slot] if entry and len(entry) > slot else None
    if not isinstance(token, CommentToken) or "\n" not in token.value.rstrip("\n"):
        return []
    first, rest = token.value.split("\n", 1)
    kept = CommentToken(first + "\n", token.start_mark, None) if first.strip() else None
    entry[slot] = kept
    if isinstance(value, CommentedBase) and value.ca.comment and value.ca.comment[0] is token:
        value.ca.comment[0] = kept  # a flow collection holds the same comment
    return [_line(line) for line in rest.splitlines()]


def _reattach(doc: CommentedMap | CommentedSeq, lines: str) -> None:
    """Put comment lines back after the document's last value (its deepest last item)."""
    node: Any = doc
    while True:
        key = list(node.keys())[-1] if isinstance(node, CommentedMap) else len(node) - 1
        if not _block(node[key]):
            break
        node = node[key]
    slot = _POST if isinstance(node, CommentedMap) else 0
    entry = node.ca.items.setdefault(key, [None, None, None, None])
    kept = entry[slot]
    if isinstance(kept, CommentToken):
        entry[slot] = CommentToken(kept.value + lines, kept.start_mark, None)
    else:
        entry[slot] = CommentToken("\n" + lines, CommentMark(0), None)


def _line(text: str) -> CommentToken:
    stripped = text.lstrip(" ")
    if not stripped.strip():
        return CommentToken("\n", CommentMark(0), None)
    return CommentToken(stripped.rstrip() + "\n", CommentMark(len(text) - len(stripped)), None)


def assign(node: Any, key: Any, value: Any) -> None:
    """`node[key] = value`; a list over a list of the document keeps its style and the
    comments after its items (a dropped item's full-line comments go to the list's end)."""
    old = node.get(key) if isinstance(node, dict) else None
    if not isinstance(old, CommentedSeq) or not isinstance(value, list):
        node[key] = value
        return
    new = CommentedSeq(value)
    if old.fa.flow_style():
        new.fa.set_flow_style()
    new.ca.comment = old.ca.comment  # after `key:`, before the first item
    kept: dict[str, list[Any]] = {}
    orphans: list[str] = []  # full-line comments of items not in the new list
    for index, item in enumerate(old):
        entry = old.ca.items.get(index)
        if entry is None:
            continue
        if str(item) in {str(v) for v in value}:
            kept[str(item)] = entry
        elif isinstance(entry[0], CommentToken) and "\n" in entry[0].value.rstrip("\n"):
            orphans.append(entry[0].value.split("\n", 1)[1])
    for index, item in enumerate(value):
        if str(item) in kept:
            new.ca.items[index] = kept[str(item)]
    if orphans and value:
        _append_lines(new, len(value) - 1, "".join(orphans))
    node[key] = new


def _append_lines(seq: CommentedSeq, index: int, lines: str) -> None:
    entry = seq.ca.items.setdefault(index, [None, None, None, None])
    token = entry[0]
    if isinstance(token, CommentToken):
        entry[0] = CommentToken(token.value.rstrip("\n") + "\n" + lines, token.start_mark, None)
    else:
        entry[0] = CommentToken("\n" + lines, CommentMark(0), None)
