"""Text bash evaluates as code: arithmetic, subscripts, prompts, indirect names, names given
to builtins, and commands given to compgen/mapfile. Each ran `rm f` unasked once."""

from __future__ import annotations

import subprocess

import pytest

from workbench.core.safety import analyze_command

PROJECT = "/work/project"
PAYLOAD = "'a[$(rm f)]'"  # bash runs the substitution when it evaluates this as a subscript


def judged(command: str):
    return analyze_command(command, cwd=PROJECT, write_roots=(PROJECT,))


def payload_named(command: str) -> None:
    """The command asks, and a finding says it deletes f, pointing at `rm f` unless the
    evaluation is inside a payload (`eval`, `trap`), which stands for the whole payload."""
    verdict = judged(command)
    assert verdict.dangerous, command
    deletes = [f for f in verdict.findings if f.rule == "delete"]
    assert deletes and "deletes f" in deletes[0].reason, verdict.reasons
    start, end = deletes[0].span
    if not command.startswith(f"x={PAYLOAD}; eval") and " trap " not in command:
        assert command[start:end] == "rm f", (command, command[start:end])


@pytest.mark.parametrize(
    "command",
    [
        # arithmetic: the value of each variable it names is evaluated in turn
        f"x={PAYLOAD}; echo $((x))",
        f"x={PAYLOAD}; echo $(($x))",
        f"x={PAYLOAD}; echo $[x]",
        f"x={PAYLOAD}; ((x))",
        f"x={PAYLOAD}; let x",
        f"x={PAYLOAD}; let 'y = x + 1'",
        f"x={PAYLOAD}; for ((i=0; i<x; i++)); do :; done",
        f"x={PAYLOAD}; [[ $x -eq 1 ]]",
        f"x={PAYLOAD}; [[ 1 -lt x ]]",
        f"x={PAYLOAD}; y=x; echo $((y))",
        f"x={PAYLOAD}; y='b[x]'; echo $((y))",
        f"x={PAYLOAD}; declare -n r=x; echo $((r))",
        f"declare -n r=x; r={PAYLOAD}; echo $((x))",
        f"x={PAYLOAD}; declare -n r; r=x; echo $((r))",
        f"x={PAYLOAD}; declare -i y; y=x",
        f"x={PAYLOAD}; local -i y=x",
        f"echo $(( {PAYLOAD} ))",
        "x='a[`rm f`]'; echo $((x))",
        f"x={PAYLOAD}; cat <<EOF\n$((x))\nEOF",
        f"x={PAYLOAD}; if (( x > 1 )); then :; fi",
        # array subscripts and substring offsets are arithmetic too
        f"x={PAYLOAD}; echo ${{b[x]}}",
        f'x={PAYLOAD}; echo "${{b[$x]}}"',
        f"x={PAYLOAD}; b[x]=1",
        f"x={PAYLOAD}; y=( [x]=1 )",
        f"x={PAYLOAD}; y=abc; echo ${{y:1:x}}",
        # prompt expansion and indirect expansion
        "x='$(rm f)'; echo ${x@P}",
        "PS4='$(rm f)'; set -x; echo",
        "declare -ai a=(1 'b[$(rm f)]')",
        "x='`rm f`'; echo \"${x@P}\"",
        f"x={PAYLOAD}; echo ${{!x}}",
        # names given as text to builtins
        f"printf -v {PAYLOAD} %s 1",
        f'x={PAYLOAD}; printf -v "$x" %s 1',
        f"read {PAYLOAD} <<< 1",
        f"read -r -a {PAYLOAD} <<< 1",
        f"declare {PAYLOAD[:-1]}=1'",
        f"f() {{ local {PAYLOAD[:-1]}=1'; }}; f",
        f"declare -n r={PAYLOAD}; echo $r",
        f"unset {PAYLOAD}",
        f"sleep 0 & wait -n -p {PAYLOAD}",
        f"test -v {PAYLOAD}",
        f"[ -v {PAYLOAD} ]",
        f"x={PAYLOAD}; [[ -v $x ]]",
        # commands given to builtins
        "compgen -C 'rm f' x",
        "complete -C 'rm f' x",
        "compgen -W '$(rm f)' x",
        "mapfile -C 'rm f' -c 1 lines < notes.txt",
        # wherever the evaluation is: in a payload, a function, a trap
        f"x={PAYLOAD}; eval 'echo $((x))'",
        f"x={PAYLOAD}; trap 'echo $((x))' EXIT",
        f"f() {{ echo $((x)); }}; x={PAYLOAD}; f",
    ],
)
def test_evaluated_text_is_judged_as_the_command_it_runs(command: str) -> None:
    payload_named(command)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("read x; echo $((x))", "what read reads"),
        ("x=$(cat n); echo $((x))", "a command's output"),
        ("echo $(( $(cat n) ))", "a command's output"),
        ("while read -r n; do echo ${a[n]}; done < nums", "what read reads"),
        ("f() { echo $(( $1 )); }; f 3", "arguments"),
        ("set -- 'a[$(rm f)]'; echo $(( $1 ))", "arguments"),
        ("bash -c 'echo $(( $1 ))' _ 'a[$(rm f)]'", "arguments"),
        (": 'a[$(rm f)]'; echo $(( $_ ))", "the last word"),
        ("touch 'a[$(rm f)]'; for g in *; do echo $((g)); done", "a glob"),
        ("x='a[$(rm'; x+=' f)]'; echo $((x))", "appended"),
        ("x=$(cat n); echo ${x@P}", "a command's output"),
        ('read x; printf -v "$x" %s 1', "what read reads"),
        ("x=$(cat n); echo ${!x}", "a command's output"),
        (". ./vars.sh; echo $((x))", "a file the command sources"),
        ("declare -n r=$1; r=$2; echo $((x))", "a name reference"),
        ("declare -i n; read n <<< 1", "integer variable n"),
    ],
)
def test_a_value_only_run_time_knows_asks_as_code_built_at_run_time(command: str, why: str) -> None:
    verdict = judged(command)
    found = [f for f in verdict.findings if f.rule == "evaluated-code"]
    assert found, verdict.reasons
    assert all(f.opaque for f in found)
    assert any(why in f.reason and "code built at run time" in f.reason for f in found)


