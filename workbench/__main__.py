"""`python -m workbench`: the same as `hermes-tui` (what `hermes-tui serve` runs per tab)."""

from workbench.cli import main

raise SystemExit(main())
