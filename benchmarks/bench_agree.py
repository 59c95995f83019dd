"""Time the agreement report alone (the statistics, intervals included) on 100,000 items × 3 annotators.

Run: ``python benchmarks/bench_agree.py [--items N] [--annotators A] [--runs R]``.
Prints the median wall and CPU time of R runs in this process, from vote triples (encoding included) and from an
already encoded :class:`VoteTable`. The whole ``agree --json`` command in fresh processes (reading the dataset
and the workspace, the labels in doubt, position preference, the JSON) is ``bench_votes.py``'s second figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from piqa_tui.core.votes.agreement import VoteTable, agreement_report

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_process import machine_line  # noqa: E402


def make_votes(n_items: int, n_annotators: int, seed: int = 0) -> tuple[list[tuple[str, str, int]], dict[str, int]]:
    """Votes where each annotator picks the gold label 80% of the time, plus the gold labels."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n_items)
    noise = rng.random((n_items, n_annotators)) < 0.2
    choices = np.where(noise, rng.integers(0, 2, (n_items, n_annotators)), gold[:, None]).tolist()
    ids = [f"item-{i:06d}" for i in range(n_items)]
    names = [f"annotator{a}" for a in range(n_annotators)]
    votes = [(ids[i], names[a], row[a]) for i, row in enumerate(choices) for a in range(n_annotators)]
    return votes, dict(zip(ids, gold.tolist()))


def median_seconds(fn: Callable[[], object], runs: int) -> str:
    """Median wall and CPU time of ``runs`` calls."""
    wall, cpu = [], []
    for _ in range(runs):
        start, used = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return f"{statistics.median(wall):.3f} s wall, {statistics.median(cpu):.3f} s CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    votes, gold = make_votes(args.items, args.annotators)
    table = VoteTable.from_votes(votes, 2)
    from_triples = median_seconds(lambda: agreement_report(votes, 2, gold=gold), args.runs)
    from_table = median_seconds(
        lambda: agreement_report(
            VoteTable(table.item, table.annotator, table.choice, table.items, table.annotators, 2), gold=gold
        ),
        args.runs,
    )
    report = agreement_report(table, gold=gold)
    print(machine_line())
    print(f"{args.items:,} items × {args.annotators} annotators ({len(votes):,} votes), median of {args.runs} runs")
    print(f"  full report from vote triples: {from_triples}")
    print(f"  full report from a VoteTable:  {from_table}")
    print(f"  Fleiss' κ = {report.fleiss.value:.4f}, Krippendorff's α = {report.krippendorff.value:.4f}")


if __name__ == "__main__":
    main()
