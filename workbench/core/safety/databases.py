"""Database clients, key-value stores and the framework commands that wipe data.

SQL clients (`psql -c`, `mysql -e`, `sqlite3 DB "..."`, and SQL on standard input) have their
SQL read by `sql.judge_sql`; SQL in a file they are told to run cannot be read here, so it
asks. Key-value stores (redis-cli, memcached spoken to through nc) and MongoDB shells are
judged by the command or method they send; framework tasks (rails db:drop, manage.py flush,
prisma migrate reset, alembic downgrade...) by the task.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence, Set
from typing import Any

from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

Node = Any
Rule = Callable[[Context, Cmd], None]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn

    return register


# -- SQL clients ----------------------------------------------------------------------------

# Per client: options whose value is SQL, options whose value is a file of SQL, options that
# take some other value, and how many operands come before SQL operands (None: no SQL operands).
_CLIENTS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], int | None]] = {
    "psql": (
        frozenset({"-c", "--command"}),
        frozenset({"-f", "--file"}),
        frozenset(
            [
                "-d",
                "--dbname",
                "-h",
                "--host",
                "-p",
                "--port",
                "-U",
                "--username",
                "-v",
                "--set",
                "--variable",
                "-o",
                "--output",
                "-L",
                "--log-file",
                "-F",
                "--field-separator",
                "-R",
                "--record-separator",
                "-P",
                "--pset",
                "-T",
            ]
        ),
        None,
    ),
    "mysql": (
        frozenset({"-e", "--execute", "--init-command"}),
        frozenset(),
        frozenset(
            [
                "-u",
                "--user",
                "-h",
                "--host",
                "-P",
                "--port",
                "-D",
                "--database",
                "-S",
                "--socket",
                "--default-character-set",
                "--defaults-file",
                "--defaults-extra-file",
                "--login-path",
                "--tee",
                "--pager",
                "--protocol",
            ]
        ),
        None,
    ),
    "sqlite3": (
        frozenset({"-cmd", "--cmd"}),
        frozenset({"-init", "--init"}),
        frozenset(
            [
                "-separator",
                "-nullvalue",
                "-newline",
                "-vfs",
                "-maxsize",
                "-mmap",
                "-lookaside",
                "-pagecache",
                "-heap",
                "-escape",
                "--separator",
                "--nullvalue",
                "--newline",
                "--vfs",
            ]
        ),
        1,
    ),
    "duckdb": (
        frozenset({"-c", "-s", "-cmd"}),
        frozenset({"-init", "-f"}),
        frozenset({"-separator", "-nullvalue", "-newline"}),
        1,
    ),
    "sqlcmd": (
        frozenset({"-Q", "-q"}),
        frozenset({"-i"}),
        frozenset(
            [
                "-d",
                "-S",
                "-U",
                "-P",
                "-H",
                "-l",
                "-t",
                "-o",
                "-s",
                "-w",
                "-h",
                "-v",
                "-W",
                "-f",
                "-a",
                "-c",
                "-L",
                "-z",
                "-Z",
            ]
        ),
        None,
    ),
    "clickhouse-client": (
        frozenset({"-q", "--query"}),
        frozenset({"--queries-file"}),
        frozenset(
            [
                "-d",
                "--database",
                "-h",
                "--host",
                "--port",
                "-u",
                "--user",
                "--password",
                "--format",
                "-f",
            ]
        ),
        None,
    ),
    "cqlsh": (
        frozenset({"-e", "--execute"}),
        frozenset({"-f", "--file"}),
        frozenset(
            [
                "-u",
                "--username",
                "-p",
                "--password",
                "-k",
                "--keyspace",
                "--cqlversion",
                "--encoding",
            ]
        ),
        None,
    ),
}
_CLIENTS["mariadb"] = _CLIENTS["mysql"]
SQL_CLIENTS = frozenset(_CLIENTS)
KV_CLIENTS = frozenset({"redis-cli", "valkey-cli", "keydb-cli", "mongo", "mongosh"})
DB_CLIENTS = SQL_CLIENTS | KV_CLIENTS


class _ClientArgs:
    """What a client's arguments hold: SQL texts, files of SQL, and whether stdin is SQL."""

    def __init__(self, cmd: Cmd) -> None:
        sql_opts, file_opts, value_opts, sql_after = _CLIENTS[cmd.name]
        self.sql: list[str | None] = []
        self.files: list[str | None] = []
        self.flags: set[str] = set()
        self.writes: list[str | None] = []
        operands: list[str | None] = []
        args, i = cmd.args, 0
        while i < len(args):
            arg = args[i]
            nxt = args[i + 1] if i + 1 < len(args) else None
            name, eq, value = (arg or "").partition("=")
            if arg is None or not arg.startswith("-") or arg == "-":
                operands.append(arg)
            elif name in sql_opts | file_opts | value_opts and eq and name.startswith("--"):
                self._take(name, value, sql_opts, file_opts)
            elif arg in sql_opts | file_opts | value_opts:
                self._take(arg, nxt, sql_opts, file_opts)
                i += 1
            elif cmd.name in ("mysql", "mariadb") and re.match(r"-e.", arg):
                self.sql.append(arg[2:])  # -e"DROP ...": the value attached
            elif (
                re.fullmatch(r"-[A-Za-z]{2,}", arg)
                and f"-{arg[-1]}" in sql_opts | file_opts | value_opts
            ):
                self.flags.update(arg[1:-1])  # `-qtAc SQL`: flags, then an option and its value
                self._take(f"-{arg[-1]}", nxt, sql_opts, file_opts)
                i += 1
            else:
                self.flags.add(arg.lstrip("-"))
            i += 1
        if sql_after is not None:
            self.sql += operands[sql_after:]
        self.operands = operands
        self.stdin = (
            not self.sql and not self.files and not self.flags & {"l", "list", "version", "V"}
        )

    def _take(
        self, option: str, value: str | None, sql_opts: frozenset[str], file_opts: frozenset[str]
    ) -> None:
        if option in sql_opts:
            self.sql.append(value)
        elif option in file_opts:
            if value in ("-", "/dev/stdin"):
                return
            self.files.append(value)
        elif option in ("-o", "--output", "-L", "--log-file", "--tee"):
            self.writes.append(value)


