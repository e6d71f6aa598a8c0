"""Test case files: a list of tool calls, each with the checks its result must pass.

```yaml
cases:
  - name: read_file notes.txt
    tool: read_file
    arguments: {path: notes.txt}
    expect:
      status: ok                  # the call's status (ok, error, denied, timeout...)
      json: {total_lines: 3}      # JSON path -> the value found there
      contains: [hello]           # substrings of the result (one, or a list)
      max_seconds: 5              # the call took at most this long
```

A file is read through the bounded YAML loader; anything not written right (a key we do not
know, a value of the wrong type) is an error naming the file and the case, so a typo in a
check never makes a case pass by checking nothing. Appending keeps the file's comments and
other cases (round-trip YAML, under the file's lock, written atomically), and refuses a file
that does not parse rather than replace it.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.replay import jsonpath
from workbench.core.storage import yaml_file
from workbench.core.storage.atomic import atomic_write_text, default_file_mode, locked

CASE_KEYS = frozenset({"name", "tool", "arguments", "expect"})
EXPECT_KEYS = frozenset({"status", "json", "contains", "max_seconds"})
HEADER = (
    "# Tool calls saved from hermes-tui; `hermes-tui replay FILE` runs them and checks each\n"
    "# result (status, json: {path: value}, contains, max_seconds).\n"
)


class CaseFileError(ValueError):
    """A case file that cannot be used; the message names the file and the case."""


@dataclass(frozen=True, slots=True)
class Expect:
    status: str | None = None
    json: dict[str, Any] = field(default_factory=dict)
    contains: tuple[str, ...] = ()
    max_seconds: float | None = None

    def as_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.status is not None:
            out["status"] = self.status
        if self.json:
            out["json"] = dict(self.json)
        if self.contains:
            out["contains"] = self.contains[0] if len(self.contains) == 1 else list(self.contains)
        if self.max_seconds is not None:
            out["max_seconds"] = self.max_seconds
        return out


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    tool: str
    arguments: dict[str, Any]
    expect: Expect
    file: str = ""
    index: int = 0  # 1-based, in its file

    @property
    def where(self) -> str:
        return f"{self.file}: case {self.index} ({self.name})"

    def as_yaml(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "expect": self.expect.as_yaml(),
        }


def load(path: Path) -> list[Case]:
    """Every case of a file, checked; raises CaseFileError on anything not written right."""
    try:
        data = yaml_file.load(path)
    except FileNotFoundError:
        raise CaseFileError(f"{path}: no such file") from None
    except yaml_file.YAMLFileError as exc:
        raise CaseFileError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise CaseFileError(f"{path}: expected a mapping with a list under `cases:`")
    if set(data) - {"cases"}:
        raise CaseFileError(f"{path}: unknown key(s) {', '.join(sorted(map(str, data)))}")
    return [_case(raw, path, n) for n, raw in enumerate(data["cases"], 1)]


def _case(raw: Any, path: Path, index: int) -> Case:
    where = f"{path}: case {index}"
    if not isinstance(raw, dict):
        raise CaseFileError(f"{where}: a case is a mapping (name, tool, arguments, expect)")
    name = raw.get("name", f"#{index}")
    where = f"{where} ({name})"
    if unknown := set(raw) - CASE_KEYS:
        raise CaseFileError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        raise CaseFileError(f"{where}: `tool` must name a tool")
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise CaseFileError(f"{where}: `arguments` must be a mapping")
    _check_json(arguments, "arguments", where)
    return Case(
        str(name), tool, arguments, _expect(raw.get("expect") or {}, where), str(path), index
    )


def _expect(raw: Any, where: str) -> Expect:
    if not isinstance(raw, dict):
        raise CaseFileError(f"{where}: `expect` must be a mapping")
    if unknown := set(raw) - EXPECT_KEYS:
        known = ", ".join(sorted(EXPECT_KEYS))
        raise CaseFileError(
            f"{where}: unknown check(s) {', '.join(sorted(map(str, unknown)))} (known: {known})"
        )
    status = raw.get("status")
    if status is not None and not isinstance(status, str):
        raise CaseFileError(f"{where}: `expect.status` must be text (ok, error, denied...)")
    paths = raw.get("json") or {}
    if not isinstance(paths, dict):
        raise CaseFileError(f"{where}: `expect.json` must map JSON paths to values")
    for key, value in paths.items():
        try:
            jsonpath.parse(str(key))
        except jsonpath.PathError as exc:
            raise CaseFileError(f"{where}: {exc}") from None
        _check_json(value, f"expect.json[{key!r}]", where)
    contains = raw.get("contains", ())
    contains = (contains,) if isinstance(contains, str) else contains
    if not isinstance(contains, list | tuple) or not all(isinstance(c, str) for c in contains):
        raise CaseFileError(f"{where}: `expect.contains` must be text or a list of text")
    limit = raw.get("max_seconds")
    if limit is not None and (
        isinstance(limit, bool)
        or not isinstance(limit, int | float)
        or not math.isfinite(limit)
        or limit <= 0
    ):
        raise CaseFileError(f"{where}: `expect.max_seconds` must be a positive number")
    return Expect(
        status,
        {str(k): v for k, v in paths.items()},
        tuple(contains),
        None if limit is None else float(limit),
    )


def _check_json(value: Any, at: str, where: str) -> None:
    """A call's arguments (and a value a result is checked against) are JSON, as the model
    sends them: YAML reads an unquoted `2024-01-01` as a date, which no tool is sent and
    no result holds, so it is named here rather than failing (or crashing) at run time."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CaseFileError(
                    f"{where}: `{at}` has a key that is not text ({key!r}): quote it"
                )
            _check_json(item, f"{at}.{key}", where)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _check_json(item, f"{at}[{n}]", where)
    elif value is not None and not isinstance(value, str | int | float | bool):
        kind = type(value).__name__
        raise CaseFileError(f"{where}: `{at}` is a {kind} ({value}), not JSON: quote it for text")


def append(path: Path, case: Case, locks: Path | None = None) -> int:
    """Add `case` at the end of the file (made if missing); returns its number in the file.

    The file belongs to the project (it is meant to be committed), so a new one gets the
    ordinary mode for a new file, not the private mode of the app's own state, and its lock
    file is kept in `locks` (the app's state) rather than left beside it in the project.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import YAMLError

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(_lock_path(path, locks)):
            try:
                text = yaml_file.read_text(path)
                if yaml_file.parse(text, path) is not None:
                    load(path)  # the error a replay would give, and nothing is written
            except FileNotFoundError:
                text = HEADER
            except yaml_file.YAMLFileError as exc:
                raise CaseFileError(str(exc)) from None
            rt = YAML(typ="rt")
            rt.preserve_quotes = True
            try:
                doc = rt.load(text)
            except YAMLError as exc:
                raise CaseFileError(f"{path}: {exc}") from None
            out = io.StringIO()
            if doc is None:  # a new file, or one of comments only: they stay on top
                doc = CommentedMap()
                out.write(text if text.endswith("\n") or not text else text + "\n")
            doc.setdefault("cases", CommentedSeq())
            doc["cases"].append(case.as_yaml())
            rt.dump(doc, out)
            atomic_write_text(path, out.getvalue(), mode=default_file_mode())
            return len(doc["cases"])
    except OSError as exc:
        raise CaseFileError(f"cannot write {path}: {exc.strerror or exc}") from None


def _lock_path(path: Path, locks: Path | None) -> Path:
    if locks is None:
        return path
    from hashlib import sha256

    from workbench.core.storage.private import private_dir

    key = sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return private_dir(locks) / f"case-file-{key}"
