"""A minimal stdio MCP server for the benchmark: optional start-up delay, one instant tool."""

import json
import sys
import time

time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)  # a server that takes a while to start
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"},
        }
    elif method == "tools/list":
        result = {
            "tools": [{"name": "ping", "description": "pong", "inputSchema": {"type": "object"}}]
        }
    else:
        result = {"content": [{"type": "text", "text": "pong"}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
