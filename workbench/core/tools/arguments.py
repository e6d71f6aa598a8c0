"""Tool-call arguments: parse the model's JSON, coerce as Hermes does, validate against the schema.

Coercion follows Hermes's `handle_function_call`: numeric strings become
numbers (integer-only properties keep fractional strings), "true"/"false" become booleans,
JSON-looking strings become arrays/objects, "null" becomes None where nullable, and a bare
scalar is wrapped for an array. What still does not fit the schema after that is an error
naming the argument, so the model can fix its call; the tool is not run.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.core.schema import Node, fits, json_equal, json_type
from workbench.core.schema import problem as schema_problem


class ArgumentError(ValueError):
    """Arguments that cannot be used; the message says which and why."""


def parse_arguments(raw: Any) -> dict[str, Any]:
    """The model's arguments (JSON text or an already-decoded value) as a dict."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArgumentError(
                f"arguments are not valid JSON ({exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}); tool was not executed."
            ) from None
    if not isinstance(raw, dict):
        raise ArgumentError(
            f"Tool arguments must be a valid JSON object, not {json_type(raw)}; "
            "tool was not executed."
        )
    return raw


def coerce_arguments(args: dict[str, Any], schema: Any) -> dict[str, Any]:
    """`args` coerced to the `parameters` schema, as Hermes coerces them."""
    return _coerce_object(args, Node.of(schema if schema is not None else {}))


def _coerce_object(args: dict[str, Any], node: Node) -> dict[str, Any]:
    properties = node.properties
    if not properties:
        return args
    out = dict(args)
    for key, value in args.items():
        spec = properties.get(key)
        if spec is not None:
            out[key] = _coerce(value, spec)
    return out


def _coerce(value: Any, spec: Node) -> Any:
    types = set(spec.types)
    if not types:
        return value
    if isinstance(value, str):
        return _coerce_string(value, spec, types)
    if "array" in types and value is not None and not any(fits(value, t) for t in types):
        return [value]
    items = spec.items
    if isinstance(value, list) and items is not None:
        return [_coerce(v, items) for v in value]
    if isinstance(value, dict) and "object" in types:
        return _coerce_object(value, spec)
    return value


def _coerce_string(value: str, spec: Node, types: set[str]) -> Any:
    if "string" in types:
        return value
    text = value.strip()
    if text == "null" and "null" in types:
        return None
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            if "number" not in types:
                return value
    if "number" in types:
        try:
            number = float(text)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "." not in text else number
    if types & {"array", "object"} and text[:1] in "[{":
        try:
            return _coerce(json.loads(text), spec)
        except json.JSONDecodeError:
            return value
    if "array" in types:
        items = spec.items
        return [_coerce(value, items) if items is not None else value]
    return value


def validate_arguments(args: dict[str, Any], schema: Any) -> list[str]:
    """Problems with `args` under the `parameters` schema (empty when they fit): required
    keys, types, enums, ranges, `anyOf`/`oneOf` (one branch must fit) and `allOf` (each)."""
    if not schema:
        return []
    return _validate_object(args, Node.of(schema), "")


def _validate_object(args: dict[str, Any], node: Node, where: str) -> list[str]:
    problems = []
    properties = node.own_properties
    for key in node.own_required:
        if key not in args:
            problems.append(f"missing required argument '{where}{key}'")
    if node.closed:
        for key in args:
            if key not in properties:
                problems.append(f"unexpected argument '{where}{key}'")
    for key, value in args.items():
        spec = properties.get(key)
        if spec is not None:
            problems.extend(_validate_value(value, spec, f"{where}{key}"))
    return problems


def _validate_value(value: Any, spec: Node, where: str) -> list[str]:
    spec = spec.resolved()
    if spec.never:
        return [f"argument '{where}' is not allowed here"]
    types = spec.types
    if types and not any(fits(value, t) for t in types):
        wanted = " or ".join(sorted(types))
        return [f"argument '{where}' must be {wanted}, got {json_type(value)} {_short(value)}"]
    if value is None and "null" in types:
        return []  # a null the type allows, even where an enum beside it leaves null out
    problems = _validate_branches(value, spec, where)
    for part in spec.all_of:
        problems = problems or _validate_value(value, part, where)
    return problems or _validate_own(value, spec, where)


def _validate_branches(value: Any, spec: Node, where: str) -> list[str]:
    """Nothing when the value fits one of the `anyOf`/`oneOf` branches (or there are none);
    else the problems with the first branch of its type."""
    branches = spec.branches
    if not branches:
        return []
    outcomes = [_validate_value(value, branch, where) for branch in branches]
    if not all(outcomes):
        return []
    typed = [o for b, o in zip(branches, outcomes, strict=True) if _of_types(value, b.types)]
    return (typed or outcomes)[0]


def _of_types(value: Any, types: tuple[str, ...]) -> bool:
    return not types or any(fits(value, t) for t in types)


def _validate_own(value: Any, spec: Node, where: str) -> list[str]:
    """The node's own keywords: its enum, range, items and properties."""
    enum = spec.enum
    if enum is not None and not any(json_equal(value, v) for v in enum):
        return [f"argument '{where}' must be one of {list(enum)}, got {_short(value)}"]
    if fits(value, "number"):
        low, high = spec.get("minimum"), spec.get("maximum")
        if fits(low, "number") and value < low:
            return [f"argument '{where}' must be >= {low}, got {value}"]
        if fits(high, "number") and value > high:
            return [f"argument '{where}' must be <= {high}, got {value}"]
    items = spec.sub("items")
    if isinstance(value, list) and items is not None:
        return [p for i, v in enumerate(value) for p in _validate_value(v, items, f"{where}[{i}]")]
    if isinstance(value, dict) and (spec.own_properties or spec.own_required or spec.closed):
        return _validate_object(value, spec, f"{where}.")
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def prepare_arguments(raw: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
    """Parse, coerce and validate in one step; raises `ArgumentError` with every problem."""
    parameters = (schema or {}).get("parameters")
    unusable = schema_problem(parameters)
    if unusable:
        raise ArgumentError(f"the tool's schema cannot be used: {unusable}; tool was not executed.")
    args = coerce_arguments(parse_arguments(raw), parameters)
    problems = validate_arguments(args, parameters)
    if problems:
        raise ArgumentError("; ".join(problems) + "; tool was not executed.")
    return args
