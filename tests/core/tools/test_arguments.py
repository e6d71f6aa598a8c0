"""Argument parsing, Hermes's coercion rules, and schema validation."""

from __future__ import annotations

import pytest

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
