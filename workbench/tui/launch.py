"""Starting the Textual front end from the command line: the workbench in this terminal (a
file in its viewer), or served to web browsers.

Nothing of Textual is imported here until one of them runs, so `hermes-tui --help` and the
headless commands stay light. The entry point (`workbench/__main__.py`) hands this module to
the command line as its `Workbench`; the command line never imports the TUI itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def run_app(view: str | None = None, model_flags: dict[str, str] | None = None) -> int:
    if view is not None:
        from workbench.tui.widgets.file_view import cannot_view

        why = cannot_view(Path(view))  # a FIFO or /dev/zero is refused, never waited on
        if why:
            _err(why)
            return EXIT_USAGE
    if not sys.stdout.isatty() and not _served():
        _err("the workbench needs a terminal; see `hermes-tui --help`")
        return EXIT_USAGE
    from workbench.tui.app import WorkbenchApp

    if not _served():  # Textual's web driver writes its frames to fd 1
        from workbench.core.own_output import take_fd

        take_fd(always=False)  # fd 1 is a pipe of ours while plugin code runs
    WorkbenchApp(view=Path(view) if view else None, model_flags=model_flags).run()
    return EXIT_OK


def _served() -> bool:
    """Run by `hermes-tui serve` for a browser tab: Textual's web driver is the terminal."""
    return os.environ.get("TEXTUAL_DRIVER", "").endswith("web_driver:WebDriver")


def serve(args: argparse.Namespace) -> int:
    from workbench.tui import serve as served

    try:
        chosen = served.settings(args.host, args.port, args.token, args.no_token, args.public_url)
    except served.ServeRefused as exc:
        _err(str(exc))
        return EXIT_USAGE
    try:
        served.serve(chosen)
    except OSError as exc:  # the port taken, an address not of this machine
        _err(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")
