"""$HERMES_HOME/.env: dotenv lines read safely; what cannot be read is said by line number only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.model.envfile import MAX_BYTES, load, parse

SECRET = "sk-very-secret-123"


def test_the_forms_a_dotenv_file_uses() -> None:
    values, problems = parse(
        "\ufeff# keys for hermes\n"
        "OPENROUTER_API_KEY=sk-or-1\n"
        "export OPENAI_API_KEY = sk-openai-2  # work key\n"
        "export\tTABBED=3\n"
        "SINGLE='a # not a comment \\n kept'\n"
        'DOUBLE="line1\\nline2 \\"quoted\\" \\\\ end" # comment\n'
        "HASH=abc#def\n"
        "EMPTY=\n"
        "EMPTY_QUOTES=''\n"
        "SPACES =  padded value  \r\n"
        'MULTI="first\n'
        'second"\n'
        "DUP=old\n"
        "DUP=new\n"
    )
    assert problems == []
    assert values == {
        "OPENROUTER_API_KEY": "sk-or-1",
        "OPENAI_API_KEY": "sk-openai-2",
        "TABBED": "3",
        "SINGLE": "a # not a comment \\n kept",
        "DOUBLE": 'line1\nline2 "quoted" \\ end',
        "HASH": "abc#def",
        "EMPTY": "",
        "EMPTY_QUOTES": "",
        "SPACES": "padded value",
        "MULTI": "first\nsecond",
        "DUP": "new",
    }


def test_bad_lines_are_skipped_by_number_and_never_repeated() -> None:
    values, problems = parse(
        f"{SECRET}\n"  # a key pasted without a name
        f"1BAD={SECRET}\n"
        f"BAD-NAME={SECRET}\n"
        f'OPEN="{SECRET}\n'  # never closed: the lines after it are still read
        "GOOD=yes\n"
        f"TAIL='{SECRET}' junk\n"
    )
    assert values == {"GOOD": "yes"}
    assert [p.split(" ", 2)[1] for p in problems] == ["1", "2", "3", "4:", "6:"]
    assert not any(SECRET in p for p in problems)


def test_a_missing_file_is_empty(tmp_path: Path) -> None:
    found = load(tmp_path)
    assert found.values == {} and found.problems == ()


def test_the_file_is_read_from_the_home(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("A=1\nnonsense\n")
    found = load(tmp_path)
    assert found.values == {"A": "1"}
    assert found.problems == (f"{tmp_path / '.env'}: line 2 is not KEY=VALUE (skipped)",)


@pytest.mark.timeout(10)
def test_a_fifo_never_blocks(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".env")
    found = load(tmp_path)
    assert found.values == {} and "not a regular file" in found.problems[0]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.write_bytes(b"A=" + b"x" * MAX_BYTES), "limit"),
        (lambda p: p.write_bytes(b"A=\xff\xfe\n"), "not UTF-8"),
        (lambda p: p.mkdir(), ".env"),
        (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
    ],
    ids=["huge", "binary", "directory", "link-to-device"],
)
def test_odd_files_are_named_not_read(tmp_path: Path, make, said: str) -> None:
    make(tmp_path / ".env")
    found = load(tmp_path)
    assert found.values == {} and said in found.problems[0]
