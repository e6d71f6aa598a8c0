"""Which shell commands may run without asking.

Until the approval broker exists there is no one to ask, so the rule is strict: a command
runs unasked only when every simple command in it is an inspection command from a short
read-only list, with no substitutions, no redirections into files and nothing this module
cannot read. Everything else needs approval, and the `terminal` tool refuses it. This errs
towards refusing: a refused harmless command costs a retry, a wrongly allowed one costs data.
"""

from __future__ import annotations

import re
import shlex

# Programs that only read and print. Options that make them write are listed below.
READ_ONLY_PROGRAMS = frozenset(
    {
        "basename",
        "cat",
        "cmp",
        "column",
        "comm",
        "cut",
        "date",
        "df",
        "diff",
        "dirname",
        "du",
        "echo",
        "env",
        "false",
        "file",
        "fmt",
        "fold",
        "grep",
        "egrep",
        "fgrep",
        "head",
        "hostname",
        "id",
        "jq",
        "less",
        "ls",
        "md5sum",
        "more",
        "nl",
        "od",
        "printenv",
        "printf",
        "pwd",
        "readlink",
        "realpath",
        "rg",
        "seq",
        "sha1sum",
        "sha256sum",
        "sleep",
        "sort",
        "stat",
        "tac",
        "tail",
        "test",
        "tr",
        "tree",
        "true",
        "type",
        "uname",
        "uniq",
        "uptime",
        "wc",
        "which",
        "whoami",
        "[",
    }
)

# Option prefixes that turn a read-only program into a writer.
WRITING_OPTIONS = {
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "env": (),  # `env CMD` runs CMD: handled as a wrapper below
}

GIT_READ_ONLY = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "blame",
        "describe",
        "shortlog",
        "reflog",
        "grep",
    }
)

# Redirections that write nowhere that matters.
_HARMLESS_REDIRECT = re.compile(r"\s*(?:[12]?>\s*/dev/null|2>&1|>&2|1>&2)(?=\s|$|[|;&])")
_OPERATORS = {"|", "||", "&&", ";", "\n"}


def needs_approval(command: str) -> str:
    """Why `command` may not run unasked, or "" when it may."""
    if not command or not command.strip():
        return "empty command"
    if "`" in command or "$(" in command or "<(" in command or ">(" in command:
        return "command substitution cannot be checked"
    text = _HARMLESS_REDIRECT.sub(" ", command)
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        lexer.whitespace = " \t\r"
        tokens = list(lexer)
    except ValueError as exc:
        return f"cannot parse the command: {exc}"
    for words in _simple_commands(tokens):
        reason = _judge(words)
        if reason:
            return reason
    return ""


def _simple_commands(tokens: list[str]) -> list[list[str]]:
    commands, current = [], []
    for token in tokens:
        if token in _OPERATORS:
            commands.append(current)
            current = []
        else:
            current.append(token)
    commands.append(current)
    return [c for c in commands if c]


def _judge(words: list[str]) -> str:
    for word in words:
        if set(word) <= set("<>&|;") and word:
            return f"redirection or background operator '{word}' needs approval"
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words = words[1:]  # leading VAR=value assignments
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return "" if sub in GIT_READ_ONLY else f"'git {sub}' is not a read-only git command"
    if program not in READ_ONLY_PROGRAMS:
        return f"'{program}' is not on the read-only list"
    if program == "env" and any(not w.startswith("-") and "=" not in w for w in words[1:]):
        return "'env' running another program needs approval"
    for option in WRITING_OPTIONS.get(program, ()):
        if any(w.startswith(option) for w in words[1:]):
            return f"'{program} {option}' writes a file"
    return ""
