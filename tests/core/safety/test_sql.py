"""SQL read statement by statement with a real parser, not by keywords."""

from __future__ import annotations

import pytest

from workbench.core.safety import analyze_command
from workbench.core.safety.sql import judge_sql


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("DELETE FROM sessions WHERE expires < now()", "DELETE removes rows"),
        ("DELETE FROM sessions", "(every row)"),
        ("UPDATE users SET role = 'admin' WHERE id = 1", "UPDATE"),
        ("DROP TABLE IF EXISTS cache", "DROP TABLE"),
        ("TRUNCATE orders", "TRUNCATE"),
        ("ALTER TABLE users DROP COLUMN email", "DROP COLUMN"),
        ("SELECT 1; DROP TABLE x", "DROP TABLE"),
        ("WITH old AS (DELETE FROM e RETURNING *) SELECT count(*) FROM old", "DELETE"),
        ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "MERGE"),
        ("INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 2", "overwrites"),
        ("EXPLAIN ANALYZE DELETE FROM users", "DELETE"),
        ("EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET a = 1", "UPDATE"),
        ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "ends other sessions"),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", "replaces"),
    ],
)
def test_statements_that_change_data(sql: str, what: str) -> None:
    effects = judge_sql(sql, "psql")
    assert any(what in e.what for e in effects), effects
    assert not any(e.unknown for e in effects)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'DROP TABLE x'",
        "SELECT * FROM audit WHERE action = 'DELETE FROM users'",
        "INSERT INTO logs (msg) VALUES ('drop table users')",
        "-- DROP TABLE users\nSELECT 1",
        "/* TRUNCATE t */ SELECT 1",
        "EXPLAIN DELETE FROM users",
        "EXPLAIN (COSTS OFF) UPDATE users SET x = 1",
        "BEGIN; SELECT 1; COMMIT",
        "CREATE TABLE t (id int)",
        "ALTER TABLE users ADD COLUMN age int",
        "VACUUM ANALYZE",
        "SHOW search_path",
        "",
        ";;",
    ],
)
def test_reads_and_additions_pass(sql: str) -> None:
    assert judge_sql(sql, "psql") == []


@pytest.mark.parametrize(
    "sql", ["DELETE FRM users WHERE", "SELEC 1", "CALL purge()", "DO $$ BEGIN NULL; END $$"]
)
def test_what_cannot_be_read_fails_closed(sql: str) -> None:
    effects = judge_sql(sql, "psql")
    assert effects, sql


def test_dialects_and_client_commands() -> None:
    assert judge_sql("REPLACE INTO settings VALUES (1, 'x')", "mysql")
    assert judge_sql("INSERT OR REPLACE INTO t VALUES (1)", "sqlite3")
    assert judge_sql("SELECT @@VERSION", "sqlcmd") == []
    assert judge_sql("PRAGMA table_info(users)", "sqlite3") == []
    assert judge_sql(".tables\n.schema users", "sqlite3") == []
    (shell,) = judge_sql(".shell rm -rf data", "sqlite3")
    assert shell.shell == "rm -rf data"
    (out,) = judge_sql(".output report.txt", "sqlite3")
    assert out.writes == "report.txt"
    (meta,) = judge_sql("\\! rm -rf /tmp/x", "psql")
    assert meta.shell == "rm -rf /tmp/x"
    assert judge_sql("\\dt\n\\x\nSELECT 1;", "psql") == []
    assert judge_sql("\\i drop_all.sql", "psql")[0].unknown
    (copy,) = judge_sql("COPY users TO '/tmp/users.csv'", "psql")
    assert copy.writes == "/tmp/users.csv"
    assert judge_sql("COPY users FROM '/tmp/users.csv'", "psql") == []


@pytest.mark.parametrize(
    "command",
    [
        "psql -c 'DROP TABLE users'",
        'psql -d app -c "DELETE FROM sessions WHERE expires < now()"',
        'mysql -u root -p shop -e "UPDATE users SET role=1 WHERE id=1"',
        'mysql -e"DROP DATABASE shop"',
        "mysql --execute='TRUNCATE logs'",
        'sqlite3 app.db "DROP TABLE cache"',
        'sqlite3 app.db "SELECT 1" "DELETE FROM t"',
        'duckdb data.db -c "DROP TABLE sales"',
        'sqlcmd -Q "DROP DATABASE Sales"',
        'clickhouse-client --query "DROP TABLE events"',
        'cqlsh -e "TRUNCATE ks.t"',
        'psql <<< "DELETE FROM jobs WHERE done"',
        "psql <<'SQL'\nSELECT 1;\nDELETE FROM users;\nSQL",
        'echo "DROP TABLE t;" | sqlite3 app.db',
        "printf 'DELETE FROM t;\\n' | psql app",
        "psql app -f drop_all.sql",
        "mysql shop < dump.sql",
        "cat dump.sql | mysql shop",
        "pg_dump old | psql new",
        'sudo -u postgres psql -c "DROP DATABASE app"',
        'psql -c "$SQL"',
        "psql -c '\\! rm -rf build'",
    ],
)
def test_clients_destructive_sql_asks(command: str) -> None:
    assert analyze_command(command).dangerous, command


@pytest.mark.parametrize(
    "command",
    [
        "psql -c \"SELECT 'DROP TABLE x'\"",
        'psql -c "EXPLAIN DELETE FROM users"',
        'sqlite3 app.db ".tables"',
        "sqlite3 app.db .schema",
        'sqlite3 -readonly app.db "DELETE FROM t"',
        'echo "SELECT 1;" | psql',
        'psql <<< "SELECT now()"',
        "psql -l",
        "psql app",
        'mysql -e "SHOW TABLES; DESCRIBE users"',
        "psql -c '\\dt'",
        "psql --version",
        "mysql shop < /dev/null",
        "psql --help -c 'DROP TABLE t'",  # psql reads --help first and exits
    ],
)
def test_clients_reading_pass(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)


def test_sql_parser_is_loaded_only_for_sql() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from workbench.core.safety import analyze_command\n"
        "analyze_command('git status && ls -la | grep x > out.txt')\n"
        "print('sqlglot' in sys.modules)\n"
        "analyze_command('psql -c \"SELECT 1\"')\n"
        "print('sqlglot' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_reason_and_span_point_at_the_client() -> None:
    command = "ls && psql -c 'DROP TABLE users'"
    verdict = analyze_command(command)
    assert any("DROP TABLE" in r for r in verdict.reasons)
    assert [command[a:b] for a, b in verdict.spans] == ["psql -c 'DROP TABLE users'"]


def test_without_the_sql_parser_sql_asks(monkeypatch) -> None:
    from workbench.core.safety import sql

    def missing():
        raise ImportError("No module named 'sqlglot'")

    monkeypatch.setattr(sql, "_sqlglot", missing)
    (effect,) = judge_sql("SELECT 1", "psql")
    assert effect.unknown and "not installed" in effect.what
    verdict = analyze_command("psql -c 'SELECT 2'")  # the app keeps running and asks
    assert verdict.dangerous and not verdict.hardline


def test_sql_too_long_to_parse_quickly_asks() -> None:
    (effect,) = judge_sql("SELECT 1;" * 10000, "psql")
    assert effect.unknown and "too long" in effect.what
