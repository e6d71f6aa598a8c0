"""Argument parsing, Hermes's coercion rules, and schema validation."""

from __future__ import annotations

import json

import pytest

from tests.support.plugins import FIXTURES
from workbench.core.tools.arguments import (
    ArgumentError,
    coerce_arguments,
    parse_arguments,
    prepare_arguments,
    validate_arguments,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object", "properties": {"depth": {"type": "integer"}}},
        "maybe": {"type": ["string", "null"]},
        "nullable_int": {"type": ["integer", "null"]},
        "mode": {"type": "string", "enum": ["a", "b"]},
    },
    "required": ["count"],
}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, {}),
        ("", {}),
        ("   ", {}),
        ('{"a": 1}', {"a": 1}),
        ({"a": 1}, {"a": 1}),
    ],
)
def test_parse(raw, expected) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a valid JSON object, not array"),
        ('"text"', "not string"),
        (42, "not integer"),
    ],
)
def test_parse_rejects_with_a_clear_message(raw, message) -> None:
    with pytest.raises(ArgumentError, match=message):
        parse_arguments(raw)


def test_coercion_follows_hermes() -> None:
    got = coerce_arguments(
        {
            "count": "42",
            "ratio": "0.5",
            "flag": "true",
            "tags": "solo",
            "opts": '{"depth": "3"}',
            "nullable_int": "null",
            "maybe": "null",
        },
        SCHEMA,
    )
    assert got == {
        "count": 42,
        "ratio": 0.5,
        "flag": True,
        "tags": ["solo"],
        "opts": {"depth": 3},
        "nullable_int": None,
        "maybe": "null",  # a string property keeps the text
    }


def test_integer_properties_keep_fractional_strings() -> None:
    assert coerce_arguments({"count": "1.5"}, SCHEMA) == {"count": "1.5"}
    assert validate_arguments({"count": "1.5"}, SCHEMA) == [
        "argument 'count' must be integer, got string \"1.5\""
    ]


def test_json_array_strings_are_parsed() -> None:
    assert coerce_arguments({"tags": '["a", "b"]'}, SCHEMA) == {"tags": ["a", "b"]}


def test_validation_names_every_problem() -> None:
    problems = validate_arguments(
        {"count": 0, "flag": "maybe", "mode": "c", "tags": ["ok", 3], "opts": {"depth": "x"}},
        SCHEMA,
    )
    assert problems == [
        "argument 'count' must be >= 1, got 0",
        "argument 'flag' must be boolean, got string \"maybe\"",
        "argument 'mode' must be one of ['a', 'b'], got \"c\"",
        "argument 'tags[1]' must be string, got integer 3",
        "argument 'opts.depth' must be integer, got string \"x\"",
    ]


def test_missing_required() -> None:
    assert validate_arguments({}, SCHEMA) == ["missing required argument 'count'"]


def test_prepare_combines_and_says_the_tool_did_not_run() -> None:
    with pytest.raises(ArgumentError, match="missing required argument 'count'; tool was not"):
        prepare_arguments("{}", {"parameters": SCHEMA})
    assert prepare_arguments('{"count": "2"}', {"parameters": SCHEMA}) == {"count": 2}


SHAPES = json.loads((FIXTURES / "shapes" / "shapes.json").read_text())


def usable(name: str) -> dict:
    return SHAPES["usable"][name]["parameters"]


@pytest.mark.parametrize(
    ("shape", "args"),
    [
        ("type_list", {"text": None, "count": None}),
        ("any_of", {"label": None, "mode": None, "size": 3}),
        ("any_of", {"size": "large", "mode": "slow"}),
        ("nullable", {"limit": None, "name": None}),
        ("mixed_enum", {"level": None}),
        ("mixed_enum", {"level": True}),
        ("refs", {"point": {"x": 1, "y": 2.5}, "maybe": None}),
        ("definitions", {"colour": "red", "definitions": ["a"]}),
        ("untyped", {"anything": {"deep": [1]}, "choice": "b"}),
        ("nested", {"rows": [{"cells": [1, None]}], "tree": {"name": "r", "children": [{}]}}),
    ],
)
def test_arguments_of_every_usable_shape_validate(shape: str, args: dict) -> None:
    assert validate_arguments(args, usable(shape)) == []
    assert prepare_arguments(json.dumps(args), {"parameters": usable(shape)}) == args


