"""hermes-tui, and the Hermes agent it works with, run from the terminal they give the model.

Another hermes-tui runs tools under its own approvals (`call --yes` approves every one), so
running it asks; one that changes the settings (a toolset, a tool, a plugin, the memory
provider) writes hermes-tui's own state, which the model never does. Looking (a listing,
`doctor`, `approvals test`, help and versions) stays free.
"""

from __future__ import annotations

from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

# Subcommands that change settings, each with the words that do (the rest list).
_SETTINGS = {
    "tools": frozenset({"enable", "disable"}),
    "toolsets": frozenset({"enable", "disable"}),
    "plugins": frozenset({"enable", "disable", "memory"}),
}
# Subcommands that only read or show.
_LOOKS = frozenset({"sessions", "export", "mcp", "view", "doctor", "approvals"})
# Options of hermes-tui that take a value, before its subcommand.
_VALUES = frozenset({"--resume", "--model", "--base-url", "--api-key"})
# Hermes's own `config` words that write its config.yaml (shared with hermes-tui).
_HERMES_CONFIG_WRITES = frozenset({"set", "edit", "reset", "migrate", "unset"})


def hermes_tui(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--help", "--version", short="h") and not cmd.has("--yes"):
        return
    sub, at = cmd.sub(_VALUES)
    words = {a for a in cmd.args[at + 1 :] if a}
    if sub in _SETTINGS and words & _SETTINGS[sub]:
        reason = f"hermes-tui {sub} changes hermes-tui's own settings (config.yaml)"
        ctx.flag("app-state", reason, cmd.node, Severity.HARDLINE)
    elif sub in _SETTINGS or (sub in _LOOKS and not words & {"enable", "disable"}):
        return
    else:
        _another_agent(ctx, cmd, f"hermes-tui {sub}".rstrip())


def hermes(ctx: Context, cmd: Cmd) -> None:
    if cmd.has("--help", "--version", short="hV") and len(cmd.args) == 1:
        return
    sub, at = cmd.sub()
    if sub == "config" and {a for a in cmd.args[at + 1 :] if a} & _HERMES_CONFIG_WRITES:
        reason = "hermes config changes the settings hermes-tui shares (config.yaml)"
        ctx.flag("app-state", reason, cmd.node, Severity.HARDLINE)
        return
    _another_agent(ctx, cmd, f"hermes {sub}".rstrip())


def _another_agent(ctx: Context, cmd: Cmd, what: str) -> None:
    approved = cmd.has("--yes", "--yolo")
    reason = f"{what} runs tools under its own approvals, not this session's" + (
        " (and approves them all)" if approved else ""
    )
    severity = Severity.HIGH if approved else Severity.NORMAL
    ctx.flag("nested-agent", reason, cmd.node, severity)


RULES = {"hermes-tui": hermes_tui, "workbench": hermes_tui, "hermes": hermes}
