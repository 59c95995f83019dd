"""Merging at scale: ``workspace merge`` of a laptop's 2 annotators' votes into the lead's copy, 20,000 items.

    python benchmarks/bench_merge.py [N_ITEMS=20000] [RUNS=3]

The data: ``make_large.py``'s items; the lead's workspace holds one annotator's votes (``votes import``), the
laptop's is a copy of it to which two more annotators' votes were imported, so each merge brings 2 × N new
events into a log of N. Each run merges into a fresh copy of the lead's workspace, the real command in a fresh
process (interpreter start and imports included); the figures are medians of RUNS, wall and CPU seconds. Run it
with ``PYTHONPATH`` naming another checkout to time that code on the same data.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh_process import Runs, byte_compile, cli, machine_line, run_once  # noqa: E402


def write_votes(path: Path, n: int, who: tuple[str, ...], seed: int) -> None:
    """One vote per item and annotator, long format with times of one past day."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("item_id\tannotator\tchoice\ttime\n")
        for i in range(n):
            for name in who:
                when = f"2026-11-20T{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
                fh.write(f"x{i}\t{name}\t{rng.randint(0, 1)}\t{when}\n")


def prepare(tmp: Path, n: int) -> tuple[Path, Path, Path]:
    """The dataset, the lead's workspace (one annotator) and the laptop's (a copy, plus two annotators)."""
    data = tmp / "large.tsv"
    subprocess.run([sys.executable, str(HERE / "make_large.py"), str(data), str(n)], check=True)
    lead, laptop = tmp / "lead.sqlite", tmp / "laptop.sqlite"
    write_votes(tmp / "lead.tsv", n, ("amina",), 3)
    write_votes(tmp / "laptop.tsv", n, ("yacine", "sara"), 4)
    for argv in (
        cli("votes", "import", str(data), str(tmp / "lead.tsv"), "--workspace", str(lead)),
        ["cp", str(lead), str(laptop)],
        cli("votes", "import", str(data), str(tmp / "laptop.tsv"), "--workspace", str(laptop)),
    ):
        subprocess.run(argv, check=True, capture_output=True)
    return data, lead, laptop


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    compiled = byte_compile()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        data, lead, laptop = prepare(tmp, n)
        merges = Runs(f"workspace merge, {2 * n:,} new votes into {n:,} ({n:,} items)")
        for run in range(runs):
            target = tmp / f"target{run}.sqlite"
            shutil.copyfile(lead, target)
            run_once(cli("workspace", "merge", str(data), str(laptop), "--workspace", str(target)), merges)
    print(machine_line())
    print(compiled)
    print(merges.line())


if __name__ == "__main__":
    main()
