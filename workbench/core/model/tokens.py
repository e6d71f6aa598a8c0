"""How many tokens a request is, before it is sent.

Three ways to count, best first:
* the model's own tokenizer on the server that runs it (llama.cpp's POST /tokenize, for the
  bundled local model);
* a real tokenizer shipped with a package (`quicktok`: OpenAI's o200k and cl100k tables,
  Qwen's and Llama 3's) for model names we know, offline;
* otherwise an estimate of one token per three characters, which overcounts most text.

Whichever it is, the chat template and the tool definitions' rendering add tokens no text
count sees, so each reply's `usage.prompt_tokens` corrects the count (`Meter.observe`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import logging
import math
import os
import select
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from workbench.core.tools.definitions import ReadOnlyDict

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.0  # the estimate's ratio: conservative for English, code and JSON
PER_MESSAGE = 6  # role markers and separators a template adds around each message
PER_REQUEST = 12  # the reply's opening and the template's own framing
PER_DEFINITION = 1  # the separator between two tool definitions in the request's list
CACHE_SIZE = 1024
CHILD_TIMEOUT = 20.0  # seconds for the tokenizer's child process to answer a batch

# Model-name prefixes (after any "provider/" part) and the encoding their tokenizer uses.
ENCODINGS = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("qwen3", "qwen3"),
    ("qwen2.5", "qwen3"),  # Qwen2.5 and Qwen3 share one byte-level BPE vocabulary
    ("qwen2", "qwen3"),
    ("llama-3", "llama3"),
    ("llama3", "llama3"),
    ("meta-llama-3", "llama3"),
)


class Tokenizer(Protocol):
    name: str
    exact: bool

    def count(self, text: str) -> int: ...


class Estimate:
    """No tokenizer for this model: characters over three, rounded up."""

    name = "estimate"
    exact = False

    def count(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)


class Encoding:
    """A tokenizer table shipped in a package, loaded once per process (about a second)."""

    exact = True
    _loaded: dict[str, Any] = {}
    _lock = threading.Lock()

    def __init__(self, encoding: str) -> None:
        self.name = encoding
        self._encoder: Any = None

    def load(self) -> None:
        with self._lock:
            if self.name not in self._loaded:
                import quicktok

                self._loaded[self.name] = quicktok.get_encoding(self.name)
            self._encoder = self._loaded[self.name]

    def count(self, text: str) -> int:
        if self._encoder is None:
            self.load()
        # special-token text in a file is counted as plain text, never refused
        return len(self._encoder.encode(text, disallowed_special=()))


class ChildEncoding:
    """A shipped table, loaded and used in a child process of its own.

    Loading a table takes about a second during which the extension holds the interpreter's
    lock: in the workbench that froze the screen, and keys typed meanwhile reached the widget
    that had the focus before them ("/read_file" typed as the tree's sizes were first
    measured lost every letter). The child loads it instead; counts come back in batches,
    a line of JSON each way. The child ends when its stdin closes, so never outlives us.

    A child that does not answer within `timeout` seconds (the first answer loads the table:
    about 2 s on a busy 2-core machine) is stopped and the count fails, so the caller falls
    back to the estimate (`Meter`) instead of waiting on it for ever.
    """

    exact = True

    def __init__(
        self, encoding: str, timeout: float = CHILD_TIMEOUT, saved: SavedCounts | None = None
    ) -> None:
        self.name = encoding
        self.timeout = timeout
        self.saved = saved  # counts kept from earlier processes (the tools' definitions)

    def count(self, text: str) -> int:
        return self.count_many([text])[0]

    def start(self) -> None:
        """Start the child now, loading this table at once: counted later, its answers do
        not wait for the table (a command starts it, then waits for its MCP servers). Not
        when counts were kept: then most texts need no child at all."""
        if self.saved is not None and self.saved.counts(self.name):
            return
        with _child_lock:
            _child(self.name)

    def count_many(self, texts: list[str]) -> list[int]:
        """Each text's count: a kept one, else the child's (and kept)."""
        if self.saved is None:
            return self._ask(texts)
        kept = self.saved.counts(self.name)
        keys = [SavedCounts.key(t) for t in texts]
        missing = sorted({t for t, k in zip(texts, keys, strict=True) if k not in kept})
        if missing:
            fresh = dict(zip(missing, self._ask(missing), strict=True))
            self.saved.add(self.name, {SavedCounts.key(t): n for t, n in fresh.items()})
            kept = self.saved.counts(self.name)
        return [kept[k] for k in keys]

    def _ask(self, texts: list[str]) -> list[int]:
        request = json.dumps({"encoding": self.name, "texts": texts}, ensure_ascii=False)
        with _child_lock:
            try:
                answer = _exchange(_child(), (request + "\n").encode(), self.timeout)
                counts = json.loads(answer)
            except (OSError, ValueError):
                _stop_child()  # a child that died, hangs or answered nonsense is replaced
                raise
        if not isinstance(counts, list) or len(counts) != len(texts):
            raise ValueError(f"the tokenizer's process answered {answer[:200]!r}")
        return counts


class SavedCounts:
    """Counts of a table kept in a private file (HERMES_HOME/cache/token-counts.json), by
    each text's SHA-256 and the table's package version: the tools' definitions change
    seldom, and a command that only lists them then starts no tokenizer at all."""

    LIMIT = 20_000  # counts kept per table, the newest

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tables: dict[str, dict[str, int]] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> str:
        import hashlib

        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    @staticmethod
    @functools.cache  # a metadata lookup reads the path's dist-info folders: once a process
    def _table(encoding: str) -> str:
        from importlib import metadata

        try:
            return f"{encoding}@{metadata.version('quicktok')}"
        except metadata.PackageNotFoundError:
            return encoding

    def counts(self, encoding: str) -> dict[str, int]:
        with self._lock:
            return dict(self._load().get(self._table(encoding), {}))

    def add(self, encoding: str, counts: dict[str, int]) -> None:
        from workbench.core.storage.atomic import atomic_write_text, locked
        from workbench.core.storage.private import private_dir

        with self._lock:
            try:
                private_dir(self.path.parent)
                with locked(self.path):  # another process's counts, added meanwhile, kept
                    self._tables = None
                    self._merge(encoding, counts)
                    atomic_write_text(self.path, json.dumps(self._tables), 0o600)
            except OSError as exc:  # kept in this process only: counted again next time
                logger.debug("token counts not saved: %s", exc)
                self._merge(encoding, counts)

    def _merge(self, encoding: str, counts: dict[str, int]) -> None:
        table = self._load().setdefault(self._table(encoding), {})
        table.update(counts)
        for old in list(table)[: max(0, len(table) - self.LIMIT)]:
            del table[old]

    def _load(self) -> dict[str, dict[str, int]]:
        if self._tables is None:
            self._tables = {}
            from workbench.core.storage.yaml_file import read_text

            try:  # a regular file of bounded size only: a FIFO there never hangs a command
                data = json.loads(read_text(self.path, 8 * 1024 * 1024))
            except (OSError, ValueError):
                data = {}
            for name, table in data.items() if isinstance(data, dict) else ():
                if isinstance(table, dict):
                    self._tables[str(name)] = {
                        str(k): v for k, v in table.items() if type(v) is int and v >= 0
                    }
        return self._tables


_child_process: Any = None
_child_lock = threading.Lock()  # one batch at a time: a request, then its answer


def _child_command(preload: str = "") -> list[str]:
    import sys

    code = f"from workbench.core.model.tokens import serve; serve({preload!r})"
    return [sys.executable, "-c", code]


def _child(preload: str = "") -> Any:
    """The child (started if it is not running); `preload`: the table it loads as it starts."""
    global _child_process
    if _child_process is None or _child_process.poll() is not None:
        import subprocess

        _child_process = subprocess.Popen(
            _child_command(preload),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        atexit.register(_stop_child)
    return _child_process


def _exchange(child: Any, request: bytes, timeout: float) -> str:
    """Write `request` to the child and read its one-line answer, in `timeout` seconds in
    all: a child that stops reading (a full pipe) or never answers raises TimeoutError."""
    deadline = time.monotonic() + timeout
    into, out = child.stdin.fileno(), child.stdout.fileno()
    os.set_blocking(into, False)  # a batch larger than the pipe holds never blocks us
    pending, answer = memoryview(request), bytearray()
    while b"\n" not in answer:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the tokenizer's process did not answer within {timeout:g} s")
        readable, writable, _ = select.select([out], [into] if pending else [], [], left)
        if writable:
            try:
                pending = pending[os.write(into, pending) :]
            except BlockingIOError:  # the room select saw was taken: wait again
                pass
        if readable:
            chunk = os.read(out, 65536)
            if not chunk:
                raise OSError("the tokenizer's process ended")
            answer += chunk
    return answer[: answer.index(b"\n")].decode("utf-8")


def _stop_child() -> None:
    global _child_process
    child, _child_process = _child_process, None
    if child is None:
        return
    if child.poll() is None:
        child.kill()
        child.wait()
    for pipe in (child.stdin, child.stdout):
        with contextlib.suppress(OSError):
            pipe.close()


def serve(preload: str = "") -> None:
    """The child: counts each request's texts with its table (loaded once), a line each;
    `preload`'s table is loaded before the first request comes."""
    import sys

    from workbench.core.own_process import harden

    harden()  # it inherited the app's environment: its keys out of this process's /proc
    tables: dict[str, Encoding] = {}
    if preload:
        with contextlib.suppress(Exception):  # an unknown name fails its request, as before
            tables.setdefault(preload, Encoding(preload)).load()
    for line in sys.stdin.buffer:  # UTF-8 whatever the locale: the parent writes it so
        request = json.loads(line)
        table = tables.setdefault(request["encoding"], Encoding(request["encoding"]))
        sys.stdout.write(json.dumps([table.count(text) for text in request["texts"]]) + "\n")
        sys.stdout.flush()


