"""Benchmark: this machine's float32 matrix-product ceiling, and what it allows multilingual-e5-small.

Times numpy's matrix product (OpenBLAS) on e5-small's feed-forward shape
(2,048 tokens × 384 by 384 × 1,536, the token budget the ONNX engine runs a
graph with) on one thread and on every core, each in a fresh process (the
thread count is fixed when numpy loads), and prints GFLOP/s as the median of
``--runs``. From it, and e5-small's cost per token (2 × (4·384² + 2·384·1,536)
per layer, 12 layers) times the mean e5 token count of the PIQA-shaped texts
``bench_embed_engines.py`` embeds, it prints the most items/s e5 in float32
could reach here at 100% of that ceiling.

    python benchmarks/bench_matmul_peak.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

HIDDEN, FEED_FORWARD, LAYERS, TOKENS = 384, 1536, 12, 2048
FLOPS_PER_TOKEN = LAYERS * 2 * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FEED_FORWARD)

_CHILD = """
import json, time, numpy as np
rng = np.random.default_rng(0)
a = rng.random((%d, %d), dtype=np.float32); b = rng.random((%d, %d), dtype=np.float32)
for _ in range(3): a @ b
n = 40; start = time.perf_counter()
for _ in range(n): a @ b
print(json.dumps(2 * a.shape[0] * a.shape[1] * b.shape[1] * n / (time.perf_counter() - start) / 1e9))
""" % (TOKENS, HIDDEN, HIDDEN, FEED_FORWARD)


def gflops(threads: int) -> float:
    env = dict(
        os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads)
    )
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout))


def mean_e5_tokens(n: int) -> float:
    """Mean e5 token count of the first ``n`` PIQA-shaped texts (goal and both solutions), as the scan embeds them."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench_embed_engines import piqa_texts

    from piqa_tui.core.dedup.e5_embeddings import ONNX, E5Embedder
    from piqa_tui.core.dedup.e5_onnx import E5Tokens, read_model

    tokens = E5Tokens(read_model(E5Embedder(engine=ONNX).path)).content(piqa_texts(n))
    return statistics.fmean(len(t) for t in tokens)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--texts", type=int, default=1838, help="PIQA-shaped texts to count e5 tokens on")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    flags = sorted(f for f in open("/proc/cpuinfo").read().split() if f.startswith(("avx", "amx", "fma")))
    print(f"machine: {platform.processor() or platform.machine()}, {cores} cores, flags {' '.join(sorted(set(flags)))}")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    peak = {}
    for threads in sorted({1, cores}):
        runs = [gflops(threads) for _ in range(args.runs)]
        peak[threads] = statistics.median(runs)
        print(
            f"float32 matmul {TOKENS}x{HIDDEN} @ {HIDDEN}x{FEED_FORWARD}, {threads} thread(s): "
            f"median {peak[threads]:.1f} GFLOP/s (runs {min(runs):.1f}–{max(runs):.1f})"
        )
    tokens = mean_e5_tokens(args.texts)
    per_item = FLOPS_PER_TOKEN * tokens / 1e9
    print(
        f"e5-small: {FLOPS_PER_TOKEN / 1e6:.1f} MFLOP a token (matrix products), {tokens:.1f} tokens a "
        f"PIQA-shaped item: {per_item:.2f} GFLOP an item"
    )
    best = max(peak[cores], cores * peak[1])  # every core at one core's rate: an upper bound
    print(
        f"ceiling at 100% of {best:.0f} GFLOP/s (the larger of the {cores}-core figure and {cores} x one core's): "
        f"{best / per_item:.0f} items/s; 170 items/s would need {170 * per_item:.0f} GFLOP/s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
