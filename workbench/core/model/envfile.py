"""`$HERMES_HOME/.env`: the API keys a Hermes user keeps beside config.yaml (a dotenv file).

Lines are `KEY=VALUE`, optionally `export KEY=VALUE`; `#` starts a comment (in an unquoted
value only after a space); values may be single-quoted (taken as written) or double-quoted
(`\\n`, `\\t`, `\\"` and `\\\\` escapes, and may run over several lines). A line that is none
of these is skipped and reported by its number only: it may hold a secret, so its text is
never repeated. The values are kept apart from `os.environ` (the tools' commands must not
inherit them), and the environment wins over the file for the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.storage.yaml_file import YAMLFileError, read_text

NAME = ".env"
MAX_BYTES = 1024 * 1024
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMENT = re.compile(r"[ \t]#")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class EnvFile:
    path: Path
    values: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def load(home: Path) -> EnvFile:
    """The file's variables (none when it is missing) and what could not be read in it."""
    path = home / NAME
    try:
        text = read_text(path, MAX_BYTES)
    except FileNotFoundError:
        return EnvFile(path)
    except YAMLFileError as exc:  # not a regular file, too large, not UTF-8: named, not read
        return EnvFile(path, problems=(str(exc),))
    values, problems = parse(text)
    return EnvFile(path, values, tuple(f"{path}: {p}" for p in problems))


def parse(text: str) -> tuple[dict[str, str], list[str]]:
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    values: dict[str, str] = {}
    problems: list[str] = []
    index = 0
    while index < len(lines):
        number, line = index + 1, lines[index].strip()
        index += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith(("export ", "export\t")):
            line = line[7:].lstrip()
        key, equals, rest = line.partition("=")
        key = key.strip()
        if not equals or not _KEY.fullmatch(key):
            problems.append(f"line {number} is not KEY=VALUE (skipped)")
            continue
        rest = rest.lstrip()
        if rest[:1] not in ("'", '"'):
            values[key] = _COMMENT.split(rest, 1)[0].strip()
            continue
        value, used, problem = _quoted(rest, lines[index:])
        if problem:
            problems.append(f"line {number}: {problem} (skipped)")
            continue
        values[key] = value
        index += used
    return values, problems


def _quoted(rest: str, following: list[str]) -> tuple[str, int, str]:
    """A quoted value that may go on over the following lines: (value, lines used, problem)."""
    quote, body, used = rest[0], rest[1:], 0
    while (end := _closing(body, quote)) < 0:
        if used == len(following):
            return "", 0, "its quote is never closed"
        body += "\n" + following[used]
        used += 1
    tail = body[end + 1 :].strip()
    if tail and not tail.startswith("#"):
        return "", 0, "text follows the closing quote"
    value = body[:end]
    return (_unescape(value) if quote == '"' else value), used, ""


def _closing(body: str, quote: str) -> int:
    at = 0
    while at < len(body):
        if body[at] == "\\" and quote == '"':
            at += 2
            continue
        if body[at] == quote:
            return at
        at += 1
    return -1


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value, flags=re.S)