def judge_sql_text(
    ctx: Context, node: Node, client: str, text: str | None, flags: Set[str] = frozenset()
) -> None:
    """Report what the SQL `text` given to `client` does."""
    from workbench.core.safety.sql import judge_sql

    if text is None:
        ctx.flag("database", f"{client} runs SQL computed at run time", node, opaque=True)
        return
    readonly = bool({"readonly", "safe"} & set(flags))
    for effect in judge_sql(text, client):
        if (
            effect.shell is not None
            or "runs a shell command" in effect.what
            or "runs a program" in effect.what
        ):
            if "safe" in flags:
                continue
            if effect.shell is None:
                ctx.flag("database", f"{client}: {effect.what}", node)
            else:
                ctx.shell_payload(node, effect.shell)
        elif effect.writes is not None:
            ctx.place(node, effect.writes, f"{client} writes")
            ctx.flag("overwrite", f"{client}: {effect.what}", node, writes=(effect.writes,))
        elif effect.reads is not None:
            ctx.reads(node, client, [effect.reads])  # `readfile('~/.ssh/id_rsa')`
        elif readonly and not effect.unknown:
            continue  # a read-only connection: the statement fails before it changes anything
        else:
            severity = Severity.NORMAL if effect.unknown else Severity.HIGH
            ctx.flag("database", f"{client}: {effect.what}", node, severity, opaque=effect.unknown)


@rule(*sorted(SQL_CLIENTS))
def _sql_client(ctx: Context, cmd: Cmd) -> None:
    parsed = _ClientArgs(cmd)
    for text in parsed.sql:
        judge_sql_text(ctx, cmd.node, cmd.name, text, parsed.flags)
    for path in parsed.files:
        ctx.flag(
            "database",
            f"{cmd.name} runs the SQL in {path or 'a file'}, which cannot be checked here",
            cmd.node,
            opaque=True,
        )
    for path in parsed.writes:
        if path not in (None, "-", "/dev/null"):
            ctx.place(cmd.node, path, f"{cmd.name} writes")


