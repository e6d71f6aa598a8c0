"""`make docs` fails on a broken link: the README's check and mkdocs --strict, each run on a
scratch docs tree with a link that works and one that does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHECK_LINKS = ROOT / "docs" / "scripts" / "check_links.py"


def check_links(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK_LINKS), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def scratch_tree(tmp_path: Path, readme: str) -> Path:
    docs = tmp_path / "docs"
    (docs / "images").mkdir(parents=True)
    (docs / "images" / "shot.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (docs / "guide.md").write_text("# Guide\n\n## The `make docs` target\n\ntext\n")
    (tmp_path / "README.md").write_text(readme)
    return tmp_path / "README.md"


def test_the_readme_check_passes_links_that_work(tmp_path: Path) -> None:
    readme = scratch_tree(
        tmp_path,
        "# R\n\n![shot](docs/images/shot.svg)\n[guide](docs/guide.md), "
        "[its target](docs/guide.md#the-make-docs-target), [web](https://example.org/x)\n"
        "```\n[not a link](nowhere.md)\n```\n",
    )
    result = check_links(readme)
    assert result.returncode == 0, result.stderr
    assert "0 broken" in result.stdout


def test_the_readme_check_fails_on_a_missing_file(tmp_path: Path) -> None:
    readme = scratch_tree(tmp_path, "# R\n\nSee [the guide](docs/gide.md).\n")
    result = check_links(readme)
    assert result.returncode == 1
    assert "README.md:3: docs/gide.md: no such file" in result.stderr


def test_the_readme_check_fails_on_a_missing_anchor(tmp_path: Path) -> None:
    readme = scratch_tree(tmp_path, "# R\n\n[x](docs/guide.md#make-docs)\n")
    result = check_links(readme)
    assert result.returncode == 1
    assert "no heading with the id #make-docs in guide.md" in result.stderr


def mkdocs_build(tmp_path: Path, page: str) -> subprocess.CompletedProcess[str]:
    """mkdocs --strict, with the project's own theme and validation settings, on a scratch
    docs dir of two pages."""
    project = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config = {key: project[key] for key in ("theme", "validation", "markdown_extensions", "strict")}
    config |= {"site_name": "scratch", "docs_dir": "docs", "site_dir": "site"}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n## Keys\n\ntext\n")
    (docs / "page.md").write_text(page)
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def test_mkdocs_strict_builds_links_that_work(tmp_path: Path) -> None:
    result = mkdocs_build(tmp_path, "# Page\n\n[keys](index.md#keys)\n")
    assert result.returncode == 0, result.stderr


def test_mkdocs_strict_fails_on_a_broken_link_and_a_missing_anchor(tmp_path: Path) -> None:
    result = mkdocs_build(tmp_path, "# Page\n\n[a](missing.md) and [b](index.md#no-such)\n")
    assert result.returncode != 0
    assert "missing.md" in result.stderr
    assert "no-such" in result.stderr
