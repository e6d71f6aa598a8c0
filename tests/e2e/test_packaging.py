"""A non-editable install into a fresh virtual environment runs, its stylesheets inside the wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Building the wheel and installing it in a fresh venv takes minutes on a loaded machine; the
# first test's timeout includes the fixture.
# Both tests on one worker: the wheel and its environment (a module fixture) are made once.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800), pytest.mark.xdist_group("packaging")]

FIRST_FRAME = """
import asyncio
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.main import MainScreen

async def main():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        print(app.screen.query_one("#tools-tree").styles.border_left[0])
        print(app.screen.query_one("#left").styles.min_width)
    print(MainScreen.CSS_PATH)

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = work.glob("hermes_tui-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [str(venv / "bin/pip"), "install", "-q", "--disable-pip-version-check", str(wheel)],
        check=True,
        timeout=900,
    )
    return venv


def test_fresh_install_runs(installed: Path, tmp_path: Path) -> None:
    env = {"HERMES_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    exe = installed / "bin/hermes-tui"
    assert (
        subprocess.run([exe, "--version"], capture_output=True, text=True, env=env).returncode == 0
    )
    out = subprocess.run(
        [exe, "tools", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert "read_file" in {t["name"] for t in json.loads(out.stdout)["tools"]}
    frame = subprocess.run(
        [installed / "bin/python", "-c", FIRST_FRAME],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert frame.returncode == 0, frame.stderr
    border, min_width, css = frame.stdout.split()
    assert border == "round"  # the tree's own style
    assert min_width == "28"  # from the main screen's stylesheet, found beside its module
    assert css == "main.tcss"


def test_wheel_contents(installed: Path) -> None:
    (wheel,) = installed.parent.glob("hermes_tui-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "workbench/tui/screens/main.tcss" in names
    assert not any(n.startswith(("tests/", "bench/")) for n in names)