def reads_sql_from_stdin(cmd: Cmd) -> bool:
    if cmd.name in SQL_CLIENTS:
        return _ClientArgs(cmd).stdin
    return cmd.name in KV_CLIENTS and not _kv_has_command(cmd)


def judge_input(ctx: Context, node: Node, cmd: Cmd, text: str | None, source: str) -> None:
    """`cmd` (a database client) reads `text` on standard input; None: from somewhere unread."""
    if not reads_sql_from_stdin(cmd):
        return
    if text is None:
        reason = f"{cmd.name} runs what {source} gives it, which cannot be checked"
        ctx.flag("database", reason, node, opaque=True)
    elif cmd.name in SQL_CLIENTS:
        judge_sql_text(ctx, node, cmd.name, text, _ClientArgs(cmd).flags)
    elif cmd.name in ("mongo", "mongosh"):
        _judge_mongo(ctx, node, cmd.name, text)
    else:
        for line in text.splitlines():
            _judge_kv_words(ctx, node, cmd.name, line.split())


# -- key-value stores and document databases -------------------------------------------------

_KV_VALUE_OPTIONS = frozenset(
    [
        "-h",
        "-p",
        "-s",
        "-a",
        "-u",
        "-n",
        "-r",
        "-i",
        "-d",
        "-D",
        "-t",
        "--user",
        "--pass",
        "--askpass",
        "--pattern",
        "--count",
        "--cacert",
        "--cacertdir",
        "--cert",
        "--key",
        "--sni",
        "--tls-ciphers",
        "--quoted-pattern",
        "--memkeys-samples",
        "--rdb",
        "--functions-rdb",
        "--eval",
        "--replica",
        "--intrinsic-latency",
        "--lru-test",
        "--cluster",
    ]
)
# Commands that delete or replace data, or change how the server runs.
_KV_DESTRUCTIVE = frozenset(
    [
        "FLUSHALL",
        "FLUSHDB",
        "DEL",
        "UNLINK",
        "GETDEL",
        "HDEL",
        "LREM",
        "LPOP",
        "RPOP",
        "LMPOP",
        "BLPOP",
        "BRPOP",
        "LTRIM",
        "SREM",
        "SPOP",
        "ZREM",
        "ZPOPMIN",
        "ZPOPMAX",
        "ZMPOP",
        "ZREMRANGEBYSCORE",
        "ZREMRANGEBYRANK",
        "ZREMRANGEBYLEX",
        "XDEL",
        "XTRIM",
        "SHUTDOWN",
        "SWAPDB",
        "MOVE",
        "MIGRATE",
        "REPLICAOF",
        "SLAVEOF",
        "RESTORE",
        "DEBUG",
        "RENAME",
    ]
)
_KV_SUBCOMMANDS = {
    "CONFIG": {"SET", "REWRITE", "RESETSTAT"},
    "SCRIPT": {"FLUSH", "KILL"},
    "FUNCTION": {"FLUSH", "DELETE", "RESTORE", "LOAD", "KILL"},
    "CLIENT": {"KILL", "PAUSE"},
    "ACL": {"DELUSER", "SETUSER", "LOAD", "SAVE"},
    "CLUSTER": {"RESET", "FLUSHSLOTS", "FORGET", "FAILOVER", "DELSLOTS"},
    "MODULE": {"LOAD", "UNLOAD", "LOADEX"},
}
_KV_CODE = frozenset({"EVAL", "EVALSHA", "EVAL_RO", "FCALL", "EVALSHA_RO"})


def _kv_command_words(cmd: Cmd) -> list[str | None]:
    args, i = cmd.args, 0
    while i < len(args):
        arg = args[i]
        if arg is None or not arg.startswith("-"):
            return args[i:]
        i += 2 if arg in _KV_VALUE_OPTIONS else 1
    return []


def _kv_has_command(cmd: Cmd) -> bool:
    if cmd.name in ("mongo", "mongosh"):
        return any(a in ("--eval", "-f", "--file") for a in cmd.args) or any(
            a and a.endswith(".js") for a in cmd.operands
        )
    return bool(_kv_command_words(cmd)) or any(
        a
        in (
            "--scan",
            "--bigkeys",
            "--memkeys",
            "--stat",
            "--latency",
            "--eval",
            "--rdb",
            "--hotkeys",
        )
        for a in cmd.args
    )


