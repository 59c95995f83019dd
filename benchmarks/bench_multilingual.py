"""Which offline embedding model finds translations and paraphrases: the figures behind the default.

    python benchmarks/bench_multilingual.py [--models minilm,gemma] [--limit N]

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
the translation?), the median cosine of true pairs, the 99.9th percentile and
maximum cosine of false pairs, and recall and precision at the threshold
``--threshold`` (default: the translation threshold of core/dedup/clusters.py).
Also embedding throughput (items/s) per model. Prints one JSON line per model.
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


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def xcopa(folder: str, suffix: str) -> list[str]:
    rows = [r for split in ("val", "test") for r in _jsonl(DATA / folder / f"{split}.{suffix}.jsonl")]
    return [" ".join((r["premise"], r["choice1"], r["choice2"])) for r in rows]


def embedder(name: str):
    """The embedders compared: the packaged MiniLM, the packaged Gemma, or a sentence-transformers model by name."""
    from piqa_tui.core.dedup.gguf_embeddings import GgufEmbedder
    from piqa_tui.core.dedup.semantic import SentenceTransformerEmbedder

    if name == "minilm":
        return SentenceTransformerEmbedder.packaged()
    if name == "gemma":
        return GgufEmbedder.packaged()
    return SentenceTransformerEmbedder(name)


def pair_figures(a, b, threshold: float) -> dict[str, float]:
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
        "false_p99.9": round(float(np.quantile(false, 0.999)), 3),
        "false_max": round(float(false.max()), 3),
        "recall": round(found / n, 3),
        "precision": round(found / max(1, found + wrong), 3),
    }


def msa_paraphrase(model) -> dict[str, float]:
    """The planted MSA paraphrase's cosine, and the highest cosine between two distinct other MSA items."""
    import numpy as np

    from piqa_tui.core.dataset.files import load_dataset

    items = load_dataset(ROOT / "samples" / "msa-culture.tsv").items
    vectors = model.embed([it.text for it in items])
    at = {it.id: k for k, it in enumerate(items)}
    sims = vectors @ vectors.T
    pair = float(sims[at["msa-002"], at["msa-023"]])
    others = [k for k, it in enumerate(items) if it.id not in ("msa-002", "msa-023")]
    rest = sims[np.ix_(others, others)][~np.eye(len(others), dtype=bool)]
    return {"paraphrase": round(pair, 3), "distinct_max": round(float(rest.max()), 3)}


def main() -> None:
    from piqa_tui.core.dedup.clusters import DEFAULT_TRANSLATION_THRESHOLD

    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,gemma")
    parser.add_argument("--limit", type=int, default=600, help="pairs per language pair")
    parser.add_argument("--threshold", type=float, default=DEFAULT_TRANSLATION_THRESHOLD)
    args = parser.parse_args()
    sides = {"ta": xcopa("xcopa-ta", "ta"), "en": xcopa("xcopa-ta-en-mt", "ta-en"), "it": xcopa("xcopa-it", "it")}
    sides = {k: v[: args.limit] for k, v in sides.items()}
    for name in args.models.split(","):
        model = embedder(name)
        texts = [t for side in sides.values() for t in side]
        started = time.perf_counter()
        vectors = model.embed(texts)
        seconds = time.perf_counter() - started
        by_side, at = {}, 0
        for key, side in sides.items():
            by_side[key] = vectors[at : at + len(side)]
            at += len(side)
        figures = {f"{x}-{y}": pair_figures(by_side[x], by_side[y], args.threshold) for x, y in (("ta", "en"), ("ta", "it"), ("en", "it"))}
        load = os.getloadavg()[0]
        print(json.dumps({"model": name, "items_per_s": round(len(texts) / seconds, 1), "load": round(load, 1), **figures, "msa": msa_paraphrase(model)}), flush=True)


if __name__ == "__main__":
    main()
