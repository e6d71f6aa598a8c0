"""The MCP tests' fixtures (real server processes), shared by every test module here."""

from tests.support.mcp import markers, start  # noqa: F401
