"""Environment variables that name a program to run: `GIT_EXTERNAL_DIFF='rm -rf x' git diff`.

A variable set before a command (`X=... cmd`, `env X=... cmd`, `export X=...`) can make a
harmless-looking program run a command line (git's editor, pager, ssh and diff programs),
a file at a shell's start (`BASH_ENV`), or a library in every program (`LD_PRELOAD`). Each
is judged for what it makes run; what cannot be read asks.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.core.safety.scripts import GIT_PROGRAM_KEYS
from workbench.core.safety.words import Context

Node = Any

# Command lines a program hands to a shell (git runs `sh -c "$GIT_EDITOR \"$@\""`).
COMMAND_VARIABLES = frozenset(
    {
        "GIT_EXTERNAL_DIFF",
        "GIT_PAGER",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "SUDO_EDITOR",
        "SYSTEMD_EDITOR",
        "FCEDIT",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "PROMPT_COMMAND",
        # the programs build tools run (`CC='rm -rf x' make`)
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "AS",
        "FC",
        "NM",
        "RANLIB",
        "STRIP",
        "OBJCOPY",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTDOC",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC",
    }
)
# Files a shell runs when it starts (bash's BASH_ENV, sh's ENV).
_STARTUP_FILES = frozenset({"BASH_ENV", "ENV"})
# Where git reads its settings from (a core.fsmonitor or an alias there runs a program).
_GIT_FILES = frozenset({"GIT_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"})
# Libraries the dynamic loader puts into every program the command starts.
_LOADED = frozenset({"LD_PRELOAD", "LD_AUDIT"})


def judge_setting(ctx: Context, node: Node, name: str, value: str | None) -> None:
    """What setting `name` to `value` makes the programs started after it run."""
    if name == "PATH":
        ctx.search_path(value)
    elif name in COMMAND_VARIABLES:
        if value:
            ctx.shell_payload(node, value)
        elif value is None:
            ctx.flag("dynamic-command", f"{name} names a program computed at run time", node)
    elif name in _STARTUP_FILES and value:
        ran, contextual = ctx.ran_written_file(value)
        if ran:
            ctx.flag(
                "run-written",
                f"{name} makes the shell run {value}, which was written earlier",
                node,
                contextual=contextual,
            )
    elif name in _GIT_FILES and value:
        settings = value.rstrip("/") + "/config" if name == "GIT_DIR" else value
        ran, contextual = ctx.ran_written_file(settings)
        if ran:
            reason = f"{name} makes git read {settings}, which was written earlier"
            ctx.flag("run-written", reason, node, contextual=contextual)
    elif name in _LOADED and value != "":
        reason = f"{name} loads a library into every program it starts"
        ctx.flag("inline-code", reason, node, opaque=True)  # its code is not read
    elif re.fullmatch(r"CARGO_TARGET_\w+_RUNNER", name) and value:
        ctx.shell_payload(node, value)
    elif name == "GOFLAGS" and (value is None or "exec" in value):
        reason = "GOFLAGS gives go a program to run (-exec, -toolexec)"
        ctx.flag("inline-code", reason, node, opaque=True)
    elif name == "GIT_CONFIG_PARAMETERS" and value != "":
        ctx.flag("git-config", "GIT_CONFIG_PARAMETERS gives git settings", node)
    elif re.fullmatch(r"GIT_CONFIG_KEY_\d+", name):
        key = (value or "").lower()
        if value is None or key.startswith("alias.") or GIT_PROGRAM_KEYS.match(key):
            ctx.flag("git-config", f"{name}: sets a program for git to run ({value})", node)
