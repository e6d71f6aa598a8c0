"""A call that changes what a project's virtual environment runs is named in the session:
on the event stream and in its result, with the files (a `.pth` first: it runs at every
start of that python). Real venv layouts, real commands through the executor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.core.execution import venvs
from workbench.core.execution.approval import ApprovalBroker
from workbench.core.execution.events import VenvChanged
from workbench.core.execution.executor import Executor
from workbench.core.tools.registry import registry

SITE = "lib/python3.11/site-packages"


def make_venv(folder: Path) -> Path:
    """What `python -m venv` leaves that matters here: pyvenv.cfg, bin, site-packages."""
    (folder / SITE / "six").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (folder / "bin").mkdir()
    (folder / "bin" / "python").symlink_to("/usr/bin/python3")
    (folder / SITE / "six" / "__init__.py").write_text("")
    (folder / SITE / "six.py").write_text("")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    make_venv(root / ".venv")
    return root


async def run(project: Path, name: str, args: dict) -> tuple[dict, list[VenvChanged]]:
    events: list[object] = []
    executor = Executor(
        registry, broker=ApprovalBroker(mode="off"), cwd=str(project), on_event=events.append
    )
    try:
        (outcome,) = await executor.run([{"id": "1", "name": name, "arguments": args}])
    finally:
        executor.shutdown()
    content = outcome.content if isinstance(outcome.content, str) else json.dumps(outcome.content)
    return json.loads(content), [e for e in events if isinstance(e, VenvChanged)]


def test_venvs_are_found_by_pyvenv_cfg_two_levels_down_at_most(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for place in (".venv", "myenv", "sub/.venv", "node_modules/x/.venv", "a/b/c"):
        make_venv(root / place)
    found = {os.path.relpath(v, root) for v in venvs.find([str(root)])}
    assert found == {".venv", "myenv", "sub/.venv"}


async def test_a_pth_file_written_by_a_command_is_named_first(project: Path) -> None:
    command = f"echo 'import os' > .venv/{SITE}/evil.pth && echo '# x' >> .venv/{SITE}/six.py"
    result, events = await run(project, "terminal", {"command": command})
    (event,) = events
    real = os.path.realpath(project / ".venv" / SITE)
    assert event.venv == os.path.realpath(project / ".venv")
    assert event.paths == (f"{real}/evil.pth", f"{real}/six.py")
    assert f"{SITE}/evil.pth runs at every start of its python" in event.note
    assert result["venv"] == event.note and "outside the sandbox" in event.note


async def test_a_program_whose_writes_are_unknown_is_caught_at_the_top_level(
    project: Path,
) -> None:
    script = project / "setup_hook.py"
    script.write_text(
        f"import pathlib; pathlib.Path('.venv/{SITE}/zz.pth').write_text('import os')\n"
    )
    _, events = await run(project, "terminal", {"command": "python3 setup_hook.py"})
    assert [os.path.basename(p) for p in events[0].paths] == ["zz.pth"]


async def test_a_write_deep_inside_a_package_is_named_when_the_call_names_it(
    project: Path,
) -> None:
    path = f".venv/{SITE}/six/__init__.py"
    result, events = await run(project, "write_file", {"path": path, "content": "import os\n"})
    (event,) = events
    assert os.path.realpath(project / path) in event.paths  # (and its folder, which it renamed in)
    assert "venv" in result


async def test_reading_or_writing_elsewhere_names_nothing(project: Path) -> None:
    for name, args in (
        ("terminal", {"command": f"cat .venv/{SITE}/six.py && ls .venv"}),
        ("terminal", {"command": "echo x > notes.txt"}),
        (
            "terminal",
            {"command": f"python3 -c 'import compileall' && mkdir -p .venv/{SITE}/__pycache__"},
        ),
        ("write_file", {"path": "src.py", "content": "x = 1\n"}),
    ):
        result, events = await run(project, name, args)
        assert events == [] and "venv" not in result, args


async def test_a_venv_the_command_makes_is_named_too(tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    project.mkdir()
    _, events = await run(project, "terminal", {"command": "python3 -m venv --without-pip env"})
    (event,) = events
    assert event.venv == os.path.realpath(project / "env")
    assert f"{os.path.realpath(project / 'env')}/pyvenv.cfg" in event.paths
