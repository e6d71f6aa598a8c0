"""The workbench UI: time to the first painted frame, and filtering a 2,000-tool tree.

* From process start to the first painted frame, in a real terminal (tmux), read from the
  app's own first-paint hook: under 0.5 s, and within 1.2x of a bare Textual app with a
  tree and an input measured the same way in the same run (the floor any Textual app pays).
* With 2,000 registered tools, each keystroke in the filter box is on screen in under
  50 ms: from the key sent to the first frame written after the tree was rebuilt, typed
  once the workbench has settled (its tools' sizes in tokens measured).
"""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import fmt, raise_priority

BIN = Path(sys.executable).parent


# The peer: the least a Textual app with a tree and an input does before its first frame,
# its paint recorded by the same hook the workbench uses (HERMES_TUI_FIRST_FRAME).
BARE_APP = """
import json, os, sys, time
from textual.app import App
from textual.widgets import Input, Tree

class Bare(App):
    def compose(self):
        yield Input(placeholder="Filter")
        yield Tree("Tools")

    def on_mount(self):
        self.call_after_refresh(self.painted)

    def painted(self):
        with open(os.environ["HERMES_TUI_FIRST_FRAME"], "w") as out:
            json.dump({"at": time.time()}, out)

Bare().run()
"""


class Tmux:
    """A tmux server of the benchmark's own (its own socket, no user config), kept alive.

    tmux exits when its last session ends, and a `new-session` sent while it is exiting fails
    ("server exited unexpectedly"): so a session that only waits holds the server for the
    whole benchmark, and the measured sessions come and go beside it.
    """

    def __init__(self) -> None:
        self.socket = f"bench-ui-{os.getpid()}"

    def __call__(self, *args: str, check: bool = True) -> str:
        command = ["tmux", "-L", self.socket, "-f", os.devnull, *args]
        return subprocess.run(command, check=check, capture_output=True, text=True).stdout

    def __enter__(self) -> Tmux:
        self("new-session", "-d", "-s", "keep", "sleep 100000")
        server, self.path = (
            self("display-message", "-p", "#{pid} #{socket_path}").strip().split(" ", 1)
        )
        raise_priority(server)  # it runs in a session of its own, as do the apps it starts
        return self

    def __exit__(self, *exc: object) -> None:
        self("kill-server", check=False)
        Path(self.path).unlink(missing_ok=True)  # tmux leaves its socket behind


def first_frame(tmux: Tmux, argv: list[str], tmp: Path, run: str) -> float:
    """Seconds from the shell's start of `argv` in tmux to its first painted frame."""
    marker, start_file = tmp / f"frame-{run}.json", tmp / f"start-{run}"
    command = " ".join(shlex.quote(part) for part in argv)
    shell = (
        f"date +%s.%N > {start_file}; HERMES_HOME={tmp}/home HERMES_TUI_FIRST_FRAME={marker} "
        f"exec {command}"
    )
    tmux("new-session", "-d", "-s", run, "-x", "120", "-y", "40", shell)
    deadline = time.monotonic() + 20
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    tmux("kill-session", "-t", run, check=False)
    if not marker.exists():
        raise RuntimeError(f"no first frame within 20 s from: {command}")
    return json.loads(marker.read_text())["at"] - float(start_file.read_text())


def compiled() -> None:
    """The workbench's bytecode written, as an installed package has it (pip compiles on
    install; Textual's came that way): with PYTHONDONTWRITEBYTECODE set, or a tree it cannot
    write to, every start would compile our source again and the bare app's never."""
    import workbench

    compileall.compile_dir(Path(workbench.__file__).parent, quiet=1)


