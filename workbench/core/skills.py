"""Hermes's skills: `$HERMES_HOME/skills/**/SKILL.md` and the folders `skills.external_dirs`
names, found, read and located the way Hermes 0.19's skills tools do (tools/skills_tool.py,
tools/skill_manager_tool.py, agent/skill_utils.py), without their weak spots:

* nothing below a skills folder is reached through a symbolic link: the walk never follows
  one, and every file is opened one folder at a time with O_NOFOLLOW (Hermes follows
  links, so a skill folder linked to `/` lists and reads what is there). A link that holds
  a skill is shown as such, with where it leads, and refused;
* every read is bounded: a listing reads the first kilobytes of each SKILL.md, a view up to
  `MAX_READ_BYTES`, and a larger file is an error that says its size and the limit;
* a SKILL.md without frontmatter is a skill all the same (its folder's name, the first line
  of its text as its description), as in Hermes; the listing says it has none.

The built-in skills tools (builtins/skills), the approval gate (which asks before
skill_manage writes, as before a write_file) and the workbench's tree use this module.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from workbench.core.config import Config, hermes_home, load_config
from workbench.core.safety.places import within
from workbench.core.storage import yaml_file

SKILL_FILE = "SKILL.md"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_SKILL_CONTENT_CHARS = 100_000  # what skill_manage writes to a SKILL.md (Hermes's limit)
MAX_SKILL_FILE_BYTES = 1 << 20  # what it writes to a supporting file (Hermes's limit)
MAX_READ_BYTES = 1 << 20  # what skill_view reads of one file; beyond it, an error says so
HEAD_CHARS = 4000  # what a listing reads of each SKILL.md (Hermes's)
MAX_SKILLS = 2000  # skills a listing holds; more are left out, and it says so
MAX_DEPTH = 8  # folders below a skills folder a walk goes down
EXCLUDED_DIRS = frozenset(
    {".git", ".github", ".hub", ".archive", ".venv", "venv", "node_modules", "site-packages",
     "__pycache__", ".tox", ".nox", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
)  # fmt: skip
# Inside a skill: its supporting files, loaded with skill_view(name, file_path), never skills.
SUPPORT_DIRS = ("references", "templates", "assets", "scripts")
VALID_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_PLATFORMS = {"macos": "darwin", "linux": "linux", "windows": "win32"}
_FENCE_END = re.compile(r"\n---\s*\n")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class SkillError(Exception):
    """A skill or one of its files cannot be read or written; the message says why."""


@dataclass(frozen=True, slots=True)
class Root:
    """A skills folder: `path` as configured (absolute), `real` where it really is."""

    path: Path
    real: str
    local: bool  # $HERMES_HOME/skills, where skill_manage creates skills

    def exists(self) -> bool:
        return os.path.isdir(self.real)


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    category: str | None
    directory: Path  # its folder, under its root's real path, reached through no link
    root: Root
    size: int = 0  # bytes of its SKILL.md
    frontmatter: bool = True  # its SKILL.md starts with YAML frontmatter
    meta: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    problem: str = ""  # why it is not loaded ("" when it is): a link, a file too large
    link: str = ""  # where its folder (or SKILL.md) really is, when that is a link

    @property
    def rel(self) -> str:
        """Its folder, relative to its skills folder ("mlops/axolotl")."""
        return os.path.relpath(self.directory, self.root.real)

    @property
    def skill_md(self) -> Path:
        return self.directory / SKILL_FILE

    @property
    def platform_ok(self) -> bool:
        return matches_platform(self.meta.get("platforms"))


@dataclass
class Listing:
    skills: list[Skill] = field(default_factory=list)  # every one found, problems too
    truncated: bool = False  # MAX_SKILLS reached

    def loadable(self, disabled: frozenset[str] = frozenset()) -> list[Skill]:
        """What skills_list lists: one per name (the local folder's first), for this
        platform, not disabled, without a problem."""
        seen: set[str] = set()
        out = []
        for skill in self.skills:
            if skill.problem or not skill.platform_ok or skill.name in disabled:
                continue
            if skill.name not in seen:
                seen.add(skill.name)
                out.append(skill)
        return out


# -- where skills are ----------------------------------------------------------------------


def roots(config: Config | None = None) -> list[Root]:
    """`$HERMES_HOME/skills` first (whether it exists or not), then each existing folder of
    `skills.external_dirs` (a path or a list; `~` and `$VARS` expanded, relative to
    HERMES_HOME), once each, as Hermes reads them."""
    config = config if config is not None else load_config()
    home = hermes_home()
    local_path = Path(os.path.abspath(home / "skills"))
    local = Root(local_path, os.path.realpath(local_path), True)
    found = [local]
    raw = config.get("skills.external_dirs")
    entries = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    seen = {local.real}
    for entry in entries:
        text = str(entry).strip()
        if not text:
            continue
        path = Path(os.path.expanduser(os.path.expandvars(text)))
        if not path.is_absolute():
            path = home / path
        real = os.path.realpath(path)
        if real in seen or not os.path.isdir(real):
            continue
        seen.add(real)
        found.append(Root(Path(os.path.abspath(path)), real, False))
    return found


def current_config() -> Config:
    """config.yaml as it is now (skills.external_dirs, skills.disabled)."""
    return load_config()


def disabled(config: Config | None = None) -> frozenset[str]:
    """`skills.disabled`: names skills_list leaves out and skill_view refuses."""
    config = config if config is not None else load_config()
    raw = config.get("skills.disabled")
    names = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return frozenset(str(n).strip() for n in names if str(n).strip())


# -- finding -------------------------------------------------------------------------------


def discover(config: Config | None = None, *, limit: int = MAX_SKILLS) -> Listing:
    """Every skill under every skills folder, sorted by category then name within each
    folder (local first). Links are never followed: one that holds a skill is listed with
    its problem."""
    listing = Listing()
    for root in roots(config):
        if not root.exists():
            continue
        found: list[Skill] = []
        for skill in _walk(root):
            if len(listing.skills) + len(found) >= limit:
                listing.truncated = True
                break
            found.append(skill)
        found.sort(key=lambda s: (s.category or "", s.name))
        listing.skills.extend(found)
        if listing.truncated:
            break
    return listing


def _walk(root: Root) -> Iterator[Skill]:
    base = root.real
    for here, dirs, files in os.walk(base, followlinks=False):
        depth = 0 if here == base else os.path.relpath(here, base).count(os.sep) + 1
        has_skill = SKILL_FILE in files
        kept = []
        for name in sorted(dirs):
            if name in EXCLUDED_DIRS or (has_skill and name in SUPPORT_DIRS):
                continue
            path = os.path.join(here, name)
            if os.path.islink(path):
                linked = _linked_skill(root, Path(path))
                if linked is not None:
                    yield linked
                continue
            kept.append(name)
        dirs[:] = kept if depth < MAX_DEPTH else []
        if has_skill:
            yield _load(root, Path(here))


def _linked_skill(root: Root, path: Path) -> Skill | None:
    """A link to a folder that holds a SKILL.md: listed, with where it leads, never read."""
    target = os.path.realpath(path)
    if not os.path.isfile(os.path.join(target, SKILL_FILE)):
        return None
    inside = within(target, root.real)
    where = "inside" if inside else "outside"
    problem = (
        f"{path} is a symbolic link to {target}, {where} the skills folder: skills are never "
        "read through a link"
    )
    category = _category(root, path)
    return Skill(path.name, "", category, path, root, problem=problem, link=target)


def _load(root: Root, directory: Path) -> Skill:
    """A skill from its folder: the head of its SKILL.md, parsed."""
    category = _category(root, directory)
    try:
        head, size = read_head(root, directory / SKILL_FILE, HEAD_CHARS * 4)
    except SkillError as exc:
        link = os.path.realpath(directory / SKILL_FILE)
        is_link = os.path.islink(directory / SKILL_FILE)
        return Skill(
            directory.name,
            "",
            category,
            directory,
            root,
            problem=str(exc),
            link=link if is_link else "",
        )
    meta, body = parse_frontmatter(head[:HEAD_CHARS])
    name = str(meta.get("name") or directory.name)[:MAX_NAME_LENGTH]
    description = describe(meta, body)
    problem = ""
    if size > MAX_READ_BYTES:
        problem = too_large(directory / SKILL_FILE, size, MAX_READ_BYTES)
    return Skill(
        name,
        description,
        category,
        directory,
        root,
        size,
        frontmatter=bool(meta) or head.lstrip("\ufeff").startswith("---"),
        meta=meta,
        problem=problem,
    )


def _category(root: Root, directory: Path) -> str | None:
    parts = PurePosixPath(os.path.relpath(directory, root.real)).parts
    return parts[0] if len(parts) >= 2 else None


def describe(meta: dict[str, Any], body: str) -> str:
    """The frontmatter's description, else the body's first line that is not a heading;
    cut at MAX_DESCRIPTION_LENGTH as Hermes cuts it."""
    text = str(meta.get("description") or "").strip()
    if not text:
        text = next(
            (ln.strip() for ln in body.strip().splitlines() if ln.strip() and ln[:1] != "#"), ""
        )
    if len(text) > MAX_DESCRIPTION_LENGTH:
        text = text[: MAX_DESCRIPTION_LENGTH - 3] + "..."
    return text


def lookup_problem(name: object) -> str:
    """Why `name` cannot name a skill ("" when it can): a relative path within a skills
    folder, no `..` (Hermes's rule)."""
    if not isinstance(name, str) or not name.strip():
        return "Skill name must be a non-empty string."
    candidate = name.strip()
    if candidate.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", candidate):
        return "Skill name must be a relative path within the skills directory."
    if ".." in re.split(r"[/\\]", candidate):
        return "Skill name cannot contain '..' path traversal components."
    if "\0" in candidate:
        return "Skill name cannot contain a NUL character."
    return ""


def find(listing: Listing, name: str) -> list[Skill]:
    """The skills `name` names, as skill_view finds them: a folder's path below a skills
    folder ("mlops/axolotl", or "mlops:axolotl"), a folder's name, or a frontmatter name.
    More than one is ambiguous (Hermes refuses to guess too)."""
    wanted = name.strip()
    as_path = wanted.replace(":", "/") if ":" in wanted else wanted
    out: list[Skill] = []
    for skill in listing.skills:
        named = skill.rel == as_path or skill.directory.name == wanted or skill.name == wanted
        if named and all(s.directory != skill.directory for s in out):
            out.append(skill)
    return out


def find_to_manage(listing: Listing, name: str) -> Skill | None:
    """The skill skill_manage changes: the first whose folder is called `name` (local
    folder first), as Hermes's skill manager finds it."""
    return next((s for s in listing.skills if s.directory.name == name), None)


# -- reading -------------------------------------------------------------------------------


def open_below(base: str, path: Path) -> int:
    """A read-only descriptor on the regular file `path`, which lies below the folder
    `base` (a real path), reached one folder at a time through no link; SkillError if a
    part is a link, the file is not a regular one, or it is not below `base`."""
    rel = os.path.relpath(path, base)
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("..") or os.path.isabs(rel):
        raise SkillError(f"{path} is not inside the skills folder {base}")
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(path, exc) from None
            os.close(fd)
            fd = inner
        try:
            file_fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            raise _refusal(path, exc) from None
    finally:
        os.close(fd)
    mode = os.fstat(file_fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(file_fd)
        raise SkillError(f"{path} is not a regular file: skills read regular files only")
    return file_fd


def _refusal(path: Path, exc: OSError) -> SkillError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _has_link(path):
        return SkillError(
            f"{path} is reached through a symbolic link: skills are never read through one"
        )
    if exc.errno == errno.ENOENT:
        return SkillError(f"{path} does not exist")
    return SkillError(f"cannot read {path}: {exc.strerror or exc}")


def _has_link(path: Path) -> bool:
    return any(os.path.islink(p) for p in (path, *path.parents))


def read_head(root: Root, path: Path, max_bytes: int) -> tuple[str, int]:
    """The first `max_bytes` of the file as text (bad bytes replaced), and its size."""
    fd = open_below(root.real, path)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, max_bytes)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace"), size


def read_bytes(root: Root, path: Path, max_bytes: int = MAX_READ_BYTES) -> bytes:
    """The whole file; SkillError, saying its size and the limit, when it is over
    `max_bytes` (a 5 MB SKILL.md costs a stat, not 5 MB of memory)."""
    fd = open_below(root.real, path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise SkillError(too_large(path, size, max_bytes))
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew while read
                raise SkillError(too_large(path, total, max_bytes))
        return b"".join(chunks)
    finally:
        os.close(fd)


def too_large(path: Path, size: int, limit: int) -> str:
    return (
        f"{path} is {size:,} bytes; skills are read up to {limit:,} bytes "
        f"({limit // (1 << 20)} MiB): split it into a shorter SKILL.md and files under "
        "references/"
    )


def files_of(skill: Skill, limit: int = 500) -> list[str]:
    """A skill's files but SKILL.md, relative to its folder, links left out."""
    out: list[str] = []
    base = str(skill.directory)
    for here, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(here, d)))
        for name in sorted(files):
            path = os.path.join(here, name)
            if os.path.islink(path) or (here == base and name == SKILL_FILE):
                continue
            out.append(os.path.relpath(path, base))
            if len(out) >= limit:
                return out
    return out


# -- frontmatter ---------------------------------------------------------------------------


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """A SKILL.md's YAML frontmatter (between `---` lines) and the text after it, as
    Hermes's `parse_frontmatter` reads them: a leading BOM is dropped, YAML that does not
    parse falls back to `key: value` lines, and no frontmatter is ({}, the whole text)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return {}, text
    end = _FENCE_END.search(text, 3)
    if end is None:
        return {}, text
    inner, body = text[3 : end.start()], text[end.end() :]
    try:
        parsed = yaml_file.parse(inner, SKILL_FILE)
    except yaml_file.YAMLFileError:
        fallback: dict[str, Any] = {}
        for line in inner.strip().splitlines():
            if ":" in line:
                key, value = line.split(":", 1)
                fallback[key.strip()] = value.strip()
        return fallback, body
    return (parsed if isinstance(parsed, dict) else {}), body


def frontmatter_problem(content: str) -> str:
    """Why `content` is not a SKILL.md skill_manage may write ("" when it is): Hermes's
    rules (frontmatter with name and description, a body after it) and its size limit."""
    if not content.strip():
        return "Content cannot be empty."
    if len(content) > MAX_SKILL_CONTENT_CHARS:
        return (
            f"SKILL.md content is {len(content):,} characters (limit: "
            f"{MAX_SKILL_CONTENT_CHARS:,}). Consider splitting into a smaller SKILL.md with "
            "supporting files in references/ or templates/."
        )
    text = content.lstrip("\ufeff")
    if not text.startswith("---"):
        return "SKILL.md must start with YAML frontmatter (---). See existing skills for format."
    end = _FENCE_END.search(text, 3)
    if end is None:
        return "SKILL.md frontmatter is not closed. Ensure you have a closing '---' line."
    try:
        parsed = yaml_file.parse(text[3 : end.start()], SKILL_FILE)
    except yaml_file.YAMLFileError as exc:
        return f"YAML frontmatter parse error: {exc}"
    if not isinstance(parsed, dict):
        return "Frontmatter must be a YAML mapping (key: value pairs)."
    if "name" not in parsed:
        return "Frontmatter must include 'name' field."
    if "description" not in parsed:
        return "Frontmatter must include 'description' field."
    if len(str(parsed["description"])) > MAX_DESCRIPTION_LENGTH:
        return f"Description exceeds {MAX_DESCRIPTION_LENGTH} characters."
    if not text[end.end() :].strip():
        return "SKILL.md must have content after the frontmatter (instructions, procedures, etc.)."
    return ""


def matches_platform(platforms: Any) -> bool:
    """A skill's `platforms` (macos, linux, windows) allows this one; none given: all."""
    if not platforms:
        return True
    listed = platforms if isinstance(platforms, list) else [platforms]
    for entry in listed:
        normalized = str(entry).lower().strip()
        if sys.platform.startswith(_PLATFORMS.get(normalized, normalized)):
            return True
    return False


def tags(value: Any) -> list[str]:
    """Tags or related skills: a YAML list, or `[a, b]` / `a, b` written as text."""
    if not value:
        return []
    if isinstance(value, list):
        return [str(t).strip() for t in value if t]
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [t.strip().strip("\"'") for t in text.split(",") if t.strip()]


# -- writing -------------------------------------------------------------------------------


def name_problem(name: object, what: str = "Skill name") -> str:
    """Why `name` cannot be a new skill's (or category's) folder ("" when it can)."""
    if not isinstance(name, str) or not name:
        return f"{what} is required."
    if len(name) > MAX_NAME_LENGTH:
        return f"{what} exceeds {MAX_NAME_LENGTH} characters."
    if not VALID_NAME.match(name):
        return (
            f"Invalid {what.lower()} '{name}'. Use lowercase letters, numbers, hyphens, dots, "
            "and underscores. Must start with a letter or digit."
        )
    return ""


def file_path_problem(file_path: object) -> str:
    """Why `file_path` is not a supporting file skill_manage may write or remove ("" when
    it is): under references/, templates/, scripts/ or assets/ (or SKILL.md), no `..`."""
    if not isinstance(file_path, str) or not file_path:
        return "file_path is required."
    parts = PurePosixPath(file_path).parts
    if ".." in parts or "\0" in file_path:
        return "Path traversal ('..') is not allowed."
    if file_path.startswith("/"):
        return "file_path must be relative to the skill's folder."
    if parts and parts[-1] == SKILL_FILE and len(parts) <= 2:
        return ""
    if not parts or parts[0] not in SUPPORT_DIRS:
        allowed = ", ".join(sorted(SUPPORT_DIRS))
        return f"File must be under one of: {allowed}. Got: '{file_path}'"
    if len(parts) < 2:
        return f"Provide a file path, not just a directory. Example: '{parts[0]}/myfile.md'"
    return ""


def supporting(skill: Skill, file_path: str) -> Path:
    """The path of a skill's file named by a valid `file_path` (`name/SKILL.md` is SKILL.md)."""
    parts = PurePosixPath(file_path).parts
    if parts[-1] == SKILL_FILE:
        return skill.skill_md
    return skill.directory.joinpath(*parts)


WRITE_ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")


def manage_target(args: dict[str, Any], config: Config | None = None) -> Path | None:
    """What a skill_manage call would write or remove: the new skill's folder, the skill's
    SKILL.md, its folder (delete) or its supporting file; None when that cannot be told
    (a name that is not valid, a skill not found), which the gate asks about."""
    action, name = args.get("action"), args.get("name")
    if action not in WRITE_ACTIONS or not isinstance(name, str):
        return None
    if action == "create":
        category = args.get("category") or None
        if name_problem(name) or (category is not None and name_problem(category, "Category")):
            return None
        local = roots(config)[0]
        return local.path / category / name if isinstance(category, str) else local.path / name
    skill = find_to_manage(discover(config), name)
    if skill is None:
        return None
    file_path = args.get("file_path")
    if action in ("write_file", "remove_file", "patch") and file_path:
        return None if file_path_problem(file_path) else supporting(skill, str(file_path))
    return skill.directory if action == "delete" else skill.skill_md


def local_root(config: Config | None = None) -> Root:
    return roots(config)[0]


def no_link_below(base: str, path: Path) -> str:
    """Why writing `path` would go through a link below the real folder `base` or leave it
    ("" when it would not): skill_manage writes only where it reads."""
    rel = os.path.relpath(path, base)
    if rel == "." or rel.startswith("..") or os.path.isabs(rel):
        return f"{path} is not inside the skills folder {base}"
    here = base
    for part in PurePosixPath(rel).parts:
        here = os.path.join(here, part)
        if os.path.islink(here):
            return f"{here} is a symbolic link: skills are never written through one"
    return ""
