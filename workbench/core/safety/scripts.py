"""Small languages whose programs ride in arguments: sed scripts, awk programs, git settings.

Each is read for what it does besides its job on text: `sed`'s `e` and `w`, awk's `system()`,
pipes and writes, git settings that name a program to run.
"""

from __future__ import annotations

import re

from workbench.core.safety.inline_code import MAX_CODE, blank_strings, call_arguments

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


def _runs(what: str, command: str | None) -> tuple[str, str | None, None]:
    return (what if command is not None else f"{what}, computed at run time", command, None)


GIT_PROGRAM_KEYS = re.compile(
    r"^(?:core\.(?:sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)|diff\.external|"
    r"sequence\.editor|pager\..*|include\.path|includeif\..*|interactive\.difffilter|"
    r"web\.browser|.*\.(?:textconv|command|cmd|clean|smudge|process|driver|program|helper|"
    r"uploadpack|receivepack|packobjectshook|path))$"
)


def awk_effects(program: str) -> list[tuple[str, str | None, str | None]]:
    """An awk program's commands and writes: (what, command it runs, file it writes), with
    the command or file None when the program computes it. Strings are set aside first, so
    a string that mentions `system(` runs nothing."""
    if len(program) > MAX_CODE:
        return [(f"is {len(program)} characters long, too long to check here", None, None)]
    blank, strings = blank_strings("awk", program)
    by_end = {s.end: s for s in strings}
    by_start = {s.start: s for s in strings}
    found: list[tuple[str, str | None, str | None]] = []
    if re.search(r"@load\b", blank):  # gawk's extensions add functions (unlink, fork...)
        found.append(("loads a gawk extension, which may change anything", None, None))
    for match in re.finditer(r"\bsystem\s*\(", blank):
        found.append(_runs("runs a command (system)", call_arguments(blank, strings, match.end())))
    for match in re.finditer(r"\|\s*&?\s*getline", blank):
        before = blank[: match.start()].rstrip()
        source = by_end.get(len(before))  # the string just before `| getline`
        found.append(_runs("runs a command (getline)", source.value if source else None))
    for match in re.finditer(r"\bprintf?\b[^;{}]*?(\|&?|>>?)\s*", blank):
        target = by_start.get(match.end())
        value = target.value if target else None
        if match.group(1).startswith("|"):
            found.append(_runs("runs a command through a pipe", value))
        elif value not in _AWK_SINKS:
            verb = "appends to" if match.group(1) == ">>" else "writes to"
            found.append((f"{verb} {value or 'a file named at run time'}", None, value or ""))
    return found
