"""search_files: regex over file contents, or glob over file names.

Pure Python and fast enough for large trees: one `scandir` walk that skips VCS, virtualenv
and dependency directories, a whole-file regex test before any per-line work, and an early
stop once a page of results is full.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.core.errors import tool_error, tool_result
from workbench.core.paths import resolve_path
from workbench.core.registry import registry

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        "dist",
        "build",
        ".idea",
    }
)
MAX_FILE_BYTES = 5_000_000
READ_CHUNK = 65536
MAX_MATCH_LINE = 500

SEARCH_FILES_SCHEMA = {
    "description": (
        "Search file contents (target='content': regex, with line numbers) or find files by "
        "name (target='files': glob such as '*.py', newest first). Skips .git, node_modules, "
        "virtualenvs and binary files."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regex for content search, or glob for file search",
            },
            "target": {"type": "string", "enum": ["content", "files"], "default": "content"},
            "path": {
                "type": "string",
                "description": "Directory or file to search",
                "default": ".",
            },
            "file_glob": {"type": "string", "description": "Only search files matching this glob"},
            "limit": {"type": "integer", "default": 50, "minimum": 1, "maximum": 1000},
            "offset": {"type": "integer", "default": 0, "minimum": 0},
            "output_mode": {
                "type": "string",
                "enum": ["content", "files_only", "count"],
                "default": "content",
            },
            "context": {"type": "integer", "default": 0, "minimum": 0, "maximum": 10},
        },
        "required": ["pattern"],
    },
}


def walk_files(root: Path) -> Iterator[os.DirEntry[str]]:
    """Every regular file under `root`, skipping VCS/dependency dirs and hidden dirs."""
    stack = [str(root)]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                                stack.append(entry.path)
                        elif entry.is_file():
                            yield entry
                    except OSError:
                        continue
        except OSError:
            continue


def _display(path: str, cwd: Path) -> str:
    try:
        return os.path.relpath(path, cwd) if path.startswith(str(cwd) + os.sep) else path
    except ValueError:
        return path


def _glob_matcher(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def search_files(args: dict[str, Any], **kw: Any) -> str:
    cwd = Path(kw.get("cwd") or os.getcwd())
    root = resolve_path(args.get("path") or ".", cwd)
    if not root.exists():
        return tool_error(f"Path not found: {root}")
    limit, offset = int(args.get("limit") or 50), int(args.get("offset") or 0)
    if (args.get("target") or "content") == "files":
        return _find_files(root, args["pattern"], cwd, limit, offset)
    try:
        regex = re.compile(args["pattern"], re.MULTILINE)
    except re.error as exc:
        return tool_error(f"Invalid regex {args['pattern']!r}: {exc}")
    glob = _glob_matcher(args["file_glob"]) if args.get("file_glob") else None
    return _grep(root, regex, glob, cwd, args, limit, offset)


def _find_files(root: Path, pattern: str, cwd: Path, limit: int, offset: int) -> str:
    matcher = _glob_matcher(pattern)
    hits = []
    for entry in walk_files(root) if root.is_dir() else ():
        if matcher.match(entry.name):
            try:
                hits.append((entry.stat().st_mtime, entry.path))
            except OSError:
                continue
    hits.sort(key=lambda h: (-h[0], h[1]))
    page = [_display(p, cwd) for _, p in hits[offset : offset + limit]]
    return tool_result(files=page, total=len(hits), truncated=offset + limit < len(hits))


def _candidates(root: Path, glob: re.Pattern[str] | None) -> Iterator[str]:
    if root.is_file():
        yield str(root)
        return
    for entry in walk_files(root):
        if glob is None or glob.match(entry.name):
            yield entry.path


def _read_text(path: str) -> str | None:
    """The file's text, or None for binary or unreadable files.

    Reads in 64 KiB chunks with raw `os.read`: one large buffer per file (or a buffered
    `open`) costs more than the read itself on a tree of many small files.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    chunks, size = [], 0
    try:
        while size < MAX_FILE_BYTES:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                break
            if not chunks and b"\0" in chunk[:8192]:
                return None
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _grep(root, regex, glob, cwd, args, limit, offset) -> str:
    mode = args.get("output_mode") or "content"
    context = int(args.get("context") or 0)
    wanted = offset + limit
    matches: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for path in _candidates(root, glob):
        text = _read_text(path)
        if text is None or regex.search(text) is None:
            continue
        shown = _display(path, cwd)
        if mode == "count":
            counts[shown] = sum(1 for _ in regex.finditer(text))
            continue
        if mode == "files_only":
            matches.append({"path": shown})
        else:
            matches.extend(_line_matches(text, regex, shown, context, wanted - len(matches)))
        if len(matches) >= wanted + 1:
            break
    if mode == "count":
        return tool_result(counts=counts, total=sum(counts.values()))
    page = matches[offset:wanted]
    truncated = len(matches) > wanted
    if mode == "files_only":
        return tool_result(files=[m["path"] for m in page], truncated=truncated)
    return tool_result(matches=page, truncated=truncated)


def _line_matches(text: str, regex, path: str, context: int, room: int) -> list[dict[str, Any]]:
    lines = text.splitlines()
    out, seen = [], set()
    starts = _line_starts(text)
    for match in regex.finditer(text):
        number = _line_of(starts, match.start())
        if number in seen:
            continue
        seen.add(number)
        item: dict[str, Any] = {"path": path, "line": number, "text": _clip(lines, number)}
        if context:
            low, high = max(1, number - context), min(len(lines), number + context)
            item["context"] = [f"{n}|{_clip(lines, n)}" for n in range(low, high + 1)]
        out.append(item)
        if len(out) > room:
            break
    return out


def _line_starts(text: str) -> list[int]:
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def _line_of(starts: list[int], position: int) -> int:
    from bisect import bisect_right

    return bisect_right(starts, position)


def _clip(lines: list[str], number: int) -> str:
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    return line if len(line) <= MAX_MATCH_LINE else line[:MAX_MATCH_LINE] + "..."


registry.register(
    "search_files",
    "file",
    SEARCH_FILES_SCHEMA,
    search_files,
    emoji="🔎",
    max_result_size_chars=100_000,
    path_args={"path": "root"},
    parallel_safe=True,
)
