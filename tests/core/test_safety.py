"""The stop-gap gate: only read-only inspection commands run without approval."""

from __future__ import annotations

import pytest

from workbench.core.safety import needs_approval


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md | grep -n hermes | head -5",
        "git status && git log --oneline -3",
        "echo hello 2>&1",
        "grep -r TODO src 2>/dev/null || true",
        "LC_ALL=C sort file.txt | uniq -c",
        "/bin/ls /tmp",
        "wc -l *.py; pwd",
    ],
)
def test_read_only_commands_run(command: str) -> None:
    assert needs_approval(command) == ""


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -rf build", "'rm' is not on the read-only list"),
        ("ls; rm -rf /", "'rm'"),
        ("cat a > b", "redirection"),
        ("echo x >> log", "redirection"),
        ("ls $(rm -rf ~)", "substitution"),
        ("ls `rm x`", "substitution"),
        ("sort -o out.txt in.txt", "writes a file"),
        ("git reset --hard", "'git reset'"),
        ("git push --force", "'git push'"),
        ("env rm -rf x", "'env' running another program"),
        ("bash -c 'rm -rf x'", "'bash'"),
        ("find . -delete", "'find'"),
        ("sleep 100 &", "background"),
        ("echo 'unterminated", "cannot parse"),
        ("", "empty"),
        ("python -c 'import shutil'", "'python'"),
    ],
)
def test_everything_else_needs_approval(command: str, reason: str) -> None:
    assert reason in needs_approval(command)
