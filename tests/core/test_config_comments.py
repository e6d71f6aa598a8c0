"""Every kind of save keeps every comment of Hermes's example config where it was.

Each save below is the real command (core.commands, the plugin manager, the approval
rules), run on a fresh copy of the example config: afterwards every comment line is there,
in the same order, above the same key as before, and the file loads as it did plus the
change the save made.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.core import commands
from workbench.core.policy.rules import Scope, parse_rule
from workbench.core.policy.store import RuleBook
from workbench.core.runtime import Runtime, load_runtime

EXAMPLE = Path(__file__).parent / "fixtures" / "cli-config.yaml.example"
PLUGINS = Path(__file__).parent / "plugins" / "fixtures"


def comments(text: str, added: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """Each comment line with the dotted key of the first line of YAML below it ("" at the
    end). An indented comment closes the section above it, which a save may lengthen: the
    keys it `added` (dotted) and what is under them are passed over below one; a comment at
    the margin stands above the next key, with nothing added in between."""
    lines = [n for n in text.splitlines() if n.strip()]
    paths = _paths(lines)
    found = []
    for index, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            passed = added if line.startswith(" ") else frozenset()
            below = (
                paths[i]
                for i in range(index + 1, len(lines))
                if paths[i]
                and not any(paths[i] == a or paths[i].startswith(f"{a}.") for a in passed)
            )
            found.append((line.strip(), next(below, "")))
    return found


def _paths(lines: list[str]) -> list[str]:
    """The dotted key of each line ("" for a comment); a list item is its list's key."""
    stack: list[tuple[int, str]] = []
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("#"):
            out.append("")
            continue
        indent = len(line) - len(stripped)
        if stripped.startswith("- "):
            out.append(".".join(k for _, k in stack))
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, stripped.split(":")[0].strip()))
        out.append(".".join(k for _, k in stack))
    return out


def allow_ls(runtime: Runtime) -> None:
    RuleBook(runtime.config).add(
        parse_rule({"action": "allow", "command": "ls"}, scope=Scope.EVERYWHERE, origin="t")
    )


def deny_curl(runtime: Runtime) -> None:
    RuleBook(runtime.config).add(
        parse_rule({"action": "deny", "command_glob": "curl *"}, scope=Scope.EVERYWHERE, origin="t")
    )


def plugin(action: commands.SourceAction) -> Callable[[Runtime], Any]:
    return lambda runtime: commands.act_on_source(runtime, action, "positional")


# (what is saved, how, and the keys it changes, with their values or a test of the value:
# everything else must load as before)
SAVES: list[tuple[str, Callable[[Runtime], Any], dict[str, Any]]] = [
    (
        "toolset off",
        lambda r: commands.set_toolset(r, "todo", False),
        {"agent.disabled_toolsets": ["todo"], "known_plugin_toolsets.cli": []},
    ),
    (
        "toolset on",  # in hermes-cli already: nothing added to the list
        lambda r: commands.set_toolset(r, "terminal", True),
        {"agent.disabled_toolsets": [], "known_plugin_toolsets.cli": []},
    ),
    (
        "toolset listed",
        lambda r: commands.set_toolset(r, "browser", False),
        {"agent.disabled_toolsets": ["browser"], "known_plugin_toolsets.cli": []},
    ),
    (
        "tool off",
        lambda r: commands.set_tool(r, "read_file", False),
        {"tools.disabled": ["read_file"]},
    ),
    (
        "tool deferred",
        lambda r: commands.set_deferred(r, "read_file", True),
        {"tools.tool_search.defer": lambda names: "read_file" in names},
    ),
    (
        "MCP tool off",
        lambda r: commands.set_tool(r, "github:create_issue", False),
        {"mcp_servers.github.tools": {"exclude": ["create_issue"]}},
    ),
    (
        "plugin on",
        plugin(commands.SourceAction.ENABLE),
        {"plugins.enabled": ["positional"], "plugins.disabled": []},
    ),
    (
        "plugin off",
        plugin(commands.SourceAction.DISABLE),
        {"plugins.disabled": ["positional"], "plugins.enabled": []},
    ),
    (
        "memory provider",
        lambda r: commands.select_memory(r, "notes_memory"),
        {"memory.provider": "notes_memory"},
    ),
    ("allow rule", allow_ls, {"command_allowlist": ["ls"]}),
    (
        "deny rule",
        deny_curl,
        {"approvals.rules": [{"action": "deny", "command_glob": "curl *"}]},
    ),
]


