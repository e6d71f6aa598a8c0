"""Whether a file tool's call leaves the terminal's sandbox (issue 22).

The file tools run in hermes-tui itself, not in bubblewrap; with the terminal sandboxed,
`--yes` must not let them write where the sandbox would refuse a command. (What it hides
from reads is what secrets.py calls secret, which the gate asks a person about whatever
the sandbox: `places.read_risk`.)
"""

from __future__ import annotations

from workbench.core.backends import Backend
from workbench.core.backends.sandbox import SandboxBackend, inside, writable_roots
from workbench.core.safety.places import resolved
from workbench.core.tools.paths import resolve_path

FILE_WRITERS = ("write_file", "patch")


def leaves_sandbox(backend: Backend | None, name: str, path: object, cwd: str) -> str:
    """Why a file tool's call writes what the sandbox would not let a command write ("" when
    it does not): the file tools run in hermes-tui itself, so with the terminal sandboxed a
    write outside the places a command may write leaves it. Judged on the real path (links
    and /proc/self/root followed). Such a call is never approved by --yes or
    approvals.mode: off; a person may allow it."""
    if not isinstance(backend, SandboxBackend) or not backend.sandboxed:
        return ""
    if name not in FILE_WRITERS or not isinstance(path, str):
        return ""
    real = resolved(resolve_path(path, cwd))
    hidden = backend.hidden()
    real_cwd = resolved(cwd)
    writable = [real_cwd, *writable_roots(backend.write_roots, real_cwd, hidden)]
    if inside(real, hidden) is None and inside(real, writable) is not None:
        return ""
    return (
        f"{name} writes {real}, outside what the sandbox lets a command write "
        f"({', '.join(writable)})"
    )
