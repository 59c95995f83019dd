"""Votes at scale: import a 300,000-vote file and run ``agree`` on 100,000 items × 3 annotators.

    python benchmarks/bench_votes.py [N_ITEMS=100000] [RUNS=3]

Each figure is the wall time of the real command in a fresh process (imports
included), median of RUNS; each import starts from an empty workspace.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{args}: exit {proc.returncode}: {proc.stderr}")
    return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rng = random.Random(3)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "large.tsv"
        subprocess.run([sys.executable, str(HERE / "make_large.py"), str(data), str(n)], check=True)
        votes = Path(tmp) / "votes.tsv"
        with votes.open("w", encoding="utf-8") as fh:
            fh.write("item_id\tannotator\tchoice\ttime\n")
            for i in range(n):
                truth = rng.randint(0, 1)
                for who in ("amina", "yacine", "sara"):
                    choice = truth if rng.random() < 0.85 else 1 - truth
                    fh.write(
                        f"x{i}\t{who}\t{choice}\t2026-11-20T{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z\n"
                    )
        imports, agrees = [], []
        for run in range(runs):
            workspace = Path(tmp) / f"ws{run}.sqlite"
            imports.append(timed(["votes", "import", str(data), str(votes), "--workspace", str(workspace)]))
            agrees.append(timed(["agree", str(data), "--json", "--workspace", str(workspace)]))
    print(
        f"votes import, {3 * n} votes: median {statistics.median(imports):.2f} s (runs: {', '.join(f'{t:.2f}' for t in imports)})"
    )
    print(
        f"agree --json, {n} items x 3: median {statistics.median(agrees):.2f} s (runs: {', '.join(f'{t:.2f}' for t in agrees)})"
    )


if __name__ == "__main__":
    main()
