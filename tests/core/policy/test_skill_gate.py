"""skill_manage meets the gate a write_file meets: through `hermes-tui call` with no terminal,
every ask is a denial, so a skill left unwritten shows the gate held."""

from __future__ import annotations

from tests.support.calls import Scratch, call
from workbench.core.policy.gate import check_call

SKILL = "---\nname: {name}\ndescription: d\n---\n\nBody.\n"


def _create(name: str) -> dict:
    return {"action": "create", "name": name, "content": SKILL.format(name=name)}


def test_a_skill_write_in_hermes_home_asks_and_headless_denies(scratch: Scratch, capsys) -> None:
    (scratch.hermes / "config.yaml").write_text("approvals:\n  mode: ask\n")
    check = check_call("skill_manage", _create("deploy"), scratch.project)
    assert check is not None and not check.verdict.hardline  # asked, never refused outright
    assert str(scratch.hermes / "skills" / "deploy") in check.shown
    out = call(capsys, "skill_manage", _create("deploy"), scratch.project)
    assert out.status == "denied" and "no one can be asked" in out.stdout
    assert not (scratch.hermes / "skills" / "deploy").exists()
    # approved (--yes answers for it, as for a write_file outside the project), it runs
    done = call(capsys, "skill_manage", _create("deploy"), scratch.project, yes=True)
    assert done.ran and (scratch.hermes / "skills" / "deploy" / "SKILL.md").is_file()
    for action in ({"action": "delete", "name": "deploy"}, {"action": "delete", "name": "nope"}):
        out = call(capsys, "skill_manage", action, scratch.project)
        assert out.status == "denied", out.stdout
    assert (scratch.hermes / "skills" / "deploy" / "SKILL.md").is_file()


def test_reading_skills_never_asks(scratch: Scratch) -> None:
    assert check_call("skills_list", {}, scratch.project) is None
    assert check_call("skill_view", {"name": "x"}, scratch.project) is None


def test_a_skill_in_an_external_folder_is_judged_where_it_is(scratch: Scratch) -> None:
    ext = scratch.project / "team-skills"
    (ext / "ops").mkdir(parents=True)
    (ext / "ops" / "SKILL.md").write_text(SKILL.format(name="ops"))
    (scratch.hermes / "config.yaml").write_text(f"skills:\n  external_dirs: [{ext}]\n")
    edit = {"action": "edit", "name": "ops", "content": SKILL.format(name="ops")}
    assert check_call("skill_manage", edit, scratch.project) is None  # inside the project
    elsewhere = scratch.root / "elsewhere"
    elsewhere.mkdir()
    check = check_call("skill_manage", edit, elsewhere)
    assert check is not None and check.verdict.findings[0].rule == "outside-write"
