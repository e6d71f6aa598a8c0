"""Each tool's cost joined with its calls, and the suggestions, on sessions whose calls are
known in advance (ours and one of Hermes's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hermes_store import HermesSession, bridge, call, write_store
from tests.support.tools import noop, schema
from tests.support.usage import at
from workbench.core.commands import CommandFailed
from workbench.core.config import config_path, preview_config
from workbench.core.costs import offered_costs
from workbench.core.runtime import load_runtime
from workbench.core.tools import deferral
from workbench.core.usage import change
from workbench.core.usage.hermes_store import store_path
from workbench.core.usage.report import ToolUse, _candidate, gather, usage_report

CONFIG = """\
# my own notes, kept
model:
  default: gpt-4o
  provider: custom
  base_url: http://127.0.0.1:9/v1
tools:
  timeout: 120   # ours too
"""
LONG = "Writes a long report. " + "It explains every part of the project in detail. " * 40


@pytest.fixture
def runtime(home: Path, module_registry, sessions):
    """gpt-4o's sizes; two large tools of a toolset sent in full (`project`): one of them
    named as a core tool of Hermes's. One Hermes session, the newest, calls that one."""
    module_registry.register("project_report", "project", schema(LONG), noop)
    module_registry.register("text_to_speech", "project", schema(LONG), noop)
    write_store(
        store_path(home),
        [
            HermesSession(
                "hx", at(6), 3, [(at(6, 5), [bridge("text_to_speech"), call("read_file")])]
            )
        ],
    )
    runtime = load_runtime(home, load_plugins=False)
    config_path(home).write_text(CONFIG)
    runtime.reload_config()
    return runtime


def used(row: ToolUse) -> tuple[int, int, float | None]:
    return row.calls, row.sessions, row.last_used


def test_counts_last_use_and_cost_per_tool(runtime, home: Path) -> None:
    config_path(home).write_text(CONFIG + "  tool_search:\n    enabled: on\n")  # Hermes's
    runtime.reload_config()
    report = usage_report(runtime, sessions=6)
    g = report.gathered
    assert [s.source for s in g.sessions] == ["hermes-tui"] * 5 + ["hermes"]
    assert g.requests_per_session == 3.0  # (3 + 2 + 4 + 4 + 2 + 3) / 6
    rows = {r.name: r for r in report.tools}
    costs = offered_costs(runtime)
    assert rows["read_file"] == ToolUse(
        "read_file", "eager", costs.tools["read_file"].tokens, 7, 6, at(6, 5)
    )
    assert used(rows["terminal"]) == (3, 3, at(4, 10))
    assert used(rows["project_report"]) == (1, 1, at(2, 10))
    assert used(rows["text_to_speech"]) == (1, 1, at(6, 5))
    assert used(rows["write_file"]) == (0, 0, None)  # only in the older session
    assert rows["web_search"].state == "unavailable"  # no key: not sent
    listed = rows["session_search"]  # deferred by Hermes's default: the bridge's tokens
    assert (listed.state, listed.tokens) == ("listed", 0)
    assert report.bridge == costs.bridge > 0
    assert report.tokens == costs.total


def test_suggestions_and_their_savings(runtime) -> None:
    report = usage_report(runtime, sessions=6)
    costs = offered_costs(runtime)
    found = {(s.tool, s.action): s for s in report.suggestions}
    assert set(found) == {
        ("search_files", "off"),  # never called in these six
        ("patch", "off"),
        ("write_file", "off"),
        ("skill_view", "off"),  # the skills toolset is on by default, as in Hermes
        ("skill_manage", "off"),
        ("project_report", "defer"),  # in one of six, large, sent in full
    }  # clarify, the agent's own tools and the core text_to_speech: never
    for s in report.suggestions:
        assert s.per_session == round(s.per_request * 3.0)
        assert s.preview.tokens_before == costs.total
        assert s.per_request == s.preview.saving > 0
    assert found["write_file", "off"].per_request == costs.tools["write_file"].tokens
    assert found["write_file", "off"].why == "never called in the last 6 sessions"
    assert found["project_report", "defer"].why == "called in 1 of the last 6 sessions"
    savings = [s.per_session for s in report.suggestions]
    assert savings == sorted(savings, reverse=True)


def test_applying_a_suggestion_saves_what_its_preview_said(runtime, home: Path) -> None:
    report = usage_report(runtime, sessions=6)
    chosen = next(s for s in report.suggestions if s.tool == "project_report")
    assert chosen.preview.key == deferral.DEFER_KEY
    assert chosen.preview.after == sorted([*deferral.DEFAULT_DEFER, "project_report"])
    done = change.apply(runtime, chosen.tool, chosen.action)
    assert deferral.DEFER_KEY in done.message
    text = config_path(home).read_text()
    assert "# my own notes, kept" in text and "timeout: 120   # ours too" in text
    assert offered_costs(runtime).total == chosen.preview.tokens_after
    off = next(s for s in usage_report(runtime, sessions=6).suggestions if s.tool == "patch")
    change.apply(runtime, off.tool, off.action)
    assert load_runtime(home, load_plugins=False).config.get("tools.disabled") == ["patch"]
    assert offered_costs(runtime).total == off.preview.tokens_after


