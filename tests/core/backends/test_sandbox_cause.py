"""Telling a failure the sandbox caused from any other, on what commands really print there
(the lines below were printed by the commands named, run under bubblewrap)."""

from __future__ import annotations

import json

import pytest

from workbench.core.backends.sandbox_cause import (
    failed_output,
    sandbox_cause,
    with_sandbox_note,
)

HIDDEN = ["/home/u/.ssh", "/home/u/.hermes", "/home/u/.netrc"]


def cause(output: str, network: bool = True) -> str | None:
    return sandbox_cause(output, network=network, hidden=HIDDEN)


@pytest.mark.parametrize(
    "output",
    [
        "bash: line 1: /srv/out.txt: Read-only file system\n",  # echo x > /srv/out.txt
        "touch: cannot touch '/usr/x': Read-only file system\n",
        "mkdir: cannot create directory ‘/srv/d’: Read-only file system\n",
        "OSError: [Errno 30] Read-only file system: '/srv/o'\n",  # python3 open(..., 'w')
        "npm error code EROFS\nnpm error syscall open\n",
    ],
)
def test_a_refused_write_is_the_sandbox(output: str) -> None:
    found = cause(output)
    assert found is not None and found.startswith("the sandbox refused a write outside")


@pytest.mark.parametrize(
    "output",
    [
        "curl: (6) Could not resolve host: example.org\n",
        "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com\n",
        "npm error code EAI_AGAIN\n",
        "fatal: unable to access 'http://127.0.0.1:4/r.git/': Failed to connect to 127.0.0.1 "
        "port 4 after 0 ms: Couldn't connect to server\n",
        "127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n",
    ],
)
def test_a_network_failure_is_the_sandbox_only_while_it_has_no_network(output: str) -> None:
    assert cause(output, network=False).startswith("the sandbox has no network")
    assert cause(output, network=True) is None  # then the network itself failed


def test_a_hidden_place_reported_missing_or_refused_is_the_sandbox() -> None:
    assert cause("cat: /home/u/.ssh/id_rsa: No such file or directory\n") == (
        "the sandbox hides /home/u/.ssh (cat: /home/u/.ssh/id_rsa: No such file or directory)"
    )
    missing = "ls: cannot access '/home/u/.hermes': No such file or directory"
    assert cause(missing).startswith("the sandbox hides /home/u/.hermes")
    assert cause("Can't open user config file /home/u/.ssh/config: No such file or directory")
    # a longer name that only starts like a hidden one, or any other missing file: not it
    assert cause("cat: /home/u/.sshx/k: No such file or directory") is None
    assert cause("cat: /home/u/.hermes-notes: No such file or directory") is None
    assert cause("cat: missing.txt: No such file or directory") is None


def test_ssh_failing_to_log_in_is_the_sandbox_while_it_hides_the_keys() -> None:
    denied = "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote"
    assert cause(denied).startswith("the sandbox hides /home/u/.ssh, so ssh has no key")
    assert sandbox_cause(denied, network=True, hidden=["/home/u/.hermes"]) is None


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
