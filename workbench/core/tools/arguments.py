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
            f"Tool arguments must be a valid JSON object, not {_json_type(raw)}; "
            "tool was not executed."
        )
    return raw


def coerce_arguments(args: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    properties = (schema or {}).get("properties") or {}
    if not properties:
        return args
    out = dict(args)
    for key, value in args.items():
        spec = properties.get(key)
        if isinstance(spec, dict):
            out[key] = _coerce(value, spec)
    return out


def _types(spec: dict[str, Any]) -> set[str]:
    kind = spec.get("type")
    if isinstance(kind, list):
        return set(kind)
    if isinstance(kind, str):
        return {kind}
    return set()


def _coerce(value: Any, spec: dict[str, Any]) -> Any:
    types = _types(spec)
    if not types:
        return value
    if isinstance(value, str):
        return _coerce_string(value, spec, types)
    if "array" in types and not isinstance(value, list) and value is not None:
        return [value]
    if isinstance(value, list) and isinstance(spec.get("items"), dict):
        return [_coerce(v, spec["items"]) for v in value]
    if isinstance(value, dict) and "object" in types:
        return coerce_arguments(value, spec)
    return value


def _coerce_string(value: str, spec: dict[str, Any], types: set[str]) -> Any:
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
        return [_coerce(value, spec.get("items") or {})]
    return value


def validate_arguments(args: dict[str, Any], schema: dict[str, Any] | None) -> list[str]:
    """Problems with `args` under `schema` (empty when they fit): required keys, types, enums."""
    if not schema:
        return []
    return _validate_object(args, schema, "")


def _validate_object(args: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    problems = []
    properties = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in args:
            problems.append(f"missing required argument '{where}{key}'")
    if schema.get("additionalProperties") is False:
        for key in args:
            if key not in properties:
                problems.append(f"unexpected argument '{where}{key}'")
    for key, value in args.items():
        spec = properties.get(key)
        if isinstance(spec, dict):
            problems.extend(_validate_value(value, spec, f"{where}{key}"))
    return problems


_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _validate_value(value: Any, spec: dict[str, Any], where: str) -> list[str]:
    types = _types(spec)
    if types and not any(_CHECKS.get(t, lambda v: True)(value) for t in types):
        wanted = " or ".join(sorted(types))
        return [f"argument '{where}' must be {wanted}, got {_json_type(value)} {_short(value)}"]
    enum = spec.get("enum")
    if isinstance(enum, list) and value not in enum:
        return [f"argument '{where}' must be one of {enum}, got {_short(value)}"]
    if _CHECKS["number"](value):
        low, high = spec.get("minimum"), spec.get("maximum")
        if isinstance(low, int | float) and value < low:
            return [f"argument '{where}' must be >= {low}, got {value}"]
        if isinstance(high, int | float) and value > high:
            return [f"argument '{where}' must be <= {high}, got {value}"]
    if isinstance(value, list) and isinstance(spec.get("items"), dict):
        return [
            p
            for i, v in enumerate(value)
            for p in _validate_value(v, spec["items"], f"{where}[{i}]")
        ]
    if isinstance(value, dict) and spec.get("properties"):
        return _validate_object(value, spec, f"{where}.")
    return []


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _CHECKS[name](value):
            return name
    return type(value).__name__


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def prepare_arguments(raw: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
    """Parse, coerce and validate in one step; raises `ArgumentError` with every problem."""
    args = coerce_arguments(parse_arguments(raw), (schema or {}).get("parameters"))
    problems = validate_arguments(args, (schema or {}).get("parameters"))
    if problems:
        raise ArgumentError("; ".join(problems) + "; tool was not executed.")
    return args
