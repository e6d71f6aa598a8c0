"""The core loads light: importing the runtime, or loading one, brings in no UI, model or MCP
library (they cost a headless command's start-up and are imported where they are used)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("textual", "rich", "openai", "mcp")

PROBE = """
import json, sys
from pathlib import Path
import workbench.core.runtime
loaded = {"import": sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[2:]))}
workbench.core.runtime.load_runtime(Path(sys.argv[1]))
loaded["load"] = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[2:]))
print(json.dumps(loaded))
"""


def loaded_of(home: Path, names: tuple[str, ...]) -> dict[str, list[str]]:
    """Which of `names` a fresh interpreter has loaded after the import, then after loading a
    runtime (this interpreter has loaded everything already)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(home), *names],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_importing_and_loading_the_runtime_loads_no_ui_model_or_mcp_library(
    tmp_path: Path,
) -> None:
    assert loaded_of(tmp_path / "home", HEAVY) == {"import": [], "load": []}


def test_the_probe_finds_a_library_the_runtime_does_load(tmp_path: Path) -> None:
    """The check can fail: the runtime reads config.yaml, so the YAML library is there."""
    assert loaded_of(tmp_path / "home", ("yaml", *HEAVY)) == {"import": ["yaml"], "load": ["yaml"]}
