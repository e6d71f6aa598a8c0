"""Python read as code: names followed through imports, aliases and assignments."""

from __future__ import annotations

import pytest

from workbench.core.safety.python_code import judge_python


@pytest.mark.parametrize(
    "code",
    [
        "__import__('os').remove('f')",
        "import os as o; o.unlink('f')",
        "from shutil import rmtree as r; r('d')",
        "w = open; w('f', 'a').write('x')",
        "import pathlib; p = pathlib.Path('f'); p.write_text('x')",
        "from pathlib import Path\nwith Path('f').open('w') as fh: fh.write('x')",
        "import subprocess; subprocess.run(['rm', 'f'])",
        "import importlib; importlib.import_module('os').remove('f')",
        "getattr(__import__('os'), 'system')('rm f')",
        "import os; f = os.remove; f('x')",
        "eval(input())",
        "from os import *",
        "import sys; sys.modules['os'].remove('f')",
        "open('f', mode)",
        "def f(:",
    ],
)
def test_what_changes_files_or_cannot_be_followed(code: str) -> None:
    assert judge_python(code) is not None, code


@pytest.mark.parametrize(
    "code",
    [
        "print(sum(range(10)))",
        "import json, sys; print(json.load(sys.stdin))",
        "print(open('f').read())",
        "print('a-b'.replace('-', '+'))",
        "x = [1, 2]; x.remove(1)",
        "import os; print(os.getcwd(), os.listdir('.'))",
        "import pathlib; print(pathlib.Path('.').resolve())",
    ],
)
def test_reading_and_computing_pass(code: str) -> None:
    assert judge_python(code) is None, code


def test_fork_in_a_loop_is_a_fork_bomb() -> None:
    found = judge_python("import os\nos.getpid()\nwhile True:\n    os.fork()")
    assert found is not None and found.fork_bomb
    assert not judge_python("import os\npid = os.fork()").fork_bomb
