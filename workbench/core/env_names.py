"""Which of our environment variables a child process may get: an allowlist.

What a shell needs to find programs, speak the user's language and draw on the terminal;
everything else (API keys, tokens, anything unknown) is held back (backends/environment.py)
and hidden from our own /proc (own_process.py). A leaf module: the workbench's first frame
must not wait for what importing the backends brings.
"""

from __future__ import annotations

# Names a child gets as they are. PWD is left out on purpose: bash sets it from the real
# working directory, and ours would be wrong for a command run elsewhere.
ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "TZ",
        "TMPDIR",
        "EDITOR",
        "VISUAL",
        "PAGER",
    }
)
ALLOWED_PREFIXES = ("LC_", "XDG_")


def allowed(name: str) -> bool:
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)
