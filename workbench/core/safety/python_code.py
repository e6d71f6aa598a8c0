"""Python handed to the interpreter inline (`python3 -c`, a heredoc, a here-string), read as code.

The code is parsed and its names followed, so `__import__('os').remove`, `import os as o`,
`from shutil import rmtree as r`, `o = open; o('f', 'w')` and `pathlib.Path(p).unlink()` are
all seen for what they call. What cannot be followed (eval, exec, getattr with a computed
name, a star import of a module that changes files, code that does not parse) is reported as
such, so the command asks instead of passing. A fork in a loop is a fork bomb.
"""

from __future__ import annotations

import ast
import builtins
import functools
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

_OS_CHANGES = frozenset(
    {
        "remove",
        "unlink",
        "rmdir",
        "removedirs",
        "truncate",
        "ftruncate",
        "rename",
        "renames",
        "replace",
        "system",
        "popen",
        "kill",
        "killpg",
        "chmod",
        "lchmod",
        "fchmod",
        "chown",
        "lchown",
        "fchown",
        "symlink",
        "link",
        "mkfifo",
        "mknod",
        "fork",
        "forkpty",
        "open",
        "write",
        "chroot",
        "setuid",
        "utime",
    }
)
_PATH_CHANGES = frozenset(
    {
        "unlink",
        "rmdir",
        "write_text",
        "write_bytes",
        "touch",
        "rename",
        "replace",
        "chmod",
        "lchmod",
        "symlink_to",
        "hardlink_to",
        "link_to",
    }
)
# Method names that change files whatever object they are called on.
_ALWAYS = frozenset(
    {"unlink", "rmdir", "rmtree", "removedirs", "write_text", "write_bytes", "symlink_to"}
    | {"hardlink_to", "link_to", "system", "popen", "spawnl", "spawnv", "execv", "execve"}
    | {"execvp", "execl", "execlp", "forkpty"}
    # data stores' and ORMs' deletes: querysets, redis, mongo and boto3 objects
    | {"delete", "delete_many", "delete_one", "drop_database", "drop_collection", "drop_all"}
    | {"flushall", "flushdb", "delete_objects", "delete_bucket"}
)
# Whole modules whose every call runs programs or reaches past Python's safety.
# (`workbench` is hermes-tui itself: its calls run tools under another process's approvals.)
_RUNNERS = frozenset(
    {"subprocess", "pty", "ctypes", "_posixsubprocess", "multiprocessing", "workbench"}
)
_UNFOLLOWABLE = frozenset(
    {
        "builtins.eval",
        "builtins.exec",
        "builtins.compile",
        "builtins.__import__",
        "builtins.globals",
        "builtins.vars",
        "builtins.locals",
        "importlib.import_module",
        "importlib.__import__",
        "runpy.run_path",
        "runpy.run_module",
        "code.interact",
        "code.InteractiveInterpreter",
        "code.InteractiveConsole",
        "operator.methodcaller",
        "operator.attrgetter",
        "timeit.timeit",
        "timeit.repeat",
        "timeit.Timer",
        "pdb.run",
        "pdb.runeval",
        "pdb.runcall",
        "pickle.loads",
        "pickle.load",
        "marshal.loads",
    }
)
_BUILTINS = frozenset(dir(builtins))
# Attributes that reach functions by a name held in a string, or past the names altogether.
_REFLECTION = frozenset(
    {"__dict__", "__getattribute__", "__globals__", "__builtins__", "__subclasses__", "__code__"}
)


@dataclass(frozen=True)
class PythonFinding:
    what: str  # for a person: what the code does
    fork_bomb: bool = False
    unreadable: bool = False
    # What the caller judges further: "shell" runs `command` (None: computed at run time),
    # "delete" and "write" act on `path` (None: computed), "sql" runs `command` as SQL.
    kind: str = "call"
    command: str | None = None
    path: str | None = None
    recursive: bool = False


def judge_python(code: str) -> PythonFinding | None:
    """The first thing in `code` that changes files, runs programs or cannot be followed."""
    found = python_effects(code)
    return found[0] if found else None


