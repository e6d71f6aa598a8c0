"""server-everything (npm, the MCP conformance playground) beyond tools: its resources,
templates and prompts, subscriptions, logging, roots, elicitation and sampling."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.support import fake_openai
from tests.support.mcp import REAL_SERVERS as BIN
from tests.support.mcp import wait_until
from workbench.core.mcp import (
    CatalogChanged,
    ElicitAnswer,
    Elicitation,
    MCPManager,
    ResourceUpdated,
    ServerAsks,
    ServerLog,
)
from workbench.core.mcp import catalog as cat
from workbench.core.mcp.sampling import endpoint_sampler
from workbench.core.tools.registry import ToolRegistry

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not BIN["everything"].exists(), reason="run `make mcp-servers` first"),
]


@pytest.fixture
def everything(tmp_path: Path, reg: ToolRegistry):
    events: list[object] = []
    asks = ServerAsks([tmp_path])
    manager = MCPManager.from_config(
        reg,
        {"ev": {"command": str(BIN["everything"])}},
        log_dir=tmp_path / "logs",
        on_event=events.append,
        asks=asks,
    )
    manager.start()
    assert manager.wait_settled(30)
    wait_until(lambda: any(isinstance(e, CatalogChanged) for e in events), 20)
    yield manager, events, asks
    manager.stop()


def result(reg: ToolRegistry, tool: str, args: dict) -> str:
    reply = json.loads(reg.dispatch(f"mcp__ev__{tool}", args))
    assert "result" in reply, reply
    return reply["result"]


def test_catalog_info_and_reads(everything) -> None:
    manager, _, _ = everything
    status = manager.statuses()[0]
    assert status.info.name == "mcp-servers/everything" and status.info.protocol == "2025-11-25"
    assert status.info.capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert "demo://resource/static/document/features.md" in {
        r.uri for r in status.catalog.resources
    }
    assert {t.uri_template for t in status.catalog.templates} == {
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    }
    assert {"simple-prompt", "args-prompt"} <= {p.name for p in status.catalog.prompts}
    text = cat.render_contents(manager.read_resource("ev", "demo://resource/dynamic/text/3"))
    assert text.startswith("Resource 3: This is a plaintext resource")
    (blob,) = manager.read_resource("ev", "demo://resource/dynamic/blob/3")
    assert blob.text is None and blob.size > 0
    args_prompt = status.catalog.prompt("args-prompt")
    prompt = manager.get_prompt(
        "ev", "args-prompt", cat.prompt_arguments(args_prompt, {"city": "Oslo"})
    )
    assert "Oslo" in cat.render_prompt(prompt)


def test_a_subscribed_resource_updates(everything, reg: ToolRegistry) -> None:
    manager, events, _ = everything
    uri = "demo://resource/dynamic/text/1"
    manager.subscribe("ev", uri)
    result(reg, "toggle_subscriber_updates", {})
    wait_until(lambda: ResourceUpdated("ev", uri) in events, 20)  # every 5 s on its side
    assert manager.statuses()[0].subscriptions[uri] >= 1
    manager.subscribe("ev", uri, on=False)
    assert manager.statuses()[0].subscriptions == {}


def test_log_messages_arrive(everything, reg: ToolRegistry) -> None:
    manager, events, _ = everything
    result(reg, "toggle_simulated_logging", {})
    wait_until(lambda: any(isinstance(e, ServerLog) and "message" in e.line for e in events), 20)
    assert any("level" in line.lower() for line in manager.statuses()[0].logs)


def test_roots_are_ours(everything, reg: ToolRegistry, tmp_path: Path) -> None:
    assert tmp_path.resolve().as_uri() in result(reg, "get_roots_list", {})


def test_elicitation_through_a_front_end(everything, reg: ToolRegistry) -> None:
    _, _, asks = everything
    seen: list[Elicitation] = []

    def front_end(request: Elicitation) -> None:
        seen.append(request)
        answer = ElicitAnswer("accept", {"name": "Ada", "check": True, "integer": 7})
        threading.Thread(target=asks.answer, args=(request.id, answer)).start()

    asks.attach(front_end)
    text = result(reg, "trigger_elicitation_request", {})
    assert "Ada" in text and "accept" in text
    assert seen[0].schema["properties"]["integer"]["maximum"] == 100


def test_elicitation_headless_is_declined(everything, reg: ToolRegistry) -> None:
    assert "decline" in result(reg, "trigger_elicitation_request", {}).lower()


def test_sampling_approved_reaches_the_model(everything, reg: ToolRegistry) -> None:
    _, _, asks = everything
    fake = fake_openai.FakeOpenAI().start()
    try:
        fake.add(fake_openai.Reply("text", text="sampled words"))
        asks.sampler = endpoint_sampler(fake.url, fake.api_key, "test-model")
        asks.attach(
            lambda request: threading.Thread(target=asks.answer, args=(request.id, True)).start()
        )
        text = result(reg, "trigger_sampling_request", {"prompt": "Hi", "maxTokens": 20})
        assert "sampled words" in text
        (sent,) = fake.requests
        assert sent["max_tokens"] == 20
        assert sent["messages"][0] == {
            "role": "system",
            "content": "You are a helpful test server.",
        }
    finally:
        fake.stop()