class LlamaCpp:
    """The server's own tokenizer: llama.cpp's POST /tokenize, beside its /v1 API."""

    name = "llama.cpp"
    exact = True

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 10.0) -> None:
        root = base_url.rstrip("/")
        self.url = (root[: -len("/v1")] if root.endswith("/v1") else root) + "/tokenize"
        self.api_key = api_key
        self.timeout = timeout

    def count(self, text: str) -> int:
        body = json.dumps({"content": text, "add_special": False}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        import urllib.request  # only here: its import is a tenth of the tokenizer child's start

        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return len(json.loads(response.read())["tokens"])


def encoding_for(model: str) -> str | None:
    """The tokenizer table for a model name we know, or None."""
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, encoding in ENCODINGS:
        if name == prefix or name.startswith((prefix + "-", prefix + ".", prefix + ":")):
            return encoding
    return None


def tokenizer_for(
    model: str,
    *,
    llama_url: str | None = None,
    api_key: str | None = None,
    in_child: bool = False,
    saved: SavedCounts | None = None,
) -> Tokenizer:
    """The best tokenizer for a model: its server's, a shipped table, or the estimate.
    `in_child`: a table is used in a child process (a front end's loop must not stall)."""
    if llama_url:
        return LlamaCpp(llama_url, api_key)
    encoding = encoding_for(model)
    if encoding is not None:
        try:
            import quicktok  # noqa: F401
        except ImportError:
            return Estimate()
        return ChildEncoding(encoding, saved=saved) if in_child else Encoding(encoding)
    return Estimate()


class Meter:
    """Counts requests with a tokenizer, corrected by what the endpoint reports.

    `scale` is the endpoint's count over ours for the last request it answered: it takes in
    the template's framing and, for the estimate, how dense this conversation's text is.
    A tokenizer that fails (a server gone away) is replaced by the estimate, and said once.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        on_problem: Callable[[str], None] | None = None,
        cache_size: int = CACHE_SIZE,
    ):
        self.tokenizer = tokenizer
        self.cache_size = cache_size
        self.scale = 1.0
        self.on_problem = on_problem
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._definitions: dict[int, tuple[dict[str, Any], int]] = {}
        self._lock = threading.Lock()

    @property
    def exact(self) -> bool:
        return self.tokenizer.exact

    def text(self, text: str) -> int:
        """Tokens in a piece of text, uncorrected (cached: results are counted again and again)."""
        if not text:
            return 0
        with self._lock:
            if text in self._cache:
                self._cache.move_to_end(text)
                return self._cache[text]
        try:
            count = self.tokenizer.count(text)
        except Exception as exc:  # a tokenizer that fails must never stop a turn
            self._fall_back(exc)
            count = Estimate().count(text)
        with self._lock:
            self._cache[text] = count
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return count

    def _fall_back(self, exc: Exception) -> None:
        if isinstance(self.tokenizer, Estimate):
            return
        problem = (
            f"the {self.tokenizer.name} tokenizer failed ({type(exc).__name__}: {exc}); "
            "request sizes are estimated from now on"
        )
        logger.warning(problem)
        self.tokenizer = Estimate()
        with self._lock:
            self._cache.clear()
            self._definitions.clear()
        if self.on_problem is not None:
            self.on_problem(problem)

    def message(self, message: dict[str, Any]) -> int:
        count = PER_MESSAGE + self.text(_content_text(message.get("content")))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            count += PER_MESSAGE + self.text(str(function.get("name") or ""))
            count += self.text(str(function.get("arguments") or ""))
        return count

    def definition(self, definition: dict[str, Any]) -> int:
        """Tokens of one tool's definition as it is sent (cached by its text, and a shared
        read-only one by itself: writing a definition out as JSON costs more than its count)."""
        shared = isinstance(definition, ReadOnlyDict)  # never changed once built
        if shared:
            with self._lock:
                hit = self._definitions.get(id(definition))
            if hit is not None and hit[0] is definition:  # held here, so its id is its own
                return hit[1]
        count = self.text(json.dumps(definition, ensure_ascii=False)) + PER_DEFINITION
        if shared:
            with self._lock:
                if len(self._definitions) >= self.cache_size:
                    self._definitions.clear()
                self._definitions[id(definition)] = (definition, count)
        return count

    def definitions(self, definitions: list[dict[str, Any]]) -> list[int]:
        """Each definition's count; those not counted yet go to the tokenizer in one batch
        when it counts in batches (a table in a child process: one round trip)."""
        many = getattr(self.tokenizer, "count_many", None)
        if many is not None:
            fresh = {
                text
                for d in definitions
                if not self._known(d)
                and (text := json.dumps(d, ensure_ascii=False)) not in self._cache
            }
            self._count_many(many, sorted(fresh))
        return [self.definition(d) for d in definitions]

    def texts(self, texts: list[str]) -> list[int]:
        """Each text's count, those not counted yet in one batch (as `definitions`)."""
        many = getattr(self.tokenizer, "count_many", None)
        if many is not None:
            self._count_many(many, sorted({t for t in texts if t and t not in self._cache}))
        return [self.text(t) for t in texts]

    def _known(self, definition: dict[str, Any]) -> bool:
        hit = self._definitions.get(id(definition))
        return hit is not None and hit[0] is definition

    def _count_many(self, many: Callable[[list[str]], list[int]], texts: list[str]) -> None:
        if not texts:
            return
        try:
            counts = many(texts)
        except Exception as exc:  # counted one by one then, by the estimate
            self._fall_back(exc)
            return
        with self._lock:
            self._cache.update(zip(texts, counts, strict=True))
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def tools(self, definitions: list[dict[str, Any]]) -> int:
        """The tool definitions of a request: each one's count, plus the framing around them.

        Counted one definition at a time, so the parts add up to the whole (a tool's cost
        is the same wherever it is shown) and each count is cached while the set changes.
        """
        if not definitions:
            return 0
        return PER_MESSAGE + sum(self.definition(d) for d in definitions)

    def raw(self, messages: list[dict[str, Any]], definitions: list[dict[str, Any]]) -> int:
        """Our own count of a request, before the endpoint's correction."""
        return PER_REQUEST + sum(self.message(m) for m in messages) + self.tools(definitions)

    def request(self, messages: list[dict[str, Any]], definitions: list[dict[str, Any]]) -> int:
        return self.corrected(self.raw(messages, definitions))

    def corrected(self, raw: int) -> int:
        return math.ceil(raw * self.scale)

    def observe(self, raw: int, actual: int) -> None:
        """The endpoint counted `actual` prompt tokens for a request we counted as `raw`."""
        if raw <= 0 or actual <= 0:
            return
        # an exact tokenizer only misses framing, so it never scales down; the estimate may
        floor = 1.0 if self.exact else 0.5
        self.scale = min(4.0, max(floor, actual / raw))

    def chars_per_token(self) -> float:
        """How many characters a token holds here, on the safe side, to size results."""
        return max(1.5, min(4.0, CHARS_PER_TOKEN / self.scale))


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: their text counts
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return json.dumps(content, ensure_ascii=False)
