"""SQL given to a database client, read with a real SQL parser (sqlglot) statement by statement.

A statement is judged by what it does, never by the words in it: `DELETE ... WHERE` still
deletes rows, a `SELECT` whose string mentions `DROP TABLE` only reads, `EXPLAIN` without
`ANALYZE` runs nothing. The clients' own commands (psql's `\\!`, sqlite3's `.shell`) are read
too. What cannot be parsed, and statements whose effect cannot be known (`CALL`, `DO`,
`EXECUTE`), fail closed. sqlglot is heavy, so it is imported only when SQL is there to read.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any

DIALECTS = {
    "psql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite3": "sqlite",
    "duckdb": "duckdb",
    "sqlcmd": "tsql",
    "clickhouse-client": "clickhouse",
    "clickhouse": "clickhouse",
    "cqlsh": None,
}


@dataclass(frozen=True, slots=True)
class SqlEffect:
    what: str  # for a person: what the statement does, or why it cannot be checked
    shell: str | None = None  # a shell command the client runs (judged as shell code)
    writes: str | None = None  # a file the client or server writes
    unknown: bool = False  # not understood (it asks), rather than known to destroy data
    reads: str | None = None  # a file the client or server reads (a credential asks)


# Statements sqlglot keeps as raw commands that change nothing.
_HARMLESS_COMMANDS = frozenset(
    {
        "SHOW",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "CHECKPOINT",
        "LISTEN",
        "UNLISTEN",
        "NOTIFY",
        "LOCK",
        "REFRESH",
        "CLUSTER",
        "DISCARD",
        "RESET",
        "DEALLOCATE",
        "FETCH",
        "CLOSE",
        "DECLARE",
        "MOVE",
        "COMMENT",
        "START",
        "SAVEPOINT",
        "RELEASE",
        "ABORT",
        "END",
        "FLUSH",
        "OPTIMIZE",
        "CHECK",
        "CHECKSUM",
        "HELP",
        "SECURITY",
        "DESC",
        "DESCRIBE",
        "EXISTS",
        "WATCH",
    }
)
# Statements kept as raw commands that destroy or replace data.
_DESTRUCTIVE_COMMANDS = {
    "REPLACE": "REPLACE overwrites rows",
    "KILL": "KILL ends a session",
    "SHUTDOWN": "SHUTDOWN stops the server",
    "PURGE": "PURGE deletes logs",
}
# Functions that act outside the query: end sessions, delete or write files, run programs.
_ACTING_FUNCTIONS = {
    "pg_terminate_backend": "ends other sessions",
    "pg_cancel_backend": "cancels other sessions' queries",
    "lo_unlink": "deletes a large object",
    "lo_export": "writes a server file",
    "pg_file_write": "writes a server file",
    "pg_file_unlink": "deletes a server file",
    "pg_drop_replication_slot": "drops a replication slot",
    "load_extension": "loads native code",
    "edit": "runs an editor program",
    "xp_cmdshell": "runs a shell command",
    "sys_exec": "runs a shell command",
    "sys_eval": "runs a shell command",
    "dblink_exec": "runs SQL on another server",
}
_EXPLAIN = re.compile(
    r"^\s*(?:\((?P<options>[^)]*)\)|(?P<words>(?:(?:ANALYZE|ANALYSE|VERBOSE|QUERY\s+PLAN|FORMAT\s*=?\s*\w+|EXTENDED|PARTITIONS)\s+)*))(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)


@functools.cache
def _sqlglot() -> Any:
    import sqlglot

    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its fallbacks would print warnings
    return sqlglot


def judge_sql(text: str, client: str) -> list[SqlEffect]:
    """Everything in `text` (SQL and the client's own commands) that needs approval."""
    effects: list[SqlEffect] = []
    sql_lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if client == "psql" and stripped.startswith("\\"):
            effects += _psql_meta(stripped)
        elif client in ("sqlite3", "duckdb") and stripped.startswith("."):
            effects += _dot_command(stripped)
        elif client in ("mysql", "mariadb") and re.match(r"(?i)(\\!|system\s)", stripped):
            effects.append(
                SqlEffect(
                    "runs a shell command", shell=re.sub(r"(?i)^(\\!|system)\s*", "", stripped)
                )
            )
        else:
            sql_lines.append(line)
    sql = "\n".join(sql_lines)
    if sql.strip() and not re.fullmatch(r"[\s;]*", _strip_comments(sql)):
        effects += _statements(sql, DIALECTS.get(client))
    return effects


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?\*/", "", sql, flags=re.DOTALL)


_MAX_SQL = 64 * 1024  # past this a parse takes seconds: the approval would wait on it


def _statements(sql: str, dialect: str | None) -> list[SqlEffect]:
    if len(sql) > _MAX_SQL:
        return [SqlEffect(f"{len(sql)} characters of SQL, too long to check here", unknown=True)]
    try:
        sqlglot = _sqlglot()
    except ImportError:  # an environment installed before the parser was a dependency
        return [SqlEffect("SQL, and the SQL parser (sqlglot) is not installed", unknown=True)]
    try:
        statements = sqlglot.parse(sql, read=dialect)
    except Exception:  # sqlglot raises its own ParseError, TokenError and the odd ValueError
        return [SqlEffect("SQL that does not parse, so it cannot be checked", unknown=True)]
    effects: list[SqlEffect] = []
    for statement in statements:
        if statement is not None:
            effects += _judge(statement, dialect)
    return effects


def _judge(statement: Any, dialect: str | None) -> list[SqlEffect]:
    exp = _sqlglot().exp
    if isinstance(statement, exp.Command):
        return _command(str(statement.this).upper(), _command_rest(statement), dialect)
    effects: list[SqlEffect] = []
    for node in statement.walk():
        found = _node(node, exp)
        if found is not None:
            effects.append(found)
    return effects


def _command_rest(statement: Any) -> str:
    rest = statement.args.get("expression")
    return str(rest.this) if rest is not None and hasattr(rest, "this") else ""


def _node(node: Any, exp: Any) -> SqlEffect | None:
    if isinstance(node, exp.Drop):
        kind = str(node.args.get("kind") or "object").upper()
        return SqlEffect(f"DROP {kind}")
    if isinstance(node, exp.Delete):
        return SqlEffect("DELETE removes rows" + ("" if node.args.get("where") else " (every row)"))
    if isinstance(node, exp.Update):
        return SqlEffect(
            "UPDATE overwrites rows" + ("" if node.args.get("where") else " (every row)")
        )
    if isinstance(node, exp.TruncateTable):
        return SqlEffect("TRUNCATE empties tables")
    if isinstance(node, exp.Merge):
        return SqlEffect("MERGE changes or deletes rows")
    if isinstance(node, exp.Kill):
        return SqlEffect("KILL ends a session")
    if isinstance(node, exp.Insert):
        return _insert(node)
    if isinstance(node, exp.Create) and node.args.get("replace"):
        return SqlEffect("CREATE OR REPLACE replaces an existing object")
    if isinstance(node, exp.Copy) and not node.args.get("kind"):
        return _copy_to(node)
    if isinstance(node, exp.Pragma) and "writable_schema" in node.sql().lower():
        return SqlEffect("PRAGMA writable_schema lets the schema be corrupted")
    if isinstance(node, exp.Attach):
        return _attach(node, exp)
    if isinstance(node, exp.Anonymous | exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        if name in _FILE_FUNCTIONS:
            return _file_function(name, node, exp)
        if name in _ACTING_FUNCTIONS:
            return SqlEffect(f"{name}() {_ACTING_FUNCTIONS[name]}")
    return None


# sqlite3's shell functions on files: the first argument is the file
_FILE_FUNCTIONS = frozenset({"writefile", "readfile"})


def _file_function(name: str, node: Any, exp: Any) -> SqlEffect:
    """`writefile('path', data)` writes path; `readfile('path')` reads it."""
    args = list(node.expressions) if isinstance(node, exp.Anonymous) else []
    first = args[0] if args else None
    path = first.this if isinstance(first, exp.Literal) and first.is_string else None
    if path is None:
        return SqlEffect(f"{name}() of a file named at run time", unknown=True)
    if name == "writefile":
        return SqlEffect(f"writefile() writes {path}", writes=path)
    return SqlEffect(f"readfile() reads {path}", reads=path)


def _attach(node: Any, exp: Any) -> SqlEffect | None:
    """`ATTACH DATABASE 'path' AS x` opens path, creating it if it is not there, for the
    statements after it to write."""
    target = node.this.this if isinstance(node.this, exp.Alias) else node.this
    if not isinstance(target, exp.Literal) or not target.is_string:
        return SqlEffect("ATTACH of a file named at run time", unknown=True)
    path = re.sub(r"^file:(?://)?|\?.*$", "", target.this)
    if path in ("", ":memory:"):
        return None
    if re.search(r"[?&]mode=ro\b", target.this):
        return SqlEffect(f"ATTACH reads {path}", reads=path)
    return SqlEffect(f"ATTACH opens or creates {path} to write", writes=path)


def _vacuum(rest: str) -> list[SqlEffect]:
    """`VACUUM [schema] INTO 'path'` writes a copy of the database to path."""
    if not re.search(r"(?i)\bINTO\b", rest):
        return []
    match = re.match(r"(?is)^\s*(?:\w+\s+)?INTO\s+(['\"])(.*?)\1\s*;?\s*$", rest)
    if match is None:
        return [SqlEffect("VACUUM INTO a file named at run time", unknown=True)]
    return [SqlEffect(f"VACUUM INTO writes {match.group(2)}", writes=match.group(2))]


def _insert(node: Any) -> SqlEffect | None:
    if node.args.get("overwrite"):
        return SqlEffect("INSERT OVERWRITE replaces a table's rows")
    if str(node.args.get("alternative") or "").upper() == "REPLACE":
        return SqlEffect("INSERT OR REPLACE overwrites rows")
    conflict = node.args.get("conflict")
    if conflict is not None and (
        conflict.args.get("duplicate") or "UPDATE" in str(conflict.args.get("action")).upper()
    ):
        return SqlEffect("INSERT ... ON CONFLICT DO UPDATE overwrites rows")
    return None


def _copy_to(node: Any) -> SqlEffect:
    files = node.args.get("files") or []
    names = [str(f.this) for f in files]
    if any(n.upper() == "PROGRAM" for n in names):
        params = node.args.get("params") or []
        program = str(params[0].this.this) if params and params[0].this is not None else None
        return SqlEffect("COPY ... TO PROGRAM runs a program", shell=program)
    target = names[0] if names else None
    if target is None or target.upper() in ("STDOUT", "STDIN"):
        return None  # type: ignore[return-value]  # to the client: writes nothing
    return SqlEffect(f"COPY ... TO writes the server file {target}", writes=target)


def _command(keyword: str, rest: str, dialect: str | None) -> list[SqlEffect]:
    if keyword == "EXPLAIN":
        return _explain(rest, dialect)
    if keyword in _DESTRUCTIVE_COMMANDS:
        return [SqlEffect(_DESTRUCTIVE_COMMANDS[keyword])]
    if keyword == "VACUUM":
        return _vacuum(rest)
    if keyword in _HARMLESS_COMMANDS:
        return []
    if keyword == "PREPARE":
        body = re.split(r"(?i)\bAS\b", rest, maxsplit=1)
        return (
            _statements(body[1], dialect)
            if len(body) == 2
            else [SqlEffect("PREPARE that cannot be read", unknown=True)]
        )
    return [SqlEffect(f"{keyword} runs code whose effect cannot be checked", unknown=True)]


def _explain(rest: str, dialect: str | None) -> list[SqlEffect]:
    """EXPLAIN only plans, unless ANALYZE makes it run the statement."""
    match = _EXPLAIN.match(rest)
    if match is None:
        return [SqlEffect("EXPLAIN that cannot be read", unknown=True)]
    options = (match.group("options") or "") + " " + (match.group("words") or "")
    analyze = re.search(r"(?i)\bANALY[SZ]E\b(?!\s*(?:false|off|0)\b)", options)
    if not analyze:
        return []
    return _statements(match.group("rest"), dialect)


def _psql_meta(line: str) -> list[SqlEffect]:
    """psql's backslash commands: most only show things; some write files or run programs."""
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    if name == "!":
        return [SqlEffect("psql \\! runs a shell command", shell=arg or None)]
    if name in ("o", "out", "w", "write", "g", "gx", "copy", "lo_export"):
        if name == "copy" and not re.search(r"(?i)\bto\b", arg):
            return []  # \copy ... from: loads rows
        target = arg.split()[-1] if arg else ""
        if target.startswith("|") or re.search(r"(?i)\bprogram\b", arg):
            return [
                SqlEffect(
                    f"psql \\{name} runs a program", shell=target.lstrip("|").strip("'") or None
                )
            ]
        if not target or (name in ("g", "gx") and not arg):
            return []
        return [SqlEffect(f"psql \\{name} writes {target}", writes=target.strip("'"))]
    if name in ("i", "include", "ir", "include_relative", "gexec"):
        return [SqlEffect(f"psql \\{name} runs SQL that cannot be checked here", unknown=True)]
    if name in ("lo_unlink", "password"):
        return [SqlEffect(f"psql \\{name} deletes or changes data")]
    if re.fullmatch(r"[a-zA-Z?]+[+S]*", name) or name in ("?", "h", "q"):
        return []  # \d, \dt+, \l, \x, \timing, \c, \conninfo, \echo, \set, \pset, \q ...
    return [SqlEffect(f"psql \\{name}: a command that cannot be checked", unknown=True)]


_DOT_HARMLESS = frozenset(
    [
        "tables",
        "schema",
        "headers",
        "header",
        "mode",
        "quit",
        "exit",
        "dump",
        "indexes",
        "indices",
        "databases",
        "help",
        "show",
        "timer",
        "width",
        "nullvalue",
        "separator",
        "print",
        "dbinfo",
        "eqp",
        "explain",
        "stats",
        "changes",
        "echo",
        "bail",
        "fullschema",
        "lint",
        "selftest",
        "sha3sum",
        "prompt",
        "limit",
        "parameter",
        "progress",
        "scanstats",
        "vfsinfo",
        "vfslist",
        "vfsname",
        "import",
        "recover",
        "connection",
        "cd",
        "timeout",
        "auth",
        "binary",
        "crnl",
        "expert",
        "filectrl",
        "imposter",
        "columns",
        "maxrows",
        "rows",
    ]
)


def _dot_command(line: str) -> list[SqlEffect]:
    """sqlite3's (and duckdb's) dot commands."""
    parts = line[1:].split(None, 1)
    name = parts[0].lower() if parts else ""
    arg = parts[1].strip() if len(parts) > 1 else ""
    if name in ("shell", "system"):
        return [SqlEffect(f".{name} runs a shell command", shell=arg or None)]
    if name in ("output", "once", "log", "trace", "save", "backup", "clone"):
        target = arg.split()[-1] if arg else ""
        if not target or target in ("stdout", "stderr", "off", "-x", "-e", "-w"):
            return []
        if target.startswith("|"):
            return [SqlEffect(f".{name} runs a program", shell=target[1:].strip() or None)]
        return [SqlEffect(f".{name} writes {target}", writes=target.strip("'\""))]
    if name in ("restore", "load", "read", "open", "archive", "ar", "excel"):
        if name == "open" and "--new" not in arg and "--readonly" not in arg:
            return []
        return [SqlEffect(f".{name} changes the database or runs what cannot be checked")]
    if name in _DOT_HARMLESS:
        return []
    return [SqlEffect(f".{name}: a command that cannot be checked", unknown=True)]
