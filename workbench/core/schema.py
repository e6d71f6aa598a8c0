"""Reading a tool's JSON Schema: the one place the package reads a schema's structure.

Tools come with schemas written by hand, generated (pydantic, zod) or sent by an MCP server,
and JSON Schema says one thing many ways: a property's type as a name or a list of names
(`["string", "null"]`), `nullable: true`, `anyOf`/`oneOf` branches (`Optional[str]` is
`anyOf: [{type: string}, {type: null}]`), no `type` at all (the values of an `enum`, or
`properties`, say what it is), `$ref` into `$defs` or `definitions`. Whatever reads a
schema (the arguments' coercion and validation, the small model's lean profile, the
tool-search bridge, the run form) reads it through `Node`, which answers in one shape
whichever way the schema said it, and never raises on what it is given.

What cannot be read at all is said by `problem`: parameters that are not an object schema,
a `$ref` that does not resolve or points outside the schema, `$ref`s that lead back to
themselves without reaching a schema, a schema made of itself through its branches
(`A = anyOf[A, null]`) or whose branches multiply past `MAX_WAYS` ways to read it, a
keyword of the wrong shape, nesting deeper than `MAX_DEPTH`. Such a tool is registered but never offered to the model, with that reason
(core.tools.entry). A schema that refers to itself through a property (a tree of nodes) is
no loop: it is read one level at a time, as deep as the value read with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
MAX_DEPTH = 64  # levels of nested schemas; deeper is refused rather than read
# ways to read one schema through its anyOf/oneOf/allOf/$ref (each branch read in turn):
# more is refused, so no reading multiplies without end
MAX_WAYS = 1000

# The keywords whose value is a schema, a list of schemas, or a map of names to schemas.
ONE = ("items", "additionalProperties", "additionalItems", "contains", "not", "if", "then",
       "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties")  # fmt: skip
MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

_MISSING = object()
_NOT_LIST = object()  # a keyword that should hold a list of schemas holds something else
_NOT_MAP = object()  # one that should map names to schemas


class _Unusable(Exception):
    """What makes a schema unusable, said where it is."""


def json_type(value: Any) -> str:
    """The JSON type of a decoded value (`integer` for 1, `number` for 1.5)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def fits(value: Any, kind: str) -> bool:
    """Whether a value is of a JSON type (an integer is also a number)."""
    actual = json_type(value)
    return actual == kind or (kind == "number" and actual == "integer")


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: `true` is not `1` (Python says it is), `1` is `1.0`."""
    kinds = {json_type(a), json_type(b)}
    if kinds <= {"integer", "number"}:
        return bool(a == b)
    if len(kinds) > 1:
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@dataclass(frozen=True, slots=True)
class Node:
    """One schema in its document (`root`, where its `$ref`s point), read as it means.

    Every reading follows the node's `$ref` first: the target's keywords, with the node's
    own beside them winning (a description, a default given beside a `$ref`)."""

    raw: Any
    root: Any
    hops: int = 0  # anyOf/oneOf/allOf steps taken in place: a bound on reading a loop of them

    @classmethod
    def of(cls, schema: Any) -> Node:
        return cls(schema, schema)

    @classmethod
    def parameters_of(cls, schema: Any) -> Node:
        """The `parameters` of a tool's schema or of a function in its definition."""
        found = schema.get("parameters") if isinstance(schema, Mapping) else None
        return cls.of(found if found is not None else {})

    def _at(self, raw: Any) -> Node:
        return Node(raw, self.root, self.hops)

    def _inside(self, raw: Any) -> Node:
        """A property's or an item's schema: a value further in."""
        return Node(raw, self.root)

    # -- what the node says ------------------------------------------------------------

    def resolved(self) -> Node:
        """This node with its `$ref`s followed (one that does not resolve, or loops, is
        read as the keywords beside it: `problem` says why)."""
        node, seen = self, set()
        beside: dict[str, Any] = {}
        while isinstance(node.raw, Mapping) and isinstance(node.raw.get("$ref"), str):
            ref = node.raw["$ref"]
            beside = {**{k: v for k, v in node.raw.items() if k != "$ref"}, **beside}
            target = _lookup(self.root, ref) if ref not in seen else _MISSING
            seen.add(ref)
            if target is _MISSING:
                return self._at(beside)
            node = self._at(target)
        if not beside or not isinstance(node.raw, Mapping):
            return node
        return self._at({**node.raw, **beside})

    def _map(self) -> Mapping[str, Any]:
        raw = self.resolved().raw
        return raw if isinstance(raw, Mapping) else {}

    def get(self, key: str, default: Any = None) -> Any:
        """A keyword's value as written (after `$ref`), or `default`."""
        return self._map().get(key, default)

    def has(self, key: str) -> bool:
        """Whether it names a keyword (after `$ref`): a `default` of null is a default."""
        return key in self._map()

    def sub(self, key: str) -> Node | None:
        """The schema a keyword holds (`items`, `additionalProperties`...), if one."""
        value = self._map().get(key)
        return self._inside(value) if isinstance(value, Mapping | bool) else None

    @property
    def never(self) -> bool:
        """The `false` schema: no value fits."""
        return self.resolved().raw is False

    @property
    def declared_types(self) -> tuple[str, ...]:
        """The names its `type` gives (one or a list), with `null` for `nullable: true`."""
        kind = self.get("type")
        names = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
        found = [n for n in names if isinstance(n, str)]
        if self.get("nullable") is True and found and "null" not in found:
            found.append("null")
        return tuple(dict.fromkeys(found))

    @property
    def types(self) -> tuple[str, ...]:
        """The JSON types a value may have, in the schema's order; () when any may do.

        From `type` when given; else the union of its `anyOf`/`oneOf` branches, the types of
        its `enum`'s values, or what its keywords imply (`properties`: an object)."""
        found = list(self.declared_types)
        if not found:
            found = self._implied()
            if found and self.get("nullable") is True:
                found.append("null")
        return tuple(dict.fromkeys(found))

    def _implied(self) -> list[str]:
        branches = self.branches
        if branches:
            union: list[str] = []
            for branch in branches:
                kinds = branch.types
                if not kinds and not branch.never:
                    return []  # a branch that takes anything: so does the union
                union += kinds
            return union
        choices = self.enum
        if choices is not None:
            return [json_type(v) for v in choices]
        for sub in self.all_of:
            if sub.types:
                return list(sub.types)
        keys = self._map().keys()
        if keys & {"properties", "required", "additionalProperties", "patternProperties"}:
            return ["object"]
        if keys & {"items", "prefixItems"}:
            return ["array"]
        return []

    @property
    def nullable(self) -> bool:
        return "null" in self.types

    @property
    def kind(self) -> str:
        """The one type a form asks for: the first that is not null, else `string`."""
        return next((t for t in self.types if t != "null"), "string")

    @property
    def enum(self) -> tuple[Any, ...] | None:
        """The values its own `enum` (or `const`) allows, or None when it names none."""
        values = self.get("enum")
        if isinstance(values, list | tuple):
            return tuple(values)
        if "const" in self._map():
            return (self.get("const"),)
        return None

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The values to choose from, `None` among them when null is one: its enum, or its
        branches' when every branch is an enum or null (`Optional[Literal["a", "b"]]`)."""
        own = self.enum
        if own is not None:
            return own + ((None,) if self.nullable and None not in own else ())
        branches = self.branches
        if not branches:
            return None
        values: list[Any] = []
        for branch in branches:
            if branch.types == ("null",):
                values.append(None)
            elif (more := branch.enum) is not None:
                values += more
            else:
                return None
        return tuple(values)

    @property
    def branches(self) -> tuple[Node, ...]:
        """Its `anyOf` and `oneOf` branches (a value fits the node when it fits one)."""
        return self._many("anyOf") + self._many("oneOf")

    @property
    def all_of(self) -> tuple[Node, ...]:
        return self._many("allOf")

    def _many(self, key: str) -> tuple[Node, ...]:
        value = self.get(key)
        if not isinstance(value, list | tuple) or self.hops >= MAX_DEPTH:
            return ()
        step = self.hops + 1
        return tuple(Node(v, self.root, step) for v in value if isinstance(v, Mapping | bool))

    # -- objects -------------------------------------------------------------------

    @property
    def own_properties(self) -> dict[str, Node]:
        """Its own `properties`, name → schema."""
        value = self.get("properties")
        if not isinstance(value, Mapping):
            return {}
        return {str(k): self._inside(v) for k, v in value.items() if isinstance(v, Mapping | bool)}

    @property
    def properties(self) -> dict[str, Node]:
        """The properties an object of it has: its own and its `allOf` parts'; with none,
        those of its first branch that has some (`Optional[Model]`)."""
        found = dict(self.own_properties)
        for part in self.all_of:
            for name, spec in part.properties.items():
                found.setdefault(name, spec)  # its own first, then each part's in order
        if found:
            return found
        return next((b.properties for b in self.branches if b.properties), {})

    @property
    def own_required(self) -> tuple[str, ...]:
        value = self.get("required")
        if not isinstance(value, list | tuple):
            return ()
        return tuple(dict.fromkeys(r for r in value if isinstance(r, str)))

    @property
    def required(self) -> tuple[str, ...]:
        """The names an object of it must have: its own and its `allOf` parts'."""
        found = list(self.own_required)
        for part in self.all_of:
            found += part.required
        return tuple(dict.fromkeys(found))

    @property
    def closed(self) -> bool:
        """`additionalProperties: false`: no name but its properties."""
        return self.get("additionalProperties") is False

    @property
    def items(self) -> Node | None:
        """The schema of an array's items: its own, or its first array branch's."""
        own = self.sub("items")
        if own is not None:
            return own
        return next((items for b in self.branches if (items := b.items) is not None), None)


