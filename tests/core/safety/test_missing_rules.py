"""Rules added where the detector already had the mechanism: SQLite's file functions and
statements, Node's computed member access on fs and friends, and xargs given its program by
its input."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.safety import Severity, analyze_command

PROJECT = "/work/project"


def judged(command: str, cwd: str = PROJECT):
    return analyze_command(command, cwd=cwd, write_roots=(cwd,))


# -- SQLite -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("sqlite3 db \"select writefile('/etc/cron.d/x', 'y')\"", "/etc/cron.d/x"),
        ("sqlite3 db \"SELECT writefile('~/.bashrc', 'y')\"", "~/.bashrc"),
        ("sqlite3 db \"VACUUM INTO '/tmp/copy.db'\"", "/tmp/copy.db"),
        ("sqlite3 db \"vacuum main into '/tmp/copy.db'\"", "/tmp/copy.db"),
        ("sqlite3 db \"ATTACH DATABASE '/tmp/other.db' AS o\"", "/tmp/other.db"),
        ("echo \"select writefile('/tmp/x', 'y');\" | sqlite3 db", "/tmp/x"),
        ("sqlite3 db <<'E'\nATTACH 'file:/tmp/o.db' AS o;\nE", "/tmp/o.db"),
    ],
)
def test_sqlite_writes_are_judged_where_they_land(command: str, path: str) -> None:
    verdict = judged(command)
    assert path in verdict.writes, verdict.reasons
    assert any(
        "outside the working directory" in r or "system" in r or "start-up" in r
        for r in verdict.reasons
    ), verdict.reasons


def test_sqlite_writes_into_a_startup_file_are_high() -> None:
    verdict = judged("sqlite3 db \"select writefile('~/.bashrc', 'x')\"")
    assert verdict.severity is Severity.HIGH


def test_sqlite_readfile_of_a_credential_asks(tmp_path: Path) -> None:
    verdict = judged("sqlite3 db \"select readfile('~/.ssh/id_rsa')\"")
    assert "credential-read" in verdict.rules
    assert not judged("sqlite3 db \"select readfile('notes.txt')\"").dangerous


@pytest.mark.parametrize(
    "command",
    [
        'sqlite3 db "select writefile(name, data) from files"',
        'sqlite3 db "select readfile(name) from files"',
        'sqlite3 db "VACUUM INTO x"',
    ],
)
def test_sqlite_file_named_at_run_time_asks(command: str) -> None:
    assert judged(command).dangerous


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 db 'VACUUM'",
        "sqlite3 db \"ATTACH ':memory:' AS m\"",
        "sqlite3 db \"ATTACH 'file:other.db?mode=ro' AS o; select * from o.t\"",
        "sqlite3 db 'select count(*) from t'",
    ],
)
def test_sqlite_look_alikes_stay_free(command: str) -> None:
    assert not judged(command).dangerous, judged(command).reasons


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 db '.output /tmp/x'",
        "sqlite3 db '.once /tmp/x'",
        "sqlite3 db '.save /tmp/x'",
        "sqlite3 db '.backup /tmp/x'",
    ],
)
def test_sqlite_dot_commands_that_write_are_judged(command: str) -> None:
    assert "/tmp/x" in judged(command).writes


# -- Node ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "const fs = require('fs'); fs['unl' + 'ink']('f')",
        "require('fs')[m]('f')",
        "const f = require('fs'); f[x]('f')",
        "const f = require('node:fs'); f?.[x]('f')",
        "const f = fs; f['unl' + 'ink']('f')",
        "const p = require('fs/promises'); p[m]('f')",
        "import * as f from 'node:fs'; f[x]('f')",
        "const {[m]: u} = require('fs'); u('f')",
        "Reflect.get(require('fs'), 'unlinkSync')('f')",
        "const c = require('child_process'); c[k]('rm f')",
        "process['bind' + 'ing']('fs')",
    ],
)
def test_node_computed_member_access_asks_as_code_it_cannot_follow(code: str) -> None:
    verdict = judged(f'node -e "{code}"')
    assert any("cannot follow" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(
    "code",
    [
        "const a = [1, 2]; console.log(a[0])",
        "const o = {a: 1}; const k = 'a'; console.log(o[k])",
        "const {readFileSync} = require('fs'); console.log(readFileSync('f', 'utf8').split(' ')[0])",
        "const path = require('path'); console.log(path.join('a', 'b').split('/')[1])",
    ],
)
def test_node_plain_indexing_stays_free(code: str) -> None:
    verdict = judged(f'node -e "{code}"')
    assert not verdict.dangerous, verdict.reasons


# -- xargs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("echo rm f | xargs -I{} sh -c '{}'", "as code"),
        ("echo rm f | xargs -I {} bash -c 'x; {}'", "as code"),
        ("echo rm f | xargs -I{} {}", "a program taken from its input"),
        ("echo rm f | xargs -i {}", "a program taken from its input"),
        ("echo rm f | xargs --replace=X X", "a program taken from its input"),
        ("echo rm f | xargs bash", "as the script to run"),
        ("echo rm f | xargs -n2 sh", "as the script to run"),
        ("echo rm f | xargs env", "through env"),
        ("echo rm f | xargs sudo -u root", "through sudo"),
        ("echo rm f | xargs nice -n5", "through nice"),
    ],
)
def test_xargs_taking_its_program_from_input_asks_as_known_only_at_run_time(
    command: str, why: str
) -> None:
    verdict = judged(command)
    found = [f for f in verdict.findings if f.rule == "input-command"]
    assert found and all(f.opaque for f in found), verdict.reasons
    assert any(why in f.reason and "known only at run time" in f.reason for f in found)


def test_xargs_giving_its_input_as_arguments_to_a_shell_payload_asks() -> None:
    assert judged("printf 'rm\\0f' | xargs -0 sh -c '\"$@\"' _").dangerous


@pytest.mark.parametrize(
    "command",
    [
        "echo f | xargs -I{} cat {}",
        "echo f | xargs -n1 -P4 -I % wc -l %",
        "find . -name '*.py' | xargs grep foo",
        "find . -name '*.py' -print0 | xargs -0 -r wc -l",
        "ls | xargs -l echo",
        "cat list | xargs sh -c 'for x; do echo \"$x\"; done' _",
    ],
)
def test_xargs_look_alikes_stay_free(command: str) -> None:
    verdict = judged(command)
    assert not verdict.dangerous, verdict.reasons
