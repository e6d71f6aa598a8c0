"""A hand-written stdio MCP server that ignores stdin EOF and SIGTERM (shutdown must still win)."""

import json
import os
import signal
import sys
import time
from pathlib import Path

signal.signal(signal.SIGTERM, signal.SIG_IGN)
Path(os.environ.get("FIXTURE_MARKERS", "/tmp"), f"pid-{os.getpid()}").write_text("stubborn")
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stubborn", "version": "1"},
        }
    elif message["method"] == "tools/list":
        result = {
            "tools": [{"name": "ping", "description": "pong", "inputSchema": {"type": "object"}}]
        }
    elif message["method"] == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
while True:  # stdin closed: keep running anyway
    time.sleep(1)
