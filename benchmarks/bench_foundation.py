"""Load + validate + stats on a generated 100,000-item TSV (Arabic and Tamil): wall time and peak memory.

    python benchmarks/bench_foundation.py [N=100000] [RUNS=5]

Each run is a fresh process (``piqa-tui validate`` then ``piqa-tui stats``'s work in
one interpreter, as the CLI does it), so import time is included.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

ONE_RUN = """
import json, resource, sys, time
t0 = time.perf_counter()
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.dataset.checks import check_items
from piqa_tui.core.report.stats import compute_stats
project = Project.open(sys.argv[1], create=False)
t1 = time.perf_counter()
problems = check_items(project.items, project.dataset.raw_ids)
t2 = time.perf_counter()
stats = compute_stats(project.items, project.dataset.meta_columns)
t3 = time.perf_counter()
print(json.dumps({"load": t1 - t0, "validate": t2 - t1, "stats": t3 - t2, "total": t3 - t0,
                  "items": stats.items, "problems": len(problems),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.tsv"
        subprocess.run([sys.executable, str(HERE / "make_large.py"), str(path), str(n)], check=True)
        results = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", ONE_RUN, str(path)], capture_output=True, text=True, check=True
                ).stdout
            )
            for _ in range(runs)
        ]
    for key in ("load", "validate", "stats", "total", "peak_mb"):
        print(
            f"{key:>9}: median {statistics.median(r[key] for r in results):.3f}  (runs: {', '.join(f'{r[key]:.3f}' for r in results)})"
        )
    print(f"items: {results[0]['items']}, problems: {results[0]['problems']}")


if __name__ == "__main__":
    main()