# -- unusable schemas ------------------------------------------------------------------


def problem(parameters: Any) -> str:
    """Why a tool's `parameters` cannot be used ("" when they can; none at all can)."""
    if parameters is None:
        return ""
    if not isinstance(parameters, Mapping):
        return f"its parameters must be a JSON Schema object, not {_a(json_type(parameters))}"
    try:
        walked: dict[int, tuple[Mapping[str, Any], str]] = {}
        _check(parameters, parameters, "", 0, walked)
        _check_in_place(parameters, walked)
    except _Unusable as exc:
        return str(exc)
    except RecursionError:
        return f"it is nested deeper than {MAX_DEPTH} levels"
    kinds = Node.of(parameters).resolved().declared_types
    if kinds and "object" not in kinds:
        return f"its parameters must be an object schema, not type {' or '.join(kinds)}"
    return ""


def _a(kind: str) -> str:
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


def _where(path: str) -> str:
    return f"at {path}" if path else "at the top"


def _check(
    node: Any, root: Any, path: str, depth: int, walked: dict[int, tuple[Mapping[str, Any], str]]
) -> None:
    """Raise `_Unusable` for the first thing in `node` that cannot be read; each schema
    walked is kept in `walked` with its path."""
    if isinstance(node, bool):
        return
    if not isinstance(node, Mapping):
        raise _Unusable(f"the schema {_where(path)} is {_a(json_type(node))}, not a schema")
    if depth > MAX_DEPTH:
        raise _Unusable(f"it is nested deeper than {MAX_DEPTH} levels ({_where(path)})")
    walked[id(node)] = (node, path)
    _check_keywords(node, path)
    if "$ref" in node:
        _check_ref(node["$ref"], root, path)
    for key, child, where in _children(node, path):
        if child is _NOT_LIST or child is _NOT_MAP:
            shape = "a list of schemas" if child is _NOT_LIST else "an object of named schemas"
            raise _Unusable(f"'{key}' {_where(path)} must be {shape}")
        _check(child, root, where, depth + 1, walked)