def python_effects(code: str) -> list[PythonFinding]:
    """Everything in `code` that changes files, runs programs or cannot be followed."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [
            PythonFinding(
                "Python code that does not parse, so it cannot be checked", unreadable=True
            )
        ]
    except (RecursionError, MemoryError, ValueError):
        return [PythonFinding("Python code nested too deeply to be checked", unreadable=True)]
    try:
        return _Reader().read(tree)
    except RecursionError:
        return [PythonFinding("Python code nested too deeply to be checked", unreadable=True)]


class _Reader:
    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # local name -> what it stands for ("os.remove")

    def read(self, tree: ast.AST) -> list[PythonFinding]:
        nodes = list(ast.walk(tree))
        for node in nodes:  # bindings first, wherever they are
            self._bind(node)
        for node in nodes:  # a fork bomb outranks anything else the code does
            if isinstance(node, ast.While | ast.For | ast.AsyncFor) and any(
                isinstance(inner, ast.Call) and self._forks(inner) for inner in ast.walk(node)
            ):
                return [PythonFinding("forks in a loop: a fork bomb", fork_bomb=True)]
        called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        found = [found for node in nodes if (found := self._judge(node)) is not None]
        for node in nodes:  # `map(os.remove, files)`: a function handed on, to be called later
            if isinstance(node, ast.Attribute | ast.Name) and id(node) not in called:
                name = self.qualify(node) or ""
                pathlib_change = "pathlib." in name and name.rsplit(".", 1)[-1] in _PATH_CHANGES
                if (
                    pathlib_change
                    or name in _DELETES | _SHELL_CALLS
                    or (
                        name.split("(")[0].rsplit(".", 1)[0] == "subprocess"
                        and name.rsplit(".", 1)[-1] in _SUBPROCESS_RUNS
                    )
                ):
                    found.append(PythonFinding(f"hands {name} on to be called"))
        return found

    # -- names ----------------------------------------------------------------------

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                self.names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
            value = node.value
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            meaning = self.qualify(value) if value is not None else None
            for target in targets:
                if isinstance(target, ast.Name) and meaning:
                    self.names[target.id] = meaning
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                meaning = self.qualify(item.context_expr)
                if isinstance(item.optional_vars, ast.Name) and meaning:
                    self.names[item.optional_vars.id] = meaning

    def qualify(self, node: ast.AST) -> str | None:
        """What an expression stands for: "os.remove", "pathlib.Path()" (an instance), None."""
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            return f"builtins.{node.id}" if node.id in _BUILTINS else None
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            func = self.qualify(node.func)
            if func == "builtins.__import__" and _literal(node.args[:1]):
                return str(_literal(node.args[:1])).split(".")[0]
            if func == "importlib.import_module" and _literal(node.args[:1]):
                return str(_literal(node.args[:1]))
            if func == "builtins.getattr" and len(node.args) >= 2:
                base, name = self.qualify(node.args[0]), _literal(node.args[1:2])
                return f"{base}.{name}" if base and isinstance(name, str) else None
            return f"{func}()" if func else None
        return None

    # -- judging --------------------------------------------------------------------

    def _judge(self, node: ast.AST) -> PythonFinding | None:
        if (
            isinstance(node, ast.ImportFrom)
            and any(a.name == "*" for a in node.names)
            and (node.module or "").split(".")[0] in ("os", "shutil", "pathlib", *_RUNNERS)
        ):
            return PythonFinding(f"from {node.module} import *", unreadable=True)
        if isinstance(node, ast.Subscript):
            base = self.qualify(node.value)
            if base in (
                "sys.modules",
                "builtins.globals()",
                "builtins.vars()",
                "builtins.locals()",
            ):
                return PythonFinding(f"looks a name up at run time ({base})", unreadable=True)
        if isinstance(node, ast.Name) and node.id in ("__builtins__",):
            return PythonFinding("reaches __builtins__", unreadable=True)
        if isinstance(node, ast.Attribute) and node.attr in _REFLECTION:
            # `os.__dict__["remove"]`: a function looked up by a name in a string
            return PythonFinding(f"looks names up at run time (.{node.attr})", unreadable=True)
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _forks(self, call: ast.Call) -> bool:
        name = self.qualify(call.func) or ""
        return name in ("os.fork", "os.forkpty", "pty.fork") or name.endswith("Process().start")

    def _call(self, call: ast.Call) -> PythonFinding | None:
        name = self.qualify(call.func)
        attr = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if name is None:
            if attr in _ALWAYS:
                return PythonFinding(f".{attr}()")
            return None
        if name in _UNFOLLOWABLE:
            return PythonFinding(
                f"{name.removeprefix('builtins.')}(): code it cannot follow", unreadable=True
            )
        if name == "builtins.getattr" and not isinstance(_literal(call.args[1:2]), str):
            return PythonFinding("getattr with a computed name", unreadable=True)
        module, _, member = name.partition(".")
        member = member.split("(")[0].split(".")[0] if member else ""
        if name in _SHELL_CALLS or (module == "subprocess" and member in _SUBPROCESS_RUNS):
            return self._shell(call, name)
        if name in _HTTP_DELETES or (
            name.endswith("Request") and _keyword(call, "method") == "DELETE"
        ):
            return PythonFinding(f"{name} sends an HTTP DELETE request")
        if attr in ("execute", "executescript", "executemany") and _DB_MODULES & {
            v.split(".")[0] for v in self.names.values()
        }:
            sql = _literal(call.args[:1])
            return PythonFinding(
                f".{attr}() runs SQL", kind="sql", command=sql if isinstance(sql, str) else None
            )
        if name in _DELETES or (name.split(".")[-1] in ("unlink", "rmdir") and "pathlib." in name):
            return self._delete(call, name)
        if name.split(".")[-1] in _ALWAYS:
            return PythonFinding(name)
        if module in _RUNNERS:
            return PythonFinding(f"{name} (runs programs)")
        if module == "os" and member in _OS_CHANGES:
            if member == "open" and _os_open_reads(call):
                return None
            return PythonFinding(name)
        if module == "os" and member.startswith(("exec", "spawn", "posix_spawn")):
            return PythonFinding(name)
        if module == "shutil" and member in {
            "rmtree",
            "move",
            "copy",
            "copy2",
            "copyfile",
            "copytree",
            "chown",
            "unpack_archive",
            "make_archive",
        }:
            return PythonFinding(name)
        if name == "fileinput.input" and _keyword(call, "inplace"):
            return PythonFinding("fileinput.input(inplace=True) edits files in place")
        if attr == "request" and _literal(call.args[:1]) == "DELETE":
            return PythonFinding(f"{name} sends an HTTP DELETE request")
        if name in (
            "builtins.open",
            "io.open",
            "_io.open",
            "codecs.open",
            "os.fdopen",
            "io.FileIO",
        ):
            return self._open(call, name)
        if attr in ("extractall", "extract") and module in ("zipfile", "tarfile"):
            return self._extract(call, attr)
        if "pathlib." in name and name.endswith("()." + attr) and attr in _PATH_CHANGES:
            return PythonFinding(name)
        if "pathlib." in name and name.endswith(".open") and "()" in name:
            return self._open(call, name, mode_index=0)
        return None

    def _shell(self, call: ast.Call, name: str) -> PythonFinding:
        """os.system, subprocess.run...: the command they run, when it is written out."""
        first = (
            call.args[0]
            if call.args
            else next((k.value for k in call.keywords if k.arg == "args"), None)
        )
        value = _literal([first]) if first is not None else None
        if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            command: str | None = shlex.join(value)
        elif isinstance(value, str):
            command = value
        else:
            command = None
        return PythonFinding(f"{name} runs a command", kind="shell", command=command)

    def _delete(self, call: ast.Call, name: str) -> PythonFinding:
        target = call.args[0] if call.args else None
        if "pathlib." in name and isinstance(call.func, ast.Attribute):
            target = call.func.value
        path = self.path(target) if target is not None else None
        recursive = name.split(".")[-1] in ("rmtree", "removedirs")
        return PythonFinding(name, kind="delete", path=path, recursive=recursive)

    def _extract(self, call: ast.Call, attr: str) -> PythonFinding:
        """An archive unpacked: judged on where it lands (the working directory by default)."""
        index = 0 if attr == "extractall" else 1
        target = next((k.value for k in call.keywords if k.arg == "path"), None)
        if target is None and len(call.args) > index:
            target = call.args[index]
        path = self.path(target) if target is not None else "."
        return PythonFinding(
            f".{attr}() unpacks an archive", kind="write", path=path, recursive=True
        )

    def path(self, node: ast.AST) -> str | None:
        """A path written out in the code: a literal, expanduser, Path(...), join, `/`."""
        value = _literal([node])
        if isinstance(value, str):
            return value
        if isinstance(node, ast.Call):
            func = self.qualify(node.func) or ""
            if (
                func
                in (
                    "os.path.expanduser",
                    "pathlib.Path",
                    "pathlib.PurePath",
                    "os.fspath",
                    "builtins.str",
                )
                and node.args
            ):
                return self.path(node.args[0])
            if func in ("pathlib.Path.home", "pathlib.Path().home") or func.endswith("Path.home"):
                return "~"
            if func == "os.path.join" and node.args:
                parts = [self.path(a) for a in node.args]
                return (
                    None
                    if None in parts
                    else "/".join(p.rstrip("/") for p in parts if p is not None)
                )
            if isinstance(node.func, ast.Attribute) and node.func.attr in (
                "expanduser",
                "resolve",
                "absolute",
            ):
                return self.path(node.func.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.path(node.left), self.path(node.right)
            return f"{left.rstrip('/')}/{right}" if left is not None and right is not None else None
        return None

    def read_target(self, call: ast.Call) -> ast.AST | None:
        """What a call reads a file by (its path argument, or the path object it is called
        on), or None when it reads no file."""
        name = self.qualify(call.func) or ""
        attr = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if name in _OPENERS and self._open(call, name) is not None:
            return None  # opened to write (or with a mode only run time knows): judged so
        if name in _READERS or (name == "os.open" and _os_open_reads(call)):
            first = call.args[0] if call.args else None
            return first or next((k.value for k in call.keywords if k.arg == "file"), None)
        if not isinstance(call.func, ast.Attribute):
            return None
        if attr in ("read_text", "read_bytes"):  # a path's, whatever made it (`Path.home() / x`)
            return call.func.value
        if "pathlib." in name and attr == "open":
            return None if self._open(call, name, mode_index=0) is not None else call.func.value
        return None

    def _open(self, call: ast.Call, name: str, mode_index: int = 1) -> PythonFinding | None:
        mode_node = next((k.value for k in call.keywords if k.arg == "mode"), None)
        if mode_node is None and len(call.args) > mode_index:
            mode_node = call.args[mode_index]
        if mode_node is None:
            return None  # read mode by default
        mode = _literal([mode_node])
        if not isinstance(mode, str):
            return PythonFinding(f"{name} with a mode computed at run time", unreadable=True)
        if set(mode) & set("wax+"):
            target = call.args[0] if call.args and mode_index == 1 else None
            if mode_index == 0 and isinstance(call.func, ast.Attribute):
                target = call.func.value
            return PythonFinding(
                f"{name.removeprefix('builtins.')}(..., {mode!r}) writes a file",
                kind="write",
                path=self.path(target) if target is not None else None,
                recursive="a" in mode or "x" in mode,  # appends or creates: overwrites nothing
            )
        return None


@dataclass(frozen=True)
class CodeReads:
    """The files inline code reads: those written out (`paths`, as written), whether it
    reads one only run time knows (`computed`), and what in it may lead such a path into
    a home or out of the working directory (`reach`: "" when nothing does)."""

    paths: tuple[str, ...] = ()
    computed: bool = False
    reach: str = ""


# Calls that read the file named by their first argument (or, on a path object, its own).
_READERS = frozenset(
    {"builtins.open", "io.open", "_io.open", "codecs.open", "io.FileIO", "os.open"}
    | {f"shutil.{n}" for n in ("copy", "copy2", "copyfile", "copytree", "move")}
    | {"tarfile.open", "zipfile.ZipFile", "fileinput.input", "linecache.getline"}
)
# Of those, the ones whose second argument is a mode ("r", "w", "a"...).
_OPENERS = frozenset(
    {"builtins.open", "io.open", "_io.open", "codecs.open", "io.FileIO", "tarfile.open"}
    | {"zipfile.ZipFile"}
)
# Names through which code reaches a home or the environment (a path built from `HOME`).
_REACH = ("expanduser", "expandvars", ".home", "environ", "getenv", "pwd.", "getpass.")


def python_reads(code: str) -> CodeReads:
    """What `code` reads (see CodeReads); code that does not parse reads nothing known."""
    try:
        tree = ast.parse(code)
        nodes = list(ast.walk(tree))
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return CodeReads()
    reader = _Reader()
    for node in nodes:
        reader._bind(node)
    paths: list[str] = []
    computed = False
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Attribute | ast.Name | ast.Call):
            names.add(reader.qualify(node) or "")
        target = reader.read_target(node) if isinstance(node, ast.Call) else None
        if target is not None:
            path = reader.path(target)
            computed = computed or path is None
            paths += [path] if path is not None else []
    return CodeReads(tuple(dict.fromkeys(paths)), computed, _reach(names, python_strings(code)))


def _reach(names: set[str], strings: tuple[str, ...]) -> str:
    name = next((n for n in sorted(names) for r in _REACH if r in n), None)
    if name:
        return f"it uses {name.removesuffix('()')}"
    far = next((t for t in strings if t.startswith(("~", "/")) or ".." in t.split("/")), None)
    return f"it names {far[:80]!r}" if far else ""


_DB_MODULES = frozenset(
    [
        "sqlite3",
        "psycopg",
        "psycopg2",
        "pymysql",
        "MySQLdb",
        "mysql",
        "duckdb",
        "sqlalchemy",
        "asyncpg",
        "pyodbc",
        "oracledb",
        "cx_Oracle",
        "clickhouse_driver",
        "aiosqlite",
        "pg8000",
    ]
)
_SHELL_CALLS = frozenset(
    {
        "os.system",
        "os.popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "asyncio.create_subprocess_shell",
        "asyncio.create_subprocess_exec",
        "platform.popen",
        "distutils.spawn.spawn",
    }
)
_SUBPROCESS_RUNS = frozenset({"run", "call", "check_call", "check_output", "Popen"})
_DELETES = frozenset(
    {
        "os.remove",
        "os.unlink",
        "os.rmdir",
        "os.removedirs",
        "shutil.rmtree",
        "posix.remove",
        "posix.unlink",
        "posix.rmdir",
        "distutils.dir_util.remove_tree",
        "send2trash.send2trash",
    }
)
_HTTP_DELETES = frozenset(
    {"requests.delete", "httpx.delete", "requests.Session().delete", "httpx.Client().delete"}
)


@functools.lru_cache(maxsize=64)
def python_strings(code: str) -> tuple[str, ...]:
    """The strings Python code holds, with those it adds together (`".herm" + "es"`) added
    (adjacent literals are one string to the parser already). Not Python: none."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            found += _joined(node)
        elif isinstance(node, ast.JoinedStr):
            found.append(
                "".join(
                    v.value
                    for v in node.values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)
                )
            )
    return tuple(found[:4096])


