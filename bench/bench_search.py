"""search_files on a tree of 100,000 files (ours only: Hermes shells out to rg).

Prints the time for a filename glob, a content search that fills a page early, and a
content search for a rare string that has to read every file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import fmt

FILES = 100_000
PER_DIR = 100


def build_tree(root: Path) -> None:
    body = "import os\n\ndef handler(args):\n    return os.getcwd()\n" * 3
    for d in range(FILES // PER_DIR):
        directory = root / f"pkg{d // 100}" / f"mod{d}"
        directory.mkdir(parents=True)
        for f in range(PER_DIR):
            suffix = ".py" if f % 2 else ".txt"
            text = body + ("NEEDLE_RARE\n" if d == FILES // PER_DIR - 1 and f == 7 else "")
            (directory / f"file{f}{suffix}").write_text(text)


def timed(args: dict, cwd: Path) -> tuple[float, dict]:
    from workbench.core.tools.invoke import call_tool
    from workbench.core.tools.registry import registry

    start = time.perf_counter()
    result = json.loads(call_tool(registry, "search_files", args, cwd=str(cwd)))
    return time.perf_counter() - start, result


def main() -> int:
    from workbench.core.tools.discovery import discover_builtin_tools

    discover_builtin_tools()
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        build_tree(root)
        print(f"search_files: {FILES:,} files (built in {time.perf_counter() - start:.1f} s)")
        os.sync()
        cases = [
            (
                "filename glob '*.py' (all 50,000 matches ranked)",
                {"pattern": "*.py", "target": "files"},
            ),
            ("content regex, first page of 50", {"pattern": r"def \w+\(args\)"}),
            ("content regex, rare string (reads every file)", {"pattern": "NEEDLE_RARE"}),
        ]
        for label, args in cases:
            timed(args, root)  # warm the page cache, as a second search would find it
            seconds, result = timed(args, root)
            found = result.get("total", len(result.get("matches", result.get("files", []))))
            print(
                f"  {label:<52} ours {fmt(seconds)}  hermes n/a (shells out to rg)  results {found}"
            )
        if shutil.which("grep"):
            start = time.perf_counter()
            subprocess.run(["grep", "-rl", "NEEDLE_RARE", str(root)], capture_output=True)
            took = time.perf_counter() - start
            print(f"  {'reference: grep -rl for the rare string':<52} grep {fmt(took)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
