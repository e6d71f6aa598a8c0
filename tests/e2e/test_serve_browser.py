"""`hermes-tui serve` in a real browser: Playwright drives Debian's Chromium (installed by
`make system-deps`; Playwright downloads no browser). The page opens with the token, the
tools tree comes over the websocket, a toolset is switched off with the keyboard, and
config.yaml says so."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from tests.support.serve import serve
from workbench.core.config import load_config

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|.)")


class Screen:
    """What the browser received from the workbench over the websocket, as plain text."""

    def __init__(self) -> None:
        self.raw = bytearray()

    def frame(self, payload: bytes | str) -> None:
        self.raw += payload if isinstance(payload, bytes) else payload.encode()

    def text(self) -> str:
        return ESCAPES.sub("", self.raw.decode("utf-8", errors="replace"))

    def wait_for(self, page, *words: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not all(word in self.text() for word in words):
            if time.monotonic() > deadline:
                missing = [w for w in words if w not in self.text()]
                raise AssertionError(f"{missing} never reached the browser")
            page.wait_for_timeout(100)  # lets Playwright deliver the frames meanwhile


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium missing: make system-deps")
def test_the_browser_sees_the_tools_tree_and_a_toggle_reaches_config_yaml(
    cli_env: dict[str, str], home: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    with serve(cli_env) as served, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            # the page asks for a web font; nothing leaves this machine
            page.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda r: r.abort())
            screen = Screen()
            page.on("websocket", lambda ws: ws.on("framereceived", screen.frame))
            page.goto(served.address)
            assert page.url == f"{served.base}/"  # the token left the address bar
            screen.wait_for(page, "Built-in", "read_file", "terminal")
            assert served.children(), "no workbench started for the tab"

            page.focus(".xterm-helper-textarea")  # the terminal in the page takes the keys
            # the filter, as a person types it (keys sent at once outrun the filter's opening);
            # Enter lands on the first match, Space switches its toolset off
            page.keyboard.press("Slash")
            page.wait_for_timeout(500)
            page.keyboard.type("terminal", delay=150)
            screen.wait_for(page, "1 match")
            page.keyboard.press("Enter")
            screen.wait_for(
                page, "workbench.builtins.terminal.terminal_tool"
            )  # its detail: selected
            page.keyboard.press("Space")
            deadline = time.monotonic() + 30
            while load_config(home / "config.yaml").get("agent.disabled_toolsets") != ["terminal"]:
                assert time.monotonic() < deadline, "config.yaml never said terminal is off"
                page.wait_for_timeout(100)
            screen.wait_for(page, "☐ terminal")
            page.screenshot(path=str(tmp_path / "served.png"))
        finally:
            browser.close()
