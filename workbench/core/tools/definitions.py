"""The OpenAI tool definitions the model is offered, built once and kept while still true.

The agent asks for the definitions of the same tools on every model request. They change
only when the table changes (a tool registered, removed or replaced, an alias), when a
check result is dropped or expires, or when other tools are asked for; the cache is keyed
by all three, so each of those rebuilds them. Tools with dynamic schema overrides are
rebuilt on every call, as their overrides may say something new each time.

The definitions handed out are shared between calls, so they are read-only: changing one
raises `TypeError` instead of changing what the model is offered next time. A copy
(`dict(d)`, `d.copy()`, `copy.deepcopy(d)`) is an ordinary dict to change freely.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from workbench.core import schema as schemas

if TYPE_CHECKING:
    from workbench.core.tools.availability import CheckCache
    from workbench.core.tools.entry import ToolEntry

logger = logging.getLogger(__name__)

CACHED_REQUESTS = 8  # distinct sets of tool names kept (the agent asks for one or two)


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError("tool definitions are shared and read-only; change a copy (dict(d))")


class ReadOnlyDict(dict[str, Any]):
    """A dict that refuses changes; copies of it are plain dicts."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return (dict, (dict(self),))  # copy, deepcopy and pickle give plain dicts


class ReadOnlyList(list[Any]):
    """A list that refuses changes; copies of it are plain lists."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __reduce__(self) -> tuple[type, tuple[list[Any]]]:
        return (list, (list(self),))


def frozen(value: Any) -> Any:
    """`value` with every dict and list in it read-only (equal to it, the same JSON)."""
    if isinstance(value, Mapping):
        return ReadOnlyDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ReadOnlyList(frozen(v) for v in value)
    return value


def tool_definition(name: str, schema: Any) -> ReadOnlyDict:
    """A tool's OpenAI definition: its schema as the function, `name` always its own, its
    parameters in the shape endpoints take (core.schema.sendable)."""
    function = {**(schema if isinstance(schema, Mapping) else {}), "name": name}
    if "parameters" in function:
        function["parameters"] = schemas.sendable(function["parameters"])
    return ReadOnlyDict({"type": "function", "function": frozen(function)})


@dataclass(frozen=True, slots=True)
class _Built:
    names: frozenset[str]
    generation: int  # of the table the definitions were built from
    epoch: int  # of the check cache whose results decided availability
    expires: float  # the earliest expiry among those results
    definitions: tuple[dict[str, Any], ...]
    dynamic: tuple[tuple[int, ToolEntry], ...]  # (position, entry) rebuilt on every call

    def fresh(self, names: frozenset[str], generation: int, epoch: int, now: float) -> bool:
        return (
            generation == self.generation
            and epoch == self.epoch
            and now < self.expires
            and names == self.names
        )

    def result(self) -> list[dict[str, Any]]:
        out = list(self.definitions)
        for i, entry in self.dynamic:
            out[i] = definition(entry)
        return out


class DefinitionsCache:
    """The last few requests' definitions; every check of them is cheap on a hit."""

    def __init__(self) -> None:
        self._built: tuple[_Built, ...] = ()

    def get(
        self,
        tool_names: Iterable[str],
        tools: Mapping[str, ToolEntry],
        generation: int,
        checks: CheckCache,
        now: float,
    ) -> list[dict[str, Any]]:
        """The definitions of the available tools among `tool_names`, sorted by name.

        `generation` must be read before `tools`: a table newer than its generation is
        only rebuilt once more, never kept under a generation it does not belong to.
        """
        names = tool_names if isinstance(tool_names, frozenset) else frozenset(tool_names)
        epoch = checks.epoch
        for built in self._built:
            if built.fresh(names, generation, epoch, now):
                return built.result()
        built = _build(names, tools, generation, checks, epoch, now)
        self._built = (built, *self._built[: CACHED_REQUESTS - 1])  # one step: readers are unlocked
        return built.result()

    def clear(self) -> None:
        self._built = ()


def _build(
    names: frozenset[str],
    tools: Mapping[str, ToolEntry],
    generation: int,
    checks: CheckCache,
    epoch: int,
    now: float,
) -> _Built:
    definitions: list[dict[str, Any]] = []
    dynamic: list[tuple[int, ToolEntry]] = []
    expires = float("inf")
    for name in sorted(names):
        entry = tools.get(name)
        if entry is None or entry.schema_problem:  # never offered: the tools list says why
            continue
        if entry.check_fn is not None:
            result = checks.run(entry.check_fn, now)
            if result.expires < expires:
                expires = result.expires
            if not result.ok:
                continue
        if entry.dynamic_schema_overrides is not None:
            dynamic.append((len(definitions), entry))
        definitions.append(entry.definition)
    return _Built(names, generation, epoch, expires, tuple(definitions), tuple(dynamic))


def definition(entry: ToolEntry) -> dict[str, Any]:
    """A tool's definition with its dynamic schema overrides applied now (the static one
    when they fail, or give parameters that cannot be used)."""
    function = dict(entry.definition["function"])
    try:
        extra = entry.dynamic_schema_overrides()  # type: ignore[misc]
    except Exception:
        logger.exception(
            "dynamic schema overrides of %s failed; using the static schema", entry.name
        )
        extra = None
    if isinstance(extra, dict) and "parameters" in extra:
        why = schemas.problem(extra["parameters"])
        if why:
            logger.warning(
                "dynamic schema overrides of %s give parameters that cannot be used (%s); "
                "using the static schema",
                entry.name,
                why,
            )
            extra = None
        else:
            extra = {**extra, "parameters": schemas.sendable(extra["parameters"])}
    if isinstance(extra, dict):
        function.update(extra)
        function["name"] = entry.name
    return {"type": "function", "function": function}
