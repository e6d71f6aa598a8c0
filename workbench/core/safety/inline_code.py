"""Code handed to an interpreter inline (`python -c`, `node -e`, `perl -e`, heredocs): what it
calls that changes files, runs commands (handed back to be judged as shell code) or cannot be
followed. Python is read with its own parser; Perl, Ruby, JavaScript and PHP token by token,
with strings, regular expressions and comments set aside."""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.core.safety.python_code import (
    CodeReads,
    python_effects,
    python_imports,
    python_reads,
)

INTERPRETERS = {
    **{name: "python" for name in ("python", "python2", "python3", "pypy", "pypy3")},
    "perl": "perl",
    "ruby": "ruby",
    **{name: "node" for name in ("node", "nodejs", "deno", "bun")},
    "php": "php",
}


def language_of(program: str) -> str | None:
    if program in INTERPRETERS:
        return INTERPRETERS[program]
    if re.fullmatch(r"python\d(?:\.\d+)?", program):
        return "python"
    return None


@dataclass(frozen=True, slots=True)
class CodeFinding:
    what: str  # for a person: the call, or why the code cannot be followed
    fork_bomb: bool = False
    kind: str = "call"  # "shell": runs `command`; "sql"; "delete"/"write" act on `path`
    command: str | None = None
    path: str | None = None
    recursive: bool = False
    unreadable: bool = False  # code it cannot follow: what it does is known when it runs


# Code that builds what it runs at run time: it cannot be read, so it asks.
_DYNAMIC = {
    "perl": re.compile(
        r"\beval\s*[\$'\"q(]|\bdo\s+[\$'\"]|\brequire\s+\$|\bqx\b|\bsyscall\b|&\s*[{$]"
    ),
    "ruby": re.compile(
        r"\b(?:eval|instance_eval|class_eval|module_eval|send|public_send|__send__|const_get|"
        r"method|load|require)\b\s*\(?\s*[^'\"\s]|\bKernel\."
    ),
    "node": re.compile(
        r"\b(?:eval|Function|setTimeout|setInterval)\s*\(\s*[^)\s]|\bimport\s*\(|"
        r"\brequire\s*\(\s*[^'\"\s]|process\.binding|\brunIn\w*Context\b|\bvm\.Script\b|"
        r"\b(?:fs|process|child_process|globalThis|global|module|require\([^)]*\))\s*\["
    ),
    "php": re.compile(
        r"\b(?:eval|assert|create_function|call_user_func\w*|include|require)\b|\$\w+\s*\("
    ),
}
_FORK_LOOP = re.compile(
    r"\bfork\b[^;]*\b(?:while|until|for|loop)\b|\b(?:while|until|loop|for)\b[^;]*\bfork\b"
)


def judge_code(language: str, code: str) -> list[CodeFinding]:
    """What `code` does that needs approval: destructive calls, commands it runs (to be judged
    as shell code), or code it cannot follow."""
    if language == "python":
        found = [
            CodeFinding(f.what, f.fork_bomb, f.kind, f.command, f.path, f.recursive, f.unreadable)
            for f in python_effects(code)
        ]
        return found + [  # judged by the caller, who knows which files the session wrote
            CodeFinding(f"imports {path}", kind="module", path=path)
            for path in python_imports(code)
        ]
    return other_effects(language, code)


def code_reads(language: str, code: str) -> CodeReads:
    """The files `code` reads (Python: followed through its parser; the others: every
    path-like string of code that reads files, and whether what it reads may be built from
    the home or the environment at run time)."""
    if language == "python":
        return python_reads(code)
    calls = _READ_CALLS.get(language)
    if calls is None or len(code) > MAX_CODE:
        return CodeReads()
    blank, strings = blank_strings(language, code)
    if not calls.search(blank):
        return CodeReads()
    paths = [
        s.value
        for s in strings
        if s.value.startswith((".", "~", "/")) or "/" in s.value
        if len(s.value) <= 4096 and not any(c.isspace() for c in s.value)
    ]
    reach = _REACHES[language].search(code)  # strings interpolate too: "$ENV{HOME}/x"
    far = next((p for p in paths if p.startswith(("~", "/")) or ".." in p.split("/")), None)
    why = f"it uses {reach.group(0)}" if reach else f"it names {far[:80]!r}" if far else ""
    return CodeReads(tuple(dict.fromkeys(paths)), computed=True, reach=why)


