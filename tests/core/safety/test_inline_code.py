"""Interpreter one-liners judged by what they call; the commands they run judged as shell code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.safety import analyze_command
from workbench.core.safety.inline_code import other_effects


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import subprocess; subprocess.run(['rm', '-rf', 'build'])\"",
        "python3 -c \"import os; os.system('rm -rf ~/tmp')\"",
        "python3 -c \"import subprocess; subprocess.call('git reset --hard', shell=True)\"",
        'python3 -c "import subprocess as sp; sp.check_call(cmd)"',  # computed: asks
        "python3 -c \"__import__('shutil').rmtree('build')\"",
        "python3 -c \"import os; os.rmdir('empty')\"",
        "python3 -c \"import pathlib; [p.unlink() for p in pathlib.Path('.').glob('*.log')]\"",
        "python3 -c \"import sqlite3; sqlite3.connect('a.db').execute('DROP TABLE users')\"",
        "node -e \"require('fs').unlinkSync('package-lock.json')\"",
        "node -e \"require('child_process').execSync('rm -rf dist')\"",
        "node -e \"const {execSync} = require('child_process'); execSync(process.argv[1])\"",
        "node -e \"require('fs').writeFileSync('.env', '')\"",
        "perl -e 'system(\"rm -rf build\")'",
        "perl -e 'unlink \"data.db\"'",
        "perl -MFile::Path -e 'rmtree(\"build\")'",
        'perl -e \'open(my $f, ">", "config.ini")\'',
        "perl -e '`rm -rf tmp`'",
        "perl -e 'print q(unterminated'",
        "ruby -e 'File.delete(\"Gemfile.lock\")'",
        "ruby -e 'system(\"rm -rf tmp\")'",
        "ruby -e '%x(rm -rf log)'",
        "ruby -rfileutils -e 'FileUtils.rm_r(\"coverage\")'",
        "awk 'BEGIN { system(\"rm -rf /tmp/cache\") }'",
        "awk '{ print | \"sh\" }' cmds.txt",
        "awk '{ system(\"rm \" $1) }' files.txt",
        "php -r 'unlink(\"index.php\");'",
        # what cannot be followed asks: a module named at run time, a string that never ends
        "node -e \"require('child' + '_process').exec('rm -rf x')\"",
        "node -e \"import('fs').then(m => m.rmSync('x'))\"",
        "perl -e 's{a'",
        "perl -e '\"'",
        "node -e '`'",
        "python3 -c \"import psycopg2; psycopg2.connect('').cursor().execute('DROP TABLE x')\"",
        'python3 -c "from app.models import U; U.objects.all().delete()"',
    ],
)
def test_code_that_deletes_or_runs_destructive_commands_asks(command: str) -> None:
    assert analyze_command(command).dangerous, command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import subprocess; print(subprocess.run(['git', 'status']).returncode)\"",
        "python3 -c \"import os; os.system('ls -la')\"",
        "python3 -c \"import subprocess; subprocess.run('git log -1', shell=True)\"",
        "python3 -c \"import shutil; print(shutil.which('rm'))\"",
        "python3 -c \"print('rm -rf /')\"",
        "python3 -c \"print(open('data.txt').read())\"",
        "node -e \"console.log('fs.rmSync(x)')\"",
        "node -e \"console.log(/unlink/.exec('unlink'))\"",
        "node -e \"require('child_process').execSync('git status', {stdio: 'inherit'})\"",
        "node -p \"require('./package.json').version\"",
        "perl -e 'print \"unlink everything\\n\"'",
        "perl -ne 'print if /system/' app.log",
        "perl -pe 's/rm -rf/[redacted]/g' notes.txt",
        'perl -e \'system("ls", "-la")\'',
        "ruby -e 'puts \"FileUtils.rm_rf\"'",
        "ruby -rfileutils -e 'FileUtils.mkdir_p(\"tmp/cache\")'",
        "ruby -e 'system(\"date\")'",
        'awk \'BEGIN { print "system(\\"rm -rf /\\")" }\'',
        "awk 'BEGIN { system(\"date\") }'",
        "php -r 'echo \"unlink\";'",
    ],
)
def test_code_that_only_reads_or_runs_harmless_commands_passes(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)


def test_python_deleting_the_home_directory_is_hardline() -> None:
    for code in (
        "import shutil, os; shutil.rmtree(os.path.expanduser('~'))",
        "import shutil, pathlib; shutil.rmtree(pathlib.Path.home())",
        "import shutil; shutil.rmtree('/')",
        f"import shutil; shutil.rmtree({os.path.expanduser('~')!r})",
    ):
        verdict = analyze_command(f'python3 -c "{code}"')
        assert verdict.hardline, (code, verdict.reasons)


def test_a_command_run_by_code_is_judged_as_shell_code() -> None:
    verdict = analyze_command("python3 -c \"import os; os.system('rm -rf ~')\"")
    assert verdict.hardline and "home directory" in verdict.reasons[0]
    writes = analyze_command("python3 -c \"open('/etc/hosts', 'w').write('')\"")
    assert writes.dangerous and writes.writes == ["/etc/hosts"]
    appends = analyze_command("python3 -c \"open('notes.txt', 'a').write('x')\"")
    assert not appends.dangerous  # appending to an ordinary file, as `>>` does


def test_strings_and_patterns_are_set_aside() -> None:
    assert other_effects("perl", 'my %h = (y => 1); system("rm -rf /")')[0].command == "rm -rf /"
    assert other_effects("perl", "s{a}{b}g; print 'ok'") == []
    assert other_effects("ruby", "x = %w(system exec); puts x") == []
    assert other_effects("node", "const a = 4 / 2; console.log(a)") == []


def test_code_too_long_to_read_quickly_asks() -> None:
    for command in (
        'perl -e "' + "'a'," * 30000 + '"',
        'node -e "' + "1/" * 50000 + '"',
        "awk '" + '"x" | getline; ' * 20000 + "'",
    ):
        verdict = analyze_command(command)
        assert verdict.dangerous and "too long" in verdict.reasons[0]


@pytest.fixture
def reads_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home holding secrets no list names, and a project in it; returns the project."""
    user = tmp_path / "user"
    (user / "project").mkdir(parents=True)
    (user / ".vault-token").write_text("t\n")
    (user / ".my.cnf").write_text("password=p\n")
    monkeypatch.setenv("HOME", str(user))
    return user / "project"


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"print(open('/etc/hostname').read())\"",
        "python3 -c \"import glob; [print(open(f).read()) for f in glob.glob('*.txt')]\"",
        "node -e \"console.log(require('fs').readFileSync('package.json', 'utf8'))\"",
    ],
)
def test_code_that_reads_the_project_stays_free(reads_world: Path, command: str) -> None:
    assert not analyze_command(command, cwd=str(reads_world)).dangerous


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"print(open('/home/nobody-here/x').read()); print(open('~/.vault-token').read())\"",
        "python3 -c \"from pathlib import Path; print((Path.home() / '.my.cnf').read_text())\"",
        "node -e \"console.log(require('fs').readFileSync(require('os').homedir() + '/.my.cnf'))\"",
        'perl -e \'open(F, "<", "$ENV{HOME}/.vault-token"); print <F>\'',
        "ruby -e 'puts File.read(Dir.home + \"/.vault-token\")'",
    ],
)
def test_code_that_reads_a_secret_asks(reads_world: Path, command: str) -> None:
    found = analyze_command(command, cwd=str(reads_world))
    assert "credential-read" in found.rules, found.reasons
