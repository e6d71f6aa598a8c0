"""A Hermes 0.21 config.yaml with tools.tool_search: read, sized as sent, and switched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.agent.offered import offered
from workbench.core.commands import CommandFailed, set_deferred
from workbench.core.config import config_path
from workbench.core.costs import offered_costs, preview_defer
from workbench.core.model.tokens import PER_DEFINITION, PER_MESSAGE, Encoding
from workbench.core.runtime import load_runtime
from workbench.core.session import sizing_tools
from workbench.core.tools.deferral import bridge_schemas, build_listing

HERMES_021 = """\
# written by Hermes 0.21, then by hand
model:
  default: gpt-4o
  provider: custom
  base_url: http://127.0.0.1:9/v1
  context_length: 128000
tools:
  tool_search:
    enabled: on          # tool search on once a tool is deferrable
    threshold_pct: 5
    search_default_limit: 5
    max_search_limit: 25
    listing: auto
    listing_max_tokens: 4000
    defer:               # replaces the curated list
      - session_search
      - todo
"""


@pytest.fixture
def runtime(home: Path):
    runtime = load_runtime(home, load_plugins=False)
    config_path(home).write_text(HERMES_021)
    runtime.reload_config()
    return runtime


def test_a_hermes_config_is_read_and_each_tool_has_its_state(runtime) -> None:
    costs = offered_costs(runtime)
    states = {c.name: c.state.value for c in costs.offered}
    assert states["session_search"] == states["todo"] == "listed"
    assert states["read_file"] == states["clarify"] == states["terminal"] == "eager"
    assert costs.listing_form == "full" and costs.warnings == ()
    assert "2 deferred behind tool_search (2 listed)" in costs.describe()
    # what each adds to a request as sent: a definition, or its line in the listing
    assert costs.tools["read_file"].per_request == costs.tools["read_file"].tokens
    line = "- todo: Keep the task list for this session."
    assert costs.tools["todo"].per_request == Encoding("o200k_base").count(line)


def test_with_the_listing_off_a_deferred_tool_is_found_only_by_search(runtime, home) -> None:
    config_path(home).write_text(HERMES_021.replace("listing: auto", "listing: off"))
    runtime.reload_config()
    costs = offered_costs(runtime)
    assert costs.tools["todo"].state.value == "searchable" and costs.listing_form == "none"
    assert costs.tools["todo"].per_request == 0
    assert "2 deferred behind tool_search (0 listed)" in costs.describe()


def test_the_cost_with_deferral_is_the_request_counted_by_hand(runtime) -> None:
    costs = offered_costs(runtime)
    assert (costs.tokenizer, costs.exact) == ("o200k_base", True)
    # the tools array as it is sent, built here: every offered tool but the two deferred,
    # then the three bridge tools with the listing (written out) in tool_search's description
    definitions, _ = offered(
        sizing_tools(runtime, runtime.config), runtime.effective_tools(), False
    )
    eager = [d for d in definitions if d["function"]["name"] not in ("session_search", "todo")]
    by_name = {d["function"]["name"]: d for d in definitions}

    # a line is the description's first sentence, cut at a word within 60 characters
    assert by_name["session_search"]["function"]["description"].startswith(
        "Full-text search over the user's past sessions with you (messages, tool calls). "
    )
    listing = (
        "Deferred tools (load a schema with `tool_describe`, run with `tool_call`):\n"
        "session_search tools (1):\n"
        "- session_search: Full-text search over the user's past sessions with you…\n"
        "todo tools (1):\n- todo: Keep the task list for this session."
    )
    deferred = [by_name["session_search"], by_name["todo"]]
    built = build_listing(deferred, {"session_search": "session_search", "todo": "todo"}, 4000)
    assert built.text == listing
    bridge = bridge_schemas(2, built)
    assert bridge[0]["function"]["description"].endswith("\n\n" + listing)
    request_tools = eager + bridge

    encoding = Encoding("o200k_base")
    by_hand = PER_MESSAGE + sum(
        encoding.count(json.dumps(d, ensure_ascii=False)) + PER_DEFINITION for d in request_tools
    )
    assert costs.total == by_hand
    all_eager = PER_MESSAGE + sum(
        encoding.count(json.dumps(d, ensure_ascii=False)) + PER_DEFINITION for d in definitions
    )
    assert costs.undeferred == all_eager
    assert costs.bridge == by_hand - PER_MESSAGE - sum(
        costs.tools[d["function"]["name"]].tokens for d in eager
    )


def test_values_hermes_cannot_use_fall_back_and_are_said(runtime, home: Path) -> None:
    config_path(home).write_text(
        HERMES_021.replace("threshold_pct: 5", "threshold_pct: lots").replace(
            "    defer:               # replaces the curated list\n      - session_search\n"
            "      - todo\n",
            "    defer: todo\n",
        )
    )
    runtime.reload_config()
    costs = offered_costs(runtime)
    assert any("threshold_pct is 'lots'" in w for w in costs.warnings)
    assert any("defer is 'todo', not a list" in w for w in costs.warnings)
    # the curated default is used: session_search is deferred, todo is not
    assert costs.tools["session_search"].state.value == "listed"
    assert costs.tools["todo"].state.value == "eager"


def test_the_switch_previewed_is_the_one_saved_in_hermes_keys_comments_kept(
    runtime, home: Path
) -> None:
    before = offered_costs(runtime)
    change = preview_defer(runtime, before, "read_file", True)
    # read_file's definition goes; a line in the listing comes
    assert -before.tools["read_file"].tokens < change < 0
    done = set_deferred(runtime, "read_file", True)
    assert "tools.tool_search.defer" in done.message
    text = config_path(home).read_text()
    assert "# written by Hermes 0.21, then by hand" in text
    assert "enabled: on          # tool search on once a tool is deferrable" in text
    assert "defer:               # replaces the curated list" in text
    assert "replaces the curated list\n    - read_file\n    - session_search\n    - todo\n" in text
    assert config_path(home).stat().st_mode & 0o777 == 0o600
    restarted = load_runtime(home, load_plugins=False)  # a new process reads it back
    after = offered_costs(restarted)
    assert after.tools["read_file"].state.value == "listed"
    assert after.total - before.total == change
    # and back: sent in full again
    back = preview_defer(restarted, after, "read_file", False)
    set_deferred(restarted, "read_file", False)
    assert offered_costs(restarted).total - after.total == back == -change


def test_auto_sends_them_in_full_when_deferring_costs_more_and_says_by_how_much(
    runtime, home: Path
) -> None:
    on = offered_costs(runtime)
    config_path(home).write_text(HERMES_021.replace("enabled: on  ", "enabled: auto"))
    runtime.reload_config()
    auto = offered_costs(runtime)
    assert {c.state.value for c in auto.offered} == {"eager"} and auto.bridge == 0
    assert auto.total == auto.undeferred == on.undeferred
    assert auto.held == ("session_search", "todo")
    # by how much deferring them would have grown every request: what `on` sends
    assert auto.held_extra == on.total - auto.total > 0
    said = f"auto: deferring session_search, todo would add {auto.held_extra:,} tokens a request"
    assert said in auto.describe() and said in auto.held_reason
    assert "sent in full" in auto.held_reason and on.held == () and on.held_reason == ""


def test_an_unknown_tool_is_refused_and_nothing_is_written(runtime, home: Path) -> None:
    with pytest.raises(CommandFailed, match="unknown tool 'nope'"):
        set_deferred(runtime, "nope", True)
    assert config_path(home).read_text() == HERMES_021
