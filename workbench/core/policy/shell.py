"""A shell command as rules see it: the words of each simple command it runs.

Parsed with the detector's own parser (tree-sitter-bash) and word reader, so `"git" push`
and `git push` are the same words and `git statusx` is not `git status`. A word whose value
only run time knows (a variable, a substitution) is None.

`plain` says whether the command is one simple command with known words and nothing
else (no operator, pipe, redirect or substitution): only such a command can be matched by an
allow rule on its text. Deny rules look at every simple command, also inside `$(...)`, behind
`sudo`/`env`/`nohup`-style wrappers and inside `sh -c '...'`; what they cannot see through
(an unknown program name, `eval`, an unknown `-c` script) is `opaque`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from workbench.core.safety import analyze_command
from workbench.core.safety.parser import WORD_TYPES, Node, Source, word_value
from workbench.core.safety.wrappers import wrapper_start

Words = tuple[str | None, ...]

# Programs that run the rest of their words as a command; with the options that take a value.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "time": frozenset({"-f", "-o"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"}),
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish"})
_OPAQUE_PROGRAMS = frozenset({"eval", "source", "."})
_MAX_DEPTH = 4  # sh -c 'sh -c "..."' nested deeper than this is opaque


@dataclass(frozen=True)
class ShellCommand:
    text: str  # the command, whitespace normalised
    commands: tuple[Words, ...]  # every simple command run, wrappers removed
    plain: bool  # one simple command of known words, no operator, redirect or substitution
    opaque: str  # what deny rules cannot see through ("" when nothing)
    texts: tuple[str | None, ...] = ()  # each command's words joined (None: a word unknown)


def normalise(command: str) -> str:
    return " ".join(command.split())


def split_words(text: str) -> Words:
    """The words of a rule's command text (`git "log" -n` → git, log, -n)."""
    parsed = parse(text)
    return parsed.commands[0] if len(parsed.commands) == 1 else tuple(text.split())


CACHED_CHARS = 8192  # longer commands (a heredoc of data) are parsed again, never kept


def parse(command: str) -> ShellCommand:
    return _cached(command) if len(command) <= CACHED_CHARS else _parse(command)


@functools.lru_cache(maxsize=512)
def _cached(command: str) -> ShellCommand:
    return _parse(command)


def _parse(command: str) -> ShellCommand:
    source = Source.parse(command)
    commands: list[Words] = []
    opaque: list[str] = []
    wrapped: list[bool] = []
    _collect(source.root, commands, opaque, 0, wrapped)
    if source.root.has_error:
        opaque.append("the command does not parse")
    plain = _is_plain(source.root, commands) and not any(wrapped)
    # what the detector saw run besides: inside inline code, awk, find -exec, git's lines
    commands += [c for c in analyze_command(command).ran if c not in commands and c[:1] != (None,)]
    return ShellCommand(
        normalise(command),
        tuple(commands),
        plain,
        opaque[0] if opaque else "",
        tuple(None if None in c else " ".join(c) for c in commands),  # type: ignore[arg-type]
    )


def _is_plain(root: Node, commands: list[Words]) -> bool:
    if root.has_error or len(commands) != 1 or None in commands[0]:
        return False
    statements = [c for c in root.children if c.type != "comment"]
    if len(statements) != 1 or statements[0].type != "command":
        return False
    stack = list(statements[0].children)
    while stack:
        node = stack.pop()
        if node.type in (
            "command_substitution",
            "process_substitution",
            "file_redirect",
            "herestring_redirect",
            "heredoc_redirect",
            "variable_assignment",
        ):
            return False
        stack.extend(node.children)
    return True


def _collect(
    node: Node,
    commands: list[Words],
    opaque: list[str],
    depth: int,
    wrapped: list[bool] | None = None,
) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "command":
            _simple(current, commands, opaque, depth, wrapped)
        stack.extend(reversed(current.children))


