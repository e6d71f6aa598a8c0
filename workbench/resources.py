"""Files shipped with the package (the .tcss styles), found in a wheel and in a checkout alike."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def styles_dir() -> Path:
    """`workbench/styles` in an installed wheel; `styles/` at the top of a source checkout."""
    packaged = _PACKAGE / "styles"
    return packaged if packaged.is_dir() else _PACKAGE.parent / "styles"


def style(name: str) -> Path:
    return styles_dir() / name
