"""Resources, templates, prompts, logs, roots, elicitation and sampling against a real server
process (catalog_server.py, the mcp SDK's own server)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.support import fake_openai
from tests.support.mcp import SERVER, wait_until
from workbench.core.mcp import (
    AskSettled,
    CatalogChanged,
    ElicitAnswer,
    Elicitation,
    MCPManager,
    NotReady,
    ResourceUpdated,
    SamplingRequest,
    ServerAsks,
    ServerLog,
    UnknownServer,
)
from workbench.core.mcp import catalog as cat
from workbench.core.mcp.config import parse_server
from workbench.core.mcp.sampling import endpoint_sampler
from workbench.core.tools.registry import ToolRegistry


class FrontEnd:
    """Answers each question as told (on the UI's side of the thread boundary)."""

    def __init__(self, asks: ServerAsks, answer) -> None:
        self.asks, self.answer, self.seen = asks, answer, []

    def __call__(self, request) -> None:
        self.seen.append(request)
        answer = self.answer(request)
        if answer is not ...:  # ... : never answer (the timeout decides)
            threading.Thread(target=self.asks.answer, args=(request.id, answer)).start()


@pytest.fixture
def started(tmp_path: Path, reg: ToolRegistry):
    managers: list[MCPManager] = []

    def start(asks: ServerAsks | None = None, **extra) -> tuple[MCPManager, list[object]]:
        events: list[object] = []
        config = parse_server("cat", {"command": SERVER[0], "args": SERVER[1:], **extra})
        manager = MCPManager(
            reg, [config], log_dir=tmp_path / "logs", on_event=events.append, asks=asks
        )
        managers.append(manager)
        manager.start()
        assert manager.wait_settled(30)
        wait_until(lambda: any(isinstance(e, CatalogChanged) for e in events))
        return manager, events

    yield start
    for manager in managers:
        manager.stop()


def status(manager: MCPManager):
    return manager.statuses()[0]


def test_info_capabilities_and_the_catalog(started) -> None:
    manager, _ = started()
    info = status(manager).info
    assert (info.name, info.version) == ("catalog-server", "1.2.3")
    assert info.protocol and info.instructions == "Try the note resources."
    assert info.can("resources") and info.can("prompts") and info.can("tools")
    catalog = status(manager).catalog
    assert {r.uri for r in catalog.resources} == {
        "note://hello",
        "data://config.json",
        "bin://pixel.png",
        "note://counter",
    }
    hello = next(r for r in catalog.resources if r.uri == "note://hello")
    assert (hello.name, hello.description, hello.mime_type) == ("hello", "A greeting", "text/plain")
    assert [t.uri_template for t in catalog.templates] == ["note://by-name/{name}"]
    assert catalog.templates[0].variables == ["name"]
    greet = catalog.prompt("greet")
    assert greet is not None and greet.description == "Greet someone"
    assert [(a.name, a.required) for a in greet.arguments] == [("name", True), ("style", False)]
    assert catalog.errors == {}


def test_reading_text_json_and_binary(started) -> None:
    manager, _ = started()
    assert cat.render_contents(manager.read_resource("cat", "note://hello")) == (
        "hello from the catalog server"
    )
    pretty = cat.render_contents(manager.read_resource("cat", "data://config.json"))
    assert pretty == json.dumps({"b": [1, 2], "a": {"nested": True}}, indent=2)
    (binary,) = manager.read_resource("cat", "bin://pixel.png")
    assert (binary.text, binary.size, binary.mime_type) == (None, 70, "image/png")
    assert cat.render_contents([binary]) == "[binary: 70 bytes, image/png]"
    template = status(manager).catalog.templates[0]
    uri = cat.expand_template(template.uri_template, {"name": "a b/c"})
    assert uri == "note://by-name/a%20b%2Fc"
    assert cat.render_contents(manager.read_resource("cat", "note://by-name/x")) == (
        "a note called x"
    )


def test_unknown_uri_server_and_a_server_not_ready(started) -> None:
    manager, _ = started()
    from mcp import MCPError

    with pytest.raises(MCPError, match="nowhere"):
        manager.read_resource("cat", "note://nowhere")
    with pytest.raises(UnknownServer, match="no MCP server named 'nope' \\(servers: cat\\)"):
        manager.read_resource("nope", "note://hello")
    manager.handles["cat"].state = "reconnecting"
    with pytest.raises(NotReady, match="'cat' is reconnecting"):
        manager.read_resource("cat", "note://hello")
    manager.handles["cat"].state = "ready"


def test_prompts_with_their_arguments(started) -> None:
    manager, _ = started()
    greet = status(manager).catalog.prompt("greet")
    args = cat.prompt_arguments(greet, {"name": "Ada", "style": "formal"})
    text = cat.render_prompt(manager.get_prompt("cat", "greet", args))
    assert text.endswith("[user]\nSay hello to Ada in a formal way.")
    with pytest.raises(ValueError, match="prompt greet needs name"):
        cat.prompt_arguments(greet, {"style": "x"})
    with pytest.raises(ValueError, match="has no argument colour \\(its arguments: name, style\\)"):
        cat.prompt_arguments(greet, {"name": "A", "colour": "red"})
    with pytest.raises(ValueError, match="JSON object"):
        cat.prompt_arguments(greet, ["Ada"])
    assert cat.prompt_arguments(greet, {"name": 7}) == {"name": "7"}


def test_subscribing_needs_the_capability_and_unasked_updates_are_not_news(
    started, reg: ToolRegistry
) -> None:
    # subscriptions against a server that offers them: tests/e2e (server-everything)
    manager, events = started()
    with pytest.raises(NotReady, match="'cat' does not offer subscriptions"):
        manager.subscribe("cat", "note://counter")
    reg.dispatch("mcp__cat__bump", {})  # it sends resources/updated all the same
    wait_until(lambda: any(isinstance(e, ServerLog) for e in events))
    assert not any(isinstance(e, ResourceUpdated) for e in events)
    assert status(manager).subscriptions == {}


def test_list_changed_lists_the_resources_again(started, reg: ToolRegistry) -> None:
    manager, events = started()
    before = sum(isinstance(e, CatalogChanged) for e in events)
    reg.dispatch("mcp__cat__add_note", {"name": "fresh"})
    wait_until(lambda: sum(isinstance(e, CatalogChanged) for e in events) > before)
    assert "note://extra/fresh" in {r.uri for r in status(manager).catalog.resources}


def test_log_messages_are_kept_and_announced(started, reg: ToolRegistry) -> None:
    manager, events = started()
    reg.dispatch("mcp__cat__bump", {})
    wait_until(lambda: any(isinstance(e, ServerLog) for e in events))
    log = next(e for e in events if isinstance(e, ServerLog))
    assert log.server == "cat" and log.level == "info"
    assert log.line.endswith("info counter: counter now 1")
    assert status(manager).logs == [log.line]


def test_roots_are_the_working_directory(started, reg: ToolRegistry, tmp_path: Path) -> None:
    asks = ServerAsks([tmp_path])
    started(asks)
    roots = json.loads(json.loads(reg.dispatch("mcp__cat__roots", {}))["result"])
    assert roots == [tmp_path.resolve().as_uri()]


def test_roots_from_the_config_or_none(started, reg: ToolRegistry, tmp_path: Path) -> None:
    manager, _ = started(ServerAsks(), roots=[str(tmp_path / "a"), str(tmp_path / "b")])
    roots = json.loads(json.loads(reg.dispatch("mcp__cat__roots", {}))["result"])
    assert roots == [(tmp_path / "a").as_uri(), (tmp_path / "b").as_uri()]
    manager.stop()
    started(ServerAsks(), roots=False)
    reply = json.loads(reg.dispatch("mcp__cat__roots", {}))
    assert "List roots not supported" in reply["error"]
    assert parse_server("x", {"command": "x", "roots": 3}).problems == [
        "roots must be false or a list of directories"
    ]


def _ask(reg: ToolRegistry) -> dict:
    return json.loads(json.loads(reg.dispatch("mcp__cat__ask", {"question": "Name?"}))["result"])


def test_elicitation_with_no_front_end_is_declined_and_said(started, reg: ToolRegistry) -> None:
    _, events = started(ServerAsks())
    assert _ask(reg) == {"action": "decline", "content": None}
    assert AskSettled("cat", "elicitation", "declined", "no one can be asked (no UI)") in events


def test_elicitation_accept_decline_and_cancel(started, reg: ToolRegistry) -> None:
    asks = ServerAsks()
    answers = iter(
        [
            ElicitAnswer("accept", {"answer": "Ada", "sure": True, "count": 3}),
            ElicitAnswer("decline"),
            ElicitAnswer("cancel"),
        ]
    )
    front = FrontEnd(asks, lambda request: next(answers))
    asks.attach(front)
    started(asks)
    assert _ask(reg) == {"action": "accept", "content": {"answer": "Ada", "sure": True, "count": 3}}
    request = front.seen[0]
    assert isinstance(request, Elicitation) and request.server == "cat"
    assert request.message == "Name?" and request.schema["required"] == ["answer"]
    assert _ask(reg) == {"action": "decline", "content": None}
    assert _ask(reg) == {"action": "cancel", "content": None}


def test_elicitation_unanswered_or_wrong_is_declined(started, reg: ToolRegistry) -> None:
    asks = ServerAsks(timeout=0.5)
    answers = iter([..., ElicitAnswer("accept", {"answer": "x", "count": 99}), "yes"])
    events_front = FrontEnd(asks, lambda request: next(answers))
    asks.attach(events_front)
    _, events = started(asks)
    assert _ask(reg)["action"] == "decline"  # no answer in time
    assert AskSettled("cat", "elicitation", "declined", "no answer in time") in events
    assert _ask(reg)["action"] == "decline"  # content that breaks the schema never goes out
    assert any(
        isinstance(e, AskSettled) and "count: 99 is greater than the maximum of 9" in e.why
        for e in events
    )
    assert _ask(reg)["action"] == "decline"  # an answer that is not an answer
    assert asks.pending() == []


def _sample(reg: ToolRegistry) -> str:
    reply = json.loads(reg.dispatch("mcp__cat__sample", {"prompt": "Say hi"}))
    assert "result" in reply, reply
    return reply["result"]


def test_sampling_is_refused_with_no_front_end(started, reg: ToolRegistry) -> None:
    _, events = started(ServerAsks())
    assert "sampling refused: no one can be asked (no UI)" in _sample(reg)
    assert AskSettled("cat", "sampling", "refused", "no one can be asked (no UI)") in events


def test_sampling_reaches_the_model_only_when_approved(started, reg: ToolRegistry) -> None:
    fake = fake_openai.FakeOpenAI().start()
    try:
        fake.add(fake_openai.Reply("text", text="hi there"))
        asks = ServerAsks(timeout=0.5)
        asks.sampler = endpoint_sampler(fake.url, fake.api_key, "test-model")
        answers = iter([False, ..., True])
        front = FrontEnd(asks, lambda request: next(answers))
        asks.attach(front)
        started(asks)
        assert "sampling refused: the user denied it" in _sample(reg)
        assert "sampling refused: no answer in time" in _sample(reg)
        assert fake.requests == []  # nothing reached the model before an approval
        assert _sample(reg) == "test-model: hi there"
        request = front.seen[0]
        assert isinstance(request, SamplingRequest)
        assert request.messages == [{"role": "user", "text": "Say hi"}]
        assert (request.system_prompt, request.max_tokens) == ("You are terse.", 64)
        (sent,) = fake.requests
        assert sent["messages"] == [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hi"},
        ]
        assert sent["max_tokens"] == 64
        assert "temperature" not in sent  # the server asked for none: none is sent
    finally:
        fake.stop()


def test_detaching_the_front_end_refuses_what_waits(started, reg: ToolRegistry) -> None:
    asks = ServerAsks(timeout=30)
    detach_later: list = []
    front = FrontEnd(asks, lambda request: ...)
    detach_later.append(asks.attach(front))
    started(asks)
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(_sample(reg)))
    thread.start()
    wait_until(lambda: asks.pending())
    detach_later[0]()  # the UI goes away: the question is refused at once, not in 30 s
    thread.join(10)
    assert result and "sampling refused: the front end that could answer went away" in result[0]


