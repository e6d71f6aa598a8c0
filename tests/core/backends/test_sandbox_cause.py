"""What a failed command's output reads like when it reads like the sandbox's refusal: a
possibility for the model only (the cause a person is shown comes from the command's
analysis: tests/core/execution/test_sandbox_refusal.py). Lines as commands really print
them under bubblewrap."""

from __future__ import annotations

import json

import pytest

from workbench.core.backends.sandbox_cause import (
    failed_output,
    output_suggests,
    with_sandbox_note,
)

HIDDEN = ["/home/u/.ssh", "/home/u/.hermes", "/home/u/.netrc"]


@pytest.mark.parametrize(
    ("output", "reads"),
    [
        ("bash: line 1: /srv/out.txt: Read-only file system\n", "a write refused as read-only"),
        ("npm error code EROFS\nnpm error syscall open\n", "a write refused as read-only"),
        ("cat: /home/u/.ssh/id_rsa: No such file or directory\n", "/home/u/.ssh missing"),
        ("git@github.com: Permission denied (publickey).\n", "ssh without its keys"),
    ],
)
def test_the_output_is_read_as_a_possibility_only(output: str, reads: str) -> None:
    said = output_suggests(output, network=True, hidden=HIDDEN)
    assert said is not None and said.startswith(reads)
    assert output.splitlines()[0].strip()[:40] in said  # the line it read, quoted


def test_the_output_of_a_network_failure_reads_so_only_while_there_is_none() -> None:
    line = "curl: (6) Could not resolve host: example.org\n"
    assert output_suggests(line, network=False, hidden=HIDDEN).startswith("a network failure")
    assert output_suggests(line, network=True, hidden=HIDDEN) is None
    assert (
        output_suggests("cat: /home/u/.sshx/k: No such file", network=True, hidden=HIDDEN) is None
    )


def test_a_command_that_succeeded_or_did_not_run_is_not_a_failure() -> None:
    def result(**fields: object) -> str:
        return json.dumps({"output": "x: Read-only file system\n", "error": None, **fields})

    assert failed_output(result(exit_code=1)) == "x: Read-only file system\n"
    assert failed_output(result(exit_code=0)) is None  # it went on and succeeded
    assert failed_output(result(exit_code=None, status="timeout")) is None
    assert failed_output(result(exit_code=-1, status="refused")) is None
    assert failed_output("not json") is None


def test_the_note_is_one_field_of_the_result() -> None:
    noted = json.loads(with_sandbox_note(json.dumps({"output": "o", "exit_code": 1}), "why"))
    assert noted == {"output": "o", "exit_code": 1, "sandbox": "why"}
    assert with_sandbox_note("plain text", "why") == "plain text\n[sandbox] why"
