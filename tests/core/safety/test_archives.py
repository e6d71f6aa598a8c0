"""Archive programs that unpack into a folder: judged where they put the files."""

from __future__ import annotations

from pathlib import Path

from workbench.core.safety import analyze_command


def judged(command: str, cwd: Path):
    return analyze_command(command, cwd=cwd, write_roots=(str(cwd),))


def test_7z_extracting_into_a_folder_is_judged_by_that_folder(tmp_path: Path) -> None:
    for command in ("7z x a.7z -o/etc", "7za e a.7z -o../elsewhere", "7z x a.7z -o~/.config"):
        assert judged(command, tmp_path).dangerous, command
    assert judged("7z x a.7z -o/etc", tmp_path).reasons[0].startswith("7z extracts into /etc")
    for command in ("7z x a.7z", "7z x a.7z -ovendor", "7z l a.7z"):
        assert not judged(command, tmp_path).dangerous, command


def test_cpio_unpacking_names_as_they_are_asks(tmp_path: Path) -> None:
    # GNU cpio keeps a member's absolute name unless told not to: it writes where that says
    verdict = judged("cpio -id < a.cpio", tmp_path)
    assert verdict.dangerous and "absolute" in verdict.reasons[0]
    assert judged("cpio --extract --make-directories < a.cpio", tmp_path).dangerous
    assert judged("cpio -id -D /etc --no-absolute-filenames < a.cpio", tmp_path).dangerous
    assert judged("find . | cpio -pdm /usr/lib", tmp_path).dangerous  # copies a tree there
    for command in (
        "cpio -id --no-absolute-filenames < a.cpio",
        "cpio -it < a.cpio",
        "find . | cpio -o | wc -c",
        "find . | cpio -pdm backup",
    ):
        assert not judged(command, tmp_path).dangerous, command
