"""`hermes-tui` and `python -m workbench` (what `hermes-tui serve` runs per tab).

The one module that joins the two front ends: it hands the Textual one (`launch`) to the
command line, which starts it when no command is given (and for `view` and `serve`).
Neither front end imports the other.
"""

from __future__ import annotations

from workbench.cli import main as cli
from workbench.tui import launch


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, workbench=launch)


if __name__ == "__main__":
    raise SystemExit(main())
