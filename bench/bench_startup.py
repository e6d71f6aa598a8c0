"""Start-up: `hermes-tui tools --json` as a whole process, against Hermes importing model_tools.

Hermes needs `import model_tools` before it can list a single tool; we finish the whole
command (discovery, config, availability, JSON) in less.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from harness import process_seconds, report

BIN = Path(sys.executable).parent


def main() -> int:
    home = tempfile.mkdtemp(prefix="bench-home-")
    env = {**os.environ, "HERMES_HOME": home}
    print("start-up: one whole process each")
    ours = process_seconds([str(BIN / "hermes-tui"), "tools", "--json"], env=env)
    peer = process_seconds([sys.executable, "-c", "import model_tools"], env=env, cwd=home)
    ok = ours < 0.5 and ours < peer
    return (
        0
        if report(
            "hermes-tui tools --json vs import model_tools", ours, peer, "< 0.5 s and < hermes", ok
        )
        else 1
    )


if __name__ == "__main__":
    sys.exit(main())