# Calls that read files (or copy them), by language; and what reaches the home or the
# environment, from which a path read at run time may be built.
_READ_CALLS = {
    "node": re.compile(
        r"\b(?:readFileSync|readFile|createReadStream|openSync|open|copyFileSync|copyFile|"
        r"cpSync|cp|readTextFile|readTextFileSync|file)\s*\("
    ),
    "perl": re.compile(r"\b(?:open|sysopen|slurp|read_file|copy)\b|<\s*\$?\w*\s*>"),
    "ruby": re.compile(
        r"\b(?:File|IO)\.(?:read|readlines|binread|open|foreach|new)\b|\bopen\s*\(|"
        r"\bFileUtils\.(?:cp|copy|cp_r)\b"
    ),
    "php": re.compile(
        r"\b(?:file_get_contents|fopen|file|readfile|copy|highlight_file|show_source|"
        r"parse_ini_file)\s*\("
    ),
}
_REACHES = {
    "node": re.compile(r"process\.env|homedir|userInfo|Deno\.env|Bun\.env"),
    "perl": re.compile(r"\$ENV\b|\bglob\b|getpw\w*|File::HomeDir|<\s*~"),
    "ruby": re.compile(r"\bENV\b|Dir\.home|expand_path|\bEtc\.|Dir\.glob|Dir\["),
    "php": re.compile(r"\bgetenv\b|\$_SERVER|\$_ENV|posix_getpw\w*|\bglob\s*\("),
}


# -- perl, ruby, node, php: read token by token ---------------------------------------------


@dataclass(frozen=True, slots=True)
class _String:
    start: int
    end: int
    value: str
    quote: str  # ', " or ` (a command in perl, ruby and php); "" for an unterminated one


_QUOTE_OPS = re.compile(r"(?<![\w$@%&])(qq|qw|qx|qr|q|m|s|tr|y)\s*([/|!#{(\[<'\"~@%^:`])")
_PERCENT = re.compile(r"%([qQwWxrsi]?)([^\w\s])")
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_REGEX_BEFORE = set("(,=~!{};:[&|?^+-*")
_REGEX_WORDS = re.compile(r"\b(?:if|unless|and|or|not|split|grep|return|when|while|until|map)\s*$")


def _delimited(code: str, i: int, open_: str) -> int:
    """Index just past the text delimited by `open_` starting at code[i] (after `open_`)."""
    close = _PAIRS.get(open_, open_)
    depth = 1
    while i < len(code):
        c = code[i]
        if c == "\\":
            i += 2
            continue
        if c == close and open_ != close:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == open_ and open_ != close:
            depth += 1
        elif c == close:
            return i + 1
        i += 1
    return len(code) + 1  # never closed: one past the end says so


def blank_strings(language: str, code: str) -> tuple[str, list[_String]]:
    """`code` with the inside of every string, regex and comment blanked, and the strings."""
    out = list(code)
    strings: list[_String] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        start = i
        if c in "'\"`":
            end = _delimited(code, i + 1, c)
            strings.append(_String(start, end, _unescape(code[i + 1 : end - 1]), c))
        elif (
            c == "#"
            and language in ("perl", "ruby", "php", "awk")
            and (i == 0 or code[i - 1] in " \t\n;{(")
        ) or (c == "/" and language == "node" and code[i : i + 2] == "//"):
            end = code.find("\n", i)
            end = n if end < 0 else end
        elif c == "/" and language == "node" and code[i : i + 2] == "/*":
            end = code.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c == "/" and _regex_here(code, i):
            end = _delimited(code, i + 1, "/")
        elif (
            language == "perl"
            and (m := _QUOTE_OPS.match(code, i))
            and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] in "_$@%&>-"))
        ):
            end = _delimited(code, m.end(), m.group(2))
            if m.group(1) in ("s", "tr", "y") and end <= n:  # a second part: s/a/b/, s{a}{b}
                opener = m.group(2)
                if opener in _PAIRS:
                    j = end
                    while j < n and code[j].isspace():
                        j += 1
                    end = _delimited(code, j + 1, code[j]) if j < n else n + 1
                else:
                    end = _delimited(code, end, opener)
            quote = "`" if m.group(1) == "qx" else "'"
            strings.append(_String(start, end, code[m.end() : end - 1], quote))
        elif (
            language == "ruby"
            and (m := _PERCENT.match(code, i))
            and (i == 0 or code[i - 1] in " \t(=,[{;!")
        ):
            end = _delimited(code, m.end(), m.group(2))
            quote = "`" if m.group(1) == "x" else "'"
            strings.append(_String(start, end, code[m.end() : end - 1], quote))
        else:
            i += 1
            continue
        if end > n:
            end = n
            strings.append(_String(start, n, code[start:], ""))  # runs to the end: unreadable
        for j in range(start + 1, max(start + 1, end - 1)):
            out[j] = " " if out[j] != "\n" else "\n"
        i = max(end, i + 1)
    return "".join(out), strings


