"""sed scripts and awk programs read for what they do besides editing text."""

from __future__ import annotations

import pytest

from workbench.core.safety.scripts import GIT_PROGRAM_KEYS, awk_effects, sed_danger


@pytest.mark.parametrize(
    "script",
    ["1e rm f", "s/.*/rm &/e", "w out.txt", "/x/w out", "$!N;s/a/b/w log", "2,5{e date\n}"],
)
def test_sed_running_or_writing_is_seen(script: str) -> None:
    assert sed_danger(script)


@pytest.mark.parametrize(
    "script",
    ["s/a/b/g", "/start/,/end/p", "$d", "1~2d", "y/abc/xyz/", ":a;$!N;s/\\n//;ta", "s|e|w|g"],
)
def test_sed_text_edits_are_not(script: str) -> None:
    assert sed_danger(script) == ""


def test_awk() -> None:
    assert [c for _, c, _ in awk_effects('BEGIN{system("rm f")}')] == ["rm f"]
    assert [c for _, c, _ in awk_effects('{system("rm " $1)}')] == [None]  # computed
    assert [c for _, c, _ in awk_effects('{print | "sh"}')] == ["sh"]
    assert [c for _, c, _ in awk_effects('{"date" | getline d}')] == ["date"]
    assert [w for _, _, w in awk_effects('{print > "out"}')] == ["out"]
    assert awk_effects('{print $1 > "/dev/stderr"}') == []
    assert awk_effects("$1 > 5 {print $2}") == []
    assert awk_effects('BEGIN { print "system("rm -rf /")" }') == []  # a string, not a call


def test_git_settings_that_name_programs() -> None:
    for key in ("core.sshcommand", "core.pager", "diff.x.textconv", "filter.lfs.smudge"):
        assert GIT_PROGRAM_KEYS.match(key), key
    for key in ("user.name", "color.ui", "core.autocrlf"):
        assert not GIT_PROGRAM_KEYS.match(key), key