def _judge_kv_words(ctx: Context, node: Node, name: str, words: Sequence[str | None]) -> None:
    if not words:
        return
    if words[0] is None:
        ctx.flag("database", f"{name} runs a command computed at run time", node, opaque=True)
        return
    verb = words[0].upper()
    sub = (words[1] or "").upper() if len(words) > 1 else ""
    if verb in _KV_CODE:
        reason = f"{name} {verb} runs a script that cannot be checked"
        ctx.flag("database", reason, node, opaque=True)
    elif verb in _KV_DESTRUCTIVE and not (verb in ("REPLICAOF", "SLAVEOF") and sub == "NO"):
        ctx.flag("database", f"{name} {verb}: deletes or replaces data", node, Severity.HIGH)
    elif sub in _KV_SUBCOMMANDS.get(verb, ()):
        ctx.flag(
            "database", f"{name} {verb} {sub}: changes the server or its data", node, Severity.HIGH
        )
    elif verb == "FLUSH_ALL" or verb.startswith("FLUSH_"):  # memcached's flush_all
        ctx.flag("database", f"{name}: {words[0]} deletes every item", node, Severity.HIGH)


@rule("redis-cli", "valkey-cli", "keydb-cli")
def _redis(ctx: Context, cmd: Cmd) -> None:
    if "--eval" in cmd.args:
        reason = f"{cmd.name} --eval runs a Lua script that cannot be checked"
        ctx.flag("database", reason, cmd.node, opaque=True)
    _judge_kv_words(ctx, cmd.node, cmd.name, _kv_command_words(cmd))


_MONGO_WRITES = re.compile(
    r"\.\s*(drop|dropDatabase|deleteOne|deleteMany|remove|findOneAndDelete|findAndModify|"
    r"findOneAndUpdate|findOneAndReplace|updateOne|updateMany|update|replaceOne|bulkWrite|"
    r"dropIndex|dropIndexes|renameCollection|dropUser|dropAllUsers|dropRole|dropAllRoles|"
    r"shutdownServer|dropSearchIndex)\s*\(|\$(?:out|merge)\b|"
    r"\b(?:runCommand|adminCommand)\s*\([^)]*\b(?:drop|dropDatabase|delete|update|shutdown)\b|"
    r"\b(?:eval|load)\s*\("
)


def _judge_mongo(ctx: Context, node: Node, name: str, code: str | None) -> None:
    if code is None:
        ctx.flag("database", f"{name} runs code computed at run time", node, opaque=True)
        return
    match = _MONGO_WRITES.search(code)
    if match:
        ctx.flag(
            "database",
            f"{name}: {match.group(0).strip(' .(')} changes or deletes data",
            node,
            Severity.HIGH,
        )


@rule("mongo", "mongosh")
def _mongo(ctx: Context, cmd: Cmd) -> None:
    args = cmd.args
    for i, arg in enumerate(args):
        if arg == "--eval" and i + 1 < len(args):
            _judge_mongo(ctx, cmd.node, cmd.name, args[i + 1])
        elif arg and arg.startswith("--eval="):
            _judge_mongo(ctx, cmd.node, cmd.name, arg.split("=", 1)[1])
        elif arg in ("-f", "--file") or (arg and arg.endswith(".js") and not arg.startswith("-")):
            reason = f"{cmd.name} runs a script file that cannot be checked here"
            ctx.flag("database", reason, cmd.node, opaque=True)


_NET_CLIENTS = frozenset({"nc", "ncat", "netcat", "telnet", "socat"})


def judge_network_input(ctx: Context, node: Node, text: str) -> None:
    """Text sent to a server through nc: datastores' plain-text protocols (redis, memcached)."""
    for line in text.replace("\\r", "\n").replace("\\n", "\n").splitlines():
        words = line.split()
        if words and (
            words[0].upper() in _KV_DESTRUCTIVE | {"FLUSH_ALL"}
            or words[0].lower().startswith("flush")
        ):
            _judge_kv_words(ctx, node, "a network client", words)


