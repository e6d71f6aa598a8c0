"""The ssh backend against a real sshd on 127.0.0.1: the terminal and the file tools run there.

The server is this machine, so what a call did "remotely" is checked on disk here; the CLI
runs from another directory, so nothing can pass by running locally.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.sshd import Sshd, running_sshd, sshd_missing


@pytest.fixture
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    if why := sshd_missing():
        pytest.skip(why)
    with running_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server


@pytest.fixture
def remote(home: Path, tmp_path: Path, sshd: Sshd) -> Path:
    work = tmp_path / "remote-work"
    work.mkdir()
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(sshd.terminal_config(cwd=work))
    return work


def call(env: dict[str, str], cwd: Path, tool: str, **args: object) -> dict:
    out = run(env, "call", tool, "--args", json.dumps(args), "--yes", cwd=cwd)
    return json.loads(out.stdout or out.stderr)


@pytest.mark.e2e  # a real sshd and the installed command: end-to-end
def test_terminal_and_file_tools_run_on_the_remote_machine(
    cli_env, remote: Path, tmp_path: Path
) -> None:
    here = tmp_path / "local"
    here.mkdir()
    out = call(cli_env, here, "terminal", command="echo over ssh > made.txt; pwd")
    assert out["exit_code"] == 0 and out["output"] == f"{remote}\n", out
    assert (remote / "made.txt").read_text() == "over ssh\n" and not (here / "made.txt").exists()

    written = call(cli_env, here, "write_file", path="notes/a.txt", content="hello\nworld\n")
    assert written == {"path": f"{remote}/notes/a.txt", "bytes_written": 12, "created": True}
    assert (remote / "notes" / "a.txt").read_text() == "hello\nworld\n"

    read = call(cli_env, here, "read_file", path="notes/a.txt")
    assert read["content"] == "     1|hello\n     2|world" and read["total_lines"] == 2

    patched = call(cli_env, here, "patch", path="notes/a.txt", old_string="world", new_string="ssh")
    assert patched["replacements"] == 1 and "+ssh" in patched["diff"]
    assert (remote / "notes" / "a.txt").read_text() == "hello\nssh\n"

    found = call(cli_env, here, "search_files", pattern="^s+h$")
    assert found["matches"] == [{"path": f"{remote}/notes/a.txt", "line": 2, "text": "ssh"}]
    plain = call(cli_env, here, "search_files", pattern="over ssh", output_mode="files_only")
    assert plain.get("files") == [f"{remote}/made.txt"], plain  # grep picked it, matched here
    names = call(cli_env, here, "search_files", pattern="*.txt", target="files")
    assert sorted(names["files"]) == [f"{remote}/made.txt", f"{remote}/notes/a.txt"]

    missing = call(cli_env, here, "read_file", path="nope.txt")
    assert missing["error"].startswith(f"File not found: {remote}/nope.txt")
    assert list(here.iterdir()) == []  # nothing ran here


@pytest.mark.e2e  # a real sshd and the installed command: end-to-end
def test_a_file_written_through_a_remote_link_lands_on_its_target(
    cli_env, remote: Path, tmp_path: Path
) -> None:
    (remote / "real.txt").write_text("old\n")
    (remote / "link.txt").symlink_to(remote / "real.txt")
    assert (
        call(cli_env, tmp_path, "write_file", path="link.txt", content="new\n")["created"] is False
    )
    assert (remote / "link.txt").is_symlink() and (remote / "real.txt").read_text() == "new\n"


@pytest.mark.e2e  # a real sshd and the installed command: end-to-end
def test_an_unreachable_host_runs_nothing_anywhere(
    cli_env,
    home: Path,
    tmp_path: Path,
    sshd: Sshd,
) -> None:
    sshd.port = 1  # nothing listens there
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(sshd.terminal_config(cwd=tmp_path))
    out = call(cli_env, tmp_path, "terminal", command="touch ran-here")
    assert out["exit_code"] == 255 and "Connection refused" in out["output"]
    wrote = call(cli_env, tmp_path, "write_file", path="w.txt", content="x")
    assert "ssh root@127.0.0.1:1" in wrote["error"] or "ssh " in wrote["error"]
    assert not (tmp_path / "ran-here").exists() and not (tmp_path / "w.txt").exists()


@pytest.mark.parametrize("backend", ["docker", "modal", "singularity"])
def test_a_backend_we_do_not_run_is_refused_by_name(
    cli_env, home: Path, tmp_path: Path, backend: str
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"terminal:\n  backend: {backend}\n")
    tmp_path = tmp_path / "work"
    tmp_path.mkdir()
    out = call(cli_env, tmp_path, "terminal", command="touch ran")
    assert f"terminal.backend is '{backend}'" in out["error"] and out["status"] == "refused"
    for tool, args in (
        ("write_file", {"path": "w.txt", "content": "x"}),
        ("read_file", {"path": "/etc/hostname"}),
        ("search_files", {"pattern": "x"}),
    ):
        assert f"'{backend}'" in call(cli_env, tmp_path, tool, **args)["error"], tool
    assert list(tmp_path.iterdir()) == []
    doctor = run(cli_env, "doctor")
    assert doctor.returncode == 1 and f"terminal.backend is '{backend}'" in doctor.stdout


@pytest.mark.e2e  # a real sshd and the installed command: end-to-end
def test_hostile_file_names_are_data_never_shell(cli_env, remote: Path, tmp_path: Path) -> None:
    """Quotes, `$(...)`, globs and a leading dash in a path reach the remote side as one name."""
    name = "we ird $(touch pwned) 'q' \"d\" *;.txt"
    written = call(cli_env, tmp_path, "write_file", path=name, content="ok\n")
    assert written["created"] is True, written
    assert (remote / name).read_text() == "ok\n"
    dashed = call(cli_env, tmp_path, "write_file", path="-rf", content="dash\n")
    assert dashed["created"] is True and (remote / "-rf").read_text() == "dash\n"
    assert call(cli_env, tmp_path, "read_file", path=name)["content"] == "     1|ok"
    assert not (remote / "pwned").exists() and not (tmp_path / "pwned").exists()
