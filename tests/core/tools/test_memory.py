"""Memory providers: the built-in one by default; a provider plugin (Hermes's exclusive kind)
takes over the memory tools, only one is ever active, and switching persists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from tests.support.conversation import tool_messages
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.plugins import FIXTURES
from workbench.core.runtime import load_runtime


def home_with_providers(home: Path, config: dict) -> Path:
    for name in ("notes_memory", "other_memory"):
        shutil.copytree(FIXTURES / name, home / "plugins" / name)
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    return home


def offered(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


async def test_the_builtin_provider_is_the_default(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home_with_providers(home, {})
    fake.add(tools(("memory", {"action": "add", "content": "likes tea"})), text("noted"))
    runtime = load_runtime(home)
    session, _ = await make_session(runtime=runtime)
    await session.turn("remember I like tea")
    assert {"memory"} <= offered(fake.requests[0]) and "notes_add" not in offered(fake.requests[0])
    assert (home / "memories" / "MEMORY.md").read_text() == "likes tea\n"
    states = {s.key: s for s in runtime.plugins.list()}
    assert states["notes_memory"].status == "not loaded"
    assert "memory.provider" in states["notes_memory"].error
    await session.close()


async def test_a_provider_plugin_takes_over_and_its_calls_go_to_it(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home_with_providers(home, {"memory": {"provider": "notes_memory"},
                               "plugins": {"enabled": ["other_memory"]}})  # fmt: skip
    fake.add(tools(("notes_add", {"note": "deploys on fridays"})), text("noted"))
    runtime = load_runtime(home)
    states = {s.key: s for s in runtime.plugins.list()}
    assert states["notes_memory"].status == "loaded"
    assert states["other_memory"].status == "not loaded"  # enabled, but not the one selected
    assert runtime.memory.active_name == "notes"
    assert runtime.registry.get_entry("notes_add") is None  # routed, never in the registry
    session, _ = await make_session(runtime=runtime)
    await session.turn("remember the deploy day")
    names = offered(fake.requests[0])
    assert {"notes_add", "notes_list"} <= names and "memory" not in names
    (result,) = tool_messages(fake.requests[1])
    assert json.loads(result["content"]) == {"saved": 1, "by": "notes provider"}
    assert json.loads((home / "notes.json").read_text()) == ["deploys on fridays"]
    assert [t.name for t in runtime.memory.tools()] == ["notes_add", "notes_list"]
    await session.close()


async def test_a_providers_tools_switch_off_with_the_memory_toolset(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    # as Hermes: a memory provider's tools are offered only while `memory` is on
    home_with_providers(home, {"memory": {"provider": "notes_memory"},
                               "agent": {"disabled_toolsets": ["memory"]}})  # fmt: skip
    fake.add(tools(("notes_add", {"note": "x"})), text("ok"))
    runtime = load_runtime(home)
    assert not {"notes_add", "notes_list", "memory"} & set(runtime.effective_tools())
    assert runtime.off_tools()["notes_add"].startswith(
        "switched off with its toolset memory (agent.disabled_toolsets in config.yaml)"
    )
    session, _ = await make_session(runtime=runtime)
    await session.turn("note it")
    assert not {"notes_add", "notes_list", "memory"} & offered(fake.requests[0])
    (result,) = tool_messages(fake.requests[1])
    assert result["content"].startswith("Tool 'notes_add' does not exist")
    assert not (home / "notes.json").exists()
    await session.close()


def test_switching_providers_persists_and_keeps_one_active(home: Path) -> None:
    home_with_providers(home, {"memory": {"provider": "notes_memory"}})
    runtime = load_runtime(home)
    manager = runtime.plugins
    state = manager.select_memory_provider("other_memory")
    assert state.status == "loaded" and runtime.memory.active_name == "other"
    assert manager.states["notes_memory"].status == "not loaded"
    saved = yaml.safe_load((home / "config.yaml").read_text())
    assert saved["memory"]["provider"] == "other_memory"
    assert [t.name for t in runtime.memory.tools()] == ["other_recall"]
    assert any("read_file" in p for p in runtime.memory.problems)  # a built-in name: refused
    assert state.memory_tools == ["other_recall"]
    assert any("'read_file' refused" in w for w in state.warnings)  # said where the plugin is

    manager.select_memory_provider("builtin")
    assert runtime.memory.active_name == "builtin"
    assert [t.name for t in runtime.memory.tools()] == ["memory"]
    assert manager.states["other_memory"].status == "not loaded"
    assert yaml.safe_load((home / "config.yaml").read_text())["memory"]["provider"] == "builtin"


async def test_the_providers_lifecycle_hooks_are_called_in_order(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home_with_providers(home, {"memory": {"provider": "notes_memory"}})
    fake.add(tools(("notes_add", {"note": "ship it"})), text("saved"), text("fridays"))
    session, _ = await make_session(runtime=load_runtime(home))
    await session.turn("remember to ship it")
    await session.turn("when do we deploy?")
    await session.close()
    first, second = fake.requests[0]["messages"][0], fake.requests[2]["messages"][0]
    assert first == {"role": "system", "content": "The notes provider holds 0 note(s)."}
    assert second["content"].endswith("Recalled: deploys happen on fridays")
    assert "holds 1 note(s)" in second["content"]
    hooks = [json.loads(line) for line in (home / "notes-hooks.jsonl").read_text().splitlines()]
    assert [h["hook"] for h in hooks] == [
        "initialize", "prefetch", "sync_turn", "prefetch", "sync_turn", "on_session_end", "shutdown"
    ]  # fmt: skip
    assert hooks[0] == {"hook": "initialize", "session_id": session.id, "context": "primary"}
    assert hooks[4] == {"hook": "sync_turn", "user": "when do we deploy?", "assistant": "fridays"}
    stored = [m["role"] for m in session.agent.messages]
    assert "system" not in stored  # the provider's text is sent, never kept in the history


async def test_builtin_notes_reach_the_next_sessions_system_prompt(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    fake.add(tools(("memory", {"action": "add", "content": "user prefers tabs"})), text("ok"))
    fake.add(text("tabs it is"))
    first, _ = await make_session()
    await first.turn("I like tabs")
    await first.close()
    assert fake.requests[0]["messages"][0]["role"] == "user"  # no notes yet: no system text
    second, _ = await make_session()
    await second.turn("indent this")
    system = fake.requests[2]["messages"][0]
    assert system["role"] == "system" and "user prefers tabs" in system["content"]
    await second.close()


async def test_the_parents_provider_observes_what_a_sub_agent_answered(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    home_with_providers(home, {"memory": {"provider": "notes_memory"}})
    fake.add(tools(("delegate_task", {"goal": "count the files"})), text("three"))
    fake.route("count the files", text("there are three files"))
    session, _ = await make_session(runtime=load_runtime(home))
    await session.turn("how many files?")
    child_request = next(
        r for r in fake.requests if "count the files" in json.dumps(r["messages"][:1])
    )
    assert not {"notes_add", "notes_list", "memory"} & offered(child_request)  # no memory
    await session.close()
    hooks = [json.loads(line) for line in (home / "notes-hooks.jsonl").read_text().splitlines()]
    (seen,) = [h for h in hooks if h["hook"] == "on_delegation"]
    assert seen == {"hook": "on_delegation", "task": "count the files",
                    "result": "there are three files", "child": f"{session.id}/sub-agent-1"}  # fmt: skip


async def test_a_provider_whose_hooks_raise_never_ends_the_turn(
    make_session, fake: FakeOpenAI, home: Path
) -> None:
    class Broken:
        name = "broken"

        def get_tool_schemas(self):
            return []

        def handle_tool_call(self, name, args, **kwargs):
            return "{}"

        def system_prompt_block(self):
            raise RuntimeError("backend down")

        def sync_turn(self, *args, **kwargs):
            raise ConnectionError("cannot write")

    runtime = load_runtime(home)
    assert runtime.memory.install("broken-plugin", Broken()) == []
    fake.add(text("still here"))
    session, _ = await make_session(runtime=runtime)
    finished = await session.turn("hello")
    assert finished.reason == "answered" and finished.text == "still here"
    assert fake.requests[0]["messages"][0]["role"] == "user"  # no system text from it
    problems = session.agent.memory.problems
    assert any("system_prompt_block failed: backend down" in p for p in problems)
    assert any("sync_turn failed: cannot write" in p for p in problems)
    await session.close()
