"""The MCP tests' fixtures (real server processes), shared by every test module here."""

from tests.core.mcp.test_manager import markers, start  # noqa: F401
