"""Hosting, cloud and cluster CLIs that delete resources, and HTTP clients sending DELETE.

A CLI's command path (`aws s3 rb`, `gcloud compute instances delete`, `gh repo delete`) is
read up to its verb; a resource that merely has a verb in its name (`job/delete-old`) or a
filter value is not a verb. Dry runs (`--dry-run`, `--dryrun`) and `help` run nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workbench.core.safety.verdict import Severity
from workbench.core.safety.words import Cmd, Context

Rule = Callable[[Context, Cmd], None]
RULES: dict[str, Rule] = {}

_DELETE_VERBS = frozenset(
    {"delete", "destroy", "remove", "rm", "rb", "purge", "uninstall", "del", "un", "undefine"}
)
_VERB_PREFIXES = ("delete-", "terminate-", "remove-", "deregister-", "purge-", "destroy-")
# kubectl's global options that take a value (OpenShift's `oc` shares them)
_KUBE_OPTIONS = frozenset(
    [
        "-n",
        "--namespace",
        "--context",
        "--kubeconfig",
        "--cluster",
        "--user",
        "-s",
        "--server",
        "--token",
        "-o",
        "-l",
        "--selector",
        "-f",
        "--filename",
        "-c",
        "--container",
    ]
)
# CLI -> (how many words of the command path to read, options that take a value, extra verbs)
_CLIS: dict[str, tuple[int, frozenset[str], frozenset[str]]] = {
    "kubectl": (2, _KUBE_OPTIONS, frozenset({"drain"})),
    "oc": (2, _KUBE_OPTIONS, frozenset({"drain"})),  # OpenShift's client takes kubectl's options
    "helm": (1, frozenset(["-n", "--namespace", "--kube-context", "--kubeconfig"]), frozenset()),
    "aws": (
        2,
        frozenset(
            [
                "--region",
                "--profile",
                "--output",
                "--endpoint-url",
                "--query",
                "--color",
                "--ca-bundle",
                "--cli-read-timeout",
                "--cli-connect-timeout",
            ]
        ),
        frozenset({"mv"}),
    ),
    "gcloud": (
        5,
        frozenset(
            [
                "--project",
                "--account",
                "--configuration",
                "--format",
                "--verbosity",
                "--zone",
                "--region",
            ]
        ),
        frozenset(),
    ),
    "az": (
        4,
        frozenset(
            [
                "-g",
                "--resource-group",
                "-n",
                "--name",
                "--subscription",
                "-o",
                "--output",
                "--query",
            ]
        ),
        frozenset(),
    ),
    "gsutil": (1, frozenset({"-o", "-h", "-u"}), frozenset({"mv"})),
    "doctl": (
        4,
        frozenset({"-t", "--access-token", "-c", "--config", "--context", "-o", "--output"}),
        frozenset(),
    ),
    "gh": (2, frozenset({"-R", "--repo"}), frozenset()),
    "glab": (2, frozenset({"-R", "--repo"}), frozenset()),
    "fly": (2, frozenset({"-a", "--app", "-c", "--config"}), frozenset()),
    "flyctl": (2, frozenset({"-a", "--app", "-c", "--config"}), frozenset()),
    "vercel": (1, frozenset({"--token", "--scope", "-S", "-t"}), frozenset()),
    "netlify": (1, frozenset(), frozenset()),
    "eksctl": (1, frozenset(), frozenset()),
    "kind": (1, frozenset(), frozenset()),
    "minikube": (1, frozenset({"-p", "--profile"}), frozenset()),
    "k3d": (2, frozenset(), frozenset()),
    "vagrant": (1, frozenset(), frozenset()),
    "virsh": (
        1,
        frozenset({"-c", "--connect"}),
        frozenset({"vol-delete", "pool-delete", "snapshot-delete"}),
    ),
    "lxc": (1, frozenset(), frozenset()),
    "incus": (1, frozenset(), frozenset()),
    "multipass": (1, frozenset(), frozenset()),
    "docker-machine": (1, frozenset(), frozenset()),
    "hcloud": (2, frozenset({"--context", "-o", "--output"}), frozenset()),
    "openstack": (4, frozenset({"--os-cloud", "--os-project-name", "-f", "--format"}), frozenset()),
    "linode-cli": (2, frozenset(), frozenset()),
    "scw": (3, frozenset(), frozenset()),
    "oci": (4, frozenset({"--profile", "--region"}), frozenset()),
    "s3cmd": (1, frozenset({"-c", "--config"}), frozenset()),
    "mc": (1, frozenset(), frozenset()),
    "pulumi": (2, frozenset({"-s", "--stack", "-C", "--cwd"}), frozenset()),
    "heroku": (1, frozenset({"-a", "--app", "-r", "--remote"}), frozenset()),
    "railway": (1, frozenset(), frozenset({"down"})),
    "firebase": (1, frozenset({"--project", "-P"}), frozenset()),
    "wrangler": (3, frozenset(), frozenset()),
}
_DRY_RUN = re.compile(r"^--(?:dry-?run)(?:=(?!none$).*)?$")


def _path(cmd: Cmd, with_values: frozenset[str], depth: int) -> list[str]:
    words: list[str] = []
    skip = False
    for arg in cmd.args:
        if skip:
            skip = False
            continue
        if arg is None:
            break
        if arg.startswith("-"):
            skip = arg in with_values
            continue
        words.append(arg)
        if len(words) >= depth:
            break
    return words


def _is_verb(word: str, extra: frozenset[str]) -> bool:
    word = word.lower()
    last = word.rsplit(":", 1)[-1]  # heroku apps:destroy, netlify sites:delete
    return (
        word in _DELETE_VERBS
        or last in _DELETE_VERBS
        or word in extra
        or word.startswith(_VERB_PREFIXES)
        or (":" in word and last in ("reset", "killall"))  # heroku pg:reset
    )


def _inner(ctx: Context, cmd: Cmd, path: list[str]) -> None:
    """`kubectl exec POD -- CMD`, `heroku run CMD`: the command runs there; judge it."""
    if "--" in cmd.args:
        inner = cmd.rest(cmd.args.index("--") + 1)
    else:
        skip = 2 if cmd.name in ("kubectl", "oc") else 1  # the subcommand, then the pod
        seen, inner = 0, None
        for i, arg in enumerate(cmd.args):
            if arg is not None and arg.startswith("-"):
                continue
            seen += 1
            if seen > skip:
                inner = cmd.rest(i)
                break
    if inner is not None:
        ctx.judge(inner)


def _cloud(ctx: Context, cmd: Cmd) -> None:
    depth, with_values, extra = _CLIS[cmd.name]
    if cmd.name == "gh":
        http(ctx, cmd)
    first = _path(cmd, with_values, 1)
    if (cmd.name in ("kubectl", "oc") and first == ["exec"]) or (
        cmd.name == "heroku" and first == ["run"]
    ):
        _inner(ctx, cmd, first)
        return
    if any(a and _DRY_RUN.match(a) for a in cmd.args) or "--dryrun" in cmd.args:
        return
    path = _path(cmd, with_values, depth)
    if cmd.name == "aws" and cmd.args[-1:] == ["help"]:
        return
    verb = next((w for w in path if _is_verb(w, extra)), None)
    if verb is None:
        verb = _special(cmd, path)
    if verb:
        ctx.flag(
            "infrastructure",
            f"{cmd.name} {' '.join(path[: path.index(verb) + 1]) if verb in path else verb}: "
            "deletes or destroys resources",
            cmd.node,
            Severity.HIGH,
        )


def _special(cmd: Cmd, path: list[str]) -> str | None:
    """Destructive forms that are not a delete verb: sync --delete, scale to zero, prune."""
    if (
        cmd.name in ("aws", "gsutil", "s3cmd", "mc")
        and any(a in ("--delete", "-d", "--delete-removed", "--remove") for a in cmd.args)
        and ("sync" in path or "rsync" in path or "mirror" in path)
    ):
        return "sync --delete"
    if (
        cmd.name in ("kubectl", "oc")
        and path[:1] == ["scale"]
        and any(a in ("--replicas=0",) for a in cmd.args)
    ):
        return "scale --replicas=0"
    if cmd.name in ("kubectl", "oc") and path[:1] == ["apply"] and "--prune" in cmd.args:
        return "apply --prune"
    if cmd.name in ("kubectl", "oc") and path[:1] == ["replace"] and cmd.has("--force"):
        return "replace --force"
    return None


for _name in _CLIS:
    RULES[_name] = _cloud


def _terraform(ctx: Context, cmd: Cmd) -> None:
    path = _path(cmd, frozenset({"-chdir"}), 2)
    sub = path[0] if path else ""
    if sub == "destroy" or (sub == "apply" and "-destroy" in cmd.args):
        ctx.flag(
            "infrastructure", f"{cmd.name} {sub}: destroys infrastructure", cmd.node, Severity.HIGH
        )
    elif path[:2] in (["state", "rm"], ["workspace", "delete"]):
        ctx.flag(
            "infrastructure", f"{cmd.name} {' '.join(path)}: deletes state", cmd.node, Severity.HIGH
        )


RULES["terraform"] = RULES["tofu"] = _terraform


# -- HTTP -----------------------------------------------------------------------------------

_DESTRUCTIVE_METHODS = frozenset({"DELETE", "PURGE"})


# A method known only at run time: `curl -X "$(cat m)"`, `--request "$M"`.
_COMPUTED = "?"
_METHOD_OPTIONS = ("--request=", "--method=")


def _http_method(cmd: Cmd) -> str | None:
    """The request's method as written; `_COMPUTED` when only run time knows it."""
    args = cmd.args
    for i, arg in enumerate(args):
        if arg is None:
            if _names_a_method(cmd, i):
                return (
                    _COMPUTED  # `-X$(cat m)`, `--method=$M`: the option is there, its value is not
                )
            continue
        if cmd.name in ("curl", "gh", "curlie") and arg in ("-X", "--request", "--method"):
            return _value(args, i + 1)
        if cmd.name in ("curl", "curlie") and re.fullmatch(r"-[a-zA-Z]*X.*", arg):
            value = arg.split("X", 1)[1]  # -XDELETE, -sX DELETE, -sXDELETE
            return value or _value(args, i + 1)
        if arg.startswith(_METHOD_OPTIONS):
            return arg.split("=", 1)[1]
        if cmd.name == "wget" and arg == "--method":
            return _value(args, i + 1)
        if cmd.name.lower().startswith("invoke-") and arg.lower() == "-method":
            return _value(args, i + 1)
    if cmd.name in ("http", "https", "xh", "xhs", "curlie"):
        return _httpie_method(args)
    return None