# -- pure helpers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        ("file:///{path}", {"path": "a/b c"}, "file:///a%2Fb%20c"),
        ("file:///{+path}", {"path": "a/b c"}, "file:///a/b%20c"),
        ("x://s{?q,n}", {"q": "a&b", "n": 2}, "x://s?q=a%26b&n=2"),
        ("x://s{?q,n}", {"n": 2}, "x://s?n=2"),
        ("x://{a}{/b}{.c}", {"a": "1", "b": "2", "c": "txt"}, "x://1/2.txt"),
        ("x://{a}{#frag}", {"a": "1", "frag": "top"}, "x://1#top"),
    ],
)
def test_template_expansion(template: str, values: dict, expected: str) -> None:
    assert cat.expand_template(template, values) == expected


def test_template_and_prompt_schemas() -> None:
    template = cat.Template("x://{a}{?b,c*}", "t", "desc")
    assert template.variables == ["a", "b", "c"]
    schema = cat.template_schema(template)
    assert schema["required"] == ["a", "b", "c"] and schema["description"] == "desc"
    prompt = cat.Prompt("p", "d", (cat.PromptArgument("x", "the x", True), cat.PromptArgument("y")))
    schema = cat.prompt_schema(prompt)
    assert schema["properties"]["x"] == {"type": "string", "description": "the x"}
    assert schema["required"] == ["x"]


def test_rendering_garbage_and_huge_content() -> None:
    assert cat.render_contents([]) == "(the server returned no content)"
    broken = cat.Content("u", "application/json", "{not json")
    assert cat.render_contents([broken]) == "{not json"
    huge = cat.Content("u", "text/plain", "x" * (cat.MAX_TEXT + 10))
    assert cat.render_contents([huge]).endswith("(10 more characters not shown)")
    two = [cat.Content("a", "text/plain", "A"), cat.Content("b", "image/png", None, 5)]
    assert cat.render_contents(two) == (
        "── a (text/plain)\nA\n\n── b (image/png)\n[binary: 5 bytes, image/png]"
    )
