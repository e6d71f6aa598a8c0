"""What an archive would write when it is unpacked: its members, read from the file.

Unpacking into the project is free, but an archive can hold `.git/hooks/post-checkout`,
`.hermes/approvals.yaml`, `../../.bashrc` or a link out of the folder. When the archive is
there to read (tar in any compression Python reads, zip), each member is judged where it
would land; one that cannot be read is judged as before, by its folder only.
"""

from __future__ import annotations

import posixpath
import tarfile
import zipfile

MAX_MEMBERS = 20_000


def members(path: str) -> list[tuple[str, str]] | None:
    """(name, link target or "") of each member, or None when the file cannot be read."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return [(info.filename, "") for info in archive.infolist()[:MAX_MEMBERS]]
        with tarfile.open(path, "r:*") as archive:
            found = []
            for info in archive:
                link = info.linkname if info.islnk() else ""  # from the archive's top
                if info.issym():  # from the link's own folder, unless it is absolute
                    link = posixpath.join(posixpath.dirname(info.name), info.linkname)
                found.append((info.name, link))
                if len(found) >= MAX_MEMBERS:
                    break
            return found
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError, ValueError):
        return None


def escapes(name: str) -> bool:
    """A member or link target that lands outside the folder it is unpacked into."""
    normal = posixpath.normpath(name)
    return name.startswith("/") or normal == ".." or normal.startswith("../")
