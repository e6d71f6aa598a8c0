"""Which backend `terminal.sandbox` gives: confined where bubblewrap works, unless told not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import sandbox as support
from workbench.core.backends import LocalBackend, backend_from_config
from workbench.core.backends.limits import DEFAULT, Limits
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status
from workbench.core.config import Config

needs_bwrap = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from support.no_bwrap(tmp_path, monkeypatch)


def backend(tmp_path: Path, **terminal: object):
    data = {"terminal": terminal} if terminal else {}
    return backend_from_config(Config(tmp_path / "config.yaml", data), tmp_path / "hermes")


@needs_bwrap
@pytest.mark.parametrize("value", [None, "auto", "AUTO"])
def test_by_default_commands_run_confined_with_the_network(tmp_path: Path, value) -> None:
    found = backend(tmp_path) if value is None else backend(tmp_path, sandbox=value)
    assert isinstance(found, SandboxBackend) and found.sandboxed and found.network == "on"
    assert found.limits == Limits(memory_mb=1024, cpu_seconds=600, max_procs=256, tmp_mb=1024)
    assert found.label() == "terminal: sandboxed" and not found.problems


@needs_bwrap
def test_the_write_roots_and_the_network_setting_reach_the_sandbox(tmp_path: Path) -> None:
    config = Config(
        tmp_path / "config.yaml",
        {"terminal": {"sandbox_network": False}, "approvals": {"write_roots": ["~/notes"]}},
    )
    found = backend_from_config(config, tmp_path / "hermes")
    assert isinstance(found, SandboxBackend) and found.network == "off"
    assert found.write_roots == (str(Path.home() / "notes"),)
    assert found.label() == "terminal: sandboxed, no network"


def test_false_runs_unconfined_and_says_so(tmp_path: Path) -> None:
    found = backend(tmp_path, sandbox=False)
    assert type(found) is LocalBackend and not found.sandboxed
    assert found.label() == "terminal: NOT confined: terminal.sandbox is false"
    assert found.describe().endswith("; the approval gate alone decides")


def test_a_value_that_cannot_be_read_keeps_it_on(tmp_path: Path) -> None:
    found = backend(tmp_path, sandbox="maybe")
    assert isinstance(found, SandboxBackend)
    assert found.problems == ["terminal.sandbox must be auto, true or false, not 'maybe': it is on"]


def test_without_bubblewrap_the_default_is_unconfined_and_true_refuses(
    tmp_path: Path, no_bwrap: str
) -> None:
    found = backend(tmp_path)
    assert type(found) is LocalBackend and not found.sandboxed
    assert found.label().startswith("terminal: NOT confined: no sandbox here (bwrap is not")
    asked_for = backend(tmp_path, sandbox=True)
    assert isinstance(asked_for, SandboxBackend) and not asked_for.sandboxed
    assert asked_for.working()[0] is False and asked_for.label() == "terminal: sandbox NOT WORKING"


@needs_bwrap
def test_an_untrusted_config_cannot_widen_what_commands_reach(tmp_path: Path) -> None:
    """A config.yaml with a second name may have been rewritten by the agent: its switch
    off of the sandbox, its passthrough of secrets and its write roots are not read."""
    data = {
        "terminal": {
            "sandbox": False,
            "env_passthrough": ["OPENAI_API_KEY"],
            "network": "host",
            "bubblewrap_max_procs": 0,
            "sandbox_tmp_mb": 0,
        },
        "approvals": {"write_roots": ["/"]},
    }
    config = Config(tmp_path / "config.yaml", data, untrusted="it has 2 hard links")
    found = backend_from_config(config, tmp_path / "hermes")
    assert isinstance(found, SandboxBackend) and found.sandboxed
    assert found.passthrough == () and found.write_roots == ()
    assert found.network == "on" and found.limits == DEFAULT
    assert any("is not trusted (it has 2 hard links)" in p for p in found.problems)
    trusted = backend_from_config(Config(tmp_path / "config.yaml", data), tmp_path / "hermes")
    assert type(trusted) is LocalBackend and trusted.passthrough == ("OPENAI_API_KEY",)


@needs_bwrap
def test_npm_gets_a_private_cache_in_the_sandbox(tmp_path: Path) -> None:
    """The home is read-only inside: npm's cache goes to the sandbox's own /tmp."""
    found = backend(tmp_path)
    spawn = found.shell("true", str(tmp_path), 10, session=str(tmp_path))
    assert spawn.release is not None
    spawn.release()
    assert spawn.env["npm_config_cache"] == "/tmp/.npm"


@needs_bwrap
@pytest.mark.parametrize(
    ("terminal", "network"),
    [
        ({"network": True}, "on"),  # YAML reads a bare `on` as true
        ({"network": "on"}, "on"),
        ({"network": "HOST"}, "host"),
        ({"network": False}, "off"),
        ({"sandbox_network": True}, "on"),
        ({"sandbox_network": False}, "off"),
        ({"network": "host", "sandbox_network": False}, "host"),  # the newer key decides
    ],
)
def test_the_network_setting(tmp_path: Path, terminal: dict, network: str) -> None:
    found = backend(tmp_path, **terminal)
    assert isinstance(found, SandboxBackend) and found.network == network
    assert not found.problems


@needs_bwrap
@pytest.mark.parametrize(
    ("terminal", "problem"),
    [
        ({"network": "lan"}, "terminal.network must be on, host or off, not 'lan'"),
        ({"sandbox_network": "yes"}, "terminal.sandbox_network must be on, host or off, not 'yes'"),
    ],
)
def test_a_network_that_cannot_be_read_is_off(tmp_path: Path, terminal: dict, problem) -> None:
    found = backend(tmp_path, **terminal)
    assert isinstance(found, SandboxBackend) and found.network == "off"
    assert found.problems == [f"{problem}: the network is off"]
    assert found.label() == "terminal: sandboxed, no network"


@needs_bwrap
def test_hermess_limit_keys_and_their_environment_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMINAL_BUBBLEWRAP_CPU_SECONDS", "45")
    monkeypatch.setenv("TERMINAL_BUBBLEWRAP_MEMORY_MB", "64")  # config.yaml's value wins
    found = backend(tmp_path, bubblewrap_memory_mb=512, bubblewrap_max_procs=0, sandbox_tmp_mb=8)
    assert isinstance(found, SandboxBackend) and not found.problems
    assert found.limits == Limits(memory_mb=512, cpu_seconds=45, max_procs=0, tmp_mb=8)
    assert "limits: 512 MB memory, 45 s CPU, no process limit, 8 MB /tmp" in found.describe()


@needs_bwrap
@pytest.mark.parametrize("value", [-1, "lots", True, 1.5])
def test_a_limit_that_cannot_be_read_keeps_the_default(tmp_path: Path, value: object) -> None:
    found = backend(tmp_path, bubblewrap_max_procs=value)
    assert isinstance(found, SandboxBackend) and found.limits.max_procs == 256
    assert found.problems == [
        f"terminal.bubblewrap_max_procs must be a whole number (0: no limit), not {value!r}: 256"
    ]


def test_terminal_timeout_is_the_backends_command_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TERMINAL_TIMEOUT", raising=False)
    assert backend(tmp_path).command_timeout == 180  # Hermes's default
    assert backend(tmp_path, timeout=42).command_timeout == 42
    assert backend(tmp_path, timeout="soon").command_timeout == 180  # doctor says why
    assert backend(tmp_path, backend="docker", timeout=9).command_timeout == 9  # every backend
