"""The core: sessions, the agent loop, tool calls and their approval, MCP, plugins and
checkpoints, for every front end. No Textual; it imports no front end and no built-in tool.
"""
