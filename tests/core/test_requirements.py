from pathlib import Path

from packaging.requirements import Requirement

from workbench.core import requirements
from workbench.core.plugins.sources import read_manifest

OURS = {"mcp": Requirement("mcp>=2.3,<3")}


def _plugin(root: Path, name: str, deps: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "plugin.yaml").write_text(f"name: {name}\npip_dependencies: {deps}\n")
    (folder / "__init__.py").write_text("def register(ctx):\n    pass\n")
    return folder


def test_a_plugin_pinning_mcp_1_conflicts_and_a_harmless_one_does_not(tmp_path: Path) -> None:
    bad = read_manifest(_plugin(tmp_path, "old", '["mcp<2", "rich"]'), "", "user")
    good = read_manifest(_plugin(tmp_path, "fine", '["mcp>=2", "rich"]'), "", "user")
    found = requirements.conflicts(bad.requirements, OURS, {"mcp": "2.3.0"})
    assert len(found) == 1 and "mcp<2 excludes mcp 2.3.0" in found[0]
    assert requirements.conflicts(good.requirements, OURS, {"mcp": "2.3.0"}) == []


def test_an_sdk_outside_our_specifier_is_one_clear_problem_with_its_fix() -> None:
    assert requirements.sdk_problem("2.3.0", OURS["mcp"]) == ""
    problem = requirements.sdk_problem("1.26.0", OURS["mcp"])
    assert "mcp 1.26.0" in problem and "pip install 'mcp<3,>=2.3'" in problem
