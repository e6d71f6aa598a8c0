"""What git's trees do not keep, kept beside each snapshot: the files' permission bits, and
which paths a partial checkpoint covers.

A tree holds a file as 100644 or 100755 only; a restore must bring back 0600, 0664, the
setuid, setgid and sticky bits too. So each checkpoint's commit has one parent: a commit of
the empty tree whose message is this data (JSON), reachable and pruned with the checkpoint
itself, and never read by the git commands that compare trees. Its dates are fixed, so the
same data is the same commit and a turn that changed no mode writes none.

`modes` holds every regular file's bits compactly: the most common bits of the
non-executable and of the executable files (`defaults`), then the files that differ.
`owners` keeps who owned a setuid or setgid file (a restore sets those bits only for a file
it gives the same owner). `scope`, for a restore's backup, lists the paths it covers: it
holds only the files the restore wrote or deleted, and restoring it touches no other.

A checkpoint from before this (no parent) has no data: its modes are git's alone.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from workbench.core.checkpoints.git import Git
from workbench.core.checkpoints.scan import Stamp

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MARKER = "hermes-tui checkpoint data"
FIXED_DATE = {"GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000"}
PLAIN, EXECUTABLE = "100644", "100755"
SPECIAL = stat.S_ISUID | stat.S_ISGID


@dataclass(frozen=True)
class Side:
    modes: dict[str, int] = field(default_factory=dict)  # path → its bits (stat.S_IMODE)
    owners: dict[str, tuple[int, int]] = field(default_factory=dict)  # setuid/setgid files
    scope: tuple[str, ...] | None = None  # a partial checkpoint's paths

    def mode(self, rel: str, git_mode: str) -> int | None:
        """The bits `rel` had, when known and consistent with the tree's mode (a mode whose
        owner-execute bit disagrees with the tree is no mode the file had: None)."""
        bits = self.modes.get(rel)
        if bits is None or git_mode not in (PLAIN, EXECUTABLE):
            return None
        return bits if bool(bits & stat.S_IXUSR) == (git_mode == EXECUTABLE) else None


def from_stamps(stamps: Mapping[str, Stamp], scope: tuple[str, ...] | None = None) -> Side:
    """The side data of the regular files among `stamps`."""
    modes, owners = {}, {}
    for rel, stamp in stamps.items():
        if stat.S_ISREG(stamp.mode):
            modes[rel] = stat.S_IMODE(stamp.mode)
            if stamp.mode & SPECIAL:
                owners[rel] = (stamp.uid, stamp.gid)
    return Side(modes, owners, scope)


def encode(side: Side) -> str:
    plain = Counter(m for m in side.modes.values() if not m & stat.S_IXUSR)
    executable = Counter(m for m in side.modes.values() if m & stat.S_IXUSR)
    defaults = {
        PLAIN: plain.most_common(1)[0][0] if plain else 0o644,
        EXECUTABLE: executable.most_common(1)[0][0] if executable else 0o755,
    }
    others: dict[str, list[str]] = {}
    for rel, bits in sorted(side.modes.items()):
        if bits != defaults[EXECUTABLE if bits & stat.S_IXUSR else PLAIN]:
            others.setdefault(f"{bits:o}", []).append(rel)
    data = {
        "v": 1,
        "defaults": {k: f"{v:o}" for k, v in defaults.items()},
        "modes": others,
        "owners": {rel: list(ids) for rel, ids in sorted(side.owners.items())},
        "scope": list(side.scope) if side.scope is not None else None,
    }
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"))


def decode(text: str, held: Mapping[str, str]) -> Side | None:
    """The data back, for the files `held` (path → tree mode); None when it cannot be read."""
    try:
        data = json.loads(text)
        defaults = {k: int(v, 8) for k, v in data["defaults"].items()}
        others = {rel: int(bits, 8) for bits, rels in data["modes"].items() for rel in rels}
        owners = {rel: (int(ids[0]), int(ids[1])) for rel, ids in data["owners"].items()}
        scope = data["scope"]
        if scope is not None and not all(isinstance(p, str) for p in scope):
            return None
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None
    modes = {}
    for rel, git_mode in held.items():
        if git_mode in defaults:
            modes[rel] = others.get(rel, defaults[git_mode])
    return Side(modes, owners, tuple(scope) if scope is not None else None)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def write(git: Git, text: str) -> str:
    """The commit holding `text` (the same text, the same commit)."""
    message = f"{MARKER}\n\n{text}\n".encode()
    return git.text("commit-tree", EMPTY_TREE, stdin=message, env=FIXED_DATE).strip()


def read_text(git: Git, commit: str) -> str | None:
    """The data of checkpoint `commit` as written, or None for one without (older ones)."""
    done = git.run("cat-file", "--batch", stdin=f"{commit}^\n".encode())
    header, _, body = done.stdout.partition(b"\n")
    if header.endswith(b" missing") or b" commit " not in header:
        return None
    _, _, message = body.decode("utf-8", "surrogateescape").partition("\n\n")
    title, _, text = message.partition("\n\n")
    return text.strip() if title.strip() == MARKER else None
