"""Case files: read and checked strictly, appended without losing the user's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.replay import jsonpath
from workbench.core.replay.cases import Case, CaseFileError, Expect, append, load
from workbench.core.replay.checks import failures


def test_json_paths() -> None:
    doc = {"a": {"b": [10, {"c": "x"}]}, "d.e": True, "items": [1, 2]}
    assert jsonpath.lookup(doc, "a.b[0]") == 10
    assert jsonpath.lookup(doc, "$.a.b[-1].c") == "x"
    assert jsonpath.lookup(doc, '["d.e"]') is True
    assert jsonpath.lookup(doc, "items.1") == 2
    assert jsonpath.lookup(doc, "a.b[5]") is jsonpath.MISSING
    assert jsonpath.lookup(doc, "a.zz") is jsonpath.MISSING
    assert jsonpath.lookup([1], "a") is jsonpath.MISSING
    with pytest.raises(jsonpath.PathError):
        jsonpath.parse("a[x")
    with pytest.raises(jsonpath.PathError):
        jsonpath.parse("")


def test_checks_say_each_failure() -> None:
    expect = Expect("ok", {"n": 1, "flag": True}, ("hello",), 0.5)
    assert failures(expect, "ok", '{"n": 1.0, "flag": true, "t": "hello"}', 0.1) == []
    assert failures(expect, "error", '{"n": 1, "flag": 1}', 0.9) == [
        'status error, expected ok ({"n": 1, "flag": 1})',
        "json flag: expected true, got 1",
        'result does not contain "hello"',
        "took 0.90 s, over max_seconds 0.5",
    ]
    assert failures(Expect(json={"a": 1}), "ok", "plain", 0)[0].startswith("result is not JSON")


def test_append_creates_keeps_comments_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "tests" / "tools" / "read_file.yaml"
    case = Case("reads a", "read_file", {"path": "a.txt"}, Expect("ok", {"total_lines": 2}))
    assert append(path, case, locks=tmp_path / "state") == 1
    text = path.read_text()
    assert text.startswith("# Tool calls saved from hermes-tui")
    path.write_text(text + "# my note\n")
    assert append(path, Case("again", "read_file", {}, Expect(contains=("x",))), tmp_path) == 2
    assert "# my note" in path.read_text()
    first, second = load(path)
    assert (first.name, first.arguments, first.expect) == (
        "reads a",
        {"path": "a.txt"},
        case.expect,
    )
    assert second.expect.contains == ("x",) and second.index == 2
    assert not list(path.parent.glob(".*lock"))  # locks live in the state folder


def test_append_refuses_a_file_that_does_not_parse(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("cases: [unclosed\n")
    with pytest.raises(CaseFileError, match=r"c\.yaml"):
        append(path, Case("x", "t", {}, Expect()))
    assert path.read_text() == "cases: [unclosed\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- tool: x\n", "a list under `cases:`"),
        ("cases:\n  - {arguments: {}}\n", "case 1 (#1): `tool` must name a tool"),
        ("cases:\n  - {tool: x, arguments: [1]}\n", "`arguments` must be a mapping"),
        ("cases:\n  - {tool: x, expect: {max_seconds: -1}}\n", "positive number"),
        ("cases:\n  - {tool: x, expect: {json: {'a[': 1}}}\n", "bad JSON path"),
        ("cases:\n  - {tool: x, expect: {contains: [1]}}\n", "text or a list of text"),
        ("cases:\n  - {tool: x, tools: y}\n", "unknown key(s) tools"),
        ("cases:\n  - {tool: x, arguments: {path: 2024-01-01}}\n", "`arguments.path` is a date"),
        ("cases:\n  - {tool: x, arguments: {a: [{1: b}]}}\n", "`arguments.a[0]` has a key"),
        ("cases:\n  - {tool: x, expect: {json: {at: 2024-01-01}}}\n", "is a date"),
    ],
)
def test_a_case_not_written_right_is_named(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CaseFileError) as caught:
        load(path)
    assert str(path) in str(caught.value) and says in str(caught.value)