def _joined(node: ast.BinOp) -> list[str]:
    """`a + "/.herm" + "es"`: the runs of strings added next to each other."""
    parts: list[ast.AST] = []
    stack: list[ast.AST] = [node]
    while stack and len(parts) < 256:
        current = stack.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
            stack += [current.right, current.left]
        else:
            parts.append(current)
    runs, run = [], ""
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            run += part.value
        elif run:
            runs.append(run)
            run = ""
    return [*runs, run] if run else runs


def python_imports(code: str) -> list[str]:
    """The files of the modules `code` imports, as they would be in the working directory
    (`import cleanup` runs cleanup.py when it is there): the caller knows which exist."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return []
    return [
        name.replace(".", "/") + ".py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in _imported(node)
    ]


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names, when they may be the working directory's."""
    if isinstance(node, ast.ImportFrom):
        return [node.module] if node.module and not node.level else []
    return [alias.name for alias in node.names]


def _keyword(call: ast.Call, name: str) -> object:
    value = next((k.value for k in call.keywords if k.arg == name), None)
    return _literal([value]) if value is not None else None


def _literal(nodes: Sequence[ast.AST]) -> object:
    if not nodes:
        return None
    try:
        return ast.literal_eval(nodes[0])
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None


def _os_open_reads(call: ast.Call) -> bool:
    """`os.open(p, os.O_RDONLY)`: the only flags that write nothing."""
    flags = call.args[1] if len(call.args) > 1 else None
    return isinstance(flags, ast.Attribute) and flags.attr == "O_RDONLY"
