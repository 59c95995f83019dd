"""Which offline embedding model finds translations and paraphrases: the figures behind the default.

    python benchmarks/bench_multilingual.py [--models e5,minilm,gemma] [--limit N] [--cache FILE]

Held-out pairs built from real data (tests/data, see its README):

* ``ta-en``: XCOPA Tamil items and their English translations (XCOPA's own
  machine translation, ``data-gmt``), 600 pairs;
* ``ta-it``: the same Tamil items and XCOPA Italian, both translated by people
  from the same English COPA items, 600 pairs;
* ``en-it``: the English and Italian sides of those pairs;
* ``msa``: the paraphrase planted in samples/msa-culture.tsv (``msa-023``
  rewords ``msa-002``): its cosine against the most similar pair of the
  other, distinct MSA items.

For each language pair: top-1 retrieval (is the nearest item of the other side
the translation?), the median cosine of true pairs, the maximum cosine of
false pairs, recall and precision at the cosine ``--threshold``; then the
translation rule of core/dedup/translation.py (each side standardised, mutual
nearest neighbours above chance) with every item translated, half of them, and
none (found / reported / true pairs). For the planted near copies and the
paraphrase of the samples: their cosine, whether it is the nearest, and the
highest cosine of distinct items of the same file, raw and standardised. Also
embedding throughput (items/s) per model. Prints one JSON line per model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = ROOT / "tests" / "data"

from piqa_tui.core.dedup.semantic import text_hash  # noqa: E402  (after the path is set)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def xcopa(folder: str, suffix: str) -> list[str]:
    rows = [r for split in ("val", "test") for r in _jsonl(DATA / folder / f"{split}.{suffix}.jsonl")]
    return [" ".join((r["premise"], r["choice1"], r["choice2"])) for r in rows]


def embedder(name: str, cache=None):
    """The embedders compared: the packaged MiniLM, the packaged Gemma, or a sentence-transformers model by name."""
    from piqa_tui.core.dedup.gguf_embeddings import GgufEmbedder
    from piqa_tui.core.dedup.semantic import SentenceTransformerEmbedder

    if name == "minilm":
        return SentenceTransformerEmbedder.packaged(cache=cache)
    if name == "gemma":
        return GgufEmbedder.packaged(cache=cache)
    if name == "e5":
        from piqa_tui.core.dedup.e5_embeddings import E5Embedder

        return E5Embedder.packaged(cache=cache)
    return SentenceTransformerEmbedder(name, cache=cache)


def pair_figures(a, b, threshold: float) -> dict[str, float]:
    """Raw cosines: top-1 retrieval, true median, false max, and recall/precision at ``threshold``."""
    import numpy as np

    sims = a @ b.T
    n = len(a)
    true = np.diag(sims)
    false = sims[~np.eye(n, dtype=bool)]
    found = int((true >= threshold).sum())
    wrong = int((false >= threshold).sum())
    return {
        "top1": round(float((sims.argmax(axis=1) == np.arange(n)).mean()), 3),
        "true_median": round(float(np.median(true)), 3),
        "false_max": round(float(false.max()), 3),
        "recall": round(found / n, 3),
        "precision": round(found / max(1, found + wrong), 3),
    }


def rule_figures(a, b, standardise: bool = True, min_excess: float | None = None) -> dict[str, object]:
    """The translation rule of core/dedup/translation.py (each side standardised on its own, mutual nearest
    neighbours above chance) in three settings: ``full`` (every item has its translation on the other side),
    ``partial`` (first half of a against the last three quarters of b: half the items have one) and
    ``none`` (first half of a against the second half of b: no item has one). Found / reported / true."""
    import numpy as np

    from piqa_tui.core.dedup.translation import MIN_EXCESS, standardised, translation_pairs

    n = len(a)
    z = np.vstack([standardised(a, ["a"] * n), standardised(b, ["b"] * n)]) if standardise else np.vstack([a, b])
    out: dict[str, object] = {"top1_rule": round(float(((z[:n] @ z[n:].T).argmax(axis=1) == np.arange(n)).mean()), 3)}
    for name, (ia, ib) in {
        "full": (range(n), range(n)),
        "partial": (range(n // 2), range(n // 4, n)),
        "none": (range(n // 2), range(n // 2, n)),
    }.items():
        rows = np.array([*ia, *(n + k for k in ib)])
        vectors = np.vstack([a, b])[rows]
        labels = ["a"] * len(ia) + ["b"] * len(ib)
        found = translation_pairs(
            vectors,
            labels,
            np.arange(len(ia)),
            np.arange(len(ia), len(rows)),
            standardise=standardise,
            min_excess=MIN_EXCESS if min_excess is None else min_excess,
        )
        right = int((rows[found.i] + n == rows[found.j]).sum())
        out[name] = f"{right}/{len(found.i)}/{len(set(ia) & set(ib))}"
    return out


# samples/README.md: exact copies planted in the samples, left out of the "distinct" items.
SAMPLE_EXACT = {"dz-029", "dz-008", "ma-034", "ma-018", "ta-030", "ta-018", "bn-031", "bn-017"}
SAMPLE_PAIRS = {  # samples/README.md: planted (copy, original) pairs that are not exact copies
    "darija-algerian.tsv": [("dz-019", "dz-006", "near")],
    "darija-moroccan.tsv": [("ma-027", "ma-023", "near")],
    "tamil.tsv": [("ta-021", "ta-005", "near")],
    "bengali.tsv": [("bn-024", "bn-009", "near")],
    "msa-culture.tsv": [("msa-023", "msa-002", "paraphrase")],
}


def sample_pairs(model, standardise: bool) -> dict[str, object]:
    """Each planted near copy and paraphrase of the samples: its cosine, whether it is its item's nearest
    neighbour in its file, and the highest cosine of two distinct other items of the file."""
    import numpy as np

    from piqa_tui.core.dataset.reading import load_dataset
    from piqa_tui.core.dedup.translation import standardised

    out: dict[str, object] = {}
    for file, pairs in SAMPLE_PAIRS.items():
        items = load_dataset(ROOT / "samples" / file).items
        vectors = model.embed([it.text for it in items])
        if standardise:
            vectors = standardised(vectors, ["one"] * len(items))
        sims = vectors @ vectors.T
        np.fill_diagonal(sims, -np.inf)
        at = {it.id: k for k, it in enumerate(items)}
        planted = {at[x] for pair in pairs for x in pair[:2]} | {at[x] for x in SAMPLE_EXACT if x in at}
        others = [k for k in range(len(items)) if k not in planted]
        distinct_max = float(sims[np.ix_(others, others)].max())
        for copy, original, kind in pairs:
            c, o = at[copy], at[original]
            out[f"{kind} {copy}"] = {
                "cosine": round(float(sims[c, o]), 3),
                "nearest": bool(sims[c].argmax() == o),
                "distinct_max": round(distinct_max, 3),
            }
    return out


def main() -> None:
    import sqlite3

    from piqa_tui.core.dedup.clusters import DEFAULT_TRANSLATION_THRESHOLD
    from piqa_tui.core.dedup.semantic import EmbeddingCache

    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="e5,minilm,gemma")
    parser.add_argument("--limit", type=int, default=600, help="pairs per language pair")
    parser.add_argument("--threshold", type=float, default=DEFAULT_TRANSLATION_THRESHOLD)
    parser.add_argument(
        "--cache",
        type=Path,
        help="an SQLite file to keep embeddings in between runs (items/s then counts new texts only)",
    )
    parser.add_argument(
        "--bars", default="1.25,1.5,2.0", help="other bars of the translation rule to report (excess over chance)"
    )
    args = parser.parse_args()
    bars = [float(x) for x in args.bars.split(",") if x]
    cache = EmbeddingCache(sqlite3.connect(args.cache)) if args.cache else None
    sides = {"ta": xcopa("xcopa-ta", "ta"), "en": xcopa("xcopa-ta-en-mt", "ta-en"), "it": xcopa("xcopa-it", "it")}
    sides = {k: v[: args.limit] for k, v in sides.items()}
    for name in args.models.split(","):
        model = embedder(name, cache)
        texts = [t for side in sides.values() for t in side]
        new = len(texts) - (len(cache.get_many(model.identity, [text_hash(t) for t in texts])) if cache else 0)
        started = time.perf_counter()
        vectors = model.embed(texts)
        seconds = time.perf_counter() - started
        by_side = dict(
            zip(sides, (vectors[k * len(side) : (k + 1) * len(side)] for k, side in enumerate(sides.values())))
        )
        figures = {
            f"{x}-{y}": {
                **pair_figures(by_side[x], by_side[y], args.threshold),
                **rule_figures(by_side[x], by_side[y]),
                "raw_rule": rule_figures(by_side[x], by_side[y], standardise=False),
                **{f"bar {bar}": rule_figures(by_side[x], by_side[y], min_excess=bar) for bar in bars},
            }
            for x, y in (("ta", "en"), ("ta", "it"), ("en", "it"))
        }
        rate = round(new / seconds, 2) if new else None
        print(
            json.dumps(
                {
                    "model": name,
                    "pairs": len(sides["ta"]),
                    "items_per_s": rate,
                    "embedded": new,
                    "load": round(os.getloadavg()[0], 1),
                    **figures,
                    "samples": sample_pairs(model, False),
                    "samples_standardised": sample_pairs(model, True),
                },
                ensure_ascii=False,
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
