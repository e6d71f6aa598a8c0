"""skills_list, skill_view and skill_manage on real skills folders (two of Hermes's own skills
among them, tests/builtins/skills/hermes_skills), through the tools' call path."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry

HERMES_SKILLS = Path(__file__).parent / "hermes_skills"
SKILL = "---\nname: {name}\ndescription: {desc}\n---\n\n# {name}\n\nStep one.\n"


def call(tool: str, cwd: Path, /, **args) -> dict:
    return json.loads(call_tool(registry, tool, args, cwd=str(cwd)))


@pytest.fixture
def skills(home: Path) -> Path:
    """$HERMES_HOME/skills holding Hermes's two skills."""
    path = home / "skills"
    shutil.copytree(HERMES_SKILLS, path, ignore=shutil.ignore_patterns("LICENSE", "README.md"))
    return path


def test_hermes_skills_are_listed_with_category_and_platform(skills: Path, tmp_path) -> None:
    out = call("skills_list", tmp_path)
    assert out["success"] is True
    # apple-notes is `platforms: [macos]`: not for this platform, so not listed (as in Hermes)
    assert out["skills"] == [
        {
            "name": "nano-pdf",
            "description": "Edit PDF text/typos/titles via nano-pdf CLI (NL prompts).",
            "category": "productivity",
        }
    ]
    assert (out["categories"], out["count"]) == (["productivity"], 1)
    assert call("skills_list", tmp_path, category="apple")["skills"] == []


def test_skill_view_returns_hermes_shape(skills: Path, tmp_path) -> None:
    out = call("skill_view", tmp_path, name="nano-pdf")
    text = (skills / "productivity/nano-pdf/SKILL.md").read_text()
    assert out["success"] is True and out["content"] == text
    assert out["path"] == "productivity/nano-pdf/SKILL.md"
    assert out["tags"] == ["PDF", "Documents", "Editing", "NLP", "Productivity"]
    assert out["linked_files"] is None and out["readiness_status"] == "available"
    assert call("skill_view", tmp_path, name="productivity/nano-pdf")["name"] == "nano-pdf"
    mac = call("skill_view", tmp_path, name="apple-notes")
    assert mac["success"] is False and mac["readiness_status"] == "unsupported"
    missing = call("skill_view", tmp_path, name="nope")
    assert missing["success"] is False and missing["available_skills"] == ["nano-pdf"]


def test_linked_files_and_traversal(skills: Path, tmp_path) -> None:
    ref = skills / "productivity/nano-pdf/references"
    ref.mkdir()
    (ref / "api.md").write_text("the api\n")
    out = call("skill_view", tmp_path, name="nano-pdf")
    assert out["linked_files"] == {"references": ["references/api.md"]}
    got = call("skill_view", tmp_path, name="nano-pdf", file_path="references/api.md")
    assert (got["content"], got["file_type"]) == ("the api\n", ".md")
    bad = call("skill_view", tmp_path, name="nano-pdf", file_path="../../../config.yaml")
    assert bad["success"] is False and "traversal" in bad["error"]
    assert call("skill_view", tmp_path, name="../x")["success"] is False


def test_a_skill_md_without_frontmatter_is_a_skill_named_by_its_folder(home, tmp_path) -> None:
    folder = home / "skills" / "plain"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("# Plain\n\nNo frontmatter at all.\n")
    listed = call("skills_list", tmp_path)["skills"]
    assert listed == [{"name": "plain", "description": "No frontmatter at all.", "category": None}]
    out = call("skill_view", tmp_path, name="plain")
    assert out["success"] is True and out["frontmatter"] is None
    assert out["content"] == "# Plain\n\nNo frontmatter at all.\n"


def test_a_skill_folder_linked_out_of_the_skills_folder_is_never_followed(home, tmp_path) -> None:
    outside = tmp_path / "outside" / "evil"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(SKILL.format(name="evil", desc="reads what it finds"))
    (home / "skills").mkdir(parents=True)
    (home / "skills" / "evil").symlink_to(outside)
    out = call("skills_list", tmp_path)
    assert out["skills"] == []
    (refused,) = out["not_loaded"]
    assert "symbolic link" in refused["reason"] and str(outside) in refused["reason"]
    view = call("skill_view", tmp_path, name="evil")
    assert view["success"] is False and "symbolic link" in view["error"]
    for action, extra in (
        ("edit", {"content": SKILL.format(name="evil", desc="x")}),
        ("delete", {}),
    ):
        done = call("skill_manage", tmp_path, action=action, name="evil", **extra)
        assert done["success"] is False and "symbolic link" in done["error"]
    assert (outside / "SKILL.md").read_text() == SKILL.format(
        name="evil", desc="reads what it finds"
    )