def _value(args: list[str | None], i: int) -> str | None:
    """An option's value: `_COMPUTED` when a variable or substitution gives it."""
    if i >= len(args):
        return None
    return args[i] if args[i] is not None else _COMPUTED


def _names_a_method(cmd: Cmd, i: int) -> bool:
    """Whether a word known only at run time is written as a method option (`-X$(...)`)."""
    text = cmd.nodes[i].text.decode(errors="replace").lstrip("\"'") if i < len(cmd.nodes) else ""
    if text.startswith(_METHOD_OPTIONS):
        return True
    return cmd.name in ("curl", "curlie") and re.match(r"-[a-zA-Z]*X", text) is not None


def _httpie_method(args: list[str | None]) -> str | None:
    """httpie's METHOD comes before the URL; an option's value (`--auth u:p`) may come first.
    A word computed at run time followed by another may be the method (`http $(echo
    DELETE) URL`); one alone is the URL (`http "$URL"`)."""
    operands = [a for a in args if a is None or not a.startswith("-")]
    methods = _DESTRUCTIVE_METHODS | {"GET", "POST", "PUT", "PATCH", "HEAD", "OPTIONS"}
    for a in operands[:3]:
        if a is None:
            return _COMPUTED if len(operands) > 1 else None
        if a.upper() in methods:
            return a
    return None


def http(ctx: Context, cmd: Cmd) -> None:
    """An HTTP request whose method deletes what it names, or is known only at run time."""
    if cmd.name == "gh" and _path(cmd, frozenset({"-R", "--repo"}), 1) != ["api"]:
        return
    method = _http_method(cmd)
    if method == _COMPUTED:
        ctx.flag(
            "http-delete",
            f"{cmd.name} sends an HTTP request whose method is computed at run time",
            cmd.node,
            Severity.HIGH,
            opaque=True,
        )
    elif method is not None and method.upper() in _DESTRUCTIVE_METHODS:
        ctx.flag(
            "http-delete",
            f"{cmd.name} sends an HTTP {method.upper()} request",
            cmd.node,
            Severity.HIGH,
        )


for _name in (
    "http",
    "https",
    "xh",
    "xhs",
    "curlie",
    "Invoke-RestMethod",
    "Invoke-WebRequest",
    "irm",
    "iwr",
):
    RULES[_name] = http
