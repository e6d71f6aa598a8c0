"""The one YAML loader: alias bombs, deep nesting, huge files and FIFOs give an error naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.yaml_bomb import alias_bomb
from workbench.core.config import ConfigError, load_config, set_path, update_config
from workbench.core.plugins.sources import read_manifest
from workbench.core.storage import yaml_file


def test_an_alias_bomb_in_the_config_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(alias_bomb())
    config = load_config(path)
    assert config.data == {}  # defaults, as for a parse error
    assert config.error.startswith(f"{path}: expands to more than 100,000 values")


def test_an_alias_bomb_in_an_mcp_servers_args(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    bomb = alias_bomb(key="x").replace("\nx: *l8\n", "\n")
    path.write_text(bomb + "mcp_servers:\n  s:\n    command: cat\n    args: *l8\n")
    assert "config.yaml: expands to more than" in load_config(path).error


def test_aliases_nested_into_a_deep_value_are_refused(tmp_path: Path) -> None:
    """Each alias adds its anchor's depth: 30 levels, aliased inside 30 more, and so on."""
    lines, previous = [], "0"
    for n in range(5):
        lines.append(f"a{n}: &a{n} " + "[" * 30 + previous + "]" * 30)
        previous = f"*a{n}"
    path = tmp_path / "config.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert "nested more than 100 levels deep" in load_config(path).error


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("a: " + "[" * 500 + "]" * 500 + "\n")
    error = load_config(path).error
    assert error.startswith(str(path)) and "nest" in error


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    with open(path, "wb") as handle:
        handle.truncate(yaml_file.MAX_BYTES + 1)  # sparse: costs no disk
    assert "over the 2,097,152-byte limit" in load_config(path).error


def test_a_fifo_named_config_yaml_never_blocks(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    os.mkfifo(path)
    assert load_config(path).error == f"{path}: not a regular file"
    with pytest.raises(ConfigError, match="not a regular file"):
        update_config(lambda d: set_path(d, "a", 1), path)


def test_a_directory_named_config_yaml_is_named_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.mkdir()
    config = load_config(path)
    assert config.data == {} and config.error == f"{path}: not a regular file"


def test_ordinary_anchors_and_merge_keys_still_load(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "base: &base {command: npx, args: [-y, server]}\n"
        "mcp_servers:\n  one: {<<: *base, env: {A: '1'}}\n  two: *base\n"
    )
    config = load_config(path)
    assert config.error == ""
    assert config.get("mcp_servers.one.args") == ["-y", "server"]
    assert config.get("mcp_servers.two.command") == "npx"


def test_a_bomb_config_is_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(alias_bomb())
    with pytest.raises(ConfigError, match="expands to more than"):
        update_config(lambda d: set_path(d, "a", 1), path)
    assert path.read_text() == alias_bomb()


def test_a_plugin_manifest_goes_through_the_same_loader(tmp_path: Path) -> None:
    plugin = tmp_path / "bomb"
    plugin.mkdir()
    (plugin / "plugin.yaml").write_text(alias_bomb(key="provides_tools"))
    (plugin / "__init__.py").write_text("def register(ctx):\n    pass\n")
    manifest = read_manifest(plugin, "bomb", "user")
    assert manifest.provides_tools == []
    assert any("plugin.yaml: expands to more than" in p for p in manifest.problems)


def test_not_utf8_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"a: \xff\xfe\n")
    assert load_config(path).error.startswith(f"{path}: not UTF-8 text")
