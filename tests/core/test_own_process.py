"""Children of the app that are Python processes of ours hide the keys they inherit too."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from workbench.core.own_process import hide_environment


def test_the_token_counting_child_hides_the_keys_it_inherited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workbench.core.model import tokens

    key = f"sk-test-SECRET-{secrets.token_hex(8)}"
    monkeypatch.setenv("OPENAI_API_KEY", key)  # started now, the child inherits it
    tokens._stop_child()
    try:
        assert tokens.ChildEncoding("o200k_base").count("hello world") == 2  # it has started
        environ = Path(f"/proc/{tokens._child_process.pid}/environ").read_bytes()
    except PermissionError:  # without CAP_SYS_PTRACE a non-dumpable process is closed to root
        environ = b""
    finally:
        pid_left = tokens._child_process
        tokens._stop_child()
    assert pid_left is not None
    assert key.encode() not in environ


def test_outside_linux_or_without_proc_nothing_is_hidden(monkeypatch) -> None:
    from workbench.core import own_process

    monkeypatch.setattr(own_process, "_bounds", lambda first, last: None)
    assert hide_environment() == []
    assert own_process.hide_arguments(["a-secret-value"]) == 0