MAX_CODE = 16 * 1024  # a one-liner longer than this is read too slowly to wait for: it asks
_LOOKBACK = 200  # how far back the context of a token is read (keeps reading linear)


def _regex_here(code: str, i: int) -> bool:
    before = code[max(0, i - _LOOKBACK) : i].rstrip()
    return not before or before[-1] in _REGEX_BEFORE or bool(_REGEX_WORDS.search(before))


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


_RUNNERS = {
    "perl": re.compile(r"\b(?:system|exec)\b"),
    "ruby": re.compile(r"\b(?:system|exec|spawn|IO\.popen|Open3\.\w+|Kernel\.system)\b"),
    "node": re.compile(
        r"\b(?:execSync|spawnSync|execFileSync|execFile|exec|spawn|Bun\.spawn|Bun\.spawnSync)\s*\("
    ),
    "php": re.compile(r"\b(?:system|exec|shell_exec|passthru|proc_open|popen|pcntl_exec)\s*\("),
}
# A child_process runner named but not called there (renamed, assigned, bound): what it runs
# later cannot be followed. A plain destructuring (`{execSync, spawn}`) keeps the name.
_NODE_HANDED_ON = re.compile(
    r"\b(execSync|spawnSync|execFileSync|execFile|exec|spawn)\b(?!\s*[(,}])(?!\s*$)"
)
_CHANGES = {
    "perl": re.compile(
        r"\b(?:unlink|rmdir|rmtree|remove_tree|rename|truncate|move|copy|remove|kill|chmod|"
        r"chown|symlink|link)\b"
    ),
    "ruby": re.compile(
        r"\b(?:File\.(?:delete|unlink|write|truncate|rename|binwrite)|IO\.(?:write|binwrite)|"
        r"FileUtils\.(?!mkdir|mkdir_p|makedirs|mkpath|pwd|cd|chdir|compare_file|identical|cmp|uptodate|touch)\w+|"
        r"Dir\.(?:delete|rmdir|unlink))|\.(?:rmtree|delete|unlink|rmdir)\b(?=\s*(?:\(|$|;))"
    ),
    "node": re.compile(
        r"\b(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync|writeFile|writeFileSync|truncate|"
        r"truncateSync|rename|renameSync|copyFile|copyFileSync|cp|cpSync|createWriteStream|"
        r"openSync|appendFile|appendFileSync|ftruncate|ftruncateSync|symlink|symlinkSync|"
        r"link|linkSync|chmod|chmodSync|chown|chownSync|process\.kill|fork|removeSync|"
        r"emptyDir|emptyDirSync|outputFile|outputFileSync|moveSync|copySync|deleteSync|"
        r"Deno\.(?:remove|removeSync|writeTextFile|writeFile|truncate)|Bun\.write)\s*\("
    ),
    "php": re.compile(r"\b(?:unlink|rmdir|file_put_contents|rename|copy|ftruncate)\s*\("),
}
_WRITE_OPEN = {
    "perl": re.compile(r"\bopen\s*\(?\s*[^,;]*,\s*$"),
    "ruby": re.compile(r"\b(?:File|IO)\.open\s*\(?\s*$"),
    "php": re.compile(r"\bfopen\s*\(\s*$"),
}


