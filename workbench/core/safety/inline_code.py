"""Destructive operations in code handed to an interpreter inline (`python -c`, heredocs, SQL)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.core.safety.python_code import judge_python

# Calls that delete, overwrite or run other programs, per interpreter family.
_CODE_PATTERNS = {
    "python": re.compile(
        r"\b(?:os\.(?:remove|unlink|rmdir|removedirs|truncate|rename|replace|system|popen|"
        r"exec\w*|spawn\w*|kill|killpg|chmod|chown)|shutil\.(?:rmtree|move|copy\w*)|"
        r"subprocess|\.unlink\(|\.rmdir\(|\.write_(?:text|bytes)\(|\.rename\(|\.replace\(|"
        r"\.truncate\(|open\([^)]*['\"](?:w|a|x|r\+)[bt+]*['\"])"
    ),
    "perl": re.compile(
        r"\b(?:unlink|rmdir|rmtree|remove_tree|system|exec|rename|truncate)\b|"
        r"open\s*\(?[^;]*,\s*['\"]?\+?>|`"
    ),
    "ruby": re.compile(
        r"\b(?:File\.(?:delete|unlink|write|truncate|rename)|FileUtils\.\w+|Dir\.(?:delete|rmdir)"
        r"|system|exec|spawn|IO\.popen)\b|`|%x"
    ),
    "node": re.compile(
        r"\b(?:fs(?:\.promises)?\.(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync|writeFile|"
        r"writeFileSync|truncate|truncateSync|rename|renameSync|copyFile\w*)|child_process|"
        r"execSync|spawnSync|exec\(|spawn\(|Deno\.(?:remove|writeTextFile|writeFile|run))|"
        r"\.(?:rmSync|unlinkSync|rmdirSync|writeFileSync|truncateSync|renameSync)\("
    ),
    "php": re.compile(
        r"\b(?:unlink|rmdir|file_put_contents|fopen|system|exec|shell_exec|passthru"
        r"|proc_open|popen|rename)\s*\(|`"
    ),
}

INTERPRETERS = {
    **{name: "python" for name in ("python", "python2", "python3", "pypy", "pypy3")},
    "perl": "perl",
    "ruby": "ruby",
    **{name: "node" for name in ("node", "nodejs", "deno", "bun")},
    "php": "php",
}

_SQL = re.compile(
    r"\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA|INDEX|VIEW|USER|ROLE|COLLECTION)|"
    r"TRUNCATE(?:\s+TABLE)?\s+[\w.\"`]+|ALTER\s+TABLE\s+\S+\s+DROP|FLUSHALL|FLUSHDB|"
    r"dropDatabase|\.drop\(\))",
    re.IGNORECASE,
)
_SQL_UNFILTERED = re.compile(
    r"\b(?:DELETE\s+FROM|UPDATE\s+[\w.\"`]+\s+SET)\b([^;]*)", re.IGNORECASE | re.DOTALL
)

DB_CLIENTS = frozenset(
    {
        "psql",
        "mysql",
        "mariadb",
        "sqlite3",
        "sqlcmd",
        "clickhouse-client",
        "duckdb",
        "redis-cli",
        "mongo",
        "mongosh",
        "cqlsh",
    }
)


def language_of(program: str) -> str | None:
    if program in INTERPRETERS:
        return INTERPRETERS[program]
    if re.fullmatch(r"python\d(?:\.\d+)?", program):
        return "python"
    return None


@dataclass(frozen=True, slots=True)
class CodeFinding:
    what: str  # for a person: the call, or why the code cannot be followed
    fork_bomb: bool = False


# Code that builds what it runs at run time: it cannot be read, so it asks.
_DYNAMIC = {
    "perl": re.compile(r"\beval\s*[\$'\"q(]|\bdo\s+[\$'\"]|\brequire\s+\$|\bqx\b|\bsyscall\b"),
    "ruby": re.compile(
        r"\b(?:eval|instance_eval|class_eval|module_eval|send|public_send|__send__|const_get|"
        r"method|load|require)\b\s*\(?\s*[^'\"\s]|\bKernel\."
    ),
    "node": re.compile(
        r"\b(?:eval|Function|setTimeout|setInterval)\s*\(\s*[^)\s]|\bimport\s*\(|"
        r"\brequire\s*\(\s*[^'\"\s]|process\.binding|"
        r"\b(?:fs|process|child_process|globalThis|global|module|require\([^)]*\))\s*\["
    ),
    "php": re.compile(r"\b(?:eval|assert|create_function|call_user_func\w*|include|require)\b"),
}
_FORK_LOOP = re.compile(
    r"\bfork\b[^;]*\b(?:while|until|for|loop)\b|\b(?:while|until|loop|for)\b[^;]*\bfork\b"
)


def judge_code(language: str, code: str) -> CodeFinding | None:
    """What `code` does that needs approval: a destructive call, or code it cannot follow."""
    if language == "python":
        found = judge_python(code)
        return CodeFinding(found.what, found.fork_bomb) if found else None
    if language in ("perl", "ruby") and _FORK_LOOP.search(code):
        return CodeFinding("forks in a loop: a fork bomb", fork_bomb=True)
    pattern = _CODE_PATTERNS.get(language)
    match = pattern.search(code) if pattern else None
    if match:
        return CodeFinding(match.group(0).strip())
    dynamic = _DYNAMIC.get(language)
    match = dynamic.search(code) if dynamic else None
    if match:
        return CodeFinding(f"{match.group(0).strip()}: code it cannot follow")
    return None


def destructive_sql(text: str) -> str:
    """The destructive statement in `text` (DROP, TRUNCATE, DELETE/UPDATE without WHERE), or ""."""
    match = _SQL.search(text)
    if match:
        return match.group(0)
    for found in _SQL_UNFILTERED.finditer(text):
        if not re.search(r"\bWHERE\b", found.group(1), re.IGNORECASE):
            return found.group(0).split()[0].upper() + " without WHERE"
    return ""
