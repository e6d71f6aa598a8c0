"""Reading the YAML files hermes-tui loads (config.yaml, plugin.yaml): bounded, with clear errors.

A YAML file is input we do not control: a few lines of anchors and aliases can expand to
billions of nodes (an "alias bomb"), and deep nesting overflows every recursive walk of the
result. Before anything is built, the parser's event stream is measured: the file's size,
how many nodes the aliases expand to, and how deep the result goes. Past a limit, the error
names the file and the limit, and nothing is built. Loading uses PyYAML's C loader (start-up
speed); the measuring pass costs a fraction of a millisecond for a config file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 2 * 1024 * 1024  # a config or a manifest is a few kilobytes
MAX_NODES = 100_000  # nodes after alias expansion
MAX_DEPTH = 100  # nesting after alias expansion

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YAMLFileError(ValueError):
    """The file cannot be read or parsed, or is over a limit; the message names the file."""


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """A regular file's text, at most `max_bytes` (a FIFO or a device never blocks the read).

    FileNotFoundError passes through (a missing file is often not an error).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise YAMLFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # checked first: a directory cannot even be wrapped
        os.close(fd)
        raise YAMLFileError(f"{path}: not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > max_bytes:
            raise YAMLFileError(
                f"{path}: {info.st_size:,} bytes, over the {max_bytes:,}-byte limit"
            )
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise YAMLFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew while we read it
        raise YAMLFileError(f"{path}: over the {max_bytes:,}-byte limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YAMLFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse(text: str, name: Path | str) -> Any:
    """Parse one YAML document within the limits; `name` is the file the errors name."""
    if len(text) > MAX_BYTES:
        raise YAMLFileError(f"{name}: over the {MAX_BYTES:,}-byte limit")
    try:
        _measure(text, name)
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise YAMLFileError(_describe(exc, name)) from None
    except RecursionError:
        raise YAMLFileError(f"{name}: nested too deeply") from None


def load(path: Path) -> Any:
    """`read_text` then `parse`."""
    return parse(read_text(path), path)


def _measure(text: str, name: Path | str) -> None:
    """Walk the event stream: the expanded node count and depth, without building anything."""
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
    stack: list[list[Any]] = []  # open collections: [anchor, nodes, height of children]
    total = 0

    def add(nodes: int, height: int) -> None:
        nonlocal total
        if stack:
            stack[-1][1] += nodes
            stack[-1][2] = max(stack[-1][2], height)
            if stack[-1][1] > MAX_NODES:
                raise YAMLFileError(_too_many(name))
        else:
            total += nodes
        if len(stack) + height > MAX_DEPTH:
            raise YAMLFileError(f"{name}: nested more than {MAX_DEPTH} levels deep")

    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            add(*anchors.get(event.anchor or "", (1, 0)))  # an alias always names one
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor:
                anchors[event.anchor] = (1, 0)
            add(1, 0)
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            stack.append([event.anchor, 1, 0])
            if len(stack) > MAX_DEPTH:
                raise YAMLFileError(f"{name}: nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            anchor, nodes, height = stack.pop()
            if anchor:
                anchors[anchor] = (nodes, height + 1)
            add(nodes, height + 1)
        if total > MAX_NODES:
            raise YAMLFileError(_too_many(name))


def _too_many(name: Path | str) -> str:
    return (
        f"{name}: expands to more than {MAX_NODES:,} values (anchors and aliases "
        "repeated inside each other?); not loaded"
    )


def _describe(exc: yaml.YAMLError, name: Path | str) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{name}, line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"{name}: {problem}"
