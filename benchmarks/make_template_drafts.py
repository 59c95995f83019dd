"""Template-like drafts: a few dozen long openings shared by thousands of items, for the lexical dedup benchmark.

    python benchmarks/make_template_drafts.py OUT.tsv [N=100000] [OPENINGS=36]

LLM-drafted candidate sets look like this before filtering: every item starts
with one of a few dozen long openings (a real PIQA goal of 70-200 characters)
and a solution stem that goes with it (a real PIQA solution cut to 40-70
characters), then a short filler of PIQA words; the second solution differs
from the first by one word (a minimal pair). Items that share an opening are
**distinct** (their fillers differ) yet share most of their character 3-grams:
with fillers of 3-6 words (the default) their Jaccard has a median of 0.51 and
a 99.9th percentile of 0.64; with 2-4 words, 0.59 and 0.72, and MinHash bands
have crowded buckets of hundreds of items. Two kinds of copies are planted (1% each, on
random originals): near copies (1-3 character edits or one filler word
changed in one field) and exact variants (case, spacing, solution order).

The TSV has the columns id, prompt, solution0, solution1, label and
``copy_of`` (the original's id for a planted copy, else empty), so a
benchmark can score recall on the planted pairs without rerunning this.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # beside this script, however it is loaded
from planted_copies import LATIN, Planted, Row, near_copy, plant_copies, write_drafts  # noqa: E402

PIQA = Path(__file__).resolve().parent.parent / "tests" / "data" / "piqa-en" / "valid.jsonl"
FILLER = (3, 6)  # filler words after an opening or a stem: fewer make items sharing an opening more alike


def _piqa() -> list[dict[str, str]]:
    return [json.loads(line) for line in PIQA.read_text(encoding="utf-8").splitlines() if line.strip()]


def template_drafts(
    n: int, openings: int = 36, seed: int = 0, filler: tuple[int, int] = FILLER
) -> tuple[list[Row], list[Planted]]:
    """``n`` rows ``(id, prompt, solution0, solution1)`` and the planted pairs ``(original id, copy id, kind)``."""
    rng = random.Random(seed)
    rows = _piqa()
    goals = sorted({r["goal"].strip() for r in rows if 70 <= len(r["goal"]) <= 200})
    stems = sorted({r["sol1"].strip() for r in rows if len(r["sol1"]) >= 70})
    vocab = sorted({w for r in rows for w in r["sol2"].split() if w.isalpha() and 3 <= len(w) <= 10})
    frames = [(g, rng.choice(stems)[: rng.randint(40, 70)].rsplit(" ", 1)[0]) for g in rng.sample(goals, openings)]
    n_planted = max(1, n // 100)
    n_base = n - 2 * n_planted
    out: list[Row] = []
    for i in range(n_base):
        opening, stem = frames[rng.randrange(openings)]
        prompt = f"{opening} {' '.join(rng.choices(vocab, k=rng.randint(*filler)))}"
        words = f"{stem} {' '.join(rng.choices(vocab, k=rng.randint(*filler)))}".split()
        sol0 = " ".join(words)
        words[-rng.randint(1, 3)] = rng.choice(vocab)  # the minimal pair: one filler word differs
        out.append((f"d{i}", prompt, sol0, " ".join(words)))
    planted = plant_copies(
        out,
        n_planted,
        rng,
        near=lambda fields: near_copy(fields, rng, LATIN, vocab),
        exact=lambda fields: [fields[0].upper(), fields[2].replace(" ", "  ", 1), fields[1]],
    )
    return out, planted


def main() -> None:
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    openings = int(sys.argv[3]) if len(sys.argv) > 3 else 36
    write_drafts(path, *template_drafts(n, openings))


if __name__ == "__main__":
    main()
