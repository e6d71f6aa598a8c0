"""sys.stdout is hermes-tui's: text plugin code writes goes to the plugin's output, on any
thread, and everything else to the stream it replaced. (fd 1 is a process's: the command
line's tests, tests/cli/test_plugin_output.py, run hermes-tui as one.)"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
import types
import uuid
from collections.abc import Iterator

import pytest

from workbench.core import own_output

PLUGIN_CODE = """
import sys, threading

def say(text):
    print(text)

def say_bytes(data):
    sys.stdout.buffer.write(data)

def in_a_thread(text):
    thread = threading.Thread(target=say, args=(text,))
    thread.start()
    thread.join()
"""


@contextlib.contextmanager
def switched() -> Iterator[io.StringIO]:
    """sys.stdout a switch over the stream given: what reaches it is hermes-tui's own
    output. (Set inside the test: pytest sets sys.stdout again for each phase.)"""
    stream, saved = io.StringIO(), sys.stdout
    sys.stdout = own_output._Switch(stream)
    try:
        yield stream
    finally:
        sys.stdout = saved


@pytest.fixture
def plugin() -> tuple[str, types.ModuleType]:
    """A plugin's key and a module of its code (named as a directory plugin's are)."""
    key = f"p{uuid.uuid4().hex[:8]}"
    module = types.ModuleType(f"hermes_plugins.{key}")
    exec(compile(PLUGIN_CODE, f"<{key}>", "exec"), module.__dict__)
    own_output.claim(key, module.__name__)
    yield key, module
    own_output.forget(key)


def test_speaking_keeps_a_plugins_print_from_hermes_tuis_output() -> None:
    with switched() as own:
        key = f"k{uuid.uuid4().hex[:8]}"
        print("hermes-tui's own")
        with own_output.speaking(key):
            print("the plugin's")
            sys.stdout.write("unfinished")
        print("hermes-tui's again")
        assert own.getvalue() == "hermes-tui's own\nhermes-tui's again\n"
        assert own_output.lines(key) == ["the plugin's", "unfinished"]  # its return ends a line
        own_output.forget(key)


def test_plugin_code_is_found_on_the_stack_without_a_block(plugin) -> None:
    """A memory provider's method, a check_fn: no block around them, its frame says whose."""
    with switched() as own:
        key, module = plugin
        module.say("from its function")
        module.say_bytes(b"bytes too\n")
        print("ours")
        assert own.getvalue() == "ours\n"
        assert own_output.lines(key) == ["from its function", "bytes too"]


def test_a_thread_a_plugin_starts_prints_as_the_plugin(plugin) -> None:
    with switched() as own:
        key, module = plugin
        module.in_a_thread("from its thread")
        assert own.getvalue() == ""
        assert own_output.lines(key) == ["from its thread"]


def test_threads_printing_at_once_each_reach_their_own_place() -> None:
    """The agent's thread writes hermes-tui's output while a tool handler of a plugin
    prints on another: neither reaches the other's place."""
    with switched() as own:
        key = f"k{uuid.uuid4().hex[:8]}"
        turns = threading.Barrier(2)

        def handler() -> None:
            with own_output.speaking(key):
                for n in range(50):
                    turns.wait()
                    print(f"plugin {n}")

        thread = threading.Thread(target=handler)
        thread.start()
        for n in range(50):
            turns.wait()
            print(f"ours {n}")
        thread.join()
        assert own.getvalue().splitlines() == [f"ours {n}" for n in range(50)]
        assert own_output.lines(key) == [f"plugin {n}" for n in range(50)][-own_output.TAIL :]
        own_output.forget(key)


def test_hermes_tuis_own_packages_are_never_a_plugins() -> None:
    with switched() as own:
        own_output.claim("sneaky", "workbench.cli")  # a pip plugin's entry point there
        own_output.claim("sneaky", "json")
        print("ours")
        assert own.getvalue() == "ours\n" and own_output.lines("sneaky") == []


def test_a_long_line_is_cut_and_the_log_is_bounded(caplog, monkeypatch) -> None:
    key = f"k{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(own_output, "LOG_LINES", 3)
    log = logging.getLogger("workbench.core.own_output")  # the app's log may not propagate
    log.addHandler(caplog.handler)
    monkeypatch.setattr(log, "level", logging.INFO)
    try:
        with switched(), own_output.speaking(key):
            print("x" * (own_output.LINE_CHARS + 10))
            for n in range(5):
                print(n)
    finally:
        log.removeHandler(caplog.handler)
    kept = own_output.lines(key)
    assert kept == ["x" * own_output.LINE_CHARS + "…", "0", "1", "2", "3", "4"]
    records = dict.fromkeys(caplog.records)  # once each, if the root's handler had it too
    logged = [r.getMessage() for r in records if key in r.getMessage()]
    said = [f"plugin {key} printed: {line}" for line in kept[:3]]
    assert logged == [*said, f"plugin {key} printed more than 3 lines: the rest is not logged"]
    own_output.forget(key)


def test_text_without_a_newline_is_held_no_longer_than_a_line() -> None:
    """A plugin writing on and on without a newline: what waits for the line's end never
    grows much past a line (the line is cut there), so memory stays bounded."""
    key = f"k{uuid.uuid4().hex[:8]}"
    with switched(), own_output.speaking(key):
        for _ in range(50):
            sys.stdout.write("y" * (own_output.LINE_CHARS // 4))
            assert len(own_output.outputs._partial.get(key, "")) <= own_output.LINE_CHARS + 1
    assert own_output.lines(key) == ["y" * own_output.LINE_CHARS + "…"]  # one line, cut
    own_output.forget(key)
