"""The tools tree's Skills section, driven with Textual's pilot: each skill with its size in
tokens, and a skill folder linked out of the skills folder shown as not loaded."""

from __future__ import annotations

from pathlib import Path

from tests.support.pilot import labels, wait_until
from workbench.core.agent.context import short
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.tools_tree import ToolsTree


async def test_the_tree_shows_each_skill_with_its_size_in_tokens(home: Path) -> None:
    from workbench.core.model import tokens

    deploy = home / "skills" / "devops" / "deploy"
    deploy.mkdir(parents=True)
    text = "---\nname: deploy\ndescription: ship it\n---\n\n" + "Run the steps. " * 40
    (deploy / "SKILL.md").write_text(text)
    outside = home.parent / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: evil\ndescription: e\n---\nbody\n")
    (home / "skills" / "evil").symlink_to(outside)
    app = WorkbenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.screen.query_one(ToolsTree)
        # the bundled model's tokenizer (Qwen's table) counts the SKILL.md, as the tree says
        size = short(tokens.Meter(tokens.tokenizer_for("qwen2.5-coder-1.5b")).text(text))
        await wait_until(pilot, lambda: f"✔ devops/deploy · {size} tok" in labels(tree))
        shown = labels(tree)
        assert "Skills (2)" in shown and "✖ evil  not loaded" in shown
        assert "☑ skills (3)" in shown  # the tools' toolset, beside the skills themselves
