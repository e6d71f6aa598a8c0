"""File tools: read_file, write_file, patch. Names, schemas and toolset as in Hermes."""

from __future__ import annotations

import difflib
import errno
import os
from pathlib import Path, PurePath
from typing import Any

from workbench.builtins.api import (
    atomic_write_text,
    default_file_mode,
    patched,
    registry,
    resolve_path,
    tool_error,
    tool_result,
)
from workbench.builtins.files.remote_files import run_elsewhere
from workbench.builtins.files.textio import (
    LineReader,
    open_regular,
    read_bounded,
    refuse_unless_regular,
)

MAX_READ_CHARS = 100_000
MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000
BINARY_SNIFF_BYTES = 8192
MAX_PATCH_BYTES = 16 << 20  # patch holds the file, its new text and the diff in memory

READ_FILE_SCHEMA = {
    "description": (
        "Read a text file with line numbers and pagination. Output lines are "
        "'LINE_NUM|CONTENT'. Use offset and limit for large files; reads over ~100K "
        "characters stop at a line boundary and return next_offset. Binary files are refused."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read (absolute, relative or ~/path)",
            },
            "offset": {
                "type": "integer",
                "description": "Line number to start at (1-indexed, default 1)",
                "default": 1,
                "minimum": 1,
            },
            "limit": {
                "type": "integer",
                "description": f"Maximum lines to read (default 500, max {MAX_READ_LINES})",
                "default": 500,
                "minimum": 1,
                "maximum": MAX_READ_LINES,
            },
        },
        "required": ["path"],
    },
}

WRITE_FILE_SCHEMA = {
    "description": (
        "Write content to a file, replacing it completely; creates parent directories. "
        "Use 'patch' for targeted edits."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to write (created if missing)"},
            "content": {"type": "string", "description": "The complete new content"},
        },
        "required": ["path", "content"],
    },
}

PATCH_SCHEMA = {
    "description": (
        "Replace an exact string in a file. old_string must occur exactly once unless "
        "replace_all is true; include surrounding lines to make it unique. Returns a diff."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit"},
            "old_string": {"type": "string", "description": "Exact text to find"},
            "new_string": {"type": "string", "description": "Replacement ('' deletes)"},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence (default false)",
                "default": False,
            },
        },
        "required": ["path", "old_string", "new_string"],
    },
}


def _path(args: dict[str, Any], kw: dict[str, Any]) -> Path:
    return resolve_path(args["path"], kw.get("cwd"))


def _similar(path: Path) -> list[str]:
    try:
        siblings = [p.name for p in path.parent.iterdir()]
    except OSError:
        return []
    return [str(path.parent / n) for n in difflib.get_close_matches(path.name, siblings, n=3)]


def _missing(path: Path) -> str:
    similar = _similar(path)
    hint = f" Did you mean: {', '.join(similar)}?" if similar else ""
    return tool_error(f"File not found: {path}.{hint}")


def _is_binary(head: bytes) -> bool:
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a cut multi-byte character at the end is fine
    return False


def read_file(args: dict[str, Any], **kw: Any) -> str:
    if (elsewhere := run_elsewhere("read_file", args, kw)) is not None:
        return elsewhere
    path = _path(args, kw)
    offset, limit = int(args.get("offset") or 1), min(int(args.get("limit") or 500), MAX_READ_LINES)
    if path.is_dir():
        return tool_error(f"{path} is a directory; use search_files to list it")
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return _missing(path)
    except OSError as exc:
        return tool_error(f"Cannot read {path}: {exc.strerror or exc}")
    try:
        head = os.pread(fd, BINARY_SNIFF_BYTES, 0)
        if _is_binary(head):
            size = os.fstat(fd).st_size
            return tool_error(
                f"{path} is a binary file ({size:,} bytes); read_file reads text only"
            )
        reader = LineReader(fd, MAX_LINE_CHARS * 4)  # a character is at most 4 bytes
        # the agent sizes a read to what is left of the model's window
        max_chars = min(int(kw.get("max_chars") or MAX_READ_CHARS), MAX_READ_CHARS)
        return _read_lines(path, reader, offset, limit, max_chars)
    except OSError as exc:
        return tool_error(f"Cannot read {path}: {exc.strerror or exc}")
    finally:
        os.close(fd)