def _simple(
    node: Node, commands: list[Words], opaque: list[str], depth: int, wrapped: list[bool] | None
) -> None:
    words: list[str | None] = []
    for child in node.children:
        if child.type == "command_name":
            words.append(word_value(child.children[0]) if child.children else None)
        elif child.type in WORD_TYPES:
            words.append(word_value(child))
    if not words:
        return
    unwrapped, was_wrapped = _unwrap(tuple(words))
    if wrapped is not None:  # `sudo git push` is not plain: an allow rule names what runs
        wrapped.append(was_wrapped)
    if _split_string(unwrapped, commands, opaque, depth):
        return
    if not unwrapped:
        return
    commands.append(unwrapped)
    program = unwrapped[0]
    if program is None:
        opaque.append("the program's name is only known when it runs")
        return
    name = program.rsplit("/", 1)[-1]
    if name in _OPAQUE_PROGRAMS:
        opaque.append(f"`{name}` runs text only known when it runs")
    elif name == "git" and any(
        w and w.lower().startswith("alias.") for w in unwrapped[1:] if w is not None
    ):
        opaque.append("git runs an alias defined on its command line")
    elif name in _SHELLS:
        _shell_payload(unwrapped, commands, opaque, depth)


def _shell_payload(words: Words, commands: list[Words], opaque: list[str], depth: int) -> None:
    for i, word in enumerate(words[1:-1], start=1):
        if word is not None and word.startswith("-") and "c" in word.lstrip("-"):
            script = words[i + 1]
            if script is None or depth >= _MAX_DEPTH:
                opaque.append("a shell runs a script only known when it runs")
                return
            inner = Source.parse(script)
            if inner.root.has_error:
                opaque.append("a shell runs a script that does not parse")
            _collect(inner.root, commands, opaque, depth + 1)
            return


def _split_string(words: Words, commands: list[Words], opaque: list[str], depth: int) -> bool:
    """`env -S 'git push'`: env splits the string into the command it runs."""
    if not words or (words[0] or "").rsplit("/", 1)[-1] != "env":
        return False
    found, script = _split_script(words)
    if not found:
        return False
    if script is None or depth >= _MAX_DEPTH:
        opaque.append("env -S runs a command only known when it runs")
    else:
        _collect(Source.parse(script).root, commands, opaque, depth + 1)
    return True


def _split_script(words: Words) -> tuple[bool, str | None]:
    """Whether env's words hold -S (--split-string), and its string (None: unknown)."""
    for i, word in enumerate(words[1:], start=1):
        following = words[i + 1] if i + 1 < len(words) else None
        if word is None or not word.startswith("-"):
            continue
        if word in ("-S", "--split-string"):
            return True, following
        if word.startswith("--split-string="):
            return True, word.partition("=")[2]
        short = word[1:] if not word.startswith("--") else ""
        if "S" in short:  # `-iS 'git push'`, `-iS'git push'`
            rest = short[short.index("S") + 1 :]
            return True, rest or following
    return False, None


def _unwrap(words: Words) -> tuple[Words, bool]:
    """The command a wrapper runs (`sudo -u x git push` → git push), and whether any was.
    xargs and parallel add words read at run time: they stand as one unknown word."""
    wrapped = False
    appended = False
    while words and words[0] is not None:
        name = words[0].rsplit("/", 1)[-1]
        if name == "env" and _split_script(words)[0]:
            break  # its string is the command: read by `_split_string`
        takes = _WRAPPERS.get(name)
        if takes is None:
            start = wrapper_start(name, list(words[1:]))
            if start == -1:
                break
            wrapped = True
            appended = appended or name in ("parallel",)
            words = words[1 + start :] if start is not None else ()
            continue
        appended = appended or name == "xargs"
        wrapped = True
        i = 1
        while i < len(words):
            word = words[i]
            if word is None:
                break
            if name == "env" and "=" in word and not word.startswith("-"):
                i += 1
            elif word.startswith("-") and word != "-":
                i += 2 if word in takes else 1
            elif name in ("timeout", "nice") and i == 1 and word[:1].isdigit():
                i += 1  # timeout's duration
            else:
                break
        words = words[i:]
    if appended and words:
        words = (*words, None)
    return words, wrapped
