"""The schema reader: every way JSON Schema says a type read in one shape, and what makes a
schema unusable said with where it is."""

from __future__ import annotations

import json

import pytest

from tests.support.plugins import FIXTURES
from workbench.core.schema import (
    MAX_DEPTH,
    Node,
    json_equal,
    mcp_parameters,
    problem,
    sendable,
)
from workbench.core.tools.definitions import frozen

SHAPES = json.loads((FIXTURES / "shapes" / "shapes.json").read_text())


def prop(schema: dict, name: str) -> Node:
    return Node.of(schema).properties[name]


@pytest.mark.parametrize("name", sorted(SHAPES["usable"]))
def test_every_usable_shape_is_usable(name: str) -> None:
    parameters = SHAPES["usable"][name]["parameters"]
    assert problem(parameters) == ""
    assert problem(frozen(parameters)) == ""  # as a tool's definition holds it: read-only


@pytest.mark.parametrize("name", sorted(SHAPES["broken"]))
def test_every_broken_shape_says_why_and_where(name: str) -> None:
    shape = SHAPES["broken"][name]
    assert problem(shape["parameters"]) == shape["reason"]


@pytest.mark.parametrize(
    ("spec", "types"),
    [
        ({"type": "string"}, ("string",)),
        ({"type": ["string", "null"]}, ("string", "null")),
        ({"type": "integer", "nullable": True}, ("integer", "null")),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, ("integer", "null")),
        ({"oneOf": [{"type": "string"}, {"type": "array", "items": {}}]}, ("string", "array")),
        ({"anyOf": [{"type": "string"}, {}]}, ()),  # a branch that takes anything
        ({"enum": [1, "two", None, True, 2.5]}, ("integer", "string", "null", "boolean", "number")),
        ({"const": "x"}, ("string",)),
        ({"properties": {"a": {}}}, ("object",)),
        ({"items": {"type": "string"}}, ("array",)),
        ({"description": "anything"}, ()),
        ({"allOf": [{"description": "x"}, {"type": "number"}]}, ("number",)),
        (True, ()),
    ],
)
def test_types_are_read_however_the_schema_says_them(spec, types) -> None:
    assert Node.of(spec).types == types


def test_refs_are_followed_into_defs_and_definitions_with_their_siblings() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A", "description": "beside the ref"},
            "b": {"$ref": "#/definitions/B"},
            "c": {"$ref": "#/$defs/Alias"},
            "d": {"$ref": "#/$defs/with~1slash"},
            "e": {"$ref": "#anchored"},
        },
        "$defs": {
            "A": {"type": "integer", "description": "the target's"},
            "Alias": {"$ref": "#/$defs/A"},
            "with/slash": {"type": "boolean"},
            "Anchored": {"$anchor": "anchored", "type": "null"},
        },
        "definitions": {"B": {"type": "array", "items": {"type": "string"}}},
    }
    assert problem(schema) == ""
    a = prop(schema, "a")
    assert a.types == ("integer",) and a.get("description") == "beside the ref"
    b = prop(schema, "b")
    assert b.types == ("array",) and b.items is not None and b.items.types == ("string",)
    assert prop(schema, "c").types == ("integer",)
    assert prop(schema, "d").types == ("boolean",)
    assert prop(schema, "e").types == ("null",)


def test_a_schema_that_refers_to_itself_through_a_property_is_no_loop() -> None:
    parameters = SHAPES["usable"]["nested"]["parameters"]
    tree = prop(parameters, "tree")
    children = tree.properties["children"].items
    assert children is not None and children.properties["children"].types == ("array",)


def test_a_loop_of_refs_reads_as_anything_and_never_hangs() -> None:
    parameters = SHAPES["broken"]["ref_cycle"]["parameters"]
    assert prop(parameters, "a").types == ()  # problem() says why it cannot be used


def test_choices_of_an_enum_and_of_enum_branches_with_null() -> None:
    assert Node.of({"enum": ["a", 1]}).choices == ("a", 1)
    assert Node.of({"type": ["string", "null"], "enum": ["a"]}).choices == ("a", None)
    optional = {"anyOf": [{"enum": ["fast", "slow"], "type": "string"}, {"type": "null"}]}
    assert Node.of(optional).choices == ("fast", "slow", None)
    assert Node.of({"anyOf": [{"enum": ["a"]}, {"type": "string"}]}).choices is None
    assert Node.of({"type": "string"}).choices is None


def test_kind_is_the_first_type_that_is_not_null() -> None:
    assert Node.of({"type": ["null", "integer"]}).kind == "integer"
    assert Node.of({"anyOf": [{"type": "null"}, {"type": "number"}]}).kind == "number"
    assert Node.of({}).kind == "string"