def test_a_wider_window_changes_what_is_suggested(runtime) -> None:
    report = usage_report(runtime, sessions=7)  # the oldest session called write_file
    assert "write_file" not in {s.tool for s in report.suggestions}
    narrow = usage_report(runtime, sessions=3)  # s4, s5 and hx: no project_report
    assert ("project_report", "off") in {(s.tool, s.action) for s in narrow.suggestions}


def test_too_few_sessions_suggest_nothing(runtime) -> None:
    report = usage_report(runtime, sessions=2)
    assert report.suggestions == []
    assert "suggestions need 3 sessions read at least" in report.notes


def test_no_deferral_is_suggested_when_tool_search_is_off(runtime, home: Path) -> None:
    config_path(home).write_text(CONFIG + "  tool_search:\n    enabled: off\n")
    runtime.reload_config()
    report = usage_report(runtime, sessions=6)
    assert {s.action for s in report.suggestions} == {"off"}
    assert any("tool search is off" in n for n in report.notes)


DENSE = "Q7 " * 500  # 1,500 characters, about 580 tokens: large, yet smaller than the bridge


@pytest.mark.parametrize(("enabled", "suggested"), [("auto", False), ("on", True)])
def test_a_defer_suggestion_accounts_for_autos_gate(
    home: Path, module_registry, sessions, enabled: str, suggested: bool
) -> None:
    """Deferring a large, rarely called tool beside session_search: under `on` it saves its
    definition; under auto the request would grow, so auto would send both in full and the
    change saves nothing: not suggested."""
    module_registry.register("dense_report", "project", schema(DENSE), noop)
    write_store(
        store_path(home), [HermesSession("hx", at(6), 3, [(at(6, 5), [call("dense_report")])])]
    )
    runtime = load_runtime(home, load_plugins=False)
    config_path(home).write_text(
        CONFIG + f"  tool_search:\n    enabled: {enabled}\n    defer: [session_search]\n"
    )
    runtime.reload_config()
    costs = offered_costs(runtime)
    assert costs.tools["dense_report"].tokens >= 400  # report.LARGE: a candidate
    report = usage_report(runtime, sessions=6)
    row = next(r for r in report.tools if r.name == "dense_report")
    assert _candidate(row, 6, deferral.ToolSearchSettings.from_config(runtime.config))[0] == "defer"
    preview = change.preview(runtime, costs, "dense_report", change.DEFER)
    found = {s.tool: s for s in report.suggestions if s.action == change.DEFER}
    assert ("dense_report" in found) is suggested
    if suggested:
        assert found["dense_report"].per_request == preview.saving > 0
    else:
        assert costs.held == ("session_search",) and preview.saving == 0
        then = offered_costs(
            runtime,
            preview_config(
                runtime.config, change.plan(runtime, "dense_report", change.DEFER).mutate
            ),
        )
        assert then.held == ("dense_report", "session_search") and then.deferred == ()


def test_clarify_is_never_suggested() -> None:
    settings = deferral.ToolSearchSettings.from_raw(None)
    unused = ToolUse("clarify", "eager", 900, 0, 0, None)
    rare = ToolUse("clarify", "eager", 900, 1, 1, 1.0)
    assert _candidate(unused, 20, settings) == (None, "")
    assert _candidate(rare, 20, settings) == (None, "")


def test_a_damaged_hermes_store_is_said_and_ours_are_still_read(runtime, home: Path) -> None:
    store_path(home).write_bytes(b"not a database" * 500)
    report = usage_report(runtime, sessions=5)
    assert len(report.gathered.sessions) == 5
    (problem,) = report.gathered.problems
    assert "could not be read" in problem


def test_an_unknown_change_is_refused(runtime) -> None:
    with pytest.raises(CommandFailed):
        change.plan(runtime, "read_file", "explode")
    with pytest.raises(CommandFailed):  # the agent's own tools have no switch of their own
        change.plan(runtime, "todo", "off")


def test_gather_takes_the_newest_of_both_sources(home: Path, sessions) -> None:
    write_store(store_path(home), [HermesSession("old", at(-1), 1), HermesSession("new", at(9), 1)])
    got = gather(home, 3)
    assert [s.id for s in got.sessions] == [sessions[4], sessions[5], "new"]
