"""Built-in discovery: no hand-kept list, and one broken module does not stop the rest."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workbench.core.tools.discovery import discover_builtin_tools
from workbench.core.tools.registry import ToolRegistry, registry


def test_the_builtin_tools_are_all_found() -> None:
    report = discover_builtin_tools()
    assert report.failed == []
    assert {
        "read_file",
        "write_file",
        "patch",
        "search_files",
        "terminal",
        "web_search",
        "web_extract",
    } <= set(registry.get_all_tool_names())


def test_a_failing_module_is_reported_and_the_rest_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module_registry: ToolRegistry
) -> None:
    package = tmp_path / "fixture_tools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a_good.py").write_text(
        "from workbench.core.tools.registry import registry\n"
        "registry.register('fixture_good', 'fixture', {'description': 'g'}, "
        "lambda a, **k: 'good')\n"
    )
    (package / "b_broken.py").write_text("import no_such_dependency_xyz\n")
    (package / "c_also_good.py").write_text(
        "from workbench.core.tools.registry import registry\n"
        "registry.register('fixture_good2', 'fixture', {'description': 'g'}, "
        "lambda a, **k: 'good')\n"
    )
    (package / "_private.py").write_text("raise RuntimeError('never imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        report = discover_builtin_tools("fixture_tools")
        assert report.loaded == ["fixture_tools.a_good", "fixture_tools.c_also_good"]
        assert [f.module for f in report.failed] == ["fixture_tools.b_broken"]
        assert "No module named 'no_such_dependency_xyz'" in report.failed[0].error
        assert "Traceback" in report.failed[0].traceback
        assert module_registry.dispatch("fixture_good2", {}) == "good"
    finally:
        for mod in [m for m in sys.modules if m.startswith("fixture_tools")]:
            del sys.modules[mod]


def test_a_family_subpackage_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module_registry: ToolRegistry
) -> None:
    family = tmp_path / "fixture_families" / "files"
    family.mkdir(parents=True)
    (family.parent / "__init__.py").write_text("")
    (family / "__init__.py").write_text("")
    (family / "reader.py").write_text(
        "from workbench.core.tools.registry import registry\n"
        "registry.register('fixture_read', 'fixture', {'description': 'r'}, "
        "lambda a, **k: 'read')\n"
    )
    (family.parent / "_hidden").mkdir()
    (family.parent / "_hidden" / "__init__.py").write_text("raise RuntimeError('never')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        report = discover_builtin_tools("fixture_families")
        assert report.loaded == ["fixture_families.files.reader"] and report.failed == []
        assert module_registry.dispatch("fixture_read", {}) == "read"
    finally:
        for mod in [m for m in sys.modules if m.startswith("fixture_families")]:
            del sys.modules[mod]
