"""Approval rules on the call path: what judging one call against the rules costs.

* 50 rules of every kind (deny and ask prefixes, allow globs, tools, toolsets, servers)
  against a 200-character terminal command: a command seen before (its words are cached)
  must take under 200 µs, a new one (parsed with tree-sitter-bash) under 2 ms, on a loaded
  2-core machine (the detector's own analysis of such a command takes about 0.7 ms there).
* A tool call with no command against the same rules: under 100 µs.
Hermes has no allow/ask/deny rules to compare with (only its allowlist of command text).
"""

from __future__ import annotations

import itertools
import sys

from harness import per_call, report


def rules():
    from workbench.core.policy import Scope, parse_rule

    entries = []
    for i in range(10):
        entries += [
            {"action": "deny", "command_prefix": f"tool{i} push"},
            {"action": "ask", "command_prefix": f"deploy{i} --prod"},
            {"action": "allow", "command_glob": f"make target{i} *"},
            {"action": "allow", "tool": f"mcp__srv{i}__*"},
            {"action": "deny", "toolset": f"set{i}"},
        ]
    return [parse_rule(e, scope=Scope.EVERYWHERE, origin=f"r[{i}]") for i, e in enumerate(entries)]


def main() -> int:
    from workbench.core.policy import CallFacts, Policy
    from workbench.core.policy.shell import _cached

    policy = Policy(rules())
    command = "git log --oneline -n 20 -- src/ && " + " ".join(f"echo word{i}" for i in range(25))
    command = command[:200]
    seen = CallFacts("terminal", "terminal", command=command)
    fresh = (
        CallFacts("terminal", "terminal", command=f"{command} #{n}") for n in itertools.count()
    )
    tool = CallFacts("mcp__github__merge", "mcp-github", "github")
    print(f"approval rules: {len(policy.rules)} rules, a {len(command)}-character command")
    cached = per_call(lambda: policy.judge(seen, None), 2000)
    _cached.cache_clear()
    new = per_call(lambda: policy.judge(next(fresh), None), 200)
    plain = per_call(lambda: policy.judge(tool, None), 5000)
    ok = report("judge a command seen before", cached, None, "< 200 µs", cached < 200e-6)
    ok &= report("judge a new command (parsed)", new, None, "< 2 ms", new < 2e-3)
    ok &= report("judge a tool call", plain, None, "< 100 µs", plain < 100e-6)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
