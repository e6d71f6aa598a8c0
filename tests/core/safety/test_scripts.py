"""sed scripts and awk programs read for what they do besides editing text."""

from __future__ import annotations

import pytest

from workbench.core.safety.scripts import GIT_PROGRAM_KEYS, awk_danger, sed_danger


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
    assert awk_danger('BEGIN{system("rm f")}')
    assert awk_danger('{print | "sh"}') and awk_danger('{"date" | getline d}')
    assert awk_danger('{print > "out"}')
    assert awk_danger('{print $1 > "/dev/stderr"}') == ""
    assert awk_danger("$1 > 5 {print $2}") == ""


def test_git_settings_that_name_programs() -> None:
    for key in ("core.sshcommand", "core.pager", "diff.x.textconv", "filter.lfs.smudge"):
        assert GIT_PROGRAM_KEYS.match(key), key
    for key in ("user.name", "color.ui", "core.autocrlf"):
        assert not GIT_PROGRAM_KEYS.match(key), key
