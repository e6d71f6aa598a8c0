"""A stdio MCP server that never answers: it reads its stdin and says nothing (a hung start-up).

Writes `pid-<pid>` into $FIXTURE_MARKERS so a test can see it started and that it is gone.
"""

import os
import signal
import sys
from pathlib import Path

signal.signal(signal.SIGTERM, signal.SIG_IGN)
Path(os.environ.get("FIXTURE_MARKERS", "/tmp"), f"pid-{os.getpid()}").write_text("silent")
for _line in sys.stdin:
    pass
signal.pause()
