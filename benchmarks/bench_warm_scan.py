"""Benchmark: a second ``dedup --semantic`` of a large file, every vector already in the workspace.

The first semantic scan of N items is embedding-bound (multilingual-e5-small:
~24 PIQA items/s on two cores, so 100,000 items take over an hour); every
later scan reads the vectors from the workspace's cache. This measures that
warm path end to end — opening the project, the lexical signal, reading the
cached vectors, standardising per script, the inverted-file search, the
translation rule between scripts, clustering — without spending an hour
embedding first: the cache is filled with stand-in unit vectors under the
default model's identity (so the model is never loaded; the script checks
it), one per distinct text, with planted near copies.

    python benchmarks/make_large.py /tmp/large.tsv 100000
    python benchmarks/bench_warm_scan.py /tmp/large.tsv [--runs 3]

The file of make_large.py is half Arabic, half Tamil: two scripts, so the
translation rule runs too, and it compares every item of one script with
every item of the other (the cost grows with the product of the two sides).
The stand-in vectors' values do not matter for the timings of the cache read,
the search and the rule, which do the same work whatever the vectors hold.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def fill_cache(path: Path) -> int:
    """Stand-in vectors for every distinct item text, under the e5 embedder's identity. Returns how many."""
    import numpy as np

    from piqa_tui.core.dedup.e5_embeddings import E5Embedder
    from piqa_tui.core.dedup.semantic import EmbeddingCache, text_hash
    from piqa_tui.core.workspace.log import open_existing
    from piqa_tui.core.workspace.project import Project

    project = Project.open(path, annotator="bench")
    texts = list(dict.fromkeys(item.text for item in project.items))
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(texts), 384)).astype(np.float32)
    copies = rng.integers(0, len(texts), len(texts) // 50)
    vectors[copies] = vectors[(copies + 1) % len(texts)] + 0.2 * rng.normal(size=(len(copies), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    conn = open_existing(project.workspace.path)
    cache = EmbeddingCache(conn)
    identity = E5Embedder().identity
    for s in range(0, len(texts), 5000):
        cache.put_many(identity, [(text_hash(t), v) for t, v in zip(texts[s : s + 5000], vectors[s : s + 5000])])
    conn.close()
    return len(texts)


def one_scan(path: Path) -> dict[str, float]:
    from piqa_tui.core.dedup import scan as duplicate_scan
    from piqa_tui.core.workspace.project import Project

    started = time.perf_counter()
    project = Project.open(path, annotator="bench")
    opened = time.perf_counter() - started
    loaded: list[object] = []
    original = duplicate_scan.choose_embedder

    def spy(conn, model=None):  # keeps the embedder to check that it never loaded the model
        embedder = original(conn, model)
        loaded.append(embedder)
        return embedder

    duplicate_scan.choose_embedder = spy
    try:
        t = time.perf_counter()
        result = duplicate_scan.scan(project, project.items, duplicate_scan.ScanRequest(semantic=True))
        seconds = time.perf_counter() - t
    finally:
        duplicate_scan.choose_embedder = original
    assert all(getattr(e, "_model", None) is None for e in loaded), "the model was loaded: the cache was not warm"
    signals: dict[str, int] = {}
    for c in result.clusters:
        signals[c.signal] = signals.get(c.signal, 0) + 1
    return {
        "open_s": opened,
        "scan_s": seconds,
        "clusters": len(result.clusters),
        "signals": signals,
        "model": result.model,
        "translation_model": result.translation_model,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.runs and len(sys.argv) > 1 and os.environ.get("BENCH_WARM_CHILD"):
        print(json.dumps(one_scan(args.path), ensure_ascii=False), flush=True)
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", flush=True)
        return
    print(f"filled the cache with {fill_cache(args.path):,} stand-in vectors", flush=True)
    import subprocess

    times = []
    for _ in range(args.runs):  # a fresh process per run
        done = subprocess.run(
            [sys.executable, __file__, str(args.path), "--runs", "1"],
            capture_output=True,
            text=True,
            env={**os.environ, "BENCH_WARM_CHILD": "1"},
        )
        print(done.stdout.strip() or done.stderr.strip()[-2000:], flush=True)
        for line in done.stdout.splitlines():
            if line.startswith("{"):
                times.append(json.loads(line)["scan_s"])
    if times:
        print(
            f"scan: median {statistics.median(times):.1f} s of {', '.join(f'{t:.1f}' for t in times)}; "
            f"load average {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
