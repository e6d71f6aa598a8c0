"""Counting a request's tokens before it is sent: real tokenizers offline, or the estimate."""

from __future__ import annotations

import json
import socket

import pytest

from workbench.builtins.files.file_tools import MAX_READ_CHARS
from workbench.core.agent.context import Window, known_window, result_room
from workbench.core.model.tokens import (
    Encoding,
    Estimate,
    LlamaCpp,
    Meter,
    encoding_for,
    tokenizer_for,
)


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("gpt-4.1-mini", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("qwen2.5-coder-1.5b", "qwen3"),
        ("my-finetune", None),
        ("gpt-4o-evil/../x", None),
    ],
)
def test_model_names_map_to_their_tokenizer(model: str, encoding: str | None) -> None:
    assert encoding_for(model) == encoding


def test_openai_tables_ship_with_the_package_and_count_exactly() -> None:
    """Token ids as OpenAI's own tokenizer gives them, with no download."""
    o200k, cl100k = Encoding("o200k_base"), Encoding("cl100k_base")
    assert o200k.count("hello world") == 2 and cl100k.count("hello world") == 2
    assert o200k.count("<|endoftext|>") > 1  # special-token text is text, never refused
    assert isinstance(tokenizer_for("gpt-4o-mini"), Encoding)
    assert isinstance(tokenizer_for("local-thing"), Estimate)


def test_a_tokenizer_that_fails_falls_back_to_the_estimate_and_says_so() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    problems: list[str] = []
    meter = Meter(LlamaCpp(f"http://127.0.0.1:{port}/v1", "key", timeout=2), problems.append)
    assert meter.text("x" * 300) == 100  # the estimate: a token per three characters
    assert isinstance(meter.tokenizer, Estimate) and len(problems) == 1
    assert "llama.cpp tokenizer failed" in problems[0]
    meter.text("more")
    assert len(problems) == 1  # said once


def test_the_endpoints_count_corrects_ours_within_reason() -> None:
    meter = Meter(Estimate())
    meter.observe(1000, 800)  # the text is less dense than the estimate assumes
    assert meter.scale == 0.8 and meter.corrected(1000) == 800
    meter.observe(1000, 100_000)
    assert meter.scale == 4.0  # clamped
    exact = Meter(Encoding("cl100k_base"))
    exact.observe(1000, 900)  # an exact count never scales down
    assert exact.scale == 1.0


def test_the_window_keeps_room_for_the_reply_and_knows_common_models() -> None:
    small = Window.for_model("qwen2.5-coder-0.5b", 4096, 2048, None)
    assert small.reply == 1024 and small.prompt < 4096 - 1024
    big = Window.for_model("gpt-4o-mini", None, 2048, 0.5)
    assert (big.context, big.reply, big.source, big.threshold) == (128_000, 2048, "model name", 0.5)
    assert known_window("openai/gpt-4.1") == 1_047_576
    unknown = Window.for_model("mystery", None, 2048, 7)  # a nonsense threshold: the default
    assert unknown.source == "default" and unknown.threshold == 0.75


def test_results_are_sized_to_what_is_left_of_the_window() -> None:
    meter = Meter(Estimate())
    small = Window.for_model("m", 4096, 1024, None)
    early = result_room(small, 500, 1, meter)
    late = result_room(small, small.prompt - 200, 1, meter)
    assert early.tokens > late.tokens and late.tokens <= 200  # never past the window
    two = result_room(small, 500, 2, meter)
    assert two.per_call_chars * 2 <= early.per_call_chars + 1  # the batch shares the room
    large = result_room(Window.for_model("gpt-4o", None, 2048, None), 2000, 1, meter)
    assert large.budget.read_chars >= MAX_READ_CHARS  # a 128K window reads as much as ever


def test_a_table_in_a_child_process_counts_as_in_ours_and_a_dead_child_is_replaced() -> None:
    from workbench.core.model import tokens

    texts = ["hello world", "def f(x):\n    return x", '{"type": "function"}']
    child = tokens.ChildEncoding("o200k_base")
    assert child.count_many(texts) == [Encoding("o200k_base").count(t) for t in texts]
    first = tokens._child_process
    first.kill()  # the child died: the next count starts another
    first.wait()
    assert child.count("hello world") == 2 and tokens._child_process is not first
    meter = Meter(child)
    assert meter.definitions([{"a": 1}, {"b": 2}]) == [
        Encoding("o200k_base").count(json.dumps(d)) + tokens.PER_DEFINITION
        for d in ({"a": 1}, {"b": 2})
    ]


