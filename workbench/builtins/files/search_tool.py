"""search_files: regex over file contents, or glob over file names.

Pure Python and fast enough for large trees: one `scandir` walk that skips VCS, virtualenv
and dependency directories, a whole-file regex test before any per-line work, and an early
stop once a page of results is full.

Bounded whatever it meets: only regular files are read (never a FIFO or a device, opened
non-blocking and checked on the descriptor), `/proc`, `/sys` and `/dev` are never entered,
each file is read up to MAX_FILE_BYTES, and the regex engine (`regex`) runs under a
deadline, so a pattern that backtracks catastrophically, such as `(a+)+$`, ends the search
with an error that says so instead of holding the interpreter past every timeout.
"""

from __future__ import annotations

import fnmatch
import heapq
import itertools
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import regex

from workbench.builtins.api import (
    linked_secret,
    registry,
    resolve_path,
    secret,
    tool_error,
    tool_result,
)
from workbench.builtins.files.remote_files import run_elsewhere
from workbench.builtins.files.textio import kind_of

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
DEFAULT_SEARCH_SECONDS = 60.0  # the search's own deadline, inside the call's timeout
# Kernel and device trees: their "files" can block a read forever (/proc/kmsg) or consume
# what they hold (reading the kernel log takes it away from its readers).
NEVER_SEARCHED = ("/proc", "/sys", "/dev")
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


def never_searched(path: str | Path) -> bool:
    real = os.path.realpath(path)
    return any(real == top or real.startswith(top + os.sep) for top in NEVER_SEARCHED)


class Skipped:
    """What a search met and did not read because it is secret, said by name (never by
    content): the files and folders a confined command could not see, judged where they
    lead (a link in the project, or shipped in a repository, to `~/.vault-token`; a hard
    link to a key; a folder linked into the home's hidden entries). `approved`: the secret
    place the search itself was let into by a person (its root), whose files it reads."""

    def __init__(self, root: Path, cwd: Path) -> None:
        self.approved = secret(str(root))
        self.cwd = cwd
        self.found: dict[str, str] = {}

    def why(self, path: str, real: str, nlink: int) -> str | None:
        """Why the file (or folder) at `path`, which leads to `real`, is not read; None."""
        why = secret(real, real)  # where it leads first, then its name
        why = why or (secret(path, path) if path != real else None)
        if why is None and nlink > 1:
            other = linked_secret(real)
            why = f"another name of {other} (a hard link)" if other else None
            if other and secret(other) == self.approved:
                why = None  # the very place a person let the search into
        if why is None or why == self.approved:
            return None
        self.found.setdefault(_display(path, self.cwd), why)
        return why

    def told(self, result: str) -> str:
        """The result, with what was skipped and why."""
        if not self.found:
            return result
        data = json.loads(result)
        if "error" in data:
            return result
        data["skipped"] = [{"path": p, "why": w} for p, w in list(self.found.items())[:50]]
        data["note"] = (
            f"{len(self.found)} secret file(s) or folder(s) not searched (see skipped): "
            "commands cannot read them either. " + data.get("note", "")
        ).strip()
        return json.dumps(data, ensure_ascii=False)


def walk_files(root: Path, skipped: Skipped) -> Iterator[os.DirEntry[str]]:
    """Every regular file under `root`, skipping VCS/dependency dirs and hidden dirs.

    Secret files (secrets.py's: hermes-tui's own state, credentials, the home's hidden
    entries, `.env` files, also behind a symbolic or a hard link) are never read and are
    said in `skipped`: a search of a project that holds them must not hand their contents
    to the model, nor show more than a confined command could see. Linked folders are not
    entered; one that leads into a secret place is said.
    """
    stack = [str(root)]
    while stack:
        directory = stack.pop()
        real_dir = os.path.realpath(directory)  # once a folder: its plain entries are in it
        if never_searched(real_dir) or skipped.why(directory, real_dir, 1):
            continue
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                                stack.append(entry.path)
                        elif entry.is_symlink():
                            real = os.path.realpath(entry.path)
                            if os.path.isdir(real):
                                skipped.why(entry.path, real, 1)
                            elif entry.is_file() and not _secret_file(entry, real, skipped):
                                yield entry
                        elif entry.is_file(follow_symlinks=False):
                            real = os.path.join(real_dir, entry.name)
                            if not _secret_file(entry, real, skipped):
                                yield entry
                    except OSError:
                        continue
        except OSError:
            continue


