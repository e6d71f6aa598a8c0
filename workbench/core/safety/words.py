"""What the rules work on: a simple command's words, and the analyser's side of the talk.

A word's value is None where only run time knows it (a variable, a substitution).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from workbench.core.safety.verdict import Severity

Node = Any


class Context(Protocol):
    def flag(
        self,
        rule: str,
        reason: str,
        node: Node,
        severity: Severity = ...,
        writes: tuple[str, ...] = ...,
        contextual: bool = ...,
        opaque: bool = ...,
    ) -> None: ...
    def classify(self, value: str | None, recursive: bool) -> tuple[Severity, str]: ...
    def place(
        self,
        node: Node,
        value: str | None,
        verb: str,
        *,
        delete: bool = ...,
        follow: bool = ...,
        contents: bool = ...,
        tree: tuple[str | None, ...] | None = ...,
        remember: bool = ...,
        possible: bool = ...,
    ) -> Any: ...
    def computed_operand(self, node: Node | None) -> str | None: ...
    def exists(self, path: str) -> bool: ...
    def link(self, link: str | None, target: str | None) -> None: ...
    def resolve(self, value: str | None) -> str | None: ...
    def reads(self, node: Node, cmd_name: str, values: list[str | None]) -> None: ...
    def sensitive(self, value: str | None) -> bool: ...
    def shell_payload(self, node: Node, value: str | None) -> None: ...
    def wrote(self, value: str | None) -> None: ...
    def ran_written_file(self, value: str | None) -> tuple[bool, bool]: ...
    def written_earlier(self, value: str | None) -> tuple[bool, bool]: ...
    def search_path(self, value: str | None) -> None: ...
    def set_cwd(self, value: str | None) -> None: ...
    def judge(self, cmd: Cmd) -> None: ...
    def code(self, node: Node, program: str, language: str, code: str | None) -> None: ...
    def alias(self, name: str | None, value: str | None) -> None: ...


@dataclass
class Cmd:
    name: str
    args: list[str | None]
    nodes: list[Node]
    node: Node  # the whole command, for spans
    program: str = ""  # the program as written (`./x.sh`), where `name` is its last part

    def rest(self, start: int) -> Cmd | None:
        if start >= len(self.args):
            return None
        value = self.args[start]
        if not value:
            return None
        name = value.rsplit("/", 1)[-1]
        return Cmd(name, self.args[start + 1 :], self.nodes[start + 1 :], self.node, value)

    @property
    def flags(self) -> list[str]:
        return [a for a in self.args if a and a.startswith("-")]

    @property
    def operands(self) -> list[str | None]:
        return [a for a in self.args if a is None or not a.startswith("-") or a == "-"]

    def has(self, *options: str, short: str = "") -> bool:
        """A long option (or `--x=...`) or a short letter, bundled or not (`-rf` has r and f)."""
        for arg in self.args:
            if not arg or not arg.startswith("-") or arg == "-":
                continue
            if arg.startswith("--"):
                if arg.split("=", 1)[0] in options:
                    return True
            elif (
                short and any(c in arg[1:] for c in short) and not arg[1:].isdigit()
            ) or arg in options:
                return True
        return False

    def sub(self, skip_options_with_values: frozenset[str] = frozenset()) -> tuple[str, int]:
        """The first operand (a subcommand such as `git push`) and its index."""
        skip = False
        for i, arg in enumerate(self.args):
            if skip:
                skip = False
                continue
            if arg is None:
                return "", i
            if arg.startswith("-"):
                skip = arg in skip_options_with_values
                continue
            return arg, i
        return "", len(self.args)
