"""Real Hermes plugins from PyPI (installed by the test extra), loaded through their entry points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.plugins import make_home, make_manager
from workbench.core.execution.executor import Executor
from workbench.core.plugins import HookRegistry
from workbench.core.tools.registry import ToolRegistry

pytest.importorskip("hermes_clawclaw")
pytest.importorskip("noisegate")


@pytest.fixture
def hooks() -> HookRegistry:
    return HookRegistry()


def real_manager(
    tmp_path: Path, reg: ToolRegistry, hooks: HookRegistry, enabled: list[str], monkeypatch
):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `ccl` CLI here, as on most machines
    monkeypatch.setenv("HOME", str(tmp_path))  # noisegate keeps artifacts under HOME
    from workbench.core.plugins.sources import default_entry_points

    return make_manager(
        make_home(tmp_path, [], plugins={"enabled": enabled}),
        reg,
        hooks,
        entry_points=default_entry_points,
    )


def test_both_are_discovered_and_off_until_enabled(tmp_path, reg, hooks, monkeypatch) -> None:
    manager = real_manager(tmp_path, reg, hooks, [], monkeypatch)
    states = {s.key: s for s in manager.list()}
    assert states["clawclaw"].status == "disabled" and states["noisegate"].status == "disabled"
    assert (
        states["clawclaw"].manifest.source == "entrypoint"
        and states["clawclaw"].manifest.version == "0.2.0"
    )
    assert reg.get_all_tool_names() == []


def test_clawclaw_tools_are_hidden_by_their_check(tmp_path, reg, hooks, monkeypatch) -> None:
    manager = real_manager(tmp_path, reg, hooks, ["clawclaw"], monkeypatch)
    state = manager.states["clawclaw"]
    assert state.status == "loaded", state.error
    assert {"clawclaw_state", "clawclaw_run", "clawclaw_game_create-room"} <= set(state.tools)
    report = reg.availability_report(state.tools)
    assert not any(a.available for a in report.values())
    assert report["clawclaw_state"].reason == "check_clawclaw() returned False"
    assert reg.get_definitions(set(state.tools)) == []
    assert {
        "pre_gateway_dispatch",
        "pre_llm_call",
        "on_session_finalize",
        "on_session_reset",
    } <= set(state.hooks)
    assert state.cli_commands == ["clawclaw"]
    assert all(reg.get_entry(t).toolset == "clawclaw" for t in state.tools)


async def test_noisegate_transforms_noisy_tool_results(tmp_path, reg, hooks, monkeypatch) -> None:
    manager = real_manager(tmp_path, reg, hooks, ["noisegate"], monkeypatch)
    assert manager.states["noisegate"].hooks == [
        "transform_terminal_output",
        "transform_tool_result",
    ]
    noisy = (
        "\n".join(f"Downloading package {i}... 100%" for i in range(400))
        + "\nERROR: step 7 failed\n"
    )
    reg.register(
        "terminal",
        "terminal",
        {"description": "t"},
        lambda a, **k: json.dumps({"output": noisy, "exit_code": 1, "error": None}),
    )
    (outcome,) = await Executor(reg, hooks=hooks).run(
        [
            {
                "id": "1",
                "name": "terminal",
                "arguments": {"command": "pip install -r requirements.txt"},
            }
        ]
    )
    assert len(outcome.content) < len(noisy) / 4
    assert "[noisegate: omitted" in outcome.content
    assert outcome.status == "ok"
