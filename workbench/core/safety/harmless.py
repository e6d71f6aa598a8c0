"""Options that make a command harmless: help, version, dry runs and simulations.

Each is read as the program itself reads it. `--help` first, or among a program's leading
options, only prints help; later (after an operand) it may be an operand or an option's value,
so it counts only where the program's own parser takes it as an option anywhere (git, cobra
and Go CLIs). A dry run is per program: `rsync -n`, `make -n` and `git clean -n` simulate,
where `rm -n` or `sed -n` do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workbench.core.safety.words import Cmd

HELP = frozenset({"--help", "--version", "--usage", "-help", "-version", "-?"})
# Programs whose options are all flags: help among the leading options is an option.
_FLAG_ONLY = {
    "rm": "dfirRIv",
    "rmdir": "pv",
    "unlink": "",
    "srm": "dfirRv",
    "rimraf": "",
    "chmod": "cfvR",
    "chown": "cfvRhHLP",
}
# Programs whose parser takes help anywhere before `--` (git's parse-options, cobra, Go flag).
_HELP_ANYWHERE = frozenset(
    {
        "git",
        "kubectl",
        "oc",
        "helm",
        "gh",
        "glab",
        "terraform",
        "tofu",
        "pulumi",
        "doctl",
        "hcloud",
        "fly",
        "flyctl",
        "eksctl",
        "kind",
        "minikube",
        "k3d",
        "gcloud",
        "az",
        "etcdctl",
        "vault",
        "consul",
        "influx",
        "supabase",
        "docker",
        "podman",
        "nerdctl",
        "pip",
        "pip3",
        "npm",
        "pnpm",
        "brew",
        "apt-get",
        "apt",
        # framework and deployment CLIs (argparse, commander, yargs, oclif, Thor, cobra...)
        "rails",
        "rake",
        "prisma",
        "sequelize",
        "sequelize-cli",
        "knex",
        "typeorm",
        "alembic",
        "flask",
        "dotnet",
        "flyway",
        "liquibase",
        "diesel",
        "sqlx",
        "goose",
        "dbmate",
        "heroku",
        "vagrant",
        "vercel",
        "netlify",
        "django-admin",
        "manage.py",
    }
)
# ...and that also read -h as help there.
_DASH_H = _HELP_ANYWHERE - {"git", "npm", "pnpm", "apt-get", "apt"}
# Subcommands after which the rest of the words belong to another program.
_INNER = frozenset({"exec", "run", "debug", "attach", "ssh", "console", "alias", "api"})


def _help(cmd: Cmd) -> bool:
    args = cmd.args
    if args and args[0] in HELP:
        return True
    if cmd.name in _HELP_ANYWHERE:
        words = [a for a in args if a and not a.startswith("-")]
        if set(words[:3]) & _INNER:
            return False
        for arg in args:
            if arg == "--":
                return False
            if arg in HELP or (arg == "-h" and cmd.name in _DASH_H):
                return True
        return cmd.name == "git" and _git_help(cmd)
    flags = _FLAG_ONLY.get(cmd.name)
    for arg in args:
        if arg is None or not arg.startswith("-") or arg == "--":
            return False
        if arg in HELP:
            return True
        if flags is None:
            return False  # an option of a program that may take a value: stop looking
        if not (arg.startswith("--") or set(arg[1:]) <= set(flags)):
            return False
    return False


def _git_settings(cmd: Cmd) -> bool:
    """git options before the subcommand that change what git runs (-c, --exec-path...)."""
    for arg in cmd.args:
        if arg is None or not arg.startswith("-"):
            return False
        if arg in ("-c", "--config-env") or arg.startswith(("--exec-path", "--config-env=")):
            return True
    return False


def _git_help(cmd: Cmd) -> bool:
    """`git clean -h`: git's subcommands print their usage for -h."""
    words = [a for a in cmd.args if a is not None]
    sub = next((i for i, a in enumerate(words) if not a.startswith("-")), None)
    return sub is not None and "-h" in words[sub + 1 :]