def _new_parts(data: dict[str, Any], dotted: str) -> list[str]:
    """The keys along `dotted` (dotted themselves) that `data` lacks: a save adds them."""
    parts = dotted.split(".")
    heads = [".".join(parts[: i + 1]) for i in range(len(parts))]
    return [head for head in heads if get(data, head) is None]


def get(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def put(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        data = data.setdefault(part, {})
    data[last] = value


@pytest.mark.parametrize(
    ("save", "change"), [(s[1], s[2]) for s in SAVES], ids=[s[0] for s in SAVES]
)
def test_every_save_keeps_the_example_configs_comments_where_they_were(
    home: Path, save: Callable[[Runtime], Any], change: dict[str, Any]
) -> None:
    home.mkdir()
    for name in ("positional", "notes_memory"):
        shutil.copytree(PLUGINS / name, home / "plugins" / name)
    shutil.copy(EXAMPLE, home / "config.yaml")
    before = (home / "config.yaml").read_text()
    save(load_runtime(home))
    after = (home / "config.yaml").read_text()
    assert after != before
    expected = copy.deepcopy(yaml.safe_load(before))
    added = frozenset(p for dotted in change for p in _new_parts(expected, dotted))
    # every line, in order, above the same key (or above a key the save added there)
    assert comments(after, added) == comments(before)
    loaded = yaml.safe_load(after)
    for dotted, value in change.items():
        saved = get(loaded, dotted)
        assert value(saved) if callable(value) else saved == value, dotted
        put(expected, dotted, saved)
    assert loaded == expected  # the same file plus the change


def test_saves_one_after_another_keep_them_too(home: Path) -> None:
    home.mkdir()
    shutil.copytree(PLUGINS / "positional", home / "plugins" / "positional")
    shutil.copy(EXAMPLE, home / "config.yaml")
    before = (home / "config.yaml").read_text()
    runtime = load_runtime(home)
    added: set[str] = set()
    for _, save, change in SAVES[:8]:
        added.update(p for dotted in change for p in _new_parts(yaml.safe_load(before), dotted))
        save(runtime)
        runtime.reload_config()
    assert comments((home / "config.yaml").read_text(), frozenset(added)) == comments(before)


HERMES_WROTE = Path(__file__).parent / "fixtures" / "hermes-tools-disable-todo.yaml"


def test_a_config_hermes_wrote_keeps_its_comment_blocks(home: Path) -> None:
    # Hermes writes its lists a line an item, and the comment blocks after the last one:
    # replacing known_plugin_toolsets.cli once lost the Security and Fallback blocks
    home.mkdir()
    shutil.copy(HERMES_WROTE, home / "config.yaml")
    before = (home / "config.yaml").read_text()
    runtime = load_runtime(home)
    commands.set_toolset(runtime, "todo", True)
    runtime.reload_config()
    commands.set_toolset(runtime, "memory", False)
    after = (home / "config.yaml").read_text()
    assert comments(after) == comments(before)
    loaded = yaml.safe_load(after)
    assert "todo" in loaded["platform_toolsets"]["cli"]
    assert loaded["agent"]["disabled_toolsets"] == ["memory"]
    assert loaded["known_plugin_toolsets"]["cli"] == ["spotify"]  # Hermes's, kept
