"""The walk over a parsed command: every simple command, redirect, pipeline and payload.

Commands are judged wherever they appear: in lists and pipelines, subshells, `$(...)`,
backticks, process substitutions, function bodies, loops, `bash -c`/`eval`/`ssh` payloads,
`find -exec` and `xargs`. `cd` is followed within a compound command, so `cd ~ && rm -rf .`
is seen to delete the home directory.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any

from workbench.core.safety.commands import (
    DOWNLOADERS,
    RULES,
    SHELLS,
    STDIN_INTERPRETERS,
    Cmd,
    unwrap,
)
from workbench.core.safety.inline_code import (
    DB_CLIENTS,
    destructive_code,
    destructive_sql,
    language_of,
)
from workbench.core.safety.parser import WORD_TYPES, Source, error_nodes, home_dir, word_value
from workbench.core.safety.verdict import Finding, Severity

Node = Any
MAX_DEPTH = 6

SYSTEM_DIRS = frozenset(
    [
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/snap",
        "/srv",
        "/sys",
        "/usr",
        "/var",
    ]
)
SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_SENSITIVE_HOME = (
    ".ssh/",
    ".gnupg/",
    ".aws/",
    ".kube/",
    ".docker/",
    ".azure/",
    ".config/gh/",
    ".config/gcloud/",
    ".config/autostart/",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".cshrc",
    ".tcshrc",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".gitconfig",
    ".hermes/config.yaml",
    ".hermes/.env",
    ".bash_history",
    ".zsh_history",
    ".local/share/",
    ".config/systemd/",
)


class Analyzer:
    def __init__(
        self,
        text: str,
        *,
        cwd: str | None,
        recent_writes: frozenset[str],
        depth: int = 0,
        base: int | None = 0,
        fallback: tuple[int, int] | None = None,
    ) -> None:
        self.text = text
        self.cwd = cwd
        self.recent_writes = recent_writes
        self.depth = depth
        self.base = base  # where this text starts in the outermost command, if known exactly
        self.fallback = fallback  # otherwise every finding points at the whole payload
        self.findings: list[Finding] = []
        self.written: set[str] = set()
        self.source: Source | None = None

    # -- entry --------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        self.source = Source.parse(self.text)
        root = self.source.root
        for error in error_nodes(root) if root.has_error else ():
            span = self.source.span(error)
            if span[0] == span[1]:
                span = (max(0, span[0] - 1), min(len(self.text), span[0] + 1))
            self._add(
                Finding(
                    "unparsable",
                    "the command could not be parsed, so it cannot be checked",
                    self._map(span),
                )
            )
        self.visit(root)
        return self.findings

    # -- context for the rules ----------------------------------------------------------

    def flag(
        self,
        rule: str,
        reason: str,
        node: Node,
        severity: Severity = Severity.NORMAL,
        writes: tuple[str, ...] = (),
        contextual: bool = False,
    ) -> None:
        span = self._map(self.source.span(node)) if self.source else (0, len(self.text))
        self._add(Finding(rule, reason, span, severity, writes, contextual))

    def _add(self, finding: Finding) -> None:
        if finding not in self.findings:
            self.findings.append(finding)

    def _map(self, span: tuple[int, int]) -> tuple[int, int]:
        if self.base is None:
            return self.fallback or span
        return span[0] + self.base, span[1] + self.base

    def resolve(self, value: str | None) -> str | None:
        if value is None:
            return None
        if value == "~" or value.startswith("~/"):
            value = home_dir() + value[1:]
        elif value.startswith("~"):
            return value  # another user's home: kept as written
        if not value.startswith("/"):
            if self.cwd is None:
                return None
            value = posixpath.join(self.cwd, value)
        return posixpath.normpath(value)

    def classify(self, value: str | None, recursive: bool) -> tuple[Severity, str]:
        """How precious a delete/overwrite target is: (severity, label for the reason)."""
        if value is None:
            return Severity.NORMAL, "a path computed at run time"
        if re.fullmatch(r"~[A-Za-z_][\w.-]*(/\*?)?", value):
            return Severity.HARDLINE, f"the home directory of user {value.split('/')[0][1:]}"
        globbed = value.rstrip("/").endswith("*")
        if globbed:  # `dir/*` empties dir; a bare `*` empties the current directory
            value = value.rstrip("/")[:-1] or "."
        path = self.resolve(value)
        if path is None:
            return Severity.NORMAL, ""
        path = path.rstrip("/") or "/"
        wide = recursive or globbed
        home = home_dir().rstrip("/")
        if path == "/":
            return (Severity.HARDLINE if wide else Severity.HIGH), "the whole filesystem"
        if path == home:
            return (Severity.HARDLINE if wide else Severity.HIGH), "your home directory"
        if path in SYSTEM_DIRS:
            return (Severity.HARDLINE if wide else Severity.HIGH), f"the system directory {path}"
        parent = posixpath.dirname(path)
        if parent == "/home":
            return (Severity.HARDLINE if wide else Severity.HIGH), f"the home directory {path}"
        if parent in SYSTEM_DIRS or self._sensitive_path(path):
            return Severity.HIGH, f"{path} is a system or private path"
        return Severity.NORMAL, ""

    def sensitive(self, value: str | None) -> bool:
        path = self.resolve(value) if value else None
        return bool(path) and self._sensitive_path(path)

    @staticmethod
    def _sensitive_path(path: str) -> bool:
        return sensitive_path(path)

    def wrote(self, value: str | None) -> None:
        path = self.resolve(value) if value else None
        if value:
            self.written.add(path or value)

    def ran_written_file(self, value: str | None) -> tuple[bool, bool]:
        if not value:
            return False, False
        path = self.resolve(value) or value
        if path in self.written or value in self.written:
            return True, False
        return path in self.recent_writes or value in self.recent_writes, True

    def set_cwd(self, value: str | None) -> None:
        if value is None or value == "-":
            self.cwd = None
        else:
            self.cwd = self.resolve(value)

    def shell_payload(self, node: Node, value: str | None) -> None:
        if value is None:
            self.flag("dynamic-command", "runs shell code computed at run time", node)
            return
        if self.depth >= MAX_DEPTH:
            self.flag("unparsable", "shell code nested too deeply to check", node)
            return
        start, end = self.source.span(node)
        raw = self.text[start:end]
        base = None
        if raw == value:
            base = start
        elif len(raw) >= 2 and raw[1:-1] == value and raw[0] in "'\"":
            base = start + 1
        if base is not None and self.base is not None:
            base += self.base
        inner = Analyzer(
            value,
            cwd=self.cwd,
            recent_writes=self.recent_writes,
            depth=self.depth + 1,
            base=base,
            fallback=self._map((start, end)),
        )
        inner.written = self.written
        for finding in inner.run():
            self._add(finding)

    # -- the walk -----------------------------------------------------------------------

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind == "pipeline":
            self.pipeline(self._pipeline_commands(node), node)
        elif kind == "redirected_statement":
            self.heredoc(node)
        elif kind == "function_definition":
            self.function(node)
        for child in node.children:
            self.visit(child)

    def to_cmd(self, node: Node) -> Cmd | None:
        name_node = next((c for c in node.children if c.type == "command_name"), None)
        if name_node is None:
            return None
        parts = [name_node.children[0] if name_node.children else name_node]
        parts += [c for c in node.children if c.type in WORD_TYPES]
        values = [word_value(p) for p in parts]
        name = values[0]
        if name is None:
            self.flag(
                "dynamic-command",
                "the program to run is computed at run time "
                "(a variable or substitution in command position)",
                name_node,
            )
            return None
        return Cmd(name.rsplit("/", 1)[-1], values[1:], parts[1:], node)

    def command(self, node: Node) -> None:
        cmd = self.to_cmd(node)
        if cmd is not None:
            self.judge(cmd)

    def judge(self, cmd: Cmd) -> None:
        inner = unwrap(self, cmd)
        if inner is None:
            return
        if inner.name in ("cd", "pushd"):
            self.set_cwd(inner.operands[0] if inner.operands else "~")
            return
        rule = RULES.get(inner.name) or (RULES["mkfs"] if inner.name.startswith("mkfs.") else None)
        if rule is not None:
            rule(self, inner)
        if inner.name == "find":
            self._find_exec(inner)

    def _find_exec(self, cmd: Cmd) -> None:
        args = cmd.args
        for i, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
                found = [None if a == "{}" else a for a in args[i + 1 : end]]  # each file found
                sub = Cmd("", found, cmd.nodes[i + 1 : end], cmd.node).rest(0)
                if sub is None and i + 1 < len(args):
                    self.flag(
                        "dynamic-command", "find runs a program computed at run time", cmd.node
                    )
                elif sub is not None:
                    self.judge(sub)

    def redirect(self, node: Node) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        targets = [c for c in node.children if c.is_named and c.type != "file_descriptor"]
        if not targets or not operator.startswith((">", "&>")):
            return
        target = targets[0]  # tree-sitter may attach a following `0>&1` to the same node
        if target.type == "number" and operator in (">&", "<&"):
            return  # 2>&1: duplicating a stream writes no file
        value = word_value(target)
        if value is not None and (value in SAFE_SINKS or value.startswith("/dev/fd/")):
            return
        if value is not None and value.startswith(("/dev/tcp/", "/dev/udp/")):
            self.flag(
                "reverse-shell", f"connects a stream to the network ({value})", node, Severity.HIGH
            )
            return
        from workbench.core.safety.commands import _raw_disk

        if _raw_disk(value):
            self.flag(
                "disk", f"writes straight onto the disk {value}", node, Severity.HARDLINE, (value,)
            )
            return
        append = operator in (">>", "&>>")
        if append and not self.sensitive(value):
            return
        self.wrote(value)
        severity = Severity.HIGH if self.sensitive(value) else Severity.NORMAL
        label = value if value is not None else "a path computed at run time"
        verb = "appends to" if append else "overwrites"
        self.flag(
            "overwrite", f"redirection {verb} {label}", node, severity, (value,) if value else ()
        )

    def _pipeline_commands(self, node: Node) -> list[Node]:
        out = []
        for child in node.children:
            if child.type == "command":
                out.append(child)
            elif child.type == "redirected_statement":
                out.extend(c for c in child.children if c.type == "command")
        return out

    def pipeline(self, commands: list[Node], node: Node) -> None:
        cmds = [self.to_cmd(c) for c in commands]
        for position, cmd in enumerate(cmds):
            if position == 0 or cmd is None:
                continue
            inner = unwrap(_Quiet(self), cmd)
            if inner is None:
                continue
            producers = {c.name for c in cmds[:position] if c is not None}
            if inner.name in DB_CLIENTS:
                data = " ".join(a for c in cmds[:position] if c for a in c.args if a)
                statement = destructive_sql(data)
                if statement:
                    self.flag(
                        "database", f"pipes {statement} into {inner.name}", node, Severity.HIGH
                    )
            if inner.name in STDIN_INTERPRETERS and self._reads_stdin(inner):
                source = "downloaded code" if producers & DOWNLOADERS else "piped input"
                self.flag(
                    "remote-code",
                    f"runs {source} with {inner.name}",
                    node,
                    Severity.HIGH if producers & DOWNLOADERS else Severity.NORMAL,
                )

    @staticmethod
    def _reads_stdin(cmd: Cmd) -> bool:
        if cmd.name in ("source", "."):
            return any(a in ("/dev/stdin", "-") for a in cmd.args)
        if any(a and re.fullmatch(r"-[a-zA-Z]*[ce][a-zA-Z]*", a) for a in cmd.args):
            return False  # -c/-e code comes from the argument, not stdin
        operands = [a for a in cmd.args if a is None or not a.startswith("-") or a == "-"]
        return not operands or operands[0] in ("-", "/dev/stdin") or "-s" in cmd.args

    def heredoc(self, node: Node) -> None:
        redirect = next((c for c in node.children if c.type == "heredoc_redirect"), None)
        if redirect is None:
            return
        body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
        first = next((c for c in node.children if c.type == "command"), None)
        consumers = [first] if first is not None else []
        consumers += self._pipeline_commands(
            next((c for c in redirect.children if c.type == "pipeline"), node)
        )
        if body is None:
            return
        text = body.text.decode("utf-8", errors="replace")
        for consumer in consumers:
            cmd = self.to_cmd(consumer) if consumer is not None else None
            inner = unwrap(_Quiet(self), cmd) if cmd is not None else None
            if inner is None:
                continue
            self._heredoc_consumer(inner, body, text)

    def _heredoc_consumer(self, cmd: Cmd, body: Node, text: str) -> None:
        if cmd.name in SHELLS and not any(a and a.startswith("-c") for a in cmd.args):
            self.shell_payload(body, text)
        elif cmd.name in DB_CLIENTS:
            statement = destructive_sql(text)
            if statement:
                self.flag("database", f"{cmd.name}: {statement}", body, Severity.HIGH)
        elif language_of(cmd.name):
            call = destructive_code(language_of(cmd.name), text)
            if call:
                self.flag(
                    "inline-code",
                    f"{cmd.name} code that changes files or runs programs ({call})",
                    body,
                )

    def function(self, node: Node) -> None:
        name_node = next((c for c in node.children if c.type == "word"), None)
        body = next((c for c in node.children if c.type == "compound_statement"), None)
        if name_node is None or body is None:
            return
        name = name_node.text.decode()
        calls, background = 0, "&" in body.text.decode("utf-8", errors="replace")
        stack = [body]
        while stack:
            current = stack.pop()
            if current.type == "command_name" and current.text.decode() == name:
                calls += 1
            stack.extend(current.children)
        if calls >= 2 or (calls and background):
            self.flag(
                "fork-bomb",
                f"function {name} calls itself recursively in parallel: a fork bomb",
                node,
                Severity.HARDLINE,
            )


def sensitive_path(path: str) -> bool:
    """System files, credentials, shell start-up files, autostart entries and git hooks."""
    home = home_dir().rstrip("/") + "/"
    if path.startswith(("/etc/", "/boot/", "/usr/", "/bin/", "/sbin/", "/lib", "/var/spool/cron")):
        return True
    if "/.git/hooks/" in path + "/" or path.endswith("/.git/hooks"):
        return True
    if path.startswith(home):
        rest = path[len(home) :]
        return any(rest == s.rstrip("/") or rest.startswith(s) for s in _SENSITIVE_HOME)
    return False


class _Quiet:
    """A context that ignores findings: unwrapping a pipeline stage already judged elsewhere."""

    def __init__(self, real: Analyzer) -> None:
        self._real = real

    def flag(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def default_cwd(cwd: str | os.PathLike[str] | None) -> str | None:
    return posixpath.normpath(os.fspath(cwd)) if cwd is not None else None
