"""The label audit at scale: ``piqa-tui audit`` on 100,000 items × 3 annotators and two stored model runs.

    python benchmarks/bench_audit.py [N_ITEMS=100000] [RUNS=3]

A generated dataset (``make_large.py``), 300,000 timed votes imported into its workspace (one careful
annotator, one average, one who drifts to random halfway), and two model runs stored in the
workspace's score cache, as ``piqa-tui score`` leaves them. Each figure is the wall time of the real
command in a fresh process (imports included), median of RUNS: ``audit --json`` (everything: the
votes with their times, Dawid–Skene, MACE, CROWDLAB over both runs, per-annotator figures) and
``agree --json``, which now carries the labels in doubt.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_votes import timed  # noqa: E402  (the real CLI in a fresh process, timed)

START = datetime(2026, 11, 20, 8)
ANNOTATORS = {"amina": 0.92, "yacine": 0.8, "sara": 0.9}


def gold_labels(data: Path) -> list[int]:
    with data.open(encoding="utf-8") as fh:
        next(fh)
        return [int(line.split("\t")[4]) for line in fh]


def write_votes(path: Path, gold: list[int], rng: random.Random) -> None:
    """Three votes an item, a vote every 5 to 60 s per annotator; sara votes at random after the first half.
    The truth is the gold label except on 2% of the items."""
    clock = dict.fromkeys(ANNOTATORS, 0.0)
    n = len(gold)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("item_id\tannotator\tchoice\ttime\n")
        for i in range(n):
            truth = gold[i] if rng.random() > 0.02 else 1 - gold[i]
            for who, accuracy in ANNOTATORS.items():
                clock[who] += rng.uniform(5, 60)
                careless = who == "sara" and i > n // 2
                choice = rng.randint(0, 1) if careless else (truth if rng.random() < accuracy else 1 - truth)
                stamp = (START + timedelta(seconds=int(clock[who]))).strftime("%Y-%m-%dT%H:%M:%SZ")
                fh.write(f"x{i}\t{who}\t{choice}\t{stamp}\n")


def store_runs(data: Path, gold: list[int], rng: random.Random) -> None:
    """Two model runs over every item, stored as ``piqa-tui score`` stores them."""
    from piqa_tui.core.scoring.backend import ContinuationScore
    from piqa_tui.core.scoring.cache import RunRecord, ScoreCache
    from piqa_tui.core.scoring.results import item_content_hash
    from piqa_tui.core.scoring.templates import get_template
    from piqa_tui.core.workspace.project import Project

    project = Project.open(data, annotator="bench")
    assert project.workspace is not None
    template = get_template("piqa")
    for m, strength in enumerate((1.5, 0.7)):
        rows = []
        for n, item in enumerate(project.items):
            logliks = [rng.gauss(-20, 1) + (strength if c == gold[n] else 0) for c in range(len(item.solutions))]
            rows.append((item_content_hash(item), tuple(ContinuationScore(v, 5) for v in logliks)))
        model = f"bench{m}.gguf:1:{m}"
        ScoreCache(project.workspace.conn).store(
            model, template.key, rows, RunRecord.of(model, f"bench{m}.gguf", template)
        )
    project.workspace.close()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "large.tsv"
        subprocess.run([sys.executable, str(HERE / "make_large.py"), str(data), str(n)], check=True)
        votes = Path(tmp) / "votes.tsv"
        gold = gold_labels(data)
        write_votes(votes, gold, rng)
        timed(["votes", "import", str(data), str(votes)])
        store_runs(data, gold, rng)
        audits = [timed(["audit", str(data), "--json"]) for _ in range(runs)]
        agrees = [timed(["agree", str(data), "--json"]) for _ in range(runs)]
    for name, times in (("audit --json", audits), ("agree --json (with the labels in doubt)", agrees)):
        spread = ", ".join(f"{t:.2f}" for t in times)
        print(f"{name}, {n} items x 3, 2 model runs: median {statistics.median(times):.2f} s (runs: {spread})")


if __name__ == "__main__":
    main()
