"""Small languages whose programs ride in arguments: sed scripts, awk programs, git settings.

Each is read for what it does besides its job on text: `sed`'s `e` and `w`, awk's `system()`,
pipes and writes, git settings that name a program to run.
"""

from __future__ import annotations

import re

_SED_COMMANDS = set("{}=aicdDeFgGhHlLnNpPqQrRstTvwWxyz:#b")


def sed_danger(script: str) -> str:
    """What a sed script does besides editing text: `e` runs commands, `w` writes files."""
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;!}{":
            i += 1
        i = _sed_address(script, i)
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            break
        c = script[i]
        if c not in _SED_COMMANDS:
            return f"script it cannot read (at {script[i : i + 10]!r})"
        if c == "e":
            return "runs a command (the e command)"
        if c in "wW":
            return "writes a file (the w command)"
        if c in "sy":
            i, flags = _sed_substitute(script, i + 1, c == "s")
            if "e" in flags:
                return "runs the result as a command (s///e)"
            if "w" in flags:
                return "writes a file (s///w)"
            continue
        if c in "aicrR:btT#":  # text, file names and labels run to the end of the line
            end = script.find("\n", i)
            if c in ":btT":
                end = min(x for x in (script.find(";", i), end, n) if x >= 0)
            i = n if end < 0 else end
            continue
        i += 1
    return ""


def _sed_address(script: str, i: int) -> int:
    n = len(script)
    for _ in range(2):
        if i < n and script[i] in "/\\":
            delimiter = "/" if script[i] == "/" else (script[i + 1] if i + 1 < n else "/")
            i += 1 if script[i] == "/" else 2
            while i < n and script[i] != delimiter:
                i += 2 if script[i] == "\\" else 1
            i += 1
            while i < n and script[i] in "IM":
                i += 1
        else:
            match = re.match(r"\$|[0-9]+(?:~[0-9]+)?|\+[0-9]+|~[0-9]+", script[i:])
            if match:
                i += match.end()
        if i < n and script[i] == ",":
            i += 1
            continue
        break
    return i


def _sed_substitute(script: str, i: int, with_flags: bool) -> tuple[int, str]:
    n = len(script)
    if i >= n:
        return n, ""
    delimiter, i, parts = script[i], i + 1, 0
    while i < n and parts < 2:
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delimiter:
            parts += 1
        i += 1
    start = i
    while with_flags and i < n and script[i] not in ";\n}":
        if script[i] == "w":  # the rest of the line is the file name
            return n, script[start : i + 1]
        i += 1
    return i, script[start:i]


_AWK_SINKS = ("/dev/stdout", "/dev/stderr", "-")


def awk_danger(program: str) -> str:
    """What an awk program does besides reading: runs commands or writes files."""
    if re.search(r"\bsystem\s*\(", program):
        return "runs a command (system)"
    if re.search(r"\|\s*&?\s*getline|\bprintf?\b[^;{}]*\|", program):
        return "runs a command through a pipe"
    for match in re.finditer(r"\bprintf?\b[^;{}]*?>>?\s*(\"([^\"]*)\"|[^\s;}]+)", program):
        if match.group(2) not in _AWK_SINKS:
            return f"writes to {match.group(1)}"
    return ""


GIT_PROGRAM_KEYS = re.compile(
    r"^(?:core\.(?:sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)|diff\.external|"
    r"sequence\.editor|pager\..*|include\.path|includeif\..*|interactive\.difffilter|"
    r"web\.browser|.*\.(?:textconv|command|cmd|clean|smudge|process|driver|program|helper|"
    r"uploadpack|receivepack|packobjectshook|path))$"
)
