"""The file tools where the terminal runs: on the ssh backend's machine, or refused.

Each file tool asks `run_elsewhere` first: None means "run here" (local, sandbox); anything
else is the call's result from the backend's machine, or the refusal of a backend we do
not run. The remote side only moves bytes (see core/backends/ssh.py); paging, binary
detection, exact-string patching and matching run here, in the same code as locally, so a
result reads the same wherever the file is.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import Any

from workbench.builtins.api import BackendError, backend_for, patched, tool_error, tool_result
from workbench.builtins.files.textio import LineReader

MAX_REMOTE_READ = 32 * 1024 * 1024  # read_file pages through at most this much of a file


def run_elsewhere(tool: str, args: dict[str, Any], kw: dict[str, Any]) -> str | None:
    backend = backend_for(kw)
    if backend.refusal:
        return tool_error(backend.refusal, status="refused")
    remote = backend.remote
    if remote is None:
        return None
    try:
        return _HANDLERS[tool](remote, args, kw)
    except BackendError as exc:
        return tool_error(str(exc))


def _read_file(remote: Any, args: dict[str, Any], kw: dict[str, Any]) -> str:
    from workbench.builtins.files import file_tools as local

    path = args["path"]
    shown = PurePosixPath(remote.shown(path))
    limit = min(int(args.get("limit") or 500), local.MAX_READ_LINES)
    offset = int(args.get("offset") or 1)
    try:
        data = remote.read_bytes(path, MAX_REMOTE_READ)
    except FileNotFoundError:
        return tool_error(f"File not found: {shown}.")
    except IsADirectoryError:
        return tool_error(f"{shown} is a directory; use search_files to list it")
    except OSError as exc:
        return tool_error(f"Cannot read {shown}: {exc}")
    if local._is_binary(data[: local.BINARY_SNIFF_BYTES]):
        return tool_error(f"{shown} is a binary file; read_file reads text only")
    max_chars = min(int(kw.get("max_chars") or local.MAX_READ_CHARS), local.MAX_READ_CHARS)
    fd = _in_memory(data)  # paged by the same reader as a local file
    try:
        reader = LineReader(fd, local.MAX_LINE_CHARS * 4)
        return local._read_lines(shown, reader, offset, limit, max_chars)
    finally:
        os.close(fd)


def _in_memory(data: bytes) -> int:
    fd = os.memfd_create("hermes-tui-remote-read", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_file(remote: Any, args: dict[str, Any], kw: dict[str, Any]) -> str:
    path, content = args["path"], args["content"]
    shown = remote.shown(path)
    data = content.encode("utf-8")
    try:
        created = remote.write_bytes(path, data)
    except IsADirectoryError:
        return tool_error(f"{shown} is a directory")
    except OSError as exc:
        return tool_error(f"Cannot write {shown}: {exc}")
    return tool_result(path=shown, bytes_written=len(data), created=created)


def _patch(remote: Any, args: dict[str, Any], kw: dict[str, Any]) -> str:
    from workbench.builtins.files.file_tools import patch_result

    path = args["path"]
    shown = PurePosixPath(remote.shown(path))
    if args["old_string"] == "":
        return tool_error("old_string is empty; use write_file to create or replace a file")
    try:
        text = remote.read_bytes(path, MAX_REMOTE_READ).decode("utf-8")
    except FileNotFoundError:
        return tool_error(f"File not found: {shown}.")
    except (OSError, UnicodeDecodeError) as exc:
        return tool_error(f"Cannot read {shown} as text: {exc}")
    change = patched(text, args, shown)
    if isinstance(change, str):
        return change
    try:
        remote.write_bytes(path, change[0].encode("utf-8"))
    except OSError as exc:
        return tool_error(f"Cannot write {shown}: {exc}")
    return patch_result(shown, text, *change, args)


def _search_files(remote: Any, args: dict[str, Any], kw: dict[str, Any]) -> str:
    from workbench.builtins.files import search_tool as local

    root = args.get("path") or "."
    limit, offset = int(args.get("limit") or 50), int(args.get("offset") or 0)
    files = (args.get("target") or "content") == "files"
    try:
        pattern = None if files else local.compile_pattern(args["pattern"])
    except (re.error, local.regex.error, ValueError) as exc:
        return tool_error(f"Invalid regex {args['pattern']!r}: {exc}")
    try:
        if remote.is_dir(root):
            found = remote.find(root, local.SKIP_DIRS, args["pattern"] if files else None)
        else:
            found = [(0.0, remote.shown(root))] if not files else []
            remote.read_bytes(root, 1)  # a missing path is said as such
    except FileNotFoundError:
        return tool_error(f"Path not found: {remote.shown(root)}")
    except OSError as exc:
        return tool_error(f"Cannot search {remote.shown(root)}: {exc}")
    if files:
        found.sort(key=lambda h: (-h[0], h[1]))
        page = [p for _, p in found[offset : offset + limit]]
        return tool_result(files=page, total=len(found), truncated=offset + limit < len(found))
    glob = local._glob_matcher(args["file_glob"]) if args.get("file_glob") else None
    paths = [p for _, p in found if glob is None or glob.match(PurePosixPath(p).name)]
    # For plain text on one line, grep there picks the files worth sending (exactly: such
    # text cannot span lines). A regex may match across lines where grep, line by line,
    # would miss it, so then every file is sent. The match is judged here, as locally.
    if isinstance(pattern, re.Pattern) and "\n" not in args["pattern"]:
        candidates = remote.grep(paths, args["pattern"], fixed=True)
        paths = paths if candidates is None else candidates
    contents = remote.read_many(paths, local.MAX_FILE_BYTES)
    texts = ((p, p, _text(contents.get(p))) for p in sorted(paths))
    deadline = local.Deadline(float(kw.get("search_seconds") or local.DEFAULT_SEARCH_SECONDS))
    try:
        return local.grep_texts(texts, pattern, args, limit, offset, deadline)
    except local.SearchTooSlow:
        return tool_error(
            f"search_files gave up: {args['pattern']!r} takes too long", status="timeout"
        )


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


_HANDLERS = {
    "read_file": _read_file,
    "write_file": _write_file,
    "patch": _patch,
    "search_files": _search_files,
}
