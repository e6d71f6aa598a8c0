"""The walk over a parsed command: every simple command, redirect, pipeline and payload.

Commands are judged wherever they appear: in lists and pipelines, subshells, `$(...)`,
backticks, process substitutions, function bodies, loops, `bash -c`/`eval`/`ssh` payloads,
`find -exec` and `xargs`. `cd` is followed within a compound command, so `cd ~ && rm -rf .`
is seen to delete the home directory.
"""

from __future__ import annotations

import glob
import itertools
import os
import posixpath
import re
import shlex
from typing import Any

from workbench.core.safety import databases, evaluated
from workbench.core.safety.assigned import Unknown, values_of
from workbench.core.safety.commands import (
    DOWNLOADERS,
    RULES,
    SCRIPT_VALUES,
    SHELLS,
    STDIN_INTERPRETERS,
    code_finding,
    inner_command,
    names_app_state,
    ran_file,
    script_operand,
)
from workbench.core.safety.databases import DB_CLIENTS
from workbench.core.safety.harmless import harmless
from workbench.core.safety.inline_code import language_of
from workbench.core.safety.options import judge_options
from workbench.core.safety.parser import (
    WORD_TYPES,
    Source,
    error_nodes,
    expand_braces,
    home_dir,
    split_word,
    word_value,
)
from workbench.core.safety.places import (
    SINKS,
    PathRisk,
    credential,
    credential_dir,
    holds_credentials,
    linked_credential,
    place_risk,
    resolved,
    sensitive_path,
    state_roots,
    tree_risk,
    within,
)
from workbench.core.safety.runners import judge_runner
from workbench.core.safety.settings import judge_setting
from workbench.core.safety.unruled import judge_unruled, unruled
from workbench.core.safety.verdict import Finding, Severity
from workbench.core.safety.words import Cmd
from workbench.core.safety.wrappers import unwrap

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
SAFE_SINKS = SINKS | {"-"}
UNKNOWN_CWD = "/.unknown-working-directory"  # stands for it in paths judged by name only
# Programs that only read what they are given: hermes-tui's own state may be shown to them.
STATE_READERS = frozenset(
    [
        "cat",
        "less",
        "more",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "file",
        "stat",
        "ls",
        "tree",
        "du",
        "diff",
        "cmp",
        "jq",
        "yq",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "b2sum",
        "realpath",
        "readlink",
        "test",
        "[",
        "[[",
        "echo",
        "printf",
        "basename",
        "dirname",
        "view",
        "bat",
        "hexdump",
        "xxd",
        "od",
        "strings",
        "column",
        "sort",
        "uniq",
        "cut",
        "nl",
        "tac",
    ]
)
# Programs that take a credential file's name without showing its contents to anyone (nor
# those of a folder holding credentials).
_KEY_USERS = frozenset(
    {
        "ls",
        "tree",
        "stat",
        "test",
        "[",
        "[[",
        "chmod",
        "chown",
        "chgrp",
        "touch",
        "realpath",
        "readlink",
        "dirname",
        "basename",
        "file",
        "du",
        "echo",
        "printf",
        "ssh",
        "scp",
        "sftp",
        "ssh-add",
        "ssh-copy-id",
        "rm",
        "rmdir",
        "unlink",
        "shred",
        "mv",
        "cd",
        "pushd",
        "mkdir",
    }
)