def other_effects(language: str, code: str) -> list[CodeFinding]:
    """Perl, Ruby, JavaScript and PHP: the calls that change files or run commands, read with
    strings and comments set aside (a string that mentions `unlink` calls nothing)."""
    if language in ("perl", "ruby") and _FORK_LOOP.search(code):
        return [CodeFinding("forks in a loop: a fork bomb", fork_bomb=True)]
    if len(code) > MAX_CODE:
        return [CodeFinding(f"{len(code)} characters of code, too long to check here")]
    blank, strings = blank_strings(language, code)
    found: list[CodeFinding] = []
    if any(not s.quote for s in strings):
        found.append(CodeFinding("a string or pattern that never ends: code it cannot follow"))
    runner = _RUNNERS.get(language)
    node_children = (
        language != "node"
        or any("child_process" in s.value for s in strings)
        or "child_process" in blank
    )
    for match in runner.finditer(blank) if runner and node_children else ():
        found.append(
            CodeFinding(
                f"{match.group(0).rstrip('( ')} runs a command",
                kind="shell",
                command=call_arguments(blank, strings, match.end()),
            )
        )
    if language == "node" and node_children:  # `{execSync: run}`, `run = cp.execSync`
        for match in _NODE_HANDED_ON.finditer(blank):
            found.append(CodeFinding(f"hands {match.group(1)} on to be called under another name"))
    if language == "node":
        found += _node_by_name(blank, strings)
        found += _node_computed(blank, strings)
    for string in strings:
        if string.quote == "`" and language in ("perl", "ruby", "php"):
            found.append(CodeFinding("backticks run a command", kind="shell", command=string.value))
    for match in _CHANGES.get(language, re.compile(r"(?!)")).finditer(blank):
        found.append(CodeFinding(match.group(0).rstrip("( ")))
    found += _opens(language, blank, strings)
    if language == "node":
        found += _node_imports(blank, strings)
    if language == "php":  # array_map("unlink", ...): a function named by a string
        found += [
            CodeFinding(f"calls {s.value} by name")
            for s in strings
            if _PHP_CALLABLES.fullmatch(s.value)
            and _PHP_CALLBACK.search(blank[max(0, s.start - _LOOKBACK) : s.start])
        ]
    if language == "node" and re.search(r"method\s*:\s*['\"]DELETE['\"]", code, re.IGNORECASE):
        found.append(CodeFinding("an HTTP DELETE request"))
    dynamic = _DYNAMIC.get(language)
    unfollowed = dynamic.search(blank) if dynamic else None
    if unfollowed:
        found.append(CodeFinding(f"{unfollowed.group(0).strip()}: code it cannot follow"))
    return found


_PHP_CALLABLES = re.compile(
    r"unlink|rmdir|system|exec|shell_exec|passthru|proc_open|popen|file_put_contents|rename|"
    r"fopen|copy|ftruncate|assert|eval|call_user_func(?:_array)?|create_function"
)


_PHP_CALLBACK = re.compile(
    r"\b(?:array_map|array_walk|array_filter|call_user_func(?:_array)?|forward_static_call"
    r"(?:_array)?|register_shutdown_function|usort|uasort|uksort|iterator_apply)\s*\([^;]*$"
)


# A function that changes files or runs programs, named where it is not called: renamed in
# a destructuring (`{unlinkSync: u}`) or looked up with a string (`fs["unlinkSync"]`).
_NODE_NAMES = re.compile(
    r"(?:unlink|rm|rmdir|writeFile|appendFile|truncate|ftruncate|rename|copyFile|cp|open|"
    r"symlink|link|chmod|chown|exec|execFile|spawn|fork)(?:Sync)?|createWriteStream"
)
# Modules whose calls change files or run programs, whatever they are named.
_NODE_MODULES = frozenset(
    {"rimraf", "del", "shelljs", "execa", "zx", "cross-spawn", "trash", "fs-extra", "node-pty"}
)


def _node_by_name(blank: str, strings: list[_String]) -> list[CodeFinding]:
    found = []
    for match in re.finditer(r"\b(\w+)\s*:\s*[A-Za-z_$]", blank):
        before = blank[: match.start()].rstrip()
        if _NODE_NAMES.fullmatch(match.group(1)) and before.endswith(("{", ",")):
            found.append(CodeFinding(f"renames {match.group(1)}: code it cannot follow"))
    for string in strings:
        before = blank[: string.start].rstrip()
        if before.endswith("[") and _NODE_NAMES.fullmatch(string.value):
            found.append(CodeFinding(f"looks {string.value} up by name: code it cannot follow"))
        if string.value in _NODE_MODULES and re.search(r"\b(?:require|import)\s*\(?\s*$", before):
            found.append(CodeFinding(f"loads {string.value}, which changes files or runs programs"))
        if string.value in _NODE_MODULES and re.search(r"\bfrom\s*$", before):
            found.append(CodeFinding(f"loads {string.value}, which changes files or runs programs"))
    return found


# Modules (and globals) whose functions change files, run programs or load code.
_NODE_RISKY = frozenset(
    {"fs", "fs/promises", "child_process", "vm", "module", "worker_threads", "process"}
    | _NODE_MODULES
)
_NODE_GLOBALS = r"(?:fs|process|child_process|globalThis|global|module|require)"