def _read_lines(path: PurePath, reader: LineReader, offset: int, limit: int, max_chars: int) -> str:
    """The page of lines from `offset`: at most `limit` lines and `max_chars` characters."""
    lines: list[str] = []
    used, number, next_offset, cut = 0, 0, None, 0
    for number, (raw, was_cut) in enumerate(reader, start=1):
        if number < offset:
            continue
        if len(lines) >= limit:
            next_offset = number
            break
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if was_cut or len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + "... [truncated]"
            cut += 1
        line = f"{number:>6}|{text}"
        if used + len(line) + 1 > max_chars:
            if lines:
                next_offset = number
                break
            line = line[: max(20, max_chars - 16)] + "... [truncated]"  # a head, at least
        lines.append(line)
        used += len(line) + 1
    # Past the page, lines are only counted: read through, nothing kept.
    total = number + reader.count_rest() if next_offset is not None else number
    if offset > max(total, 1):
        return tool_error(f"offset {offset} is past the end of {path} ({total} lines)")
    payload: dict[str, Any] = {
        "path": str(path),
        "content": "\n".join(lines),
        "total_lines": total,
        "lines_returned": len(lines),
    }
    if cut:
        payload["lines_cut"] = cut  # lines over MAX_LINE_CHARS, shown up to it
    if next_offset is not None:
        payload["next_offset"] = next_offset
        payload["truncated"] = True
    return tool_result(payload)


def write_file(args: dict[str, Any], **kw: Any) -> str:
    if (elsewhere := run_elsewhere("write_file", args, kw)) is not None:
        return elsewhere
    path = _path(args, kw)
    content = args["content"]
    if path.is_dir():
        return tool_error(f"{path} is a directory")
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    try:
        if existing is not None:
            refuse_unless_regular(path, existing.st_mode, "write")
        # Through a symlink, the target is written: its directory is the one that must exist.
        Path(os.path.realpath(path)).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, content, mode=default_file_mode())
    except OSError as exc:
        return tool_error(f"Cannot write {path}: {exc.strerror or exc}")
    return tool_result(
        path=str(path), bytes_written=len(content.encode("utf-8")), created=existing is None
    )


def patch(args: dict[str, Any], **kw: Any) -> str:
    if (elsewhere := run_elsewhere("patch", args, kw)) is not None:
        return elsewhere
    path = _path(args, kw)
    if args["old_string"] == "":
        return tool_error("old_string is empty; use write_file to create or replace a file")
    try:
        text = read_bounded(path, MAX_PATCH_BYTES).decode("utf-8")
    except FileNotFoundError:
        return _missing(path)
    except UnicodeDecodeError as exc:
        return tool_error(f"Cannot read {path} as text: {exc}")
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            return tool_error(
                f"{exc.strerror}: patch edits files up to that size; use the terminal"
            )
        return tool_error(f"Cannot read {path}: {exc.strerror or exc}")
    change = patched(text, args, path)
    if isinstance(change, str):
        return change
    try:
        atomic_write_text(path, change[0], mode=default_file_mode())
    except OSError as exc:
        return tool_error(f"Cannot write {path}: {exc.strerror or exc}")
    return patch_result(path, text, *change, args)


def patch_result(path: PurePath, text: str, updated: str, count: int, args: dict[str, Any]) -> str:
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            updated.splitlines(keepends=True),
            fromfile=f"a/{path.name}",
            tofile=f"b/{path.name}",
        )
    )
    return tool_result(
        path=str(path), replacements=count if args.get("replace_all") else 1, diff=diff
    )


# read_file's result cap is pinned to infinite: spilled results are read back with it, and
# spilling that read would loop. It bounds itself (MAX_READ_CHARS per call) instead.
registry.register(
    "read_file",
    "file",
    READ_FILE_SCHEMA,
    read_file,
    emoji="📖",
    max_result_size_chars=float("inf"),
    path_args={"path": "read"},
    parallel_safe=True,
)
registry.register(
    "write_file",
    "file",
    WRITE_FILE_SCHEMA,
    write_file,
    emoji="✍️",
    max_result_size_chars=100_000,
    path_args={"path": "write"},
)
registry.register(
    "patch",
    "file",
    PATCH_SCHEMA,
    patch,
    emoji="🔧",
    max_result_size_chars=100_000,
    path_args={"path": "write"},
)
