"""Take the docs' screenshots from the real app: `python docs/scripts/screenshots.py [OUT]`.

Each picture is an SVG that Textual exports from a pilot run (`App.run_test()`) of the
whole workbench, so the pictures show what the app draws today and `make docs` takes them
again on every build. Nothing of this machine shows: the app gets a private HERMES_HOME and
a scratch project at a fixed path, the environment loses every model key, and the session
talks to the scripted OpenAI-protocol server of the tests (tests/support/fake_openai.py)
on 127.0.0.1.

The clock is not pinned: the app reads the real clock wherever it stamps a call, a turn or
a checkpoint (there is no clock to hand it), so durations, the timeline's axis and bars, a
checkpoint's time and id differ from one build to the next. Rather than rewrite them, a
picture is written only when what it shows has changed beyond those timings (`unchanged`):
the file kept is always a real screenshot, and a build that changes nothing else leaves
docs/images as it was.
"""

from __future__ import annotations

import asyncio
import html
import importlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The one place that names where the app lives: the tree moves, this line follows it.
APP_MODULE, APP_CLASS = "workbench.tui.app", "WorkbenchApp"
# The screens and widgets the script waits for, by class name (wherever their modules live).
SESSION, APPROVAL, CHECKPOINTS, VIEWER, USAGE = (
    "SessionScreen",
    "ApprovalScreen",
    "CheckpointsScreen",
    "ViewerScreen",
    "UsageScreen",
)
TREE, PROMPT, TIMELINE = "ToolsTree", "PromptArea", "Timeline"

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "images"
# A fixed scratch path, so the pictures show the same path on every machine.
PROJECT = Path(tempfile.gettempdir()) / "hermes-tui-docs" / "project"
SIZE = (132, 38)
MODEL_PORT = 18431  # the scripted model server's, when free
REMOTE_FONT = re.compile(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)')
SETTLED = 60.0  # seconds; a bound that only ends a run that hangs
# What the real clock decides in a picture, left out when two pictures are compared: a
# duration or time ("172 ms", "6.1 s", "|0.16s", "+2.92s", "599s"), a checkpoint's time
# ("12-01 19:11") and id (12 hex digits), when a tool was last used; and the timeline, whose bars are drawn to the
# clock's scale (its region, found when the picture is taken).
TIMING = re.compile(r"\d+(?:\.\d+)?\s?m?s\b|\b(?:\d{4}-)?\d\d-\d\d \d\d:\d\d\b|\b[0-9a-f]{12}\b")
CELL_W, CELL_H, TEXT_Y, RECT_Y = 12.2, 24.4, 20.0, 1.5  # Textual's SVG grid
SVG_TEXT = re.compile(r'<text class="[^"]*-(r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>')
SVG_RECT = re.compile(r'<rect fill="([^"]+)" x="([\d.]+)" y="([\d.]+)" width="[\d.]+"')
SVG_STYLE = re.compile(r"\.terminal-\d+-(r\d+) \{([^}]*)\}")

sys.path.insert(0, str(ROOT))  # tests.support, and the app from this checkout


def scratch_project() -> Path:
    """A small project the session works on."""
    shutil.rmtree(PROJECT.parent, ignore_errors=True)
    (PROJECT / "build").mkdir(parents=True)
    (PROJECT / "src").mkdir()
    (PROJECT / "build" / "app.bin").write_bytes(b"\0" * 64)
    (PROJECT / "server.ini").write_text(
        "[server]\nhost = 127.0.0.1\nport = 8080\ndebug = false\nworkers = 4\n"
    )
    (PROJECT / "src" / "app.py").write_text("def main():\n    print('hello')\n\n\nmain()\n")
    (PROJECT / "notes.md").write_text("# Notes\n\n- TODO: raise the workers for the load test\n")
    log = "".join(
        f"2026-12-01 09:{n // 60:02d}:{n % 60:02d} {'ERROR' if n % 97 == 0 else 'INFO '} "
        f"request {n} served in {n % 50 + 3} ms\n"
        for n in range(1, 3000)
    )
    (PROJECT / "server.log").write_text(log)
    return PROJECT


def private_home(model_config: str) -> Path:
    home = PROJECT.parent / "hermes-home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text(model_config + "approvals:\n  timeout: 600\n")
    return home


def clean_environment(home: Path) -> None:
    """No key or endpoint of this machine's user reaches the app."""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN", "_BASE_URL")) or name.startswith(
            ("OPENAI_", "FIRECRAWL_", "HERMES_")
        ):
            del os.environ[name]
    os.environ["HERMES_HOME"] = str(home)
    os.environ["TZ"] = "UTC"
    os.environ["TEXTUAL_ANIMATIONS"] = "none"