def _git_dry_run(cmd: Cmd) -> bool:
    sub, at = cmd.sub(frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"}))
    inner = Cmd(sub, cmd.args[at + 1 :], cmd.nodes[at + 1 :], cmd.node)
    if sub in ("clean", "push", "rm", "mv", "prune", "add"):
        return inner.has("--dry-run", short="n") or (sub == "rm" and inner.has("--cached"))
    if sub in ("reflog", "worktree", "remote"):
        return inner.has("--dry-run", short="n")
    if sub == "filter-repo":
        return inner.has("--dry-run")
    return False


def _kube_dry_run(cmd: Cmd) -> bool:
    if set(a for a in cmd.args[:3] if a) & _INNER:
        return False  # `kubectl exec POD -- CMD --dry-run`: the option is the inner command's
    for arg in cmd.args:
        if arg == "--dry-run" or (arg and re.fullmatch(r"--dry-run=(client|server|true)", arg)):
            return True
    words = [a for a in cmd.args if a and not a.startswith("-")]
    return words[:1] in (["diff"], ["explain"], ["get"], ["describe"])


def _terraform_plan(cmd: Cmd) -> bool:
    words = [a for a in cmd.args if a and not a.startswith("-")]
    return words[:1] in (["plan"], ["validate"], ["show"], ["fmt"], ["output"], ["graph"])


def _powershell_what_if(cmd: Cmd) -> bool:
    return any(a and a.lower() in ("-whatif", "-whatif:$true") for a in cmd.args)


_DRY_RUN: dict[str, Callable[[Cmd], bool]] = {
    "rsync": lambda c: c.has("--dry-run", "--list-only", short="n"),
    "git": _git_dry_run,
    "kubectl": _kube_dry_run,
    "oc": _kube_dry_run,
    "helm": lambda c: any(
        a and re.fullmatch(r"--dry-run(=(client|server|true))?", a) for a in c.args
    ),
    "terraform": _terraform_plan,
    "tofu": _terraform_plan,
    "apt-get": lambda c: c.has(
        "--simulate", "--just-print", "--dry-run", "--recon", "--no-act", short="s"
    ),
    "apt": lambda c: c.has(
        "--simulate", "--just-print", "--dry-run", "--recon", "--no-act", short="s"
    ),
    "aptitude": lambda c: c.has("--simulate", short="s"),
    "dnf": lambda c: c.has("--assumeno"),
    "yum": lambda c: c.has("--assumeno"),
    "zypper": lambda c: c.has("--dry-run"),
    "apk": lambda c: c.has("--simulate", short="s"),
    "pacman": lambda c: c.has("--print", short="p"),
    "npm": lambda c: c.has("--dry-run"),
    "pnpm": lambda c: c.has("--dry-run"),
    "yarn": lambda c: c.has("--dry-run"),
    "poetry": lambda c: c.has("--dry-run"),
    "uv": lambda c: c.has("--dry-run"),
    "conda": lambda c: c.has("--dry-run", short="d"),
    "mamba": lambda c: c.has("--dry-run", short="d"),
    "brew": lambda c: c.has("--dry-run", short="n"),
    "rclone": lambda c: c.has("--dry-run", short="n"),
    "s3cmd": lambda c: c.has("--dry-run", short="n"),
    "pulumi": lambda c: (
        c.has("--preview-only")
        or [a for a in c.args if a and not a.startswith("-")][:1] == ["preview"]
    ),
    "mongorestore": lambda c: c.has("--dryRun"),
    "Remove-Item": _powershell_what_if,
    "remove-item": _powershell_what_if,
    "ri": _powershell_what_if,
}


def harmless(cmd: Cmd) -> bool:
    """The command only prints help or a version, or simulates what it would do."""
    if cmd.name == "git" and _git_settings(cmd):
        return False  # `git -c man.x.cmd=...`: a setting can make even help run a program
    if _help(cmd):
        return True
    check = _DRY_RUN.get(cmd.name)
    return bool(check and check(cmd))
