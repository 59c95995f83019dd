"""Votes at scale: ``votes import`` of 300,000 votes and ``agree --json`` on 100,000 items × 3 annotators.

    python benchmarks/bench_votes.py [N_ITEMS=100000] [RUNS=5]

Each figure is the real command in a fresh process (interpreter start and imports included), median of RUNS,
wall and CPU seconds (user + system of the process); each import starts from an empty workspace, and each
``agree --json`` reads the workspace the import before it left. Targets: import < 2 s, agree --json < 1 s.
The data: ``make_large.py``'s items, and three annotators who each pick a per-item truth 85% of the time, at
random times of one day (seed 3).
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh_process import Runs, byte_compile, cli, machine_line, run_once  # noqa: E402


def write_votes(path: Path, n: int) -> None:
    """Three votes per item, long format with times."""
    rng = random.Random(3)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("item_id\tannotator\tchoice\ttime\n")
        for i in range(n):
            truth = rng.randint(0, 1)
            for who in ("amina", "yacine", "sara"):
                choice = truth if rng.random() < 0.85 else 1 - truth
                fh.write(
                    f"x{i}\t{who}\t{choice}\t2026-11-20T{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z\n"
                )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    compiled = byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "large.tsv"
        subprocess.run([sys.executable, str(HERE / "make_large.py"), str(data), str(n)], check=True)
        votes = Path(tmp) / "votes.tsv"
        write_votes(votes, n)
        imports, agrees = Runs(f"votes import, {3 * n:,} votes"), Runs(f"agree --json, {n:,} items x 3")
        for run in range(runs):
            workspace = str(Path(tmp) / f"ws{run}.sqlite")
            run_once(cli("votes", "import", str(data), str(votes), "--workspace", workspace), imports)
            run_once(cli("agree", str(data), "--json", "--workspace", workspace), agrees)
    print(machine_line())
    print(compiled)
    print(imports.line())
    print(agrees.line())


if __name__ == "__main__":
    main()