def test_properties_and_required_of_all_of_parts_and_of_an_optional_object() -> None:
    schema = {
        "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b", 3]},
        ]
    }
    node = Node.of(schema)
    assert list(node.properties) == ["a", "b"] and node.required == ("a", "b")
    optional = {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/P"}]}
    optional["$defs"] = {"P": {"type": "object", "properties": {"x": {"type": "number"}}}}
    assert list(Node.of(optional).properties) == ["x"]


def test_the_reader_never_raises_on_what_it_is_given() -> None:
    for odd in (None, 3, "text", [1], {"properties": [1]}, {"type": 5}, {"anyOf": "x"}):
        node = Node.of(odd)
        assert (node.properties, node.required, node.items, node.choices) == ({}, (), None, None)
        assert node.types in ((), ("object",))  # `properties` says an object, however wrong


@pytest.mark.parametrize(
    ("parameters", "reason"),
    [
        ([1, 2], "its parameters must be a JSON Schema object, not an array"),
        ({"type": ["string", "null"]}, "its parameters must be an object schema, not type string or null"),
        ({"properties": [1]}, "'properties' at the top must be an object of named schemas"),
        ({"properties": {"a": 1}}, "the schema at properties.a is an integer, not a schema"),
        ({"properties": {"a": {"type": "strin"}}}, "'type' at properties.a names 'strin', not a JSON type"),
        ({"properties": {"a": {"type": [1]}}}, "'type' at properties.a must be a type's name or a list of names"),
        ({"required": "a"}, "'required' at the top must be a list of names"),
        ({"properties": {"a": {"enum": "a"}}}, "'enum' at properties.a must be a list of values"),
        ({"properties": {"a": {"anyOf": {"type": "string"}}}}, "'anyOf' at properties.a must be a list of schemas"),
        ({"properties": {"a": {"$ref": 3}}}, "'$ref' at properties.a must be a string"),
        ({"properties": {"a": {"$ref": "#/properties/a"}}}, "$ref '#/properties/a' at properties.a leads back to itself: #/properties/a → #/properties/a"),
        ({"properties": {"a": {"items": [{"$ref": "#/nope"}]}}}, "$ref '#/nope' at properties.a.items[0] does not resolve"),
    ],
)  # fmt: skip
def test_what_makes_a_schema_unusable(parameters, reason) -> None:
    assert problem(parameters) == reason


def test_none_at_all_and_a_top_that_is_a_ref_are_usable() -> None:
    assert problem(None) == "" and problem({}) == ""
    top = {"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object"}}}
    assert problem(top) == ""


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    deep: dict = {"type": "string"}
    for _ in range(MAX_DEPTH + 2):
        deep = {"type": "array", "items": deep}
    assert problem({"type": "object", "properties": {"a": deep}}).startswith(
        f"it is nested deeper than {MAX_DEPTH} levels"
    )


def test_json_equality_tells_booleans_from_numbers() -> None:
    assert json_equal(1, 1.0) and not json_equal(True, 1) and not json_equal("1", 1)
    assert json_equal([1, {"a": None}], [1.0, {"a": None}]) and not json_equal([1], [True])
    assert not json_equal(None, False)


def test_sendable_makes_the_top_an_object_and_leaves_a_plain_one_alone() -> None:
    plain = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert sendable(plain) is plain
    assert sendable({"properties": {"a": {}}}) == {"type": "object", "properties": {"a": {}}}
    top = {"$ref": "#/$defs/Args", "$defs": {"Args": {"properties": {"x": {"type": "integer"}}}}}
    sent = sendable(top)
    assert sent["type"] == "object" and sent["properties"] == {"x": {"type": "integer"}}
    assert "$ref" not in sent and problem(sent) == ""
    broken = {"type": "string"}
    assert sendable(broken) is broken  # never sent: nothing to shape


def test_mcp_definitions_become_defs_with_the_refs_into_them() -> None:
    given = SHAPES["usable"]["definitions"]["parameters"]
    normal = mcp_parameters(given)
    assert "definitions" not in normal and normal["$defs"] == given["definitions"]
    assert normal["properties"]["colour"] == {"$ref": "#/$defs/Colour"}
    assert "definitions" in normal["properties"]  # a property of that name is a name
    assert problem(normal) == "" and prop(normal, "colour").choices == ("red", "green")
    assert mcp_parameters(None) == {"type": "object", "properties": {}}
    assert mcp_parameters({"type": "object"}) == {"type": "object", "properties": {}}


SELF_MADE = {
    "type": "object",
    "properties": {"n": {"$ref": "#/$defs/N"}},
    "$defs": {"N": {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}},
}


def test_a_schema_made_of_itself_through_its_branches_is_refused_and_still_read() -> None:
    assert problem(SELF_MADE) == (
        "the schema at $defs.N is made of itself (through anyOf, oneOf, allOf or $ref, "
        "with no property or item between)"
    )
    node = prop(SELF_MADE, "n")  # read all the same, without end: a bound stops it
    assert node.types == () and node.properties == {} and node.choices is None  # anything


def test_branches_that_multiply_past_the_limit_are_refused() -> None:
    def layered(levels: int) -> dict:  # each level two ways to the next: 2**levels in all
        defs = {f"L{i}": {"anyOf": [{"$ref": f"#/$defs/L{i + 1}"}] * 2} for i in range(levels)}
        defs[f"L{levels}"] = {"type": "string"}
        return {"type": "object", "properties": {"x": {"$ref": "#/$defs/L0"}}, "$defs": defs}

    assert "make more than 1000 ways to read the schema" in problem(layered(12))
    assert problem(layered(5)) == "" and prop(layered(5), "x").types == ("string",)