def new_app(**kwargs: Any) -> Any:
    return getattr(importlib.import_module(APP_MODULE), APP_CLASS)(**kwargs)


async def wait_for(pilot: Any, what: str, predicate: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLED
    while not predicate():
        if loop.time() > deadline:
            raise TimeoutError(f"screenshots: {what} not reached in {SETTLED:.0f} s")
        await pilot.pause(0.05)


def on_screen(app: Any, name: str) -> bool:
    """The active screen's class, by name (the modules that hold them move)."""
    return type(app.screen).__name__ == name


def shows(app: Any, text: str) -> bool:
    """Whether the active screen's widgets draw `text` somewhere (a cheap test of state)."""
    return any(text in str(getattr(w, "render", lambda: "")()) for w in app.screen.query("*"))


def save(app: Any, name: str, out: Path) -> None:
    svg = app.export_screenshot(title=f"hermes-tui: {name.replace('-', ' ')}")
    # The export names a web font on a CDN; the docs fetch nothing, so the picture uses the
    # reader's own Fira Code if there is one, else their monospace font.
    svg = REMOTE_FONT.sub("", svg)
    path = out / f"{name}.svg"
    if path.exists() and unchanged(path.read_text(), svg, clocked_cells(app)):
        print(f"  {path} (unchanged but for its timings: kept)")
        return
    path.write_text(svg)
    print(f"  {path}")


Cells = Callable[[int, int], bool]


def clocked_cells(app: Any) -> Cells:
    """Whether a cell (column, row) is the timeline's: on any screen of the stack, and not
    under a modal drawn over it (the approval's box shows through, and is compared)."""
    timelines = [w.region for screen in app.screen_stack for w in screen.query(TIMELINE)]
    above = [] if app.screen.query(TIMELINE) else [w.region for w in app.screen.children]

    def clocked(x: int, y: int) -> bool:
        inside = any(r.contains(x, y) for r in timelines)
        return inside and not any(r.contains(x, y) for r in above)

    return clocked


def unchanged(old: str, new: str, clocked: Cells) -> bool:
    """Whether two pictures show the same but for what the clock decides (TIMING)."""
    return shown(old, clocked) == shown(new, clocked)


Shown = tuple[int, int, str, str]  # row, column (-1: after a timing), text, style


def shown(svg: str, clocked: Cells) -> list[Shown]:
    """A picture's texts and backgrounds, each with its place and style: without its
    timings, the timeline's cells and the padding. Right of a timing in its row, a place is
    left out too (a shorter duration shifts the rest of the row). Textual numbers its
    styles per picture, so a style is compared by value."""
    styles = dict(SVG_STYLE.findall(svg))
    cells = [
        (round((float(y) - TEXT_Y) / CELL_H), round(float(x) / CELL_W), html.unescape(text), style)
        for style, x, y, text in SVG_TEXT.findall(svg)
    ]
    shifted: dict[int, int] = {}  # row: the column of its first timing
    for row, column, text, _ in cells:
        if TIMING.search(text):
            shifted[row] = min(shifted.get(row, column), column)
    items: list[Shown] = []
    for row, column, text, style in cells:
        said = TIMING.sub("#", " ".join(text.split()))
        if said and not clocked(column, row):
            indent = len(text) - len(text.lstrip())  # where its first mark is drawn
            place = column + indent if column <= shifted.get(row, column) else -1
            items.append((row, place, said, styles.get(style, style)))
    for fill, x, y in SVG_RECT.findall(svg):
        row, column = round((float(y) - RECT_Y) / CELL_H), round(float(x) / CELL_W)
        place = column if column <= shifted.get(row, column) else -1
        if not clocked(column, row) and items[-1:] != [(row, place, "", fill)]:
            items.append((row, place, "", fill))
    return sorted(items, key=lambda item: item[0])


async def sized_tree(pilot: Any, app: Any) -> Any:
    """The tools tree once the core is loaded and the sizes in tokens are measured."""
    await wait_for(pilot, "the tools tree", lambda: bool(app.screen.query(TREE)))
    tree = app.screen.query_one(TREE)
    await wait_for(pilot, "the sizes in tokens", lambda: "tokens" in str(tree.border_title))
    return tree


async def workbench(out: Path) -> None:
    """The tools panel: the tree with sizes in tokens, a tool's detail."""
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        tree = await sized_tree(pilot, app)
        tree.focus()
        for _ in range(12):  # down the tree to read_file: its detail beside it
            if shows(app, "line numbers"):
                break
            await pilot.press("down")
            await pilot.pause(0.1)
        await wait_for(pilot, "read_file's detail", lambda: shows(app, "line numbers"))
        await pilot.pause(0.3)
        save(app, "workbench", out)


async def session(out: Path, fake: Any, replies: Any) -> None:
    """A session: a turn of tool calls, its approval, the timeline, the checkpoints."""
    fake.add(
        replies.tools(
            ("read_file", {"path": "server.ini"}),
            ("search_files", {"pattern": "TODO"}),
            ("read_file", {"path": "src/app.py"}),
        ),
        replies.tools(
            (
                "write_file",
                {
                    "path": "server.ini",
                    "content": "[server]\nhost = 127.0.0.1\nport = 8080\n"
                    "debug = true\nworkers = 16\n",
                },
            )
        ),
        replies.tools(("terminal", {"command": "rm -rf build && make release"})),
        replies.text(
            "I set **workers = 16** and turned `debug` on in `server.ini`. "
            "You denied the clean build, so `build/` is as it was.",
            chunks=8,
        ),
    )
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await sized_tree(pilot, app)
        await pilot.press("f6")
        await wait_for(pilot, "the session", lambda: on_screen(app, SESSION))
        prompt = app.screen.query_one(PROMPT)
        await wait_for(pilot, "the prompt", lambda: prompt.has_focus)
        prompt.cursor_blink = False
        prompt.insert("Raise the workers in server.ini to 16, turn debug on, then rebuild.")
        await pilot.press("enter")
        await wait_for(pilot, "the approval", lambda: on_screen(app, APPROVAL))
        await pilot.pause(0.3)
        save(app, "approval", out)
        await pilot.press("d")  # deny
        await wait_for(pilot, "the answer", lambda: shows(app, "as it was"))
        await wait_for(pilot, "the turn's end", lambda: shows(app, "answered"))
        await pilot.press("f7")
        await wait_for(pilot, "the timeline", lambda: app.screen.query_one(TIMELINE).has_focus)
        await pilot.press("left")  # the last call, denied: its detail under the timeline
        await wait_for(pilot, "the call's detail", lambda: shows(app, "denied"))
        await pilot.pause(0.5)
        save(app, "session", out)
        await pilot.press("f9")
        await wait_for(pilot, "the checkpoints", lambda: on_screen(app, CHECKPOINTS))
        await wait_for(pilot, "a checkpoint's diff", lambda: shows(app, "workers = 16"))
        await pilot.pause(0.3)
        save(app, "checkpoints", out)


async def usage(out: Path) -> None:
    """What each tool earns (`u`): its cost beside its calls in the session just run."""
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await sized_tree(pilot, app)
        await pilot.press("u")
        await wait_for(pilot, "the usage view", lambda: on_screen(app, USAGE))
        await wait_for(pilot, "the sessions read", lambda: shows(app, "session(s) read"))
        await pilot.pause(0.3)
        save(app, "usage", out)


async def viewer(out: Path) -> None:
    """The result viewer on a log, searching it (`hermes-tui view server.log`)."""
    app = new_app(view=Path("server.log"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, "the viewer", lambda: on_screen(app, VIEWER))
        await pilot.pause(0.3)
        await pilot.press("slash", *"ERROR", "enter")
        await wait_for(pilot, "the search", lambda: shows(app, "match"))
        await pilot.pause(0.3)
        save(app, "viewer", out)


def on_fixed_port(fake: Any) -> Any:
    """The scripted server on MODEL_PORT when it is free (its address shows in the session's
    header), else where it was bound."""
    import threading
    from http.server import ThreadingHTTPServer

    try:
        httpd = ThreadingHTTPServer(("127.0.0.1", MODEL_PORT), fake.httpd.RequestHandlerClass)
    except OSError:
        return fake
    fake.httpd.server_close()
    httpd.daemon_threads = True
    fake.httpd = httpd
    fake._thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    return fake


async def main(out: Path) -> None:
    from tests.support import fake_openai

    out.mkdir(parents=True, exist_ok=True)
    scratch_project()
    fake = on_fixed_port(fake_openai.FakeOpenAI()).start()
    try:
        clean_environment(private_home(fake.model_config("demo-model")))
        os.chdir(PROJECT)
        await workbench(out)
        await session(out, fake, fake_openai)
        await usage(out)
        await viewer(out)
    finally:
        fake.stop()
        os.chdir(ROOT)
        shutil.rmtree(PROJECT.parent, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