def test_a_linked_skill_md_or_linked_file_is_refused(home, tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret\n")
    one = home / "skills" / "one"
    one.mkdir(parents=True)
    (one / "SKILL.md").symlink_to(secret)
    two = home / "skills" / "two"
    (two / "references").mkdir(parents=True)
    (two / "SKILL.md").write_text(SKILL.format(name="two", desc="d"))
    (two / "references" / "x.md").symlink_to(secret)
    out = call("skills_list", tmp_path)
    assert [s["name"] for s in out["skills"]] == ["two"]
    assert any("one" in r["path"] for r in out["not_loaded"])
    view = call("skill_view", tmp_path, name="two", file_path="references/x.md")
    assert view["success"] is False and "the secret" not in json.dumps(view)
    assert "the secret" not in json.dumps(call("skill_view", tmp_path, name="one"))


def test_a_5_mb_skill_is_read_bounded_and_said_too_large(home, tmp_path) -> None:
    big = home / "skills" / "big"
    big.mkdir(parents=True)
    body = SKILL.format(name="big", desc="huge") + "x" * (5 * 1024 * 1024)
    (big / "SKILL.md").write_text(body)
    start = time.monotonic()
    listed = call("skills_list", tmp_path)
    view = call("skill_view", tmp_path, name="big")
    assert time.monotonic() - start < 5
    assert listed["skills"] == [] and "too" not in json.dumps(listed["skills"])
    assert f"{len(body):,} bytes" in listed["not_loaded"][0]["reason"]
    assert view["success"] is False and "1,048,576" in view["error"]
    assert len(json.dumps(view)) < 2000


def test_external_dirs_from_config_local_first(home, tmp_path) -> None:
    ext = home / "team-skills"
    for root in (home / "skills", ext):
        (root / "shared").mkdir(parents=True)
        (root / "shared" / "SKILL.md").write_text(SKILL.format(name="shared", desc=root.name))
    (ext / "only-ext").mkdir()
    (ext / "only-ext" / "SKILL.md").write_text(SKILL.format(name="only-ext", desc="e"))
    (home / "config.yaml").write_text("skills:\n  external_dirs: [team-skills, /no/such/dir]\n")
    out = call("skills_list", tmp_path)
    assert [(s["name"], s["description"]) for s in out["skills"]] == [
        ("only-ext", "e"),
        ("shared", "skills"),
    ]
    assert call("skill_view", tmp_path, name="only-ext")["path"] == "only-ext/SKILL.md"
    both = call("skill_view", tmp_path, name="shared")
    assert both["success"] is False and len(both["matches"]) == 2  # ambiguous: refused
    (home / "config.yaml").write_text(
        "skills:\n  external_dirs: team-skills\n  disabled: [only-ext]\n"
    )
    assert [s["name"] for s in call("skills_list", tmp_path)["skills"]] == ["shared"]
    assert call("skill_view", tmp_path, name="only-ext")["success"] is False


def test_skill_manage_round_trip(home, tmp_path) -> None:
    made = call(
        "skill_manage",
        tmp_path,
        action="create",
        name="deploy",
        category="devops",
        content=SKILL.format(name="deploy", desc="ship it"),
    )
    assert made["success"] is True and made["path"] == "devops/deploy"
    skill_md = home / "skills/devops/deploy/SKILL.md"
    assert stat.S_IMODE(os.stat(skill_md).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(skill_md.parent).st_mode) == 0o700
    again = call(
        "skill_manage",
        tmp_path,
        action="create",
        name="deploy",
        content=SKILL.format(name="deploy", desc="x"),
    )
    assert again["success"] is False and "already exists" in again["error"]
    patched = call(
        "skill_manage",
        tmp_path,
        action="patch",
        name="deploy",
        old_string="Step one.",
        new_string="Step two.",
    )
    assert patched["success"] is True and "Step two." in skill_md.read_text()
    broken = call(
        "skill_manage",
        tmp_path,
        action="patch",
        name="deploy",
        old_string="---\nname",
        new_string="name",
    )
    assert broken["success"] is False and "structure" in broken["error"]
    wrote = call(
        "skill_manage",
        tmp_path,
        action="write_file",
        name="deploy",
        file_path="scripts/run.sh",
        file_content="echo hi\n",
    )
    assert (
        wrote["success"] is True and (skill_md.parent / "scripts/run.sh").read_text() == "echo hi\n"
    )
    outside = call(
        "skill_manage",
        tmp_path,
        action="write_file",
        name="deploy",
        file_path="notes.txt",
        file_content="x",
    )
    assert outside["success"] is False and "must be under" in outside["error"]
    removed = call(
        "skill_manage", tmp_path, action="remove_file", name="deploy", file_path="scripts/run.sh"
    )
    assert removed["success"] is True and not (skill_md.parent / "scripts").exists()
    edited = call(
        "skill_manage",
        tmp_path,
        action="edit",
        name="deploy",
        content=SKILL.format(name="deploy", desc="new"),
    )
    assert edited["success"] is True
    assert call("skills_list", tmp_path)["skills"][0]["description"] == "new"
    gone = call("skill_manage", tmp_path, action="delete", name="deploy", absorbed_into="")
    assert gone == {"success": True, "message": "Skill 'deploy' deleted."}
    assert not (home / "skills/devops").exists() and (home / "skills").is_dir()


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("# no frontmatter\n", "must start with YAML frontmatter"),
        ("---\nname: a\n---\nbody\n", "'description'"),
        ("---\nname: a\ndescription: d\n---\n", "content after the frontmatter"),
    ],
)
def test_skill_manage_refuses_bad_skill_md(home, tmp_path, content: str, error: str) -> None:
    out = call("skill_manage", tmp_path, action="create", name="a", content=content)
    assert out["success"] is False and error in out["error"]
    assert not (home / "skills" / "a").exists()
    bad = call(
        "skill_manage",
        tmp_path,
        action="create",
        name="../up",
        content=SKILL.format(name="a", desc="d"),
    )
    assert bad["success"] is False and "Invalid skill name" in bad["error"]
