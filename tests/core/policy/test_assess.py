"""What the approval path raises about a call before the rules: an MCP tool given a path in
hermes-tui's own state is refused, as the built-in file tools are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.mcp import REAL_SERVERS

FILESYSTEM = REAL_SERVERS["filesystem"]


@pytest.mark.skipif(not FILESYSTEM.exists(), reason="run `make mcp-servers` first")
@pytest.mark.e2e  # the real filesystem server (npm) and the installed command
def test_an_mcp_tool_cannot_write_the_apps_own_state(cli_env, home: Path, tmp_path: Path) -> None:
    # the workbench run from a folder holding HERMES_HOME (a home directory and its ~/.hermes):
    # the filesystem server's root is that folder, and the server is trusted (the default)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.yaml"
    config.write_text(
        f"tools:\n  disabled: [terminal]\nmcp_servers:\n  fs:\n    command: {FILESYSTEM}\n"
    )
    root = home.parent
    for path in (str(config), f"file://{config}", str(config.relative_to(root)), home.name):
        args = json.dumps({"path": path, "content": "tools: {disabled: []}\n"})
        out = run(cli_env, "call", "mcp__fs__write_file", "--args", args, "--yes", cwd=root)
        assert "hermes-tui's own state" in out.stdout + out.stderr, out.stdout + out.stderr
        assert "disabled: [terminal]" in config.read_text()
    # a path elsewhere under the same root is the server's to write
    args = json.dumps({"path": str(root / "notes.txt"), "content": "hello"})
    out = run(cli_env, "call", "mcp__fs__write_file", "--args", args, cwd=root)
    assert out.returncode == 0 and (root / "notes.txt").read_text() == "hello", out.stdout


@pytest.mark.skipif(not FILESYSTEM.exists(), reason="run `make mcp-servers` first")
@pytest.mark.e2e  # the real filesystem server (npm) and the installed command
def test_an_mcp_tool_given_a_credential_or_start_up_file_asks(cli_env, home: Path, tmp_path):
    # a trusted filesystem server rooted at the user's home: its tools run unasked, except
    # on the places the built-in file tools guard (keys, start-up files, git hooks)
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (user / ".bashrc").write_text("# mine\n")
    (user / "project" / ".git" / "hooks").mkdir(parents=True)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"mcp_servers:\n  fs:\n    command: {FILESYSTEM}\n")
    env = {**cli_env, "HOME": str(user)}
    writes = [
        (str(user / ".ssh" / "authorized_keys"), "ssh-ed25519 AAAA attacker\n"),
        (".ssh/authorized_keys", "ssh-ed25519 AAAA attacker\n"),
        (str(user / ".bashrc"), "rm -rf ~\n"),
        ("project/.git/hooks/post-checkout", "#!/bin/sh\nrm -rf ~\n"),
    ]
    for path, content in writes:
        args = json.dumps({"path": path, "content": content})
        out = run(env, "call", "mcp__fs__write_file", "--args", args, cwd=user)
        assert out.returncode != 0 and "denied" in out.stdout, (path, out.stdout, out.stderr)
    assert not (user / ".ssh" / "authorized_keys").exists()
    assert (user / ".bashrc").read_text() == "# mine\n"
    assert not (user / "project" / ".git" / "hooks" / "post-checkout").exists()
    args = json.dumps({"path": str(user / ".ssh" / "id_ed25519")})
    out = run(env, "call", "mcp__fs__read_text_file", "--args", args, cwd=user)
    assert "PRIVATE KEY" not in out.stdout and "denied" in out.stdout, out.stdout
    # the rest of the home is the server's to write, unasked
    args = json.dumps({"path": str(user / "notes.txt"), "content": "hello"})
    out = run(env, "call", "mcp__fs__write_file", "--args", args, cwd=user)
    assert out.returncode == 0 and (user / "notes.txt").read_text() == "hello", out.stdout


def test_the_files_a_call_wrote_are_remembered_whichever_tool_wrote_them(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from workbench.core.policy.assess import written_by
    from workbench.core.tools.events import ToolSource

    (tmp_path / "run.sh").write_text("rm -rf data\n")
    server = SimpleNamespace(source=ToolSource.MCP, annotations={})
    reader = SimpleNamespace(source=ToolSource.MCP, annotations={"readOnlyHint": True})
    registry = SimpleNamespace(
        get_entry={"mcp__fs__write_file": server, "mcp__fs__read": reader}.get
    )
    script = str(tmp_path / "run.sh")
    wrote = written_by(
        registry, "mcp__fs__write_file", {"path": "run.sh", "content": "x"}, tmp_path
    )
    assert wrote == {script}
    assert written_by(registry, "mcp__fs__read", {"path": "run.sh"}, tmp_path) == set()
    command = {"command": "echo x >> run.sh && chmod +x run.sh"}
    assert written_by(registry, "terminal", command, tmp_path) == {script}
    assert written_by(registry, "write_file", {"path": "run.sh"}, tmp_path) == {script}