@pytest.mark.parametrize(
    ("shape", "args", "problems"),
    [
        ("type_list", {"text": 3}, ["argument 'text' must be null or string, got integer 3"]),
        ("any_of", {"size": 0}, ["argument 'size' must be >= 1, got 0"]),
        ("any_of", {"size": "medium"}, ["argument 'size' must be one of ['small', 'large'], got \"medium\""]),
        ("any_of", {"size": [1]}, ["argument 'size' must be integer or string, got array [1]"]),
        ("any_of", {"mode": "quick"}, ["argument 'mode' must be one of ['fast', 'slow'], got \"quick\""]),
        ("refs", {"point": {"x": "a"}}, ["missing required argument 'point.y'", "argument 'point.x' must be number, got string \"a\""]),
        ("refs", {}, ["missing required argument 'point'"]),
        ("definitions", {"colour": "blue"}, ["argument 'colour' must be one of ['red', 'green'], got \"blue\""]),
        ("mixed_enum", {"level": 2}, ["argument 'level' must be one of [1, 'two', None, True], got 2"]),
        ("mixed_enum", {"level": False}, ["argument 'level' must be one of [1, 'two', None, True], got false"]),
        ("nested", {"rows": [{"cells": ["x"]}]}, ["argument 'rows[0].cells[0]' must be null or number, got string \"x\""]),
        ("nested", {"tree": {"children": [{"name": 5}]}}, ["argument 'tree.children[0].name' must be string, got integer 5"]),
    ],
)  # fmt: skip
def test_arguments_that_do_not_fit_a_shape_say_why(shape: str, args: dict, problems) -> None:
    assert validate_arguments(args, usable(shape)) == problems


def test_an_enum_tells_true_from_one() -> None:
    schema = {"properties": {"n": {"enum": [1]}, "b": {"enum": [True]}}}
    assert validate_arguments({"n": 1, "b": True}, schema) == []
    assert validate_arguments({"n": True, "b": 1}, schema) == [
        "argument 'n' must be integer, got boolean true",  # the enum's values say the type
        "argument 'b' must be boolean, got integer 1",
    ]


def test_coercion_reads_unions_refs_and_nested_arrays() -> None:
    assert coerce_arguments({"count": "null", "text": "null"}, usable("type_list")) == {
        "count": None,
        "text": "null",  # a string may be "null"
    }
    assert coerce_arguments({"size": "3"}, usable("any_of")) == {"size": "3"}  # a string fits
    assert coerce_arguments({"label": "null"}, usable("any_of")) == {"label": "null"}
    assert coerce_arguments({"limit": "7"}, usable("nullable")) == {"limit": 7}
    got = coerce_arguments({"point": '{"x": "1", "y": "2"}'}, usable("refs"))
    assert got == {"point": {"x": 1, "y": 2}}
    got = coerce_arguments({"rows": '[{"cells": ["1", "null"]}]'}, usable("nested"))
    assert got == {"rows": [{"cells": [1, None]}]}
    either = {"properties": {"ids": {"type": ["integer", "array"], "items": {"type": "integer"}}}}
    assert coerce_arguments({"ids": 5}, either) == {"ids": 5}  # fits as it is: not wrapped


def test_a_schema_that_cannot_be_used_runs_nothing() -> None:
    broken = SHAPES["broken"]["dangling_ref"]["parameters"]
    with pytest.raises(ArgumentError, match=r"the tool's schema cannot be used: \$ref"):
        prepare_arguments('{"where": "here"}', {"parameters": broken})
    assert validate_arguments({"where": 3}, broken) == []  # read without raising