def first_frames(rounds: int = 9) -> tuple[float, float]:
    """Ours and the bare app's medians, run in turns (one of each per round) so that both see
    the same load on a shared machine; the first round warms the file cache."""
    compiled()
    ours_argv, bare_argv = [str(BIN / "hermes-tui")], [sys.executable, "-c", BARE_APP]
    ours, bare = [], []
    with Tmux() as tmux, tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        for i in range(rounds + 1):
            our_time = first_frame(tmux, ours_argv, Path(tmp), f"ours-{i}")
            bare_time = first_frame(tmux, bare_argv, Path(tmp), f"bare-{i}")
            if i:
                ours.append(our_time)
                bare.append(bare_time)
    return statistics.median(ours), statistics.median(bare)


async def filter_keystrokes(tools: int = 2000) -> tuple[float, float]:
    os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="bench-ui-home-")
    from workbench.core.events import ToolSource
    from workbench.core.tools.registry import registry
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.screens.main import MainScreen

    with registry.scope(ToolSource.PLUGIN, "bench"):
        for i in range(tools):
            registry.register(
                f"bench_tool_{i:04d}",
                f"bench_set_{i % 40:02d}",
                {"description": "x"},
                lambda a, **k: "ok",
            )
    app = WorkbenchApp()
    frames: list[float] = []  # when each frame was written to the terminal
    filtered: list[float] = []  # when each filter pass ended
    per_key = []
    async with app.run_test(size=(120, 40)) as pilot:
        # Typed once the workbench has settled: the tools shown and their sizes in tokens
        # measured. A worker measures 2,000 tools' definitions after they are first shown
        # (up to a second on a loaded machine, while its tokenizer loads); a keystroke that
        # meets their arrival waits for the tree to be drawn again with them.
        deadline = time.monotonic() + 60
        while not (isinstance(app.screen, MainScreen) and app.screen.controller.rows.costs):
            if time.monotonic() > deadline:
                raise RuntimeError("the tools' sizes were not measured within 60 s")
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        screen, display = app.screen, app._display
        original = screen.apply_filter

        def timed_filter() -> None:
            original()
            filtered.append(time.perf_counter())

        def timed_display(*args, **kwargs):
            result = display(*args, **kwargs)
            frames.append(time.perf_counter())
            return result

        screen.apply_filter, app._display = timed_filter, timed_display  # measurement only
        await pilot.press("slash")
        for key in [*"bench_tool_01", *["backspace"] * len("bench_tool_01")]:
            start = time.perf_counter()
            await pilot.press(key)
            while not (filtered and filtered[-1] > start and frames and frames[-1] > filtered[-1]):
                await asyncio.sleep(0.001)
            frame = next(f for f in frames if f > filtered[-1])
            per_key.append(frame - start)
            if os.environ.get("BENCH_VERBOSE"):
                print(
                    f"    {key!r}: key->filtered {(filtered[-1] - start) * 1e3:.1f} ms, "
                    f"filtered->frame {(frame - filtered[-1]) * 1e3:.1f} ms"
                )
    registry.deregister_owner(ToolSource.PLUGIN, "bench")
    return statistics.median(per_key), max(per_key)


def main() -> int:
    ok = True
    # The keystrokes are timed in this process: its autogroup gets its nice value too.
    print(f"ui: first painted frame, and filtering 2,000 tools ({raise_priority()})")
    if shutil.which("tmux"):
        frame, bare = first_frames()
        met = frame < 0.5 and frame <= 1.2 * bare
        ok &= met
        print(
            f"  {'process start -> first painted frame (median)':<46} ours {fmt(frame)}  "
            f"bare Textual tree+input {fmt(bare)}  ours/bare {frame / bare:5.2f}x  "
            f"target < 0.5 s and <= 1.2x: {'MET' if met else 'MISSED'}"
        )
    else:
        print("  (tmux missing: first-frame figure skipped; `make test` installs it)")
    median, worst = asyncio.run(filter_keystrokes())
    ok &= worst < 0.05
    print(
        f"  {'filter keystroke, 2,000 tools (median / worst)':<46} ours {fmt(median)} / {fmt(worst)}  "
        f"target < 50 ms: {'MET' if worst < 0.05 else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