def _check_in_place(root: Any, walked: dict[int, tuple[Mapping[str, Any], str]]) -> None:
    """Reading a schema follows its anyOf/oneOf/allOf branches and `$ref`s in place: none may
    lead back to the schema itself (`A = anyOf[A, null]` says nothing of A), chain deeper
    than `MAX_DEPTH` or multiply into more than `MAX_WAYS` ways to read it."""
    ways: dict[int, int] = {}
    active: list[int] = []

    def visit(node: Mapping[str, Any]) -> int:
        key = id(node)
        if key in ways:
            return ways[key]
        path = walked.get(key, (node, "a $ref's target"))[1]
        if key in active:
            raise _Unusable(
                f"the schema {_where(path)} is made of itself (through anyOf, oneOf, allOf "
                "or $ref, with no property or item between)"
            )
        if len(active) >= MAX_DEPTH:
            raise _Unusable(
                f"its $refs and branches chain deeper than {MAX_DEPTH} ({_where(path)})"
            )
        active.append(key)
        total = 1 + sum(visit(part) for part in _in_place(node, root))
        active.pop()
        if total > MAX_WAYS:
            raise _Unusable(
                f"its anyOf/oneOf/allOf branches and $refs make more than {MAX_WAYS} ways to "
                f"read the schema {_where(path)}"
            )
        ways[key] = total
        return total

    for node, _ in list(walked.values()):
        visit(node)


