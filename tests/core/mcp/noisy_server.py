"""A stdio MCP server that prints a thousand lines of garbage on stdout, then serves one tool.

Each garbage line is one the client cannot parse as JSON-RPC; the server works otherwise.
"""

import json
import sys

for n in range(1000):
    print(f"DEBUG {n}: starting up, this is not JSON", flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "noisy", "version": "1"},
        }
    elif message["method"] == "tools/list":
        result = {
            "tools": [{"name": "ping", "description": "pong", "inputSchema": {"type": "object"}}]
        }
    elif message["method"] == "tools/call":
        print("more noise between answers", flush=True)
        result = {"content": [{"type": "text", "text": "pong"}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
