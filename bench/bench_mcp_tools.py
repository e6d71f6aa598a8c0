"""Headless MCP: `hermes-tui tools --json` with one real stdio server (mcp-server-time, from
`make mcp-servers`), start to exit, against Hermes 0.19's own discovery of the same server
(`tools.mcp_tool.discover_mcp_tools()` then `shutdown_mcp_servers()`, in Hermes's own
environment, .cache/hermes-cli from `make hermes-cli`), each a whole process with a
HERMES_HOME of its own whose config.yaml has that one `mcp_servers` entry.

Hermes's environment has no `mcp` SDK (it is Hermes's `mcp` extra, mcp==1.26.0, which our
mcp>=2.3 excludes): `make bench` installs it apart, in .venv-hermes-mcp, appended to Hermes's
path so that only what Hermes lacks comes from there. A peer that fails or hangs is "n/a".

Target: ours <= 1.5 s (the server's own ~0.8 s start, plus ours).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from harness import peer_seconds, process_seconds, report

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SERVER = ROOT / ".cache" / "mcp-servers" / "time" / "bin" / "mcp-server-time"
HERMES = ROOT / ".cache" / "hermes-cli" / "bin" / "python"
HERMES_MCP = ROOT / ".venv-hermes-mcp"
DISCOVER = (
    "import sys; sys.path.append(sys.argv[1])\n"
    "from tools.mcp_tool import discover_mcp_tools, shutdown_mcp_servers\n"
    "names = discover_mcp_tools()\n"
    "shutdown_mcp_servers()\n"
    "sys.exit(0 if any(n.startswith('mcp__time__') for n in names) else 3)\n"
)


def home(parent: Path, name: str) -> dict[str, str]:
    folder = parent / name
    folder.mkdir()
    (folder / "config.yaml").write_text(f"mcp_servers:\n  time:\n    command: {SERVER}\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "HERMES_HOME": str(folder)}  # each side's bytecode cached, as installed


def main() -> int:
    if not SERVER.exists():
        print(f"  {SERVER} is missing: run `make mcp-servers`")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-mcp-tools-") as tmp:
        ours = process_seconds(
            [str(BIN / "hermes-tui"), "tools", "--json"], timeout=60, env=home(Path(tmp), "ours")
        )
        peer = peer_seconds(
            [str(HERMES), "-c", DISCOVER, str(HERMES_MCP)],
            env=home(Path(tmp), "hermes"),
            cwd=tmp,
        )
    print("headless MCP: one stdio server (mcp-server-time), one whole process each")
    ok = ours <= 1.5
    name = "tools --json vs Hermes discover_mcp_tools()"
    return 0 if report(name, ours, peer, "<= 1.5 s", ok) else 1


if __name__ == "__main__":
    sys.exit(main())