def _in_place(node: Mapping[str, Any], root: Any) -> list[Mapping[str, Any]]:
    """The schemas read in the place of `node`: its branches, its parts, its `$ref`'s target."""
    found = [
        part
        for key in ("anyOf", "oneOf", "allOf")
        if isinstance(node.get(key), list)
        for part in node[key]
        if isinstance(part, Mapping)
    ]
    ref = node.get("$ref")
    target = _lookup(root, ref) if isinstance(ref, str) else _MISSING
    return [*found, target] if isinstance(target, Mapping) else found


def _check_keywords(node: Mapping[str, Any], path: str) -> None:
    kind = node.get("type")
    if kind is not None:
        names = [kind] if isinstance(kind, str) else kind
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _Unusable(f"'type' {_where(path)} must be a type's name or a list of names")
        unknown = [n for n in names if n not in JSON_TYPES]
        if unknown:
            raise _Unusable(f"'type' {_where(path)} names '{unknown[0]}', not a JSON type")
    required = node.get("required")
    if required is not None and (
        not isinstance(required, list) or not all(isinstance(r, str) for r in required)
    ):
        raise _Unusable(f"'required' {_where(path)} must be a list of names")
    if "enum" in node and not isinstance(node["enum"], list):
        raise _Unusable(f"'enum' {_where(path)} must be a list of values")


def _children(node: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any, str]]:
    """(keyword, subschema, its path) for each schema inside `node`; `_NOT_LIST` or
    `_NOT_MAP` as the subschema when a keyword holds something else."""
    dot = f"{path}." if path else ""
    for key in ONE:
        if key in node:
            value = node[key]
            if key in ("items", "additionalItems") and isinstance(value, list):
                yield from ((key, v, f"{dot}{key}[{i}]") for i, v in enumerate(value))
            else:
                yield key, value, f"{dot}{key}"
    for key in MANY:
        if key in node:
            value = node[key]
            if not isinstance(value, list):
                yield key, _NOT_LIST, path
                continue
            yield from ((key, v, f"{dot}{key}[{i}]") for i, v in enumerate(value))
    for key in NAMED:
        if key in node:
            value = node[key]
            if not isinstance(value, Mapping):
                yield key, _NOT_MAP, path
                continue
            yield from ((key, v, f"{dot}{key}.{name}") for name, v in value.items())