# -- database administration tools ---------------------------------------------------------


@rule("dropdb", "dropuser", "pg_dropcluster")
def _dropdb(ctx: Context, cmd: Cmd) -> None:
    ctx.flag("database", f"{cmd.name} deletes a database object", cmd.node, Severity.HIGH)


@rule("mysqladmin", "mariadb-admin")
def _mysqladmin(ctx: Context, cmd: Cmd) -> None:
    words = [a.lower() for a in cmd.operands if a]
    hit = next((w for w in words if w in ("drop", "shutdown", "kill", "purge")), None)
    if hit:
        ctx.flag(
            "database",
            f"{cmd.name} {hit}: deletes a database or stops the server",
            cmd.node,
            Severity.HIGH,
        )


@rule("pg_restore")
def _pg_restore(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--clean", short="c") and not cmd.has("--list", short="l"):
        ctx.flag(
            "database",
            "pg_restore --clean drops objects before restoring them",
            cmd.node,
            Severity.HIGH,
        )


@rule("mongorestore")
def _mongorestore(ctx: Context, cmd: Cmd) -> None:
    if "--drop" in cmd.args and "--dryRun" not in cmd.args:
        ctx.flag(
            "database",
            "mongorestore --drop drops collections before restoring",
            cmd.node,
            Severity.HIGH,
        )


@rule("pg_ctl", "pg_ctlcluster")
def _pg_ctl(ctx: Context, cmd: Cmd) -> None:
    if any(a in ("stop", "kill", "restart") for a in cmd.operands):
        ctx.flag("service", f"{cmd.name} stops the database server", cmd.node)


# -- framework tasks -------------------------------------------------------------------------

_RAILS_TASKS = re.compile(
    r"^db:(?:drop|reset|purge|truncate_all|schema:load|structure:load|setup|rollback|"
    r"seed:replant|fixtures:load|migrate:(?:reset|redo|down))(?::\w+)?$|"
    r"^(?:log|tmp|assets|cache):(?:clear|clobber)$"
)


@rule("rails", "rake")
def _rails(ctx: Context, cmd: Cmd) -> None:
    for task in cmd.operands:
        if task and _RAILS_TASKS.match(task):
            ctx.flag(
                "data-reset",
                f"{cmd.name} {task}: drops, resets or rolls back data",
                cmd.node,
                Severity.HIGH,
            )
            return


_DJANGO_WIPES = frozenset({"flush", "reset_db", "reset_schema", "drop_test_database", "sqlclear"})


def django(ctx: Context, cmd: Cmd, args: list[str | None], program: str) -> None:
    """`manage.py` or `django-admin` with `args` (its subcommand first)."""
    words = [a for a in args if a is None or not a.startswith("-")]
    sub = words[0] if words else None
    if any(a in ("--help", "-h", "--version") for a in args) and sub != "shell":
        return  # argparse prints the help and exits
    if sub in _DJANGO_WIPES:
        ctx.flag(
            "data-reset", f"{program} {sub}: deletes the database's data", cmd.node, Severity.HIGH
        )
    elif sub == "migrate" and "zero" in words[1:] and "--plan" not in args:
        ctx.flag(
            "data-reset",
            f"{program} migrate ... zero: unapplies every migration",
            cmd.node,
            Severity.HIGH,
        )
    elif sub == "shell":
        for i, arg in enumerate(args):
            if arg in ("-c", "--command") and i + 1 < len(args):
                ctx.code(cmd.node, f"{program} shell", "python", args[i + 1])
    elif sub == "dbshell" and "--" in args:
        rest = args[args.index("--") + 1 :]
        judge_sql_text(
            ctx,
            cmd.node,
            "psql",
            " ".join(a or "" for a in rest if a and not a.startswith("-")) or "SELECT 1",
        )


@rule("django-admin", "manage.py")
def _django(ctx: Context, cmd: Cmd) -> None:
    django(ctx, cmd, cmd.args, cmd.name)


def artisan(ctx: Context, cmd: Cmd, args: list[str | None]) -> None:
    sub = next((a for a in args if a and not a.startswith("-")), "")
    if any(a in ("--help", "-h", "--version", "-V") for a in args):
        return  # the console prints the help and exits
    if sub in ("migrate:fresh", "migrate:reset", "migrate:rollback", "migrate:refresh", "db:wipe"):
        ctx.flag(
            "data-reset",
            f"artisan {sub}: drops or rolls back the database",
            cmd.node,
            Severity.HIGH,
        )


# program -> (subcommand words that wipe or roll back data, options that make it harmless)
_TASKS: dict[str, tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]] = {
    "prisma": (
        (
            ("migrate", "reset"),
            ("db", "push", "--force-reset"),
            ("db", "push", "--accept-data-loss"),
        ),
        (),
    ),
    "sequelize": (
        (
            ("db:drop",),
            ("db:migrate:undo",),
            ("db:migrate:undo:all",),
            ("db:seed:undo",),
            ("db:seed:undo:all",),
        ),
        (),
    ),
    "sequelize-cli": (
        (
            ("db:drop",),
            ("db:migrate:undo",),
            ("db:migrate:undo:all",),
            ("db:seed:undo",),
            ("db:seed:undo:all",),
        ),
        (),
    ),
    "knex": ((("migrate:rollback",), ("migrate:down",)), ()),
    "typeorm": ((("schema:drop",), ("migration:revert",), ("schema:sync",)), ()),
    "typeorm-ts-node-commonjs": ((("schema:drop",), ("migration:revert",), ("schema:sync",)), ()),
    "mix": ((("ecto.drop",), ("ecto.reset",), ("ecto.rollback",)), ()),
    "alembic": ((("downgrade",),), ("--sql",)),
    "flask": ((("db", "downgrade"), ("db", "drop")), ("--sql",)),
    "dotnet": (
        (
            ("ef", "database", "drop"),
            ("ef", "database", "update", "0"),
            ("ef", "migrations", "remove"),
        ),
        ("--dry-run",),
    ),
    "flyway": ((("clean",), ("undo",)), ()),
    "liquibase": (
        (
            ("drop-all",),
            ("dropAll",),
            ("rollback",),
            ("rollback-count",),
            ("rollbackCount",),
            ("rollback-to-date",),
        ),
        (),
    ),
    "diesel": (
        (
            ("database", "reset"),
            ("database", "drop"),
            ("migration", "revert"),
            ("migration", "redo"),
        ),
        (),
    ),
    "sqlx": ((("database", "drop"), ("database", "reset"), ("migrate", "revert")), ()),
    "supabase": ((("db", "reset"), ("projects", "delete")), ()),
    "goose": ((("down",), ("reset",), ("down-to",)), ()),
    "migrate": ((("down",), ("drop",), ("force",)), ()),
    "dbmate": ((("drop",), ("rollback",), ("down",)), ()),
    "etcdctl": ((("del",), ("member", "remove"), ("snapshot", "restore")), ()),
    "consul": ((("kv", "delete"), ("services", "deregister")), ()),
    "vault": (
        (
            ("kv", "delete"),
            ("kv", "destroy"),
            ("kv", "metadata", "delete"),
            ("secrets", "disable"),
            ("delete",),
        ),
        (),
    ),
    "influx": ((("delete",), ("bucket", "delete"), ("org", "delete")), ()),
}


def _task_rule(ctx: Context, cmd: Cmd) -> None:
    wipes, harmless = _TASKS[cmd.name]
    if any(a in harmless for a in cmd.args):
        return
    words = [
        a
        for a in cmd.args
        if a and (not a.startswith("-") or a.startswith("--force") or a.startswith("--accept"))
    ]
    for task in wipes:
        plain = [w for w in task if not w.startswith("-")]
        if words[: len(plain)] == plain and all(o in cmd.args for o in task if o.startswith("-")):
            ctx.flag(
                "data-reset",
                f"{cmd.name} {' '.join(task)}: wipes, drops or rolls back data",
                cmd.node,
                Severity.HIGH,
            )
            return


for _name in _TASKS:
    RULES[_name] = _task_rule