def _node_computed(blank: str, strings: list[_String]) -> list[CodeFinding]:
    """`const f = fs; f[x](p)`, `const f = require('fs'); f['unl' + 'ink'](p)`,
    `const {[m]: f} = fs`, `Reflect.get(fs, m)`: a function of such a module looked up by a
    name computed at run time, under a name of its own. What it calls cannot be known."""
    by_start = {s.start: s for s in strings}
    aliases: set[str] = set()
    for match in re.finditer(r"\b(?:const|let|var)?\s*([A-Za-z_$][\w$]*)\s*=(?!=)\s*", blank):
        rest = blank[match.end() :]
        if re.match(rf"{_NODE_GLOBALS}\b(?:\.promises)?(?!\s*[(\[]|\.\w)", rest):
            aliases.add(match.group(1))
        loaded = re.match(r"(?:await\s+)?(?:require|import)\s*\(\s*", rest)
        module = by_start.get(match.end() + loaded.end()) if loaded else None
        if module is not None and module.value.removeprefix("node:") in _NODE_RISKY:
            aliases.add(match.group(1))
    for match in re.finditer(r"\bimport\s+(?:\*\s*as\s+)?([A-Za-z_$][\w$]*)\s+from\s*", blank):
        module = by_start.get(match.end())
        if module is not None and module.value.removeprefix("node:") in _NODE_RISKY:
            aliases.add(match.group(1))
    aliases -= {"fs", "process", "child_process", "globalThis", "global", "module", "require"}
    found = [  # (the modules' own names are in _DYNAMIC)
        CodeFinding(
            f"{name}[...] looks a function of a module up by a computed name: code it cannot follow"
        )
        for name in sorted(aliases)
        if re.search(rf"(?<![\w$.]){re.escape(name)}\s*(?:\?\.)?\[", blank)
    ]
    if re.search(r"\b(?:const|let|var)\s*\{[^}]*\[", blank):
        found.append(CodeFinding("destructures a computed name: code it cannot follow"))
    held = "|".join([_NODE_GLOBALS, *map(re.escape, sorted(aliases))])
    reflected = rf"\b(?:Reflect\.(?:get|apply)|Object\.(?:values|entries))\s*\(\s*(?:{held})\b"
    if re.search(reflected, blank):
        found.append(CodeFinding("looks a function up by reflection: code it cannot follow"))
    return found


def _node_imports(blank: str, strings: list[_String]) -> list[CodeFinding]:
    """`require(...)` and `import(...)` of anything but one written-out module name: which
    module it loads (child_process, under another spelling) cannot be known."""
    by_start = {s.start: s for s in strings}
    for match in re.finditer(r"\b(?:require|import)\s*\(", blank):
        i = match.end()
        while i < len(blank) and blank[i].isspace():
            i += 1
        string = by_start.get(i)
        rest = blank[string.end :].lstrip() if string is not None else ""
        if string is None or string.quote == "`" or not rest.startswith(")"):
            return [
                CodeFinding(
                    f"{match.group(0)}...) of a module named at run time: code it cannot follow"
                )
            ]
    return []


def call_arguments(blank: str, strings: list[_String], at: int) -> str | None:
    """The command a runner is given at `at`: written-out strings (joined), else None."""
    by_start = {s.start: s for s in strings}
    i, n, words = at, len(blank), []
    while i < n and blank[i] in " \t(":
        i += 1
    while i < n and i in by_start:
        words.append(by_start[i].value)
        i = by_start[i].end
        while i < n and blank[i] in " \t":
            i += 1
        if i < n and blank[i] == ",":
            i += 1
            while i < n and blank[i] in " \t":
                i += 1
            continue
        break
    rest = blank[i:].lstrip()
    if words and (not rest or rest[0] in ");}" or rest.startswith(("{", "or ", "||", "and "))):
        return " ".join(words)
    return None


def _opens(language: str, blank: str, strings: list[_String]) -> list[CodeFinding]:
    """open(F, ">file"), open(F, "|cmd"), File.open(f, "w"), fopen(f, "w")."""
    pattern = _WRITE_OPEN.get(language)
    if pattern is None:
        return []
    found = []
    for string in strings:
        before = blank[max(0, string.start - _LOOKBACK) : string.start]
        value = string.value.strip()
        if language == "perl" and re.search(r"\bopen\s*\(?[^;]*$", before):
            if value.startswith("|") or value.endswith("|") or value in ("|-", "-|"):
                found.append(
                    CodeFinding(
                        "open runs a command",
                        kind="shell",
                        command=value.strip("|-").strip() or None,
                    )
                )
            elif value.startswith(("+<", ">", "+>")) or value == ">":
                found.append(CodeFinding(f"open {value} writes a file"))
        elif (
            language == "ruby" and value.startswith("|") and re.search(r"\bopen\s*\(?\s*$", before)
        ):
            found.append(
                CodeFinding("open runs a command", kind="shell", command=value[1:] or None)
            )
        elif (
            language in ("ruby", "php")
            and re.search(r"(?:open|fopen|new)\s*\([^;)]*,\s*$", before)
            and set(value) & set("wa+")
        ):
            found.append(CodeFinding(f"opens a file for writing ({value!r})"))
    return found