def _check_ref(ref: Any, root: Any, path: str) -> None:
    """A `$ref` must lead, through any further `$ref`s, to a schema in this document."""
    if not isinstance(ref, str):
        raise _Unusable(f"'$ref' {_where(path)} must be a string")
    chain = [ref]
    target = _lookup(root, ref)
    while True:
        if target is _MISSING:
            outside = (
                ""
                if chain[-1].startswith("#")
                else " (only references into the schema itself are read)"
            )
            raise _Unusable(f"$ref '{chain[-1]}' {_where(path)} does not resolve{outside}")
        following = target.get("$ref") if isinstance(target, Mapping) else None
        if not isinstance(following, str):
            return
        if following in chain:
            raise _Unusable(
                f"$ref '{ref}' {_where(path)} leads back to itself: {' → '.join([*chain, following])}"
            )
        chain.append(following)
        target = _lookup(root, following)


def _lookup(root: Any, ref: str) -> Any:
    """What a local `$ref` points at in `root` (`#`, `#/$defs/Name`, `#/definitions/Name`,
    an `$anchor`), or `_MISSING`."""
    if not ref.startswith("#"):
        return _MISSING
    pointer = unquote(ref[1:])
    if pointer and not pointer.startswith("/"):
        return _anchor(root, pointer, 0)
    node = root
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


def _anchor(node: Any, name: str, depth: int) -> Any:
    """The schema whose `$anchor` is `name`, searched through `node`."""
    if depth > MAX_DEPTH:
        return _MISSING
    if isinstance(node, Mapping):
        if node.get("$anchor") == name:
            return node
        values: Any = node.values()
    elif isinstance(node, list):
        values = node
    else:
        return _MISSING
    for value in values:
        found = _anchor(value, name, depth + 1)
        if found is not _MISSING:
            return found
    return _MISSING


# -- what is sent ----------------------------------------------------------------------


def sendable(parameters: Any) -> Any:
    """The parameters as the model is sent them: the top an object schema with its
    properties, as every endpoint wants it (a top-level `$ref` followed, `type: object`
    named, `properties` present). Parameters that cannot be used, or need nothing, are
    returned as they are."""
    if not isinstance(parameters, Mapping) or problem(parameters):
        return parameters
    top = Node.of(parameters)
    if (
        "$ref" not in parameters
        and parameters.get("type") == "object"
        and isinstance(parameters.get("properties"), Mapping)
    ):
        return parameters
    out = {k: v for k, v in parameters.items() if k != "$ref"}
    out.update({k: v for k, v in top.resolved()._map().items() if k not in parameters})
    out["type"] = "object"
    out.setdefault("properties", {})
    return out


def mcp_parameters(schema: Any) -> dict[str, Any]:
    """An MCP tool's input schema as Hermes keeps it: its `definitions` renamed `$defs`, with
    the `$ref`s into them (some endpoints take only `$defs`), and an object at the top named
    as one, with its properties."""
    normal = dict(schema or {})
    if "definitions" in normal and "$defs" not in normal:
        normal["$defs"] = normal.pop("definitions")
        normal = _refs_moved(normal, "#/definitions/", "#/$defs/")
    if normal.get("type") in (None, "object"):
        normal["type"] = "object"
        normal.setdefault("properties", {})
    return normal


def _refs_moved(node: Any, old: str, new: str) -> Any:
    """`node` with every `$ref` starting `old` starting `new` instead (a property named
    `$ref` is a name, not a reference, and stays)."""
    if isinstance(node, list):
        return [_refs_moved(v, old, new) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties") and isinstance(value, Mapping):
            out[key] = {name: _refs_moved(v, old, new) for name, v in value.items()}
        elif key == "$ref" and isinstance(value, str) and value.startswith(old):
            out[key] = new + value.removeprefix(old)
        else:
            out[key] = _refs_moved(value, old, new)
    return out