class Analyzer:
    def __init__(
        self,
        text: str,
        *,
        cwd: str | None,
        recent_writes: frozenset[str],
        write_roots: tuple[str, ...] | None = None,
        depth: int = 0,
        base: int | None = 0,
        fallback: tuple[int, int] | None = None,
    ) -> None:
        self.text = text
        self.cwd = cwd
        # a `cd` (or `env -C`) was read somewhere in the command, nested code included:
        # the reading follows it in order, not as bash does (a subshell, a failed `cd`,
        # `||`), so from then on the folder a finding acts in is not known for sure
        self.moved = [False]
        self.recent_writes = recent_writes
        self.write_roots = write_roots  # None: the session's directory is unknown
        self.links: dict[str, str] = {}  # links an earlier part of the command makes
        self.aliases: dict[str, str | None] = {}
        self.vars: dict[str, str | None] = {}  # variables assigned earlier in the command
        self.looked = False  # the verdict depends on the filesystem (links, devices, files)
        self.state = state_roots()
        self._real_roots: list[str] | None = None
        self.depth = depth
        self.base = base  # where this text starts in the outermost command, if known exactly
        self.fallback = fallback  # otherwise every finding points at the whole payload
        self.findings: list[Finding] = []
        self._cmds: dict[tuple[int, tuple[tuple[str, str | None], ...]], Cmd | None] = {}
        self.written: set[str] = set()
        self.ran: list[tuple[str | None, ...]] = []  # every command judged, payloads' too
        self.runs: list[str] = []  # every file it runs as code (a script, a makefile), resolved
        self.path: list[str] = []  # folders a PATH set in the command puts before the rest
        self.state_vars: set[str] = set()  # variables that may hold hermes-tui's state
        self.fed_by: dict[int, list[str | None]] = {}  # commands fed by `find ROOTS |`: the roots
        self.source: Source | None = None
        self.evaluated: evaluated.Table | None = None  # the command's assignments, by name

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
        if root.has_error and "{" in self.text:
            self._braced_commands()
        self.visit(root)
        return self.findings

    def _braced_commands(self) -> None:
        """`{rm,-rf,/}` is a command made by brace expansion, which tree-sitter reads as a
        broken group: expand such words and judge the command they make."""
        words = re.split(r"(\s+|[;&|()])", self.text)
        changed = False
        for i, word in enumerate(words):
            expanded = expand_braces(word) if word.startswith("{") else None
            if expanded is not None and expanded != [word]:
                words[i] = " ".join(shlex.quote(w) for w in expanded)
                changed = True
        if changed and self.depth < MAX_DEPTH:
            self.base, saved = None, self.base
            self.fallback = self.fallback or (0, len(self.text))
            try:
                self.shell_payload_text("".join(words))
            finally:
                self.base = saved

    # -- context for the rules ----------------------------------------------------------

    def flag(
        self,
        rule: str,
        reason: str,
        node: Node,
        severity: Severity = Severity.NORMAL,
        writes: tuple[str, ...] = (),
        contextual: bool = False,
        opaque: bool = False,
    ) -> None:
        """Record a finding; `opaque` when the gate could not read what it acts on."""
        span = self._map(self.source.span(node)) if self.source else (0, len(self.text))
        opaque = opaque or rule in _OPAQUE_RULES
        unknown = rule in ("dynamic-command", "inline-code") or (
            rule in _UNKNOWN_RULES and ("computed" in reason or "run time" in reason)
        )
        if unknown and severity < Severity.HARDLINE and self._names_state(node):
            # what it does is known only at run time, and its text names hermes-tui's state
            rule, severity = "app-state", Severity.HARDLINE
            reason += ", and it names hermes-tui's own state"
        where = None if self.moved[0] else self.cwd
        self._add(Finding(rule, reason, span, severity, writes, contextual, opaque, where))

    def _names_state(self, node: Node) -> bool:
        """The command's text names hermes-tui's own state, or a variable that may hold it."""
        while node is not None and node.type in ("command_name", "word") and node.parent:
            node = node.parent  # `$EDITOR ~/.hermes/x`: the whole command, not its name
        text = node.text.decode("utf-8", errors="replace") if node is not None else self.text
        if names_app_state(text):
            return True
        return any(re.search(rf"\$\{{?{re.escape(v)}\b", text) for v in self.state_vars)

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

    def real(self, path: str, follow: bool = True) -> str:
        """Where `path` really is: links made earlier in this command, then the filesystem's.

        Without `follow` the last part is kept (rm and ln act on a link, not its target).
        """
        self.looked = True
        if not follow:
            parent, name = posixpath.split(path.rstrip("/") or "/")
            return posixpath.join(self.real(parent), name) if name else "/"
        for _ in range(8):
            link = next((k for k in self.links if path == k or path.startswith(k + "/")), None)
            if link is None:
                break
            path = posixpath.normpath(self.links[link] + path[len(link) :])
        return resolved(path)

    def candidates(self, value: str | None, follow: bool = True) -> list[str]:
        """The path as written and as resolved (both count: /bin may be a link to /usr/bin)."""
        path = self.resolve(value)
        if path is None and value is not None and follow:
            path = self.links.get(posixpath.normpath(value))  # a link made here, cwd unknown
        if path is None and value and not value.startswith(("/", "~")):
            # the working directory is unknown: still judge the name (.env, .git/config)
            path = posixpath.normpath(posixpath.join(UNKNOWN_CWD, value))
        if path is None:
            return []
        real = self.real(path, follow)
        found = [path] if real == path else [path, real]
        if any(c in path for c in "*?["):  # a glob: judge what it matches now too
            found += [self.real(m, follow) for m in glob.glob(path)[:64]]
        return found

    def classify(self, value: str | None, recursive: bool) -> tuple[Severity, str]:
        """How precious a delete/overwrite target is: (severity, label for the reason)."""
        if value is None:
            return Severity.NORMAL, "a path computed at run time"
        if re.fullmatch(r"~[A-Za-z_][\w.-]*(/\*?)?", value):
            return Severity.HARDLINE, f"the home directory of user {value.split('/')[0][1:]}"
        globbed = value.rstrip("/").endswith("*")
        if globbed:  # `dir/*` empties dir; a bare `*` empties the current directory
            value = value.rstrip("/")[:-1] or "."
        # `rm -rf link` removes the link; `link/` and `link/*` reach what it points at
        follow = globbed or value.endswith("/") or value in (".", "..")
        found = [self._classify(p, recursive or globbed) for p in self.candidates(value, follow)]
        return max(found, key=lambda f: f[0], default=(Severity.NORMAL, ""))

    def _classify(self, path: str, wide: bool) -> tuple[Severity, str]:
        path = path.rstrip("/") or "/"
        homes = {home_dir().rstrip("/"), os.path.realpath(home_dir())}
        if path == "/":
            return (Severity.HARDLINE if wide else Severity.HIGH), "the whole filesystem"
        if path in homes:
            return (Severity.HARDLINE if wide else Severity.HIGH), "your home directory"
        if path in SYSTEM_DIRS:
            return (Severity.HARDLINE if wide else Severity.HIGH), f"the system directory {path}"
        parent = posixpath.dirname(path)
        if parent == "/home":
            return (Severity.HARDLINE if wide else Severity.HIGH), f"the home directory {path}"
        if parent in SYSTEM_DIRS or sensitive_path(path):
            return Severity.HIGH, f"{path} is a system or private path"
        return Severity.NORMAL, ""

    def sensitive(self, value: str | None) -> bool:
        return any(sensitive_path(p) for p in self.candidates(value))

    def place(
        self,
        node: Node,
        value: str | None,
        verb: str,
        *,
        delete: bool = False,
        follow: bool = True,
        contents: bool = True,
        tree: tuple[str | None, ...] | None = None,
        remember: bool = True,
        possible: bool = False,
    ) -> PathRisk | None:
        """Judge where a write lands: the app's state, credentials, outside the roots.

        A delete acts on a link itself, not its target; a delete or a change of metadata
        (`contents` False) of a credential asks, where writing one is refused. `tree` is for
        a writer that puts whole trees (those sources) into the folder `value`: what that
        folder holds is judged, and where each source lands under it by its name. A
        `possible` write (a program without a rule) asks, high at most, but hermes-tui's own
        state, as for every write, never runs.
        """
        found = None
        if contents and not delete and remember:
            self.wrote(value)  # running it later in the command runs what was written
        text = node.text.decode("utf-8", errors="replace") if node is not None else ""
        if value is None and names_app_state(text):  # `cp x "$(echo ~/.hermes)/config.yaml"`
            computed = PathRisk(
                "app-state",
                "a path computed at run time from hermes-tui's own state",
                Severity.HARDLINE,
            )
            self.flag(computed.rule, f"{verb} {computed.reason}", node, computed.severity)
            return computed
        paths = self.candidates(value, follow=follow and not delete)
        landed = [] if tree is None or value is None else self._landed(value, tree)
        for path in [*paths, *landed]:  # as written and as resolved: both are judged
            risk = place_risk(path) if path != "-" else None
            if tree is not None:
                risk = max((r for r in (risk, tree_risk(path)) if r), default=None, key=_level)
            if risk is not None and (found is None or risk.severity > found.severity):
                found = risk
        if found is None and self.write_roots is not None and paths and self._outside(paths[-1]):
            found = PathRisk(
                "outside-write",
                "outside the working directory and the write roots",
                Severity.NORMAL,
            )
        if found is None:
            return None
        if possible and found.severity is Severity.HARDLINE and found.rule != "app-state":
            found = PathRisk("sensitive-write", found.reason, Severity.HIGH)
        if (delete or not contents) and found.rule == "refused-write":
            found = PathRisk("sensitive-write", found.reason, Severity.HIGH)
        writes = (value,) if value is not None else ()
        self.flag(found.rule, f"{verb} {value}: {found.reason}", node, found.severity, writes)
        return found

    def _landed(self, folder: str, sources: tuple[str | None, ...]) -> list[str]:
        """Where sources copied into `folder` land: `rsync -a e/.hermes ./` makes ./.hermes
        (a source ending in `/` gives its contents, already judged as the folder)."""
        found = []
        for source in sources:
            name = posixpath.basename(source) if source and not source.endswith("/") else ""
            if name and name not in (".", ".."):
                found += self.candidates(posixpath.join(folder, name))
        return found

    def _outside(self, real: str) -> bool:
        if self._real_roots is None:
            self._real_roots = [os.path.realpath(r).rstrip("/") for r in self.write_roots or ()]
        return not any(real == r or real.startswith(r + "/") for r in self._real_roots)

    def exists(self, path: str) -> bool:
        """Something is at `path` now (the verdict then depends on the filesystem)."""
        self.looked = True
        return os.path.lexists(path)

    def found_under(self, roots: list[str | None]) -> str | None:
        """What stands for each file a search under `roots` finds (`find ROOTS -exec X {}`,
        `find ROOTS | xargs X`): a name in the first root when every root lies inside the
        working directory and the write roots and holds neither a home, credentials, a git
        folder nor hermes-tui's state; None (known only at run time) otherwise."""
        if self.write_roots is None or not roots or any(r is None for r in roots):
            return None
        for root in roots:
            path = self.resolve(root)
            real = self.real(path) if path is not None else None
            if real is None or self._outside(real) or holds_credentials(real):
                return None
            if tree_risk(real) or any(within(s, real) for s in self.state):
                return None
        return posixpath.join(roots[0] or ".", "{}")

    def computed_operand(self, node: Node | None) -> str | None:
        """An operand known only at run time that is still known to name files found inside
        the working directory: `$(find src -name '*.py')`, or what `find src | xargs`
        hands on. None: it may be anything."""
        if node is None:
            return None
        fed = self.fed_by.get(node.id)
        if fed is not None:
            return self.found_under(fed)
        subs = [c for c in _walk(node) if c.type == "command_substitution"]
        if len(subs) != 1 or node.type not in ("command_substitution", "string"):
            return None
        commands = [c for c in subs[0].children if c.type == "command"]
        cmd = self.to_cmd(commands[0]) if len(commands) == 1 else None
        roots = _search_roots(cmd) if cmd is not None else None
        return self.found_under(roots) if roots is not None else None

    def link(self, link: str | None, target: str | None) -> None:
        """`ln` made `link` point at `target`: later parts of the command write through it."""
        path = self.resolve(link)
        if path is None:  # the working directory is unknown: remember the name as written
            if link is not None and target is not None:
                self.links[posixpath.normpath(link)] = self.resolve(target) or "/"
            return
        if os.path.isdir(self.real(path)):
            path = posixpath.join(self.real(path), posixpath.basename(target or "x"))
        if target is None:
            self.links[path] = "/"  # unknown: assume the worst place
            return
        if not target.startswith(("/", "~")):
            target = posixpath.join(posixpath.dirname(path), target)
        self.links[path] = self.resolve(target) or "/"

    def _inside_state(self, cmd: Cmd) -> None:
        """A program that may write, run with hermes-tui's own state as its directory."""
        if self.cwd is None or cmd.name in STATE_READERS or cmd.name in ("cd", "pushd", "popd"):
            return
        here = {self.cwd, resolved(self.cwd)}  # a working directory that links into it too
        if any(within(place, root) for place in here for root in self.state):
            reason = f"{cmd.name} runs inside hermes-tui's own state ({self.cwd})"
            self.flag("app-state", reason, cmd.node, Severity.HARDLINE)

    def _read_candidates(self, value: str) -> list[str]:
        """Like `candidates`, but a path that does not exist is only judged by its name."""
        path = self.resolve(value)
        if path is None or path in self.links or os.path.lexists(path):
            return self.candidates(value)
        return [path]  # nothing there: nothing to read, and no link to follow

    def reads(self, node: Node, cmd_name: str, values: list[str | None]) -> None:
        """A credential file named to a program that may show its contents asks; so does
        hermes-tui's own state handed to a program not known to only read it never runs."""
        if cmd_name in _KEY_USERS:
            return
        for value in values:
            if not value or "\n" in value or len(value) > 4096:
                continue
            option = value.startswith("-")
            if option:  # `--work-tree=~/.hermes`: the option's value may be a place
                value = value.partition("=")[2] if value.startswith("--") else ""
                if not value:
                    continue
            places = self._read_candidates(value)
            if "/" in value:  # `hh/plugins/x` where hh links into the state: nothing there yet
                places = list(dict.fromkeys([*places, *self.candidates(value)]))
            # a container's volume: `-v ~/.hermes:/h`, `--mount type=bind,source=...`
            sources = [value.split(":", 1)[0]] if ":" in value else []
            sources += re.findall(r"(?:^|,)(?:source|src)=([^,]+)", value)
            for source in (s for s in sources if s[:1] in ("/", "~", ".")):
                places = list(dict.fromkeys([*places, *self.candidates(source)]))
            if cmd_name not in STATE_READERS and any(
                within(p, root) for p in places for root in self.state
            ):
                self.flag(
                    "app-state",
                    f"{cmd_name} is given {value}, hermes-tui's own state, and may change it",
                    node,
                    Severity.HARDLINE,
                )
            if option:
                continue
            what = _credential_read(places)
            if what:
                self.flag(
                    "credential-read", f"{cmd_name} reads {value}: {what}", node, Severity.HIGH
                )
                return

    def _computed_reads(self, cmd: Cmd, name: str) -> None:
        """Operands built from output: `cat "$(echo ~/.ss)h/id_rsa"` reads what echo's known
        output makes, judged as that path; one built from output only run time knows, whose
        known part names a credential place or a home's hidden folder, asks as opaque."""
        if name in _KEY_USERS:
            return
        for arg, node in zip(cmd.args, cmd.nodes, strict=False):
            if arg is not None or node is None:
                continue
            try:
                values = [t.value for t in values_of(self, node, set())]
            except Unknown:
                self._unknown_read(node, name)
                continue
            self.reads(cmd.node, name, list(values))

    def _unknown_read(self, node: Node, name: str) -> None:
        text = node.text.decode("utf-8", errors="replace").strip("\"'")
        known = re.split(r"[$`]", text, maxsplit=1)[0]
        folder = known if known.endswith("/") else posixpath.dirname(known)
        path = self.resolve(folder) if folder else None
        if path is None:
            return
        hidden = _home_hidden(path) or (
            known != folder and _home_hidden(path + "/" + known.rsplit("/", 1)[-1])
        )
        if hidden or credential_dir(path) or holds_credentials(path):
            reason = f"{name} reads {text}, a path computed at run time under {folder}"
            self.flag("credential-read", reason, node, Severity.HIGH, opaque=True)

    def wrote(self, value: str | None) -> None:
        path = self.resolve(value) if value else None
        if value:
            self.written.add(path or value)

    def search_path(self, value: str | None) -> None:
        """PATH set in the command: its folders before the system's are searched first."""
        if value is None:
            return
        self.path = [
            d or "." for d in value.split(":") if not d.startswith(("/usr/", "/bin", "/sbin"))
        ][:16]

    def ran_written_file(self, value: str | None) -> tuple[bool, bool]:
        """`value` is run as code: whether it was written earlier in this command, or in
        this session (also through a link, on disk or made earlier in the command)."""
        if value:
            self.runs.append(self.resolve(value) or value)
        return self.written_earlier(value)

    def written_earlier(self, value: str | None) -> tuple[bool, bool]:
        """Whether `value` was written earlier in this command, or in this session."""
        if not value:
            return False, False
        path = self.resolve(value) or value
        real = self.real(path) if path.startswith("/") else path
        if {path, value, real} & self.written:
            return True, False
        return bool({path, value, real} & self.recent_writes), True

    def set_cwd(self, value: str | None) -> None:
        self.moved[0] = True
        path = self.resolve(value) if value not in (None, "-") else None
        self.cwd = self.real(path) if path is not None else None

    def shell_payload_text(self, value: str) -> None:
        """Judge `value` as shell code standing for this whole text."""
        inner = Analyzer(
            value,
            cwd=self.cwd,
            recent_writes=self.recent_writes,
            write_roots=self.write_roots,
            depth=self.depth + 1,
            base=None,
            fallback=self._map((0, len(self.text))),
        )
        inner.ran, inner.path, inner.moved = self.ran, self.path, self.moved
        inner.runs = self.runs
        evaluated.nest(self, inner)
        inner.written, inner.links, inner.aliases, inner.vars = (
            self.written,
            self.links,
            self.aliases,
            self.vars,
        )
        for finding in inner.run():
            if finding.rule != "unparsable":
                self._add(finding)
        self.looked = self.looked or inner.looked

    def shell_payload(self, node: Node, value: str | None) -> None:
        if value is None:
            self.flag("dynamic-command", "runs shell code computed at run time", node)
            return
        if self.depth >= MAX_DEPTH:
            self.flag("unparsable", "shell code nested too deeply to check", node)
            return
        assert self.source is not None  # payloads are found while the parsed text is walked
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
            write_roots=self.write_roots,
            depth=self.depth + 1,
            base=base,
            fallback=self._map((start, end)),
        )
        inner.written, inner.links, inner.aliases = self.written, self.links, self.aliases
        inner.ran, inner.path, inner.moved = self.ran, self.path, self.moved
        inner.runs = self.runs
        inner.vars = self.vars
        evaluated.nest(self, inner)
        for finding in inner.run():
            self._add(finding)
        self.looked = self.looked or inner.looked

    # -- the walk -----------------------------------------------------------------------

    def visit(self, node: Node) -> None:
        evaluated.judge(self, node)  # text bash evaluates again: arithmetic, names, prompts
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind == "pipeline":
            self.pipeline(self._pipeline_commands(node), node)
        elif kind == "redirected_statement":
            self.heredoc(node)
            self.stdin_file(node)
        elif kind == "function_definition":
            self.function(node)
        elif kind == "variable_assignment":
            self.assign(node)
        elif kind == "for_statement":
            self.loop(node)
        for child in node.children:
            self.visit(child)

    def assign(self, node: Node) -> None:
        name = next((c for c in node.children if c.type == "variable_name"), None)
        value = next((c for c in node.children if c.type in WORD_TYPES), None)
        if name is not None:
            text = name.text.decode("utf-8", errors="replace")
            new = word_value(value, self.vars) if value is not None else ""
            # assigned twice (in two branches, say): which one holds is known at run time
            self.vars[text] = new if self.vars.get(text, new) == new else None
            raw = value.text.decode("utf-8", errors="replace") if value is not None else ""
            if raw and names_app_state(raw):
                self.state_vars.add(text)
            if text == "PATH" and new is None and value is not None:
                new = _path_folders(value.text.decode("utf-8", errors="replace"))
            judge_setting(self, node, text, new)

    def loop(self, node: Node) -> None:
        """`for d in ~/.hermes; do rm $d/x; done`: the variable takes each value in turn."""
        name = next((c for c in node.children if c.type == "variable_name"), None)
        if name is None:
            return
        var = name.text.decode("utf-8", errors="replace")
        values = [c for c in node.children if c.type in WORD_TYPES]
        known = [word_value(c, self.vars) for c in values]
        self.vars[var] = known[0] if len(known) == 1 and known[0] is not None else None
        if any(names_app_state(c.text.decode("utf-8", errors="replace")) for c in values):
            self.state_vars.add(var)

    def to_cmd(self, node: Node) -> Cmd | None:
        """The simple command at `node` (read once: pipelines and redirections ask again)."""
        key = (node.id, tuple(sorted(self.vars.items())) if self.vars else ())
        if key not in self._cmds:
            self._cmds[key] = self._to_cmd(node)
        return self._cmds[key]

    def _to_cmd(self, node: Node) -> Cmd | None:
        name_node = next((c for c in node.children if c.type == "command_name"), None)
        if name_node is None:
            return None
        words = [name_node.children[0] if name_node.children else name_node]
        words += [c for c in node.children if c.type in WORD_TYPES]
        parts: list[Node] = []
        values: list[str | None] = []
        for word in words:  # a brace expansion or `$IFS` makes several words of one
            split = split_word(word, self.vars)
            values += split
            parts += [word] * len(split)
        if not values:
            return None
        name = values[0]
        if name is None:
            self.flag(
                "dynamic-command",
                "the program to run is computed at run time "
                "(a variable or substitution in command position)",
                name_node,
            )
            return None
        return Cmd(name.rsplit("/", 1)[-1], values[1:], parts[1:], node, name)

    def command(self, node: Node) -> None:
        for child in node.children:  # `PATH=.:$PATH ls`: set for the command it comes before
            if child.type == "variable_assignment":
                self.assign(child)
        cmd = self.to_cmd(node)
        if cmd is not None:
            self.judge(cmd)
            self.herestring(node, cmd)

    def judge(self, cmd: Cmd) -> None:
        inner = unwrap(self, cmd)
        if inner is None:
            return
        self.ran.append((inner.program or inner.name, *inner.args))
        self.reads(inner.node, _only_reads(inner).name, inner.args)
        self._computed_reads(inner, _only_reads(inner).name)
        self._inside_state(_only_reads(inner))
        if inner.name in ("alias", "unalias"):
            self._alias(inner)
            return
        if inner.name in self.aliases:
            self._expand_alias(inner)
            return
        if inner.name in ("cd", "pushd"):
            self.set_cwd(inner.operands[0] if inner.operands else "~")
            if self.cwd is None and self._names_state(inner.node):  # `cd $(echo ~/.hermes)`
                self.cwd = self.state[0] if self.state else None
            return
        if "/" in inner.program:  # `./x.sh`: a file run by its path
            ran_file(self, inner, inner.program)
        elif inner.program:  # found on a PATH the command set: `PATH=.:$PATH x`
            for folder in self.path:
                ran_file(self, inner, posixpath.join(folder, inner.program))
        if harmless(inner):
            return  # help, a version or a dry run: the program changes nothing
        rule = RULES.get(inner.name) or (RULES["mkfs"] if inner.name.startswith("mkfs.") else None)
        if rule is not None:
            rule(self, inner)
        elif unruled(inner.name) and inner.name not in STATE_READERS:
            judge_unruled(self, inner)
        if inner.name == "find":
            self._find_exec(inner)
        judge_runner(self, inner)
        judge_options(self, inner)

    def code(self, node: Node, program: str, language: str, code: str | None) -> None:
        code_finding(self, node, program, language, code)

    def alias(self, name: str | None, value: str | None) -> None:
        if name is not None:
            self.aliases[name] = value

    def _alias(self, cmd: Cmd) -> None:
        """`alias r=rm`: later commands named `r` are judged as what they stand for."""
        for arg in cmd.args:
            if cmd.name == "unalias" or arg is None or arg.startswith("-"):
                continue
            name, sep, value = arg.partition("=")
            if sep:
                self.aliases[name] = value
        if any(a is None for a in cmd.args):
            self.flag("dynamic-command", "defines an alias computed at run time", cmd.node)

    def _expand_alias(self, cmd: Cmd) -> None:
        value = self.aliases[cmd.name]
        if value is None or any(a is None for a in cmd.args):
            self.flag(
                "dynamic-command", f"runs the alias {cmd.name}, computed at run time", cmd.node
            )
            return
        if self.depth >= MAX_DEPTH:
            self.flag("unparsable", f"the alias {cmd.name} expands too deeply to check", cmd.node)
            return
        words = [shlex.quote(a) for a in cmd.args if a is not None]
        del self.aliases[cmd.name]  # as in bash, an alias is not expanded inside itself
        try:
            self.shell_payload(cmd.node, " ".join([value, *words]))
        finally:
            self.aliases[cmd.name] = value

    def _find_exec(self, cmd: Cmd) -> None:
        args = cmd.args
        for i, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
                item = self.found_under(_find_roots(cmd))
                found = [  # each file found; `{}` reads as an empty brace expansion
                    item if a == "{}" or _text(cmd.nodes[j]) == "{}" else a
                    for j, a in enumerate(args[i + 1 : end], start=i + 1)
                ]
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
        if not targets:
            return
        target = targets[0]  # tree-sitter may attach a following `0>&1` to the same node
        if target.type == "number" and operator in (">&", "<&"):
            return  # 2>&1: duplicating a stream writes no file
        value = word_value(target, self.vars)
        if operator.startswith("<"):
            self.reads(node, "a redirection", [value])
            return
        if not operator.startswith((">", "&>")):
            return
        if value is not None and (value in SAFE_SINKS or value.startswith("/dev/fd/")):
            return
        if value is not None and value.startswith(("/dev/tcp/", "/dev/udp/")):
            self.flag(
                "reverse-shell", f"connects a stream to the network ({value})", node, Severity.HIGH
            )
            return
        append = operator in (">>", "&>>")
        verb = "appends to" if append else "overwrites"
        risk = self.place(node, value, f"redirection {verb}")
        if risk is not None and risk.severity is Severity.HARDLINE:
            return
        if append and value is not None and risk is None:
            return
        self.wrote(value)
        severity = Severity.HIGH if self.sensitive(value) else Severity.NORMAL
        label = value if value is not None else "a path computed at run time"
        self.flag(
            "overwrite",
            f"redirection {verb} {label}",
            node,
            severity,
            (value,) if value else (),
            opaque=value is None,
        )

    def _pipeline_commands(self, node: Node) -> list[Node]:
        out = []
        for child in node.children:
            if child.type == "command":
                out.append(child)
            elif child.type == "redirected_statement":
                out.extend(c for c in child.children if c.type == "command")
            elif child.type in ("subshell", "compound_statement") and out:
                out.extend(_commands_in(child))  # `... | (sh)`: any of them may read the pipe
        return out

    def pipeline(self, commands: list[Node], node: Node) -> None:
        cmds = [self.to_cmd(c) for c in commands]
        for before, cmd in itertools.pairwise(cmds):
            roots = _search_roots(before) if before is not None else None
            if cmd is not None and roots is not None:  # `find src | xargs X`: files in src
                self.fed_by[cmd.node.id] = roots
        for position, cmd in enumerate(cmds):
            if position == 0 or cmd is None:
                continue
            inner = unwrap(_Quiet(self), cmd)
            for _ in range(4):  # `... | ssh host sh`, `... | docker exec -i db psql`
                remote = inner_command(inner) if inner is not None else None
                if remote is None:
                    break
                inner = unwrap(_Quiet(self), remote)
            if inner is None:
                continue
            producers = {c.name for c in cmds[:position] if c is not None}
            if inner.name in DB_CLIENTS and not harmless(inner):
                text = _printed(cmds[:position])
                databases.judge_input(self, node, inner, text, " | ".join(sorted(producers)))
            if inner.name in _NET_CLIENTS:
                text = _printed(cmds[:position])
                if text is not None:
                    databases.judge_network_input(self, node, text)
            if inner.name == "make" and _makefile_from_stdin(inner):
                self.flag(
                    "stdin-code", "make runs a makefile from standard input", node, opaque=True
                )
            if inner.name in STDIN_INTERPRETERS and self._reads_stdin(inner):
                text = _printed(cmds[:position])
                if text is not None and (inner.name in SHELLS or inner.name in ("at", "batch")):
                    self.shell_payload(node, text)  # `echo rm -rf x | sh`: the text is known
                    continue
                if text is not None and language_of(inner.name):
                    code_finding(self, node, inner.name, language_of(inner.name) or "", text)
                    continue
                source = "downloaded code" if producers & DOWNLOADERS else "piped input"
                self.flag(
                    "remote-code",
                    f"runs {source} with {inner.name}",
                    node,
                    Severity.HIGH if producers & DOWNLOADERS else Severity.NORMAL,
                    opaque=True,  # the code arrives when it runs: nothing here read it
                )

    @staticmethod
    def _reads_stdin(cmd: Cmd) -> bool:
        if cmd.name in ("source", "."):
            return any(a in _STDIN_FILES for a in cmd.args)
        if cmd.name in ("at", "batch"):  # commands to run later, unless -f names a file
            return not cmd.has(short="flrdc")
        letters = "c" if cmd.name in SHELLS else "ce"  # a shell's -e is errexit
        if any(a and re.fullmatch(rf"-[a-zA-Z]*[{letters}][a-zA-Z]*", a) for a in cmd.args):
            return False  # -c/-e code comes from the argument, not stdin
        if cmd.name in SHELLS:
            script = script_operand(cmd, SCRIPT_VALUES["shell"])
            return script is None or script in _STDIN_FILES or "-s" in cmd.args
        operands = [a for a in cmd.args if a is None or not a.startswith("-") or a == "-"]
        return not operands or operands[0] in _STDIN_FILES or "-s" in cmd.args

    def heredoc(self, node: Node) -> None:
        redirect = next((c for c in node.children if c.type == "heredoc_redirect"), None)
        if redirect is None:
            return
        body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
        first = next((c for c in node.children if c.type == "command"), None)
        piped = self._pipeline_commands(
            next((c for c in redirect.children if c.type == "pipeline"), node)
        )
        if body is None:
            return
        text = body.text.decode("utf-8", errors="replace")
        for consumer, direct in [(first, True), *((c, False) for c in piped)]:
            cmd = self.to_cmd(consumer) if consumer is not None else None
            inner = unwrap(_Quiet(self), cmd) if cmd is not None else None
            if inner is not None:
                self.fed(inner, body, text, direct)

    def stdin_file(self, node: Node) -> None:
        """`mysql shop < dump.sql`: a database client runs SQL from a file it cannot read here."""
        command = next((c for c in node.children if c.type == "command"), None)
        for redirect in (c for c in node.children if c.type == "file_redirect"):
            operator = next((c.type for c in redirect.children if not c.is_named), "")
            target = next(
                (c for c in redirect.children if c.type in WORD_TYPES or c.type in _SUBSTITUTED),
                None,
            )
            if operator != "<" or command is None or target is None:
                continue
            cmd = self.to_cmd(command)
            inner = unwrap(_Quiet(self), cmd) if cmd is not None else None
            value = word_value(target, self.vars) if target.type in WORD_TYPES else None
            if value == "/dev/null":
                continue  # nothing to read
            if inner is not None and inner.name in STDIN_INTERPRETERS and self._reads_stdin(inner):
                ran_file(self, inner, value)  # `bash < x.sh` runs x.sh
                if value is None:  # `sh < <(...)`, `sh < $F`: code known only at run time
                    reason = f"{inner.name} runs code from input known only at run time"
                    self.flag("remote-code", reason, redirect, opaque=True)
            if inner is not None and inner.name in DB_CLIENTS and not harmless(inner):
                value = value or "a file"
                databases.judge_input(self, redirect, inner, None, f"the file {value}")

    def herestring(self, command: Node, cmd: Cmd) -> None:
        redirect = next((c for c in command.children if c.type == "herestring_redirect"), None)
        if redirect is None:
            return
        word = next((c for c in redirect.children if c.type in WORD_TYPES), None)
        inner = unwrap(_Quiet(self), cmd)
        if inner is not None and word is not None:
            self.fed(inner, word, word_value(word, self.vars), True)

    def fed(self, cmd: Cmd, body: Node, text: str | None, direct: bool) -> None:
        """`cmd` reads `text` on standard input (a heredoc or a here-string)."""
        name = cmd.name
        if (name in SHELLS and self._reads_stdin(cmd)) or (
            name in ("at", "batch") and self._reads_stdin(cmd)
        ):
            self.shell_payload(body, text)
        elif name in ("ssh", "docker", "podman", "kubectl", "oc"):
            remote = inner_command(cmd)
            if remote is None and name == "ssh":
                self.shell_payload(body, text)  # no remote command: the login shell reads it
            elif remote is not None:
                self.fed(remote, body, text, direct)
        elif name in DB_CLIENTS:
            if not harmless(cmd):
                databases.judge_input(self, body, cmd, text, "the here-document")
        elif name in _NET_CLIENTS:
            databases.judge_network_input(self, body, text or "")
        elif language_of(name):
            if self._reads_stdin(cmd):
                code_finding(self, body, name, language_of(name) or "", text)
        elif name in ("source", ".") or (name in STDIN_INTERPRETERS and self._reads_stdin(cmd)):
            self.flag("stdin-code", f"{name} runs code from standard input", body, opaque=True)
        elif name == "make" and _makefile_from_stdin(cmd):
            self.flag("stdin-code", "make runs a makefile from standard input", body, opaque=True)
        elif direct and name not in DATA_READERS and name not in RULES:
            self.flag(
                "stdin-code",
                f"{name} is given text on standard input and may run it as a script",
                body,
                opaque=True,
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


_NET_CLIENTS = frozenset({"nc", "ncat", "netcat", "telnet", "socat"})
# What the gate could not read by its nature: a program or code known only at run time, a
# command it could not parse or follow.
_OPAQUE_RULES = frozenset({"dynamic-command", "unparsable"})
# Findings about what only run time knows: hardline when the command names the state.
_UNKNOWN_RULES = frozenset({"overwrite", "delete", "truncate", "move", "destroy"})
_STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_SUBSTITUTED = frozenset({"process_substitution", "command_substitution"})


def _path_folders(raw: str) -> str:
    """The folders a PATH written with variables names for sure: `.:$PATH` is `.`, and
    `$PWD` is the working directory (what only run time knows is left out)."""
    folders = []
    for part in raw.strip("'\"").split(":"):
        part = re.sub(r"^\$(?:PWD|\{PWD\})", ".", part)
        if "$" not in part and "`" not in part:
            folders.append(part)
    return ":".join(folders)


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def _walk(node: Node) -> list[Node]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _search_roots(cmd: Cmd) -> list[str | None] | None:
    """The folders a listing searches: `find` when it only lists, `git ls-files`, which
    lists files under the working directory (None: not such a listing)."""
    paths = [a for a in cmd.args if a is None or not a.startswith("-")]
    inside = all(a is not None and not a.startswith(("/", "~", "..")) for a in paths)
    if cmd.name == "git" and cmd.args[:1] == ["ls-files"]:
        return ["."] if inside and "--" not in cmd.args else None
    if cmd.name == "ls" and not cmd.has("--all", short="af"):  # -a would list `..`
        return ["."] if inside and not cmd.has(short="R") else None
    if cmd.name != "find" or _only_reads(cmd) is cmd:
        return None
    return _find_roots(cmd)


def _find_roots(cmd: Cmd) -> list[str | None]:
    roots: list[str | None] = []
    for arg in cmd.args:
        if arg is not None and arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    return roots or ["."]


def _commands_in(node: Node) -> list[Node]:
    """The simple commands inside a subshell or a group, in order."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == "command":
            found.append(current)
        else:
            stack.extend(reversed(current.children))
    return found


def _printed(cmds: list[Cmd | None]) -> str | None:
    """What a pipeline's producers print, when they are echo or printf of known text."""
    parts = []
    for cmd in cmds:
        if cmd is None or cmd.name not in ("echo", "printf") or any(a is None for a in cmd.args):
            return None
        words = [a for a in cmd.args if a is not None]
        if cmd.name == "printf" and (
            not words or "%" in words[0].replace("%%", "") or words[0] == "-v"
        ):
            return None  # a format filled in with the other arguments: not worked out here
        if cmd.name == "echo":
            words = [w for w in words if not re.fullmatch(r"-[neE]+", w)]
        # printf prints its format once when it has nothing to fill in
        text = words[0].replace("%%", "%") if cmd.name == "printf" else " ".join(words)
        if cmd.name == "printf" or "-e" in cmd.args:
            text = text.replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t")
        parts.append(text)
    return "\n".join(parts)


def _home_hidden(path: str) -> bool:
    """`path` is, or lies in, a hidden folder (or file) at the top of a home: `~/.ssh`, `~/.ss`."""
    home = home_dir().rstrip("/")
    for top in {home, os.path.realpath(home)}:
        if top and path.startswith(top + "/."):
            return True
    return re.match(r"/(?:home/[^/]+|root)/\.", path) is not None


def _credential_read(places: list[str]) -> str:
    """What a program given these places (one operand, as written and resolved) may read
    of credentials: a credential file, a hard link to one, or a folder holding them; ""."""
    if any(credential(p) for p in places):
        return "a credential file"
    if any(linked_credential(p) for p in places):
        return "a hard link to a credential file"
    if any(credential_dir(p) for p in places):
        return "a directory holding credential files"
    return ""


def _only_reads(cmd: Cmd) -> Cmd:
    """`find` without -exec or -delete only reads; its name stands in for the readers'."""
    acting = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fls")
    if cmd.name == "find" and not any(a in acting for a in cmd.args):
        return Cmd("ls", cmd.args, cmd.nodes, cmd.node)
    return cmd


def _makefile_from_stdin(cmd: Cmd) -> bool:
    args = cmd.args
    return any(
        (
            a in ("-f", "--file", "--makefile")
            and i + 1 < len(args)
            and args[i + 1] in ("-", "/dev/stdin")
        )
        or a in ("-f-", "--file=-", "--makefile=-", "-f/dev/stdin")
        for i, a in enumerate(args)
    )


# Programs that read standard input as data, never as code to run.
DATA_READERS = frozenset(
    {
        "cat",
        "tac",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "tr",
        "sort",
        "uniq",
        "wc",
        "cut",
        "paste",
        "jq",
        "yq",
        "base64",
        "base32",
        "xxd",
        "od",
        "hexdump",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "less",
        "more",
        "column",
        "fold",
        "fmt",
        "nl",
        "rev",
        "read",
        "mapfile",
        "readarray",
        "echo",
        "printf",
        "true",
        "false",
        "diff",
        "cmp",
        "comm",
        "join",
        "iconv",
        "gzip",
        "gunzip",
        "zcat",
        "bzip2",
        "bunzip2",
        "xz",
        "unxz",
        "zstd",
        "tee",
        "sed",
        "awk",
        "gawk",
        "mawk",
        "xargs",
        "wl-copy",
        "xclip",
        "xsel",
        "pbcopy",
        "mail",
        "sponge",
        "dd",
        "nc",
        "ncat",
        "socat",
        "openssl",
        "gpg",
        "sha224sum",
        "sha384sum",
        "cowsay",
        "figlet",
        "lolcat",
        "pv",
        "split",
        "csplit",
        "expand",
        "unexpand",
        "strings",
        "file",
    }
)


def _level(risk: PathRisk) -> int:
    return int(risk.severity)


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