def _secret_file(entry: os.DirEntry[str], real: str, skipped: Skipped) -> bool:
    return skipped.why(entry.path, real, entry.stat().st_nlink) is not None


def _display(path: str, cwd: Path) -> str:
    try:
        return os.path.relpath(path, cwd) if path.startswith(str(cwd) + os.sep) else path
    except ValueError:
        return path


def _glob_matcher(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


class SearchTooSlow(Exception):
    """The search ran past its deadline; `where` is the file it was in."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds, self.at = seconds, time.monotonic() + seconds

    def left(self, where: str) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise SearchTooSlow(where)
        return left

    def engine_budget(self, where: str) -> float:
        # The regex engine's timeout counts processor time, which on a busy machine passes
        # several times slower than the clock: it gets a quarter of what is left, still far
        # more than any sane pattern needs on one file.
        return self.left(where) / 4


def search_files(args: dict[str, Any], **kw: Any) -> str:
    if (elsewhere := run_elsewhere("search_files", args, kw)) is not None:
        return elsewhere
    cwd = Path(kw.get("cwd") or os.getcwd())
    root = resolve_path(args.get("path") or ".", cwd)
    guessed = None  # a relative path that is not there: the working directory is searched
    if not root.exists():
        if Path(os.path.expanduser(args.get("path") or ".")).is_absolute() or not cwd.is_dir():
            return tool_error(f"Path not found: {root}")
        guessed, root = args.get("path"), cwd
    if never_searched(root):
        return tool_error(
            f"search_files does not search {', '.join(NEVER_SEARCHED)}: reading their files "
            "can block forever or change what they hold. Use the terminal for them."
        )
    if not root.is_dir() and not root.is_file():  # a FIFO, a device, a socket
        return tool_error(
            f"{root} is {kind_of(os.stat(root).st_mode)}; search_files reads regular files only"
        )
    limit, offset = int(args.get("limit") or 50), int(args.get("offset") or 0)
    # Inside the call's own timeout when the executor gives one, so this error is what
    # the model reads rather than a bare timeout.
    call_timeout = kw.get("timeout")
    seconds = DEFAULT_SEARCH_SECONDS
    if isinstance(call_timeout, int | float) and call_timeout > 0:
        seconds = min(seconds, max(0.5, call_timeout * 0.5))
    deadline = Deadline(float(kw.get("search_seconds") or seconds))
    skipped = Skipped(root, cwd)
    try:
        if (args.get("target") or "content") == "files":
            found = _find_files(root, args["pattern"], cwd, limit, offset, deadline, skipped)
        else:
            found = _search_contents(root, args, cwd, limit, offset, deadline, skipped)
        found = skipped.told(found)
        return found if guessed is None else _beyond_path(found, guessed)
    except SearchTooSlow as exc:
        return tool_error(
            f"search_files gave up in {_display(exc.where, cwd)}: the pattern "
            f"{args['pattern']!r} takes too long (the search's limit is {deadline.seconds:g}s). "
            "Nested repeats such as (a+)+ can take exponential time: simplify the pattern, "
            "or narrow path or file_glob.",
            status="timeout",
        )


def _search_contents(
    root: Path,
    args: dict[str, Any],
    cwd: Path,
    limit: int,
    offset: int,
    deadline: Deadline,
    skipped: Skipped,
) -> str:
    try:
        compiled = compile_pattern(args["pattern"])
    except (regex.error, re.error, ValueError) as exc:
        return tool_error(f"Invalid regex {args['pattern']!r}: {exc}")
    glob = _glob_matcher(args["file_glob"]) if args.get("file_glob") else None
    found = _grep(root, compiled, glob, cwd, args, limit, offset, deadline, skipped)
    if glob is not None and _nothing(found):
        anywhere = {**args, "file_glob": None}
        wide = _grep(root, compiled, None, cwd, anywhere, limit, 0, deadline, skipped)
        return _beyond_glob(wide, args["file_glob"])
    return found


def _nothing(result: str) -> bool:
    """Whether a search's result says nothing matched (it then carries a hint)."""
    return '"hint"' in result and "hint" in json.loads(result)


def _beyond_glob(wide: str, file_glob: str) -> str:
    """When nothing matched in the files file_glob chose, what matched in the others: a
    model guesses the glob (the 1.5B looked for a word of a Markdown file in '*.py', and
    repeated that search whatever the hint said)."""
    if _nothing(wide):
        return wide  # nothing anywhere: its hint need not mention the glob
    data = json.loads(wide)
    data["note"] = (
        f"Nothing matched in the files matching file_glob {file_glob!r}; "
        "these matches are from other files. " + data.get("note", "")
    ).strip()
    return json.dumps(data, ensure_ascii=False)


def _beyond_path(found: str, path: str) -> str:
    """What a search of the working directory found, for a relative path that is not there:
    a model guesses folders (the 1.5B searched `src` in a project without one, and repeated
    that search until made to answer, then guessed)."""
    data = json.loads(found)
    if "error" in data:
        return found
    data["note"] = (
        f"The path {path!r} does not exist; these results are from the whole working "
        "directory. " + data.get("note", "")
    ).strip()
    return json.dumps(data, ensure_ascii=False)


def _find_files(
    root: Path,
    pattern: str,
    cwd: Path,
    limit: int,
    offset: int,
    deadline: Deadline,
    skipped: Skipped,
) -> str:
    matcher = _glob_matcher(pattern)
    hits = []
    for entry in walk_files(root, skipped) if root.is_dir() else ():
        if matcher.match(entry.name):
            try:
                hits.append((entry.stat().st_mtime, entry.path))
            except OSError:
                continue
    hits.sort(key=lambda h: (-h[0], h[1]))
    page = [_display(p, cwd) for _, p in hits[offset : offset + limit]]
    if hits or offset:
        return tool_result(files=page, total=len(hits), truncated=offset + limit < len(hits))
    if _GLOB.intersection(pattern):
        return tool_result(files=[], total=0, truncated=False, hint=_no_name_hint(pattern))
    return _files_mentioning(root, pattern, cwd, limit, deadline, skipped)


_GLOB = frozenset("*?[")


def _no_name_hint(pattern: str) -> str:
    return (
        f"No file name matches {pattern!r}. target='files' matches names (a glob such as "
        "'*.md'); to find the files that mention a word, search with target='content'."
    )


def _files_mentioning(
    root: Path, word: str, cwd: Path, limit: int, deadline: Deadline, skipped: Skipped
) -> str:
    """A file-name search for a word that names no file: the files whose text holds it. A
    model asked which file mentions a flamingo searched names for "flamingo", found none
    and said no file mentions it."""
    try:
        compiled = compile_pattern(word)
    except (regex.error, re.error, ValueError):
        return tool_result(files=[], total=0, truncated=False, hint=_no_name_hint(word))
    # The files that hold it as written, one entry a file (a file that mentions it a page of
    # times must not hide the rest); failing those, the lines that hold most of its words.
    exact = {"pattern": word, "output_mode": "files_only"}
    found = json.loads(_grep(root, compiled, None, cwd, exact, limit, 0, deadline, skipped))
    files = found.get("files", [])
    if not files:
        loose = {"pattern": word}
        found = json.loads(_grep(root, compiled, None, cwd, loose, limit, 0, deadline, skipped))
        files = list(dict.fromkeys(m["path"] for m in found.get("matches", [])))
    if not files:
        hint = f"No file name matches {word!r}, and no file's text holds it; do not guess."
        return tool_result(files=[], total=0, truncated=False, hint=hint)
    what = "hold the most of its words, in any order or case" if "note" in found else "mention it"
    note = f"No file name matches {word!r}; these files {what}."
    return tool_result(files=files, total=len(files), truncated=found["truncated"], note=note)


def _candidates(root: Path, glob: re.Pattern[str] | None, skipped: Skipped) -> Iterator[str]:
    if root.is_file():  # judged by the gate, as the file it is
        yield str(root)
        return
    for entry in walk_files(root, skipped):
        if glob is None or glob.match(entry.name):
            yield entry.path


def _read_text(path: str) -> str | None:
    """The file's text, or None for binary, unreadable or non-regular files.

    Reads in 64 KiB chunks with raw `os.read`: one large buffer per file (or a buffered
    `open`) costs more than the read itself on a tree of many small files.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks, size = [], 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO since the walk
            return None
        while size < MAX_FILE_BYTES:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                break
            if b"\0" in chunk:  # binary, or text followed by a sparse hole of zeros
                return None
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _grep(root, pattern, glob, cwd, args, limit, offset, deadline: Deadline, skipped) -> str:
    texts = ((p, _display(p, cwd), _read_text(p)) for p in _candidates(root, glob, skipped))
    return grep_texts(texts, pattern, args, limit, offset, deadline)


def grep_texts(
    texts: Iterable[tuple[str, str, str | None]], pattern, args, limit, offset, deadline: Deadline
) -> str:
    """The search's result over (path, path as shown, text or None when not searched)."""
    mode = args.get("output_mode") or "content"
    context = int(args.get("context") or 0)
    wanted = offset + limit
    matches: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    loose = _loose(args["pattern"]) if mode == "content" and not offset else None
    near: list[tuple[int, int, dict[str, Any]]] = []  # the best lines, until an exact match
    order = itertools.count()
    for path, shown, text in texts:
        if text is None:
            continue
        if _search(pattern, text, deadline, path) is None:
            if loose is not None and not matches:
                deadline.left(path)
                # Once a page is kept, a line must hold more words than its worst to count.
                floor = -near[-1][0] if len(near) > wanted else 0
                for count, item in loose(text, shown, context, wanted, floor):
                    near.append((-count, next(order), item))  # the most words, then the first
                near = heapq.nsmallest(wanted + 1, near)
            continue
        if mode == "count":
            counts[shown] = sum(1 for _ in _finditer(pattern, text, deadline, path))
            continue
        if mode == "files_only":
            matches.append({"path": shown})
        else:
            found = _finditer(pattern, text, deadline, path)
            matches.extend(_line_matches(text, found, shown, context, wanted - len(matches)))
        if len(matches) >= wanted + 1:
            break
    if not matches and near:
        best = [item for *_, item in sorted(near)]
        return tool_result(
            matches=best[:wanted], truncated=len(best) > wanted, note=_loose_note(args["pattern"])
        )
    # nothing matched, in any mode: say what to try
    nothing = not (counts or matches or offset)
    hint = {"hint": no_match_hint(args["pattern"], args.get("file_glob"))} if nothing else {}
    if mode == "count":
        return tool_result(counts=counts, total=sum(counts.values()), **hint)
    page = matches[offset:wanted]
    truncated = len(matches) > wanted
    if mode == "files_only":
        return tool_result(files=[m["path"] for m in page], truncated=truncated, **hint)
    return tool_result(matches=page, truncated=truncated, **hint)


def no_match_hint(pattern: str, file_glob: str | None = None) -> str:
    """What to try when nothing matched: a model that reads an empty list as "the answer is
    not there" goes on to guess it. Searches are case-sensitive and a phrase must match
    word for word, so a shorter pattern is the usual fix; a guessed file_glob (the 1.5B
    looked for a word of a Markdown file in '*.py') is the other."""
    words = pattern.split()
    shorter = f" such as {max(words, key=len)!r}" if len(words) > 1 else ""
    if file_glob:
        return (
            f"No line matches {pattern!r} in the files matching {file_glob!r} (case-sensitive, "
            f"word for word). Search again without file_glob, or with one distinctive "
            f"word{shorter}; do not guess what the files say."
        )
    return (
        f"No line matches {pattern!r} (case-sensitive, word for word). Search again with one "
        f"distinctive word{shorter}, or read the file; do not guess what it says."
    )


_METACHARACTERS = frozenset(".^$*+?{}[]\\|()")


# Words that say nothing of what a line is about: a line holding "of the" is no nearer.
_FILLER = frozenset(
    "a an and are as at be by do does for from has have in is it its of on or that the "  # noqa: SIM905
    "this to was were what when where which who why with how".split()
)


# The words of a phrase that count: each is looked for in every line of every file, and a
# file's lines are not stopped by the search's deadline, so a pattern of thousands of words
# (2,000 took 4.9 s on one 2 MB file) must not make that work thousands of times larger.
LOOSE_WORDS = 12


def _loose(
    pattern: str,
) -> Callable[[str, str, int, int, int], list[tuple[int, dict[str, Any]]]] | None:
    """For plain text that matches no line word for word: the lines that hold the most of
    its words, in any order and case, each with how many it holds. A model searches a
    phrase of the question ("keep backups of the staging cluster") where the file says
    "Backups of the staging cluster are kept"; a small one then repeats the search or
    guesses. Words such as "the" or "of" count only when there is nothing else; a line must
    hold every word of a two-word pattern, and at least half of a longer one's."""
    every = list(dict.fromkeys(w.lower() for w in pattern.split()))
    if not every or _METACHARACTERS.intersection(pattern):
        return None
    words = ([w for w in every if w not in _FILLER] or every)[:LOOSE_WORDS]
    need = len(words) if len(words) <= 2 else max(2, -(-len(words) // 2))

    def lines(
        text: str, shown: str, context: int, room: int, floor: int
    ) -> list[tuple[int, dict[str, Any]]]:
        """The file's best lines (at most room + 1) holding more than `floor` words: a file
        that cannot beat the page kept so far is not split into lines."""
        lower = text.lower()
        present = [w for w in words if w in lower]  # cheaply, whether the file can have any
        if len(present) < max(need, floor + 1):
            return []
        held, best = [], 0
        for number, line in enumerate(_lines(lower), 1):
            count = sum(w in line for w in present)
            if count >= need and count > floor:
                held.append((-count, number))
                best += count == len(present)
                if best > room:
                    break  # a page of lines no later one in this file can beat
        if not held:
            return []
        found = _lines(text)
        best_lines = heapq.nsmallest(room + 1, held)
        return [(-count, _item(found, number, shown, context)) for count, number in best_lines]

    return lines


def _loose_note(pattern: str) -> str:
    many = len(pattern.split()) > 1
    what = "the most of its words, in any order or case (the most first)" if many else "it"
    return f"No line matches {pattern!r} word for word; these lines hold {what}."


def compile_pattern(pattern: str) -> re.Pattern[str] | regex.Pattern[str]:
    """Plain text goes to the standard engine (it cannot backtrack, and a timed match costs
    microseconds a file); anything else to `regex`, whose matches a timeout can stop."""
    if not _METACHARACTERS.intersection(pattern):
        return re.compile(re.escape(pattern))
    return regex.compile(pattern, regex.MULTILINE | regex.VERSION0)


def _search(pattern, text: str, deadline: Deadline, path: str):
    if isinstance(pattern, re.Pattern):
        deadline.left(path)
        return pattern.search(text)
    try:
        # concurrent: the match runs without the interpreter lock, so other threads go on.
        return pattern.search(text, concurrent=True, timeout=deadline.engine_budget(path))
    except TimeoutError:
        raise SearchTooSlow(path) from None


def _finditer(pattern, text: str, deadline: Deadline, path: str):
    if isinstance(pattern, re.Pattern):
        yield from pattern.finditer(text)
        return
    try:
        yield from pattern.finditer(text, concurrent=True, timeout=deadline.engine_budget(path))
    except TimeoutError:
        raise SearchTooSlow(path) from None


def _line_matches(text: str, found, path: str, context: int, room: int) -> list[dict[str, Any]]:
    lines = _lines(text)
    out, seen = [], set()
    starts = _line_starts(text)
    for match in found:
        number = _line_of(starts, match.start())
        if number in seen:
            continue
        seen.add(number)
        out.append(_item(lines, number, path, context))
        if len(out) > room:
            break
    return out


def _item(lines: list[str], number: int, path: str, context: int) -> dict[str, Any]:
    """One matching line of a result, with the lines around it if asked."""
    item: dict[str, Any] = {"path": path, "line": number, "text": _clip(lines, number)}
    if context:
        low, high = max(1, number - context), min(len(lines), number + context)
        item["context"] = [f"{n}|{_clip(lines, n)}" for n in range(low, high + 1)]
    return item


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


def _lines(text: str) -> list[str]:
    """The text's lines, numbered as read_file numbers them: split at newlines only (not at
    the form feeds and Unicode separators `splitlines` also splits at)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    return lines


def _clip(lines: list[str], number: int) -> str:
    line = lines[number - 1].removesuffix("\r") if 0 < number <= len(lines) else ""
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