@pytest.mark.parametrize(
    "command",
    [
        "i=0; echo $((i+1))",
        "for ((i=0; i<3; i++)); do echo $i; done",
        "echo ${a[i]}",
        "x=abc; echo $((${#x}+1))",
        "echo $((1 + 2)) $((16#ff)) $((0x1f)) $((RANDOM % 10)) $[2*3]",
        "count=0; while read l; do count=$((count+1)); done < f; echo $count",
        'for f in *.py; do n=$(wc -l < "$f"); total=$((total+n)); done; echo $total',
        'arr=(a b c); for i in "${!arr[@]}"; do echo "${arr[$i]}"; done',
        "x=5; if [[ $x -gt 3 ]]; then echo big; fi",
        '[ "$(id -u)" -eq 0 ] && echo root',
        "[[ $(id -u) -eq 0 ]] && echo root",
        "start=$(date +%s); sleep 1; echo $(( $(date +%s) - start ))",
        "[[ $# -eq 0 ]] && echo none",
        "PORT=${PORT:-8080}; [[ $PORT -gt 1024 ]] && echo high",
        "shift $((OPTIND-1))",
        'echo ${PATH:0:10} "${@:2}" ${arr[-1]}',
        "declare -A m=([key]=v); m[other]=w; echo ${m[key]}",
        "complete -F _git git",
        "typeset -i n=0; n+=1; echo $n",
        'let "x = 5 * 3"; echo $x',
        "for i in {1..5}; do echo $((i*i)); done",
        "for i in $(seq 1 10); do echo $((i*i)); done",
        "n=$(grep -c foo notes.txt); [[ $n -gt 0 ]] && echo found",
        "x=3; y=$((x*2)); z=$((y+x)); echo $z",
        "i=0; while (( i < 3 )); do ((i++)); done",
        "mapfile -t lines < notes.txt; echo ${#lines[@]} ${lines[0]}",
        'read -r line < notes.txt; echo "$line"',
        "printf -v now '%(%s)T' -1; echo $now",
        "x='\\u@\\h'; echo ${x@P}",
        "x=HOME; echo ${!x}",
        "echo $(( $(echo 2) * 3 ))",
        "declare -ai a=(1 2); echo ${a[0]}",
        "source .venv/bin/activate; for ((i=0; i<3; i++)); do echo $i; done",
        "x=1; x=2; eval 'echo $((x))'",
        "declare -n r=x; x=1; echo $((r))",
    ],
)
def test_plain_arithmetic_and_names_stay_free(command: str) -> None:
    verdict = judged(command)
    assert not verdict.dangerous, verdict.reasons


def test_an_assignment_in_a_payload_is_followed_into_the_text_it_evaluates() -> None:
    # the variable is assigned outside the substitution that evaluates it
    payload_named(f"x={PAYLOAD}; y=$(echo $((x))); echo $y")


def test_hardline_payloads_stay_hardline_when_evaluated() -> None:
    verdict = judged("x='a[$(rm -rf ~)]'; echo $((x))")
    assert verdict.hardline


def test_bash_really_runs_what_is_judged(tmp_path) -> None:
    """The forms above are what bash evaluates: each one here runs its payload for real."""
    for command in (
        "x='a[$(touch ran)]'; echo $((x))",
        "x='$(touch ran)'; echo ${x@P}",
        "printf -v 'a[$(touch ran)]' %s 1",
        "compgen -C 'touch ran' x",
        "x='a[$(touch ran)]'; echo ${!x}",
        "x='a[$(touch ran)]'; [[ $x -eq 1 ]]",
    ):
        subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, check=False)
        assert (tmp_path / "ran").exists(), command
        (tmp_path / "ran").unlink()
        assert judged(command.replace("touch ran", "rm f")).dangerous


def test_a_counter_assigned_in_many_loops_is_one_value_to_judge() -> None:
    """Four hundred loops on `j` and a chain of sums: plain arithmetic, not too much to read."""
    script = "\n".join(
        f"x{i}=$((x{i - 1} + {i})); for ((j=0; j<x{i}; j++)); do echo ${{a[j]}} $((j*2)); done"
        for i in range(1, 400)
    )
    assert not judged(script).dangerous
