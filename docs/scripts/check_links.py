"""Check the relative links of Markdown files: `python docs/scripts/check_links.py FILE...`.

MkDocs checks the links between the pages of the site (`--strict`); this checks the files
it does not build, README.md first: every relative link (`[text](path)`, `[text](path#anchor)`,
`<img src="path">`) must name a file that exists, and an anchor a heading of that file (the
id MkDocs gives it). Links to the web are not followed: the check runs offline. Prints each
broken link with its file and line; exits 1 when there is one, 0 when there is none.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from markdown.extensions.toc import slugify

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ID = re.compile(r"\{:?\s*#([\w-]+)[^}]*\}\s*$")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append((number, line))
    return out


def anchors(path: Path) -> set[str]:
    """The ids of a Markdown file's headings, as MkDocs makes them (repeats get `_1`...)."""
    seen: set[str] = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        heading = HEADING.match(line)
        if heading is None:
            continue
        title = heading.group(2)
        explicit = EXPLICIT_ID.search(title)
        if explicit:
            seen.add(explicit.group(1))
            continue
        words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "")
        base = slug = slugify(re.sub(r"[*]", "", words), "-")
        count = 0
        while slug in seen:
            count += 1
            slug = f"{base}_{count}"
        seen.add(slug)
    return seen


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        line = INLINE_CODE.sub("", line)
        for target in LINK.findall(line) + HTML_LINK.findall(line):
            problem = check(path, target)
            if problem:
                problems.append(f"{path}:{number}: {target}: {problem}")
    return problems


def check(source: Path, target: str) -> str:
    """Why a link is broken, or "" when it is not (or points to the web)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:...
        return ""
    name, _, anchor = target.partition("#")
    file = (source.parent / name).resolve() if name else source.resolve()
    if not file.exists():
        return "no such file"
    if anchor and file.suffix == ".md" and anchor not in anchors(file):
        return f"no heading with the id #{anchor} in {file.name}"
    return ""


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: check_links.py FILE.md...", file=sys.stderr)
        return 2
    problems = [problem for name in argv for problem in broken_links(Path(name))]
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"links: {len(argv)} file(s), {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