# A real child that hangs: one that reads the request and never answers, and one that never
# reads at all (a batch larger than the pipe holds then cannot even be written).
HANGS = {
    "never answers": "import sys, time; sys.stdin.buffer.readline(); time.sleep(600)",
    "never reads": "import time; time.sleep(600)",
}


@pytest.mark.parametrize("how", list(HANGS))
def test_a_tokenizer_child_that_hangs_is_stopped_and_the_estimate_counts_instead(
    how: str, monkeypatch
) -> None:
    import subprocess
    import sys
    import threading

    from workbench.core.model import tokens

    tokens._stop_child()
    hung = subprocess.Popen(
        [sys.executable, "-c", HANGS[how]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,  # as a child the counts started would be
        encoding="utf-8",
    )
    monkeypatch.setattr(tokens, "_child_process", hung)  # the child the next count asks
    child = tokens.ChildEncoding("o200k_base")
    child.timeout = 1.0
    problems: list[str] = []
    meter = Meter(child, problems.append)
    definitions = [{"name": f"tool{i}", "description": "x" * 200} for i in range(400)]  # 100 KB
    counted: list[list[int]] = []
    worker = threading.Thread(target=lambda: counted.append(meter.definitions(definitions)))
    worker.start()
    worker.join(timeout=60)  # the caller is never held longer than the child's timeout
    try:
        assert not worker.is_alive(), "the count still waits on the child"
        assert counted == [[Estimate().count(json.dumps(d)) + tokens.PER_DEFINITION
                            for d in definitions]]  # fmt: skip
        assert hung.poll() is not None and tokens._child_process is None  # stopped
        (problem,) = problems
        assert "did not answer within 1 s" in problem and "estimated from now on" in problem
        assert isinstance(meter.tokenizer, Estimate)
    finally:
        tokens._stop_child()
        hung.kill()
        hung.wait()


def test_a_child_started_ahead_loads_its_table_and_counts_as_one_started_on_demand() -> None:
    from workbench.core.model import tokens

    tokens._stop_child()
    child = tokens.ChildEncoding("o200k_base")
    child.start()  # as `tools` does before waiting for its MCP servers
    started = tokens._child_process
    assert started is not None and "serve('o200k_base')" in " ".join(started.args)
    assert child.count_many(["hello world"]) == [Encoding("o200k_base").count("hello world")]
    assert tokens._child_process is started  # the one started ahead answered


def test_kept_counts_answer_without_a_child_and_a_new_text_is_asked_and_kept(tmp_path) -> None:
    from workbench.core.model import tokens

    path = tmp_path / "cache" / "token-counts.json"
    texts = ["hello world", '{"type": "function"}']
    first = tokens.ChildEncoding("o200k_base", saved=tokens.SavedCounts(path))
    assert first.count_many(texts) == [Encoding("o200k_base").count(t) for t in texts]
    assert path.stat().st_mode & 0o777 == 0o600 and "hello" not in path.read_text()
    tokens._stop_child()
    again = tokens.ChildEncoding("o200k_base", saved=tokens.SavedCounts(path))
    again.start()  # counts are kept: no child is started ahead
    assert again.count_many(texts[::-1]) == [Encoding("o200k_base").count(t) for t in texts[::-1]]
    assert tokens._child_process is None  # every count was a kept one
    assert again.count_many(["new text", "hello world"])[0] == Encoding("o200k_base").count(
        "new text"
    )
    assert tokens._child_process is not None and len(json.loads(path.read_text()).popitem()[1]) == 3


def test_kept_counts_of_two_processes_are_both_kept_and_a_fifo_there_never_hangs(
    tmp_path,
) -> None:
    import os

    from workbench.core.model.tokens import SavedCounts

    path = tmp_path / "cache" / "token-counts.json"
    one, two = SavedCounts(path), SavedCounts(path)
    assert one.counts("o200k_base") == two.counts("o200k_base") == {}  # both read it empty
    one.add("o200k_base", {"a": 1})
    two.add("o200k_base", {"b": 2})  # the second writer starts from the file, not its memory
    assert SavedCounts(path).counts("o200k_base") == {"a": 1, "b": 2}
    path.unlink()
    os.mkfifo(path)  # no writer: a plain read would block for ever
    assert SavedCounts(path).counts("o200k_base") == {}
