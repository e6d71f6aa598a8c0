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


def test_a_plugins_files_that_never_end_are_not_read(tmp_path: Path) -> None:
    import os

    folder = _plugin(tmp_path, "endless", '["mcp<2"]')
    (folder / "pyproject.toml").symlink_to("/dev/zero")
    os.mkfifo(folder / "requirements.txt")  # no writer: an open without O_NONBLOCK waits
    manifest = read_manifest(folder, "", "project")
    assert manifest.requirements == ["mcp<2"]


def test_pips_own_forms_are_not_called_unreadable(tmp_path: Path) -> None:
    folder = _plugin(tmp_path, "urls", "[]")
    (folder / "requirements.txt").write_text(
        "-r base.txt\ngit+https://example.org/x.git\n./local\nmcp<2  # old\n"
    )
    found = requirements.conflicts(
        read_manifest(folder, "", "user").requirements, OURS, {"mcp": "2.3.0"}
    )
    assert len(found) == 1 and "is not a requirement" not in found[0]
