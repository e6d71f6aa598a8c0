"""Keeping a turn on track, against the scripted OpenAI server: repeated calls, the lean
profile of a small model, the turn's time limit, and the bundled model's tuned settings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_openai import FakeOpenAI, text, tools
from workbench.core.agent import loop as agent
from workbench.core.agent import transcript
from workbench.core.agent.guards import (
    DESCRIBED,
    LEAN_SYSTEM,
    NUDGE,
    RETRY_NUDGE,
    UNLOOKED,
    RepeatGuard,
    call_key,
    described_call,
    lean_definition,
    lean_description,
    nudge,
    to_write,
    unwritten,
)
from workbench.core.config import Config
from workbench.core.execution.executor import ToolCallFinished
from workbench.core.model import local as local_model
from workbench.core.model.settings import resolve

READ_A = ("read_file", {"path": "a.txt"})


def ran(events: list[object]) -> list[str]:
    return [e.name for e in events if isinstance(e, ToolCallFinished)]


def offered(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def test_the_same_call_whatever_its_json_spacing_or_key_order() -> None:
    assert call_key("f", '{"a": 1, "b": [2]}') == call_key("f", {"b": [2], "a": 1})
    assert call_key("f", '{"a":1}') != call_key("g", '{"a":1}')
    assert call_key("f", "not json ") == call_key("f", "not json")
    guard = RepeatGuard()
    assert not guard.repeated("f", "{}") and guard.repeated("f", "{}")
    guard.wrote("read_file", "{}", ok=True)
    assert guard.repeated("f", "{}")  # a read changes nothing
    guard.wrote("patch", "{}", ok=False)
    assert guard.repeated("f", "{}")  # nor does a failed write
    write = '{"path": "a.txt", "content": "x"}'
    assert not guard.repeated("write_file", write)
    guard.wrote("write_file", write, ok=True)
    assert not guard.repeated("f", "{}")
    # the same write again would change nothing: it stays a repeat
    assert guard.repeated("write_file", '{"content": "x", "path": "a.txt"}')
    assert not guard.repeated("write_file", '{"path": "a.txt", "content": "y"}')


async def test_a_repeated_call_is_refused_and_the_model_must_answer(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(READ_A), tools(READ_A), text("alpha it is"))
    session, events = await make_session(max_rounds=8)
    finished = await session.turn("what is in a.txt?")
    assert ran(events) == ["read_file"]  # the second, identical call never ran
    refused = fake.requests[2]["messages"][-2]
    assert refused["role"] == "tool" and "already called read_file" in refused["content"]
    # the round after a round of repeats only is the final one: told to answer, no calls
    assert fake.requests[2]["tool_choice"] == "none" and finished.text == "alpha it is"
    assert finished.reason == "answered" and finished.rounds == 3
    kinds = [r["kind"] for r in transcript.read(session.transcript.path)]
    assert kinds.count("repeated_call") == 1
    await session.close()


async def test_a_write_lets_the_same_read_run_again(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    write = ("write_file", {"path": "a.txt", "content": "omega\n"})
    fake.add(tools(READ_A), tools(write), tools(READ_A), text("done"))
    session, events = await make_session(max_rounds=8)
    await session.turn("read, rewrite, read again")
    assert ran(events) == ["read_file", "write_file", "read_file"]
    last = json.loads(fake.requests[3]["messages"][-1]["content"])
    assert "omega" in last["content"]
    await session.close()


async def test_the_same_write_again_is_refused(make_session, fake: FakeOpenAI) -> None:
    # the bundled 1.5B, its file written, wrote it again and again until the round cap
    write = ("write_file", {"path": "b.txt", "content": "beta\n"})
    fake.add(tools(write), tools(write), text("written"))
    session, events = await make_session(max_rounds=8)
    finished = await session.turn("write beta into b.txt")
    assert ran(events) == ["write_file"] and finished.text == "written"
    refused = fake.requests[2]["messages"][-2]
    assert refused["role"] == "tool" and "already called write_file" in refused["content"]
    await session.close()


async def test_a_repeat_in_another_turn_runs(make_session, fake: FakeOpenAI) -> None:
    fake.add(tools(READ_A), text("one"), tools(READ_A), text("two"))
    session, events = await make_session()
    await session.turn("read a.txt")
    await session.turn("read a.txt again, it may have changed")
    assert ran(events) == ["read_file", "read_file"]
    await session.close()


async def test_a_model_that_calls_tools_in_its_final_round_gets_no_more(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(READ_A), tools(("read_file", {"path": "b.txt"})), tools(READ_A))
    session, events = await make_session(max_rounds=1)
    finished = await session.turn("loop")
    assert finished.reason == "max_rounds" and finished.rounds == 2
    assert ran(events) == ["read_file"] and len(fake.requests) == 2
    # its calls are answered all the same: the conversation stays one the API accepts
    last = session.agent.messages[-1]
    assert last["role"] == "tool" and "not run" in last["content"].lower()
    await session.close()


async def test_the_lean_profile_offers_the_shared_tools_and_nudges_after_results(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(READ_A), text("alpha"))
    session, _ = await make_session(lean=True)
    await session.turn("what is in a.txt?")
    first, second = fake.requests
    names = offered(first)
    assert "read_file" in names and "write_file" in names
    assert not names & {"clarify", "memory", "todo", "delegate_task", "session_search"}
    assert first["messages"][0] == {"role": "system", "content": LEAN_SYSTEM}
    assert second["messages"][-1] == {"role": "user", "content": NUDGE}
    assert second["messages"][-2]["role"] == "tool"
    # the nudge is sent, never stored: the next request's prefix is this one's
    assert all(m.get("content") != NUDGE for m in session.agent.messages)
    stored = transcript.messages(transcript.read(session.transcript.path))
    assert all(m.get("content") != NUDGE for m in stored)
    assert first["messages"][:2] == second["messages"][:2]
    await session.close()


async def test_after_a_search_that_found_nothing_the_lean_nudge_says_try_another_way(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    # the bundled 1.5B searched a phrase, found nothing and then guessed the answer
    (workdir / "manual.md").write_text("Backups are kept for 41 days.\n")
    phrase = ("search_files", {"pattern": "Backup retention", "path": "manual.md"})
    word = ("search_files", {"pattern": "Backup", "path": "manual.md"})
    fake.add(tools(phrase), tools(word), text("41 days"))
    session, _ = await make_session(lean=True)
    finished = await session.turn("how long are backups kept?")
    assert finished.text == "41 days"
    empty = json.loads(fake.requests[1]["messages"][-2]["content"])
    assert empty["matches"] == [] and "'retention'" in empty["hint"]
    assert fake.requests[1]["messages"][-1] == {"role": "user", "content": RETRY_NUDGE}
    assert fake.requests[2]["messages"][-1] == {"role": "user", "content": NUDGE}  # found
    await session.close()


async def test_the_full_profile_keeps_the_agents_own_tools(make_session, fake: FakeOpenAI) -> None:
    fake.add(text("hi"))
    session, _ = await make_session()
    await session.turn("hi")
    assert {"clarify", "todo"} <= offered(fake.requests[0])
    assert fake.requests[0]["messages"][0]["role"] == "user"  # no system prompt of ours
    await session.close()


async def test_past_the_time_limit_the_model_is_asked_to_answer(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(READ_A, delay=0.05, chunks=8), text("answer now"))
    session, _ = await make_session(max_rounds=8, turn_timeout=0.01)
    finished = await session.turn("read a.txt")
    assert finished.reason == "answered" and finished.text == "answer now"
    assert fake.requests[1]["tool_choice"] == "none"  # the second round was the final one
    await session.close()


async def test_a_turn_that_will_not_end_is_stopped(
    make_session, fake: FakeOpenAI, monkeypatch
) -> None:
    monkeypatch.setattr(agent, "TIME_GRACE", 0.3)
    fake.add(text("slow " * 400, chunks=400, delay=0.05))  # 20 s of stream
    session, _ = await make_session(turn_timeout=0.1)
    finished = await session.turn("talk")
    assert finished.reason == "time_limit" and "stopped after" in finished.error
    assert finished.elapsed < 10
    records = transcript.read(session.transcript.path)
    assert any(r["kind"] == "error" and "turn_timeout" in r["message"] for r in records)
    await session.close()


def test_the_bundled_model_gets_its_tuned_settings_and_config_still_wins(tmp_path: Path) -> None:
    spec = local_model.MODELS[local_model.DEFAULT_MODEL]
    settings = resolve(Config(tmp_path / "c.yaml", {}), env={})
    assert settings.local and settings.lean
    assert settings.context_window == spec.context and settings.max_tokens == spec.reply
    section = {"lean": False, "max_tokens": 300, "context_window": 12000, "turn_timeout": 60}
    mine = resolve(Config(tmp_path / "c.yaml", {"model": section}), env={})
    assert not mine.lean and mine.max_tokens == 300 and mine.context_window == 12000
    assert mine.turn_timeout == 60
    remote = resolve(Config(tmp_path / "c.yaml", {}), env={"OPENAI_API_KEY": "k"})
    assert not remote.lean and remote.max_tokens == 2048


def test_the_server_runs_with_the_window_the_budgets_assume() -> None:
    for spec in local_model.MODELS.values():
        assert spec.context >= 8192 and spec.reply <= spec.context // 4
    assert local_model.MODELS[local_model.DEFAULT_MODEL].context == local_model.DEFAULT_CONTEXT
    assert local_model.default_threads() >= 1


async def test_a_required_first_tool_call_is_asked_for_in_the_first_round_only(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(tools(READ_A), text("alpha"), tools(READ_A), text("alpha again"))
    session, _ = await make_session(require_tool=True)
    await session.turn("what is in a.txt?")
    await session.turn("and now?")
    choices = [r.get("tool_choice") for r in fake.requests]
    assert choices == ["required", None, "required", None]
    await session.close()


def test_a_first_tool_call_is_required_only_when_configured(tmp_path: Path) -> None:
    # measured on the bundled 0.5B: asked for a call, it wrote 512 tokens of text instead
    assert not resolve(Config(tmp_path / "c.yaml", {}), env={}).require_tool
    required = {"model": {"first_tool_call": "required"}}
    assert resolve(Config(tmp_path / "c.yaml", required), env={}).require_tool
    env = {"OPENAI_API_KEY": "k"}
    assert resolve(Config(tmp_path / "c.yaml", required), env=env).require_tool


def test_a_small_model_is_offered_no_numeric_or_boolean_option() -> None:
    search = {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string", "default": "."},
                    "limit": {"type": "integer", "default": 50},
                    "all": {"type": "boolean"},
                    "count": {"type": "integer"},
                },
                "required": ["pattern", "count"],
            },
        },
    }
    search["function"]["parameters"]["properties"]["output_mode"] = {
        "type": "string",
        "enum": ["content", "count"],
    }
    lean = lean_definition(search)
    assert list(lean["function"]["parameters"]["properties"]) == ["pattern", "path", "count"]
    assert lean["function"]["parameters"]["required"] == ["pattern", "count"]
    assert "limit" in search["function"]["parameters"]["properties"]  # the original is kept
    plain = {"type": "function", "function": {"name": "p", "parameters": {"type": "object"}}}
    assert lean_definition(plain) is plain


def test_the_lean_profile_reads_every_way_a_schema_gives_a_type() -> None:
    """A list of types in a shared, read-only definition took every command down
    (TypeError: unhashable type: 'ReadOnlyList')."""
    from workbench.core.tools.definitions import tool_definition

    properties = {
        "text": {"type": ["string", "null"]},
        "page": {"type": ["integer", "null"]},
        "flag": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
        "ratio": {"type": "number", "nullable": True},
        "either": {"type": ["integer", "string"]},  # may be a word: kept
        "level": {"enum": [1, 2]},  # numbers only, by its values
        "mode": {"enum": ["a", 1]},
        "point": {"$ref": "#/$defs/N"},
    }
    parameters = {"type": "object", "properties": properties, "$defs": {"N": {"type": "number"}}}
    shared = tool_definition("t", {"description": "d", "parameters": parameters})
    kept = lean_definition(shared)["function"]["parameters"]["properties"]
    assert list(kept) == ["text", "either", "mode"]
    assert kept["text"] == {"type": ["string", "null"]}


def test_the_lean_profile_keeps_the_offset_a_result_says_to_go_on_from() -> None:
    from workbench.builtins.files import file_tools  # noqa: F401  (registers read_file)
    from workbench.core.tools.registry import registry

    (read,) = registry.get_definitions({"read_file"}, quiet=True)
    properties = lean_definition(read)["function"]["parameters"]["properties"]
    assert "offset" in properties and "limit" not in properties
    assert lean_definition(read)["function"]["parameters"].get("required") == ["path"]


def test_a_lean_description_keeps_what_says_how_to_call_the_tool() -> None:
    text = (
        "Write content to a file, replacing it completely. Output over 50,000 bytes is cut. "
        "Use patch for targeted edits. The path may be relative. Binary files are refused."
    )
    short = lean_description(text, {"path", "content", "patch"})
    # the first sentence, one naming another tool, one naming a parameter; not the limits
    assert short == (
        "Write content to a file, replacing it completely. Use patch for targeted edits. "
        "The path may be relative."
    )
    assert lean_description("Run it. Then stop", {"stop"}) == "Run it. Then stop"  # all kept
    assert lean_description("One thing. Limits apply", set()) == "One thing."


def test_the_lean_profile_trims_descriptions_of_the_real_tools() -> None:
    from workbench.builtins.files import file_tools  # noqa: F401  (registers the file tools)
    from workbench.core.tools.registry import registry

    names = {"read_file", "write_file", "patch"}
    for full in registry.get_definitions(names, quiet=True):
        lean = lean_definition(full, names)["function"]["description"]
        original = full["function"]["description"]
        assert original.startswith(lean.rstrip(".").split(". ")[0])  # what it does stays
        assert len(lean) <= len(original)
    (write,) = registry.get_definitions({"write_file"}, quiet=True)
    assert "patch" in lean_definition(write, names)["function"]["description"]
    (read,) = registry.get_definitions({"read_file"}, quiet=True)
    assert "Binary" not in lean_definition(read, names)["function"]["description"]


async def test_the_lean_profile_sends_the_trimmed_definitions(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(text("hi"))
    session, _ = await make_session(lean=True)
    await session.turn("hi")
    by_name = {t["function"]["name"]: t["function"] for t in fake.requests[0]["tools"]}
    assert set(by_name["read_file"]["parameters"]["properties"]) == {
        "path",
        "offset",
    }  # offset: to go on from next_offset
    assert "limit" not in by_name["search_files"]["parameters"]["properties"]
    assert "pattern" in by_name["search_files"]["parameters"]["properties"]
    await session.close()


async def test_a_small_model_gets_one_call_a_round(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    # the bundled 1.5B wrote the same search four times in one reply, to its 512-token cap
    search = ("search_files", {"pattern": "alpha"})
    fake.add(tools(search, search, READ_A), text("a.txt"))
    session, events = await make_session(lean=True)
    finished = await session.turn("which file says alpha?")
    assert ran(events) == ["search_files"] and finished.text == "a.txt"
    calls = session.agent.messages[1]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["search_files"]
    await session.close()


async def test_a_call_cut_off_mid_arguments_leaves_a_conversation_the_server_accepts(
    make_session, fake: FakeOpenAI
) -> None:
    # llama.cpp refuses (HTTP 500) every request whose history holds arguments it cannot
    # parse: a call cut off by the reply's cap ended the turn with an error
    fake.add(tools(("read_file", '{"path": "a.t')), text("sorry"))
    session, _ = await make_session()
    finished = await session.turn("read a.txt")
    assert finished.reason == "answered" and finished.text == "sorry"
    sent = fake.requests[1]["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert "Invalid tool arguments" in sent[2]["content"]
    await session.close()


def test_the_files_a_request_asks_to_be_written() -> None:
    exists = {"NOTES.md", "config.py"}.__contains__
    ask = "Find who owns the service in NOTES.md, then write their name into owner.txt."
    assert to_write(ask, exists) == ["owner.txt"]
    assert to_write("Save the list to docs/out.md, e.g. as bullets.", exists) == ["docs/out.md"]
    assert to_write("In config.py, change TIMEOUT to 60.", exists) == []  # it exists
    assert to_write("Is there a file named CHANGES.md?", exists) == []  # asked about


async def test_a_turn_that_answers_without_writing_the_file_asked_for_is_asked_once(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    # the bundled 1.5B found the owner and answered with the name, never writing the file
    write = ("write_file", {"path": "owner.txt", "content": "Tomas"})
    fake.add(tools(READ_A), text("Tomas"), tools(write), text("written"))
    session, events = await make_session(lean=True, max_rounds=8)
    finished = await session.turn("Find the owner in a.txt, then write the name into owner.txt.")
    assert ran(events) == ["read_file", "write_file"] and finished.text == "written"
    asked = fake.requests[2]["messages"][-1]
    assert asked == {"role": "user", "content": unwritten(["owner.txt"])}
    assert (workdir / "owner.txt").read_text() == "Tomas"
    await session.close()


async def test_the_unwritten_file_is_asked_for_once_and_only_when_nothing_was_written(
    make_session, fake: FakeOpenAI
) -> None:
    fake.add(text("no"), text("still no"), text("there is none"))
    session, _ = await make_session(lean=True)
    assert (await session.turn("Write a summary into summary.md.")).text == "still no"
    assert (await session.turn("Is there a summary.md?")).text == "there is none"
    assert len(fake.requests) == 3
    await session.close()


def test_a_count_of_nothing_asks_to_try_another_way(tmp_path: Path) -> None:
    from workbench.builtins.files.search_tool import search_files

    (tmp_path / "manual.md").write_text("Backups are kept for 41 days.\n")
    counted = search_files({"pattern": "Backup days", "output_mode": "count"}, cwd=str(tmp_path))
    assert nudge([counted]) == RETRY_NUDGE
    found = search_files({"pattern": "Backup", "output_mode": "count"}, cwd=str(tmp_path))
    assert nudge([found]) == NUDGE


async def test_a_repeated_search_that_found_nothing_gets_one_more_try(
    make_session, fake: FakeOpenAI, workdir: Path
) -> None:
    # the 1.5B searched a phrase, repeated it, and, made to answer, wrote its call as text
    (workdir / "manual.md").write_text("Backups are kept for 41 days.\n")
    phrase = ("search_files", {"pattern": "Backups retention", "path": "manual.md"})
    word = ("search_files", {"pattern": "kept", "path": "manual.md"})
    fake.add(tools(phrase), tools(phrase), tools(word), text("41 days"))
    session, events = await make_session(lean=True, max_rounds=8)
    finished = await session.turn("how long are backups kept?")
    assert finished.text == "41 days" and ran(events) == ["search_files", "search_files"]
    refused = json.loads(fake.requests[2]["messages"][-2]["content"])
    assert "found nothing" in refused["error"] and refused["status"] == "repeated"
    assert "tool_choice" not in fake.requests[2]  # not made to answer yet
    assert fake.requests[2]["messages"][-1] == {"role": "user", "content": RETRY_NUDGE}
    await session.close()


async def test_the_one_more_try_is_given_once_a_turn(make_session, fake: FakeOpenAI) -> None:
    phrase = ("search_files", {"pattern": "no such words"})
    fake.add(tools(phrase), tools(phrase), tools(phrase), text("not found"))
    session, events = await make_session(lean=True, max_rounds=8)
    finished = await session.turn("find it")
    assert finished.text == "not found" and ran(events) == ["search_files"]
    assert [r.get("tool_choice") for r in fake.requests] == [None, None, None, "none"]
    await session.close()


async def test_a_first_reply_that_names_a_tool_it_did_not_call_is_asked_once(
    make_session, fake: FakeOpenAI
) -> None:
    # the bundled 1.5B wrote "I'll use the search_files function..." and stopped there
    fake.add(text("I'll use search_files, then read_file."), tools(READ_A), text("alpha"))
    fake.add(text("You can use read_file for that."), text("read_file reads a file"))
    session, events = await make_session(lean=True, max_rounds=8)
    finished = await session.turn("what is in a.txt?")
    assert ran(events) == ["read_file"] and finished.text == "alpha"
    assert fake.requests[1]["messages"][-1] == {
        "role": "user",
        "content": DESCRIBED.format(name="search_files"),  # the first one it names
    }
    assert described_call("Run it in a terminal, or `terminal`.", ["terminal"]) == "terminal"
    assert described_call("Run it in a terminal, then patch it.", ["patch", "terminal"]) is None
    # asked once: a second answer that names one is the answer
    assert (await session.turn("which tool reads a file?")).text == "read_file reads a file"
    assert len(fake.requests) == 5
    await session.close()


async def test_a_lean_request_that_names_a_file_there_is_must_look_first(
    make_session, fake: FakeOpenAI
) -> None:
    # the 1.5B, asked what manual.md says, twice wrote how one would search it and answered
    # without a call: a request about a file the project holds needs a look at it
    fake.add(tools(READ_A), text("alpha"), text("hello"), text("none"), text("hi"))
    session, events = await make_session(lean=True, max_rounds=8)
    assert (await session.turn("What does a.txt say?")).text == "alpha"
    assert fake.requests[0]["tool_choice"] == "required" and ran(events) == ["read_file"]
    assert "tool_choice" not in fake.requests[1]  # after the look, free to answer
    await session.turn("Say hello.")  # names no file
    await session.turn("Is there a missing.txt?")  # names one that is not there
    assert [r.get("tool_choice") for r in fake.requests[2:]] == [None, None]
    full, _ = await make_session(lean=False)
    await full.turn("What does a.txt say?")  # a full-size model decides for itself
    assert fake.requests[-1].get("tool_choice") is None


async def test_a_lean_answer_about_a_named_file_given_without_a_look_is_asked_once(
    make_session, fake: FakeOpenAI
) -> None:
    # llama.cpp takes tool_choice "required" with our template as a strong request only:
    # the 0.5B answered "0.0.0.0…" about config.py without a call
    fake.add(text("It says beta."), tools(READ_A), text("alpha"))
    fake.add(text("It says beta."), text("Still beta."))
    session, events = await make_session(lean=True, max_rounds=8)
    assert (await session.turn("What does a.txt say?")).text == "alpha"
    asked = fake.requests[1]["messages"][-1]
    assert asked == {"role": "user", "content": UNLOOKED.format(names="a.txt")}
    assert [r.get("tool_choice") for r in fake.requests] == ["required", "required", None]
    # asked once a turn: a second answer without a look is the answer
    assert (await session.turn("And a.txt now?")).text == "Still beta."
    assert [r.get("tool_choice") for r in fake.requests[3:]] == ["required", "required"]
    assert ran(events) == ["read_file"] and len(fake.requests) == 5
