"""Destructive operations in code handed to an interpreter inline (`python -c`, heredocs, SQL)."""

from __future__ import annotations

import re

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


def destructive_code(language: str, code: str) -> str:
    """What destructive call `code` makes, or ""."""
    pattern = _CODE_PATTERNS.get(language)
    match = pattern.search(code) if pattern else None
    return match.group(0).strip() if match else ""


def destructive_sql(text: str) -> str:
    """The destructive statement in `text` (DROP, TRUNCATE, DELETE/UPDATE without WHERE), or ""."""
    match = _SQL.search(text)
    if match:
        return match.group(0)
    for found in _SQL_UNFILTERED.finditer(text):
        if not re.search(r"\bWHERE\b", found.group(1), re.IGNORECASE):
            return found.group(0).split()[0].upper() + " without WHERE"
    return ""
