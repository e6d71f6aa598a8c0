"""What the model is offered and what it costs: the sizes are those of the request sent."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.conversation import tool_messages
from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.config import config_path
from workbench.core.costs import offered_costs
from workbench.core.model.tokens import PER_DEFINITION, PER_MESSAGE, Encoding, Meter
from workbench.core.runtime import load_runtime


def sent_tools(request: dict) -> list[dict]:
    return request.get("tools", [])


async def test_the_sizes_add_up_to_the_tools_of_the_request_sent(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    # the default: every tool sent in full, since auto defers only when the request gets
    # smaller (tools sent behind tool_search: tests/core/test_deferral_costs.py)
    fake.add(text("hello"))
    session, _ = await make_session()
    await session.turn("hi")
    sent = sent_tools(fake.requests[0])
    costs = offered_costs(session.runtime, model="gpt-4o", base_url=fake.url, api_key="k")
    assert (costs.tokenizer, costs.exact) == ("o200k_base", True)
    # the same tools, each counted as the tokenizer counts its definition
    assert sorted(c.name for c in costs.offered) == sorted(d["function"]["name"] for d in sent)
    encoding = Encoding("o200k_base")
    for definition in sent:
        cost = costs.tools[definition["function"]["name"]]
        expected = encoding.count(json.dumps(definition, ensure_ascii=False)) + PER_DEFINITION
        assert cost.tokens == expected
    # the parts and the framing make the total, the meter's count of the request's tools
    assert costs.total == PER_MESSAGE + sum(c.tokens for c in costs.offered)
    assert costs.total == Meter(encoding).tools(sent)
    assert costs.offered[0].tokens >= costs.offered[-1].tokens  # largest first
    file_tools = [c for c in costs.tools.values() if c.toolset == "file"]
    assert costs.toolset("file") == sum(c.tokens for c in file_tools) > 0
    assert costs.source("agent") == sum(
        c.tokens
        for c in costs.tools.values()
        if c.name in ("todo", "clarify", "session_search", "delegate_task")
    )
    await session.close()


async def test_a_small_models_lean_profile_is_measured_as_it_is_sent(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(text("hello"))
    session, _ = await make_session(lean=True)
    await session.turn("hi")
    sent = {d["function"]["name"] for d in sent_tools(fake.requests[0])}
    # no endpoint configured: the bundled model, lean, counted with its own (Qwen) table
    costs = offered_costs(session.runtime)
    assert costs.lean and (costs.tokenizer, costs.exact) == ("qwen3", True)
    assert {c.name for c in costs.offered} == sent
    assert "todo" in costs.tools and not costs.tools["todo"].offered
    assert "lean profile" in costs.describe()
    # measured without the options a small model is not offered, as sent
    read = next(d for d in sent_tools(fake.requests[0]) if d["function"]["name"] == "read_file")
    assert set(read["function"]["parameters"]["properties"]) == {"path", "offset"}
    expected = Encoding("qwen3").count(json.dumps(read, ensure_ascii=False)) + PER_DEFINITION
    assert costs.tools["read_file"].tokens == expected
    await session.close()


def test_a_model_without_a_table_is_estimated_and_says_so(home: Path) -> None:
    runtime = load_runtime(home, load_plugins=False)
    config_path(home).write_text(
        "model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  default: my-model\n"
    )
    runtime.reload_config()
    costs = offered_costs(runtime)
    assert (costs.tokenizer, costs.exact) == ("estimate", False)
    assert "estimated" in costs.describe()
    assert costs.total > 0


async def test_a_tool_switched_off_is_not_offered_and_a_model_calling_it_is_told_so(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    runtime = load_runtime(home, load_plugins=False)
    config_path(home).write_text("tools:\n  disabled: [read_file]\n")
    runtime.reload_config()
    fake.add(tools(("read_file", {"path": "a.txt"})), text("sorry"))
    session, _ = await make_session(runtime=runtime)
    await session.turn("read a.txt")
    assert "read_file" not in {d["function"]["name"] for d in sent_tools(fake.requests[0])}
    (result,) = tool_messages(fake.requests[1])
    # the answer to any tool it was not offered, as for an unknown one
    assert result["content"].startswith("Tool 'read_file' does not exist. Available tools:")
    await session.close()
