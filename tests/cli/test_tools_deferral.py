"""`hermes-tui tools` with a Hermes 0.21 config: each tool's state, the request's real cost,
and the switch between sent in full and deferred, previewed then saved in Hermes's key."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.core.test_deferral_costs import HERMES_021
from tests.support.cli import run


def write_config(home: Path, text: str = HERMES_021) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(text)
    return path


def test_tools_json_shows_each_tools_state_and_the_cost_with_deferral(cli_env, home) -> None:
    write_config(home)
    out = run(cli_env, "tools", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {r["name"]: r for r in data["tools"]}
    assert rows["read_file"]["state"] == "eager"
    assert rows["read_file"]["per_request"] == rows["read_file"]["tokens"]
    assert rows["web_search"]["state"] is None  # not offered (no key): no state
    deferral = data["offered"]["deferral"]
    assert deferral["states"]["session_search"] == deferral["states"]["todo"] == "listed"
    assert deferral["states"]["clarify"] == "eager"
    assert 0 < deferral["per_request"]["todo"] < deferral["per_request"]["clarify"]
    assert set(deferral["deferred"]) == {"todo", "session_search"}
    assert deferral["listing"] == "full" and deferral["warnings"] == []
    offered = data["offered"]
    assert offered["tokenizer"] == "o200k_base"
    # the tools' part: the eager definitions, the framing and the bridge with its listing
    eager = sum(
        rows[n]["tokens"] for n, s in deferral["states"].items() if s == "eager" and n in rows
    )
    assert offered["tokens"] > eager + deferral["bridge_tokens"] > deferral["bridge_tokens"] > 0
    text = run(cli_env, "tools").stdout
    assert re.search(r"✔ session_search +\d+  deferred, listed\n", text)
    assert re.search(r"✔ read_file +\d+  sent in full\n", text)
    assert "2 deferred behind tool_search (2 listed)" in text


def test_a_bad_value_is_said_and_the_rest_works(cli_env, home) -> None:
    write_config(home, HERMES_021.replace("listing: auto", "listing: sometimes"))
    out = run(cli_env, "tools")
    assert out.returncode == 0
    assert "tools.tool_search.listing is 'sometimes', not auto, on or off: auto is used" in (
        out.stderr
    )
    listed = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["deferral"]
    assert listed["warnings"] and listed["listing"] == "full"


def test_defer_a_tool_previewed_then_saved_in_hermes_keys(cli_env, home) -> None:
    path = write_config(home)
    before = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["tokens"]
    dry = run(cli_env, "tools", "defer", "terminal", "--dry-run")
    assert dry.returncode == 0 and "nothing was saved" in dry.stdout
    assert path.read_text() == HERMES_021
    change = int(
        dry.stdout.split("tool terminal deferred: ")[1].split(" tokens")[0].replace("−", "-")
    )
    done = run(cli_env, "tools", "defer", "terminal")
    assert done.returncode == 0 and "tools.tool_search.defer" in done.stdout
    assert "# written by Hermes 0.21, then by hand" in path.read_text()
    after = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]
    assert after["deferral"]["states"]["terminal"] == "listed"
    assert after["tokens"] - before == change
    assert run(cli_env, "tools", "eager", "terminal").returncode == 0
    assert "terminal" not in path.read_text().split("defer:")[1]


def test_auto_says_why_it_sends_a_few_small_tools_in_full(cli_env, home) -> None:
    write_config(home, HERMES_021.replace("enabled: on  ", "enabled: auto"))
    data = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]
    deferral = data["deferral"]
    assert set(deferral["states"].values()) == {"eager"} and deferral["deferred"] == []
    assert deferral["bridge_tokens"] == 0 and data["tokens"] == deferral["tokens_all_eager"]
    assert deferral["held"] == ["session_search", "todo"]
    reason = deferral["reason"]
    assert re.fullmatch(
        r"auto: deferring session_search, todo would add [\d,]+ tokens a request; sent in full",
        reason,
    )
    text = run(cli_env, "tools").stdout
    assert re.search(r"✔ todo +\d+  sent in full \(auto: see below\)\n", text)
    assert reason in text and "tools.tool_search.enabled: on defers anyway" in text
    # deferring one more small tool: saved, and said to be sent in full all the same
    done = run(cli_env, "tools", "defer", "read_file")
    assert done.returncode == 0 and "tools.tool_search.defer" in done.stdout
    assert "note: auto: deferring read_file, session_search, todo would add" in done.stderr
    after = json.loads(run(cli_env, "tools", "--json").stdout)["offered"]["deferral"]
    assert after["states"]["read_file"] == "eager" and after["deferred"] == []
