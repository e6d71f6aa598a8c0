"""Registry speed against hermes-agent 0.19.0: dispatch and get_definitions over 1,000 tools.

Run with `make bench` (it installs hermes-agent into .venv-bench).
"""

from __future__ import annotations

import logging
import sys
import tempfile

from harness import per_call, report

TOOLS = 1000
SCHEMA = {
    "description": "a tool",
    "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": []},
}


def noop(args: dict, **kw: object) -> str:
    return "ok"


def fill(registry: object, unavailable_every: int = 0) -> set[str]:
    """1,000 tools, each with its own check_fn closure (as MCP servers make them)."""
    for i in range(TOOLS):
        ok = not unavailable_every or i % unavailable_every != 0
        registry.register(f"tool_{i:04d}", f"set{i % 20}", SCHEMA, noop, check_fn=lambda ok=ok: ok)
    return set(registry.get_all_tool_names())


def main() -> int:
    # Both apps log to a file; without a handler Hermes's warnings would go to stderr.
    logging.basicConfig(filename=tempfile.mktemp(suffix=".log"), level=logging.INFO)
    import tools.registry as hermes_registry
    from tools.registry import ToolRegistry as HermesRegistry

    from workbench.core.tools.registry import ToolRegistry

    results = []
    print(f"registry: dispatch and get_definitions ({TOOLS} tools with check_fns)")

    ours, peer = ToolRegistry(), HermesRegistry()
    for reg in (ours, peer):
        reg.register("noop", "bench", SCHEMA, noop)
    t_ours = per_call(lambda: ours.dispatch("noop", {}), number=200_000)
    t_peer = per_call(lambda: peer.dispatch("noop", {}), number=200_000)
    results.append(
        report("dispatch of a no-op tool", t_ours, t_peer, "<= 1.5x", t_ours <= 1.5 * t_peer)
    )

    # What the agent does on every model request: the same tools asked for again, their
    # checks still fresh (ours keeps the built definitions; Hermes rebuilds them).
    ours, peer = ToolRegistry(), HermesRegistry()
    names_ours, names_peer = fill(ours), fill(peer)
    t_ours = per_call(lambda: ours.get_definitions(names_ours, quiet=True), number=50)
    t_peer = per_call(lambda: peer.get_definitions(names_peer, quiet=True), number=50)
    ok = t_ours < 2e-3 and t_peer / t_ours >= 5
    results.append(
        report("get_definitions, checks cached", t_ours, t_peer, ">= 5x faster, < 2 ms", ok)
    )

    # Every check re-evaluated, half of them failing: the cost each time the check cache
    # expires, and after every MCP refresh (Hermes keys its cache by callable).
    ours, peer = ToolRegistry(), HermesRegistry()
    names_ours, names_peer = fill(ours, 2), fill(peer, 2)

    def ours_expired() -> None:
        ours.invalidate_check_fn_cache()
        ours.get_definitions(names_ours, quiet=True)

    def peer_expired() -> None:
        hermes_registry.invalidate_check_fn_cache()
        peer.get_definitions(names_peer, quiet=True)

    t_ours, t_peer = per_call(ours_expired, number=20), per_call(peer_expired, number=20)
    ok = t_ours < 2e-3 and t_peer / t_ours >= 5
    results.append(
        report(
            "get_definitions, checks re-run, half failing",
            t_ours,
            t_peer,
            ">= 5x faster, < 2 ms",
            ok,
        )
    )
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
