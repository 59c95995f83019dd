"""Simulated annotation rounds with planted problems, for the label-audit tests.

Every item has a true answer; annotators vote on it with accuracies of their own; the file's gold label
is the truth except on planted items; two models give log-likelihoods that favour the truth. Planted
annotators: ``spammer`` (votes at random), ``shifter`` (always one solution further: the truth plus
one, modulo the count) and ``drifter`` (careful for the first half of their work, then at random).
The same seed gives the same round. ``write_workspace`` turns a round into a real dataset file, a
votes file imported into its workspace and two stored model runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PLANTED = ("spammer", "shifter", "drifter")
START = np.datetime64("2026-11-20T08:00:00", "s")


@dataclass(frozen=True)
class Round:
    """One simulated round: votes as (item, annotator, choice, seconds after START) and the truth behind them."""

    ids: list[str]
    truth: np.ndarray
    gold: np.ndarray
    votes: list[tuple[str, str, int, float]]
    logliks: list[np.ndarray]  # per model: items × solutions
    bad_annotators: set[str]
    wrong_gold: set[str]

    @property
    def triples(self) -> list[tuple[str, str, int]]:
        return [(item, who, choice) for item, who, choice, _ in self.votes]


def _vote(rng: np.random.Generator, who: str, truth: int, k: int, accuracy: float, late: bool) -> int:
    if who == "spammer" or (who == "drifter" and late):
        return int(rng.integers(k))
    if who == "shifter":
        return (truth + 1) % k
    return truth if rng.random() < accuracy else int(rng.choice([c for c in range(k) if c != truth]))


def simulate(
    n_items: int = 1200,
    k: int = 2,
    seed: int = 0,
    planted: bool = True,
    wrong_gold_share: float = 0.03,
    n_good: int = 10,
) -> Round:
    """A round of ``n_items`` items with 3 votes each from a pool of ``n_good`` careful annotators
    (accuracy 0.85 to 0.95) and, when ``planted``, the three planted ones and wrong gold labels."""
    rng = np.random.default_rng(seed)
    ids = [f"s{i:05d}" for i in range(n_items)]
    truth = rng.integers(0, k, n_items)
    gold = truth.copy()
    wrong = rng.random(n_items) < (wrong_gold_share if planted else 0.0)
    gold[wrong] = (truth[wrong] + 1 + rng.integers(0, k - 1, int(wrong.sum()))) % k
    good = {f"ann{j:02d}": float(a) for j, a in enumerate(np.linspace(0.85, 0.95, n_good))}
    pool = [*good, *(PLANTED if planted else ())]
    per_annotator: dict[str, list[tuple[int, int]]] = {name: [] for name in pool}
    for i in range(n_items):
        for who in rng.choice(pool, size=3, replace=False).tolist():
            per_annotator[who].append((i, 0))
    votes = []
    for who, work in per_annotator.items():
        clock = float(rng.uniform(0, 3600))
        for n, (i, _) in enumerate(work):
            clock += float(rng.exponential(25.0)) + 5 + (4 * 3600 if rng.random() < 0.01 else 0)
            late = n >= len(work) // 2
            votes.append((ids[i], who, _vote(rng, who, int(truth[i]), k, good.get(who, 0.9), late), clock))
    logliks = []
    for strength in (1.6, 1.0):
        values = rng.normal(-20, 1.0, (n_items, k))
        values[np.arange(n_items), truth] += strength
        logliks.append(values)
    bad = set(PLANTED) if planted else set()
    return Round(ids, truth, gold, votes, logliks, bad, {ids[i] for i in np.flatnonzero(wrong).tolist()})


def write_workspace(folder: Path, found: Round, timed: bool = True) -> Path:
    """The round as a dataset file with an imported votes file and two stored model runs; returns the dataset.
    Without ``timed`` the votes file has no time column (the import stamps its votes with the import time)."""
    from piqa_tui.core.dataset.item import Item
    from piqa_tui.core.scoring.backend import ContinuationScore
    from piqa_tui.core.scoring.cache import RunRecord, ScoreCache
    from piqa_tui.core.scoring.results import item_content_hash
    from piqa_tui.core.scoring.templates import get_template
    from piqa_tui.core.votes.files import import_votes
    from piqa_tui.core.workspace.project import Project

    k = found.logliks[0].shape[1]
    data = folder / "round.tsv"
    header = ["id", "prompt", *(f"solution{c}" for c in range(k)), "label"]
    rows = [
        [item_id, f"How to do task {n}?", *(f"way {c} of doing task {n}" for c in range(k)), str(found.gold[n])]
        for n, item_id in enumerate(found.ids)
    ]
    data.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")
    votes = folder / "votes.tsv"
    lines = ["item_id\tannotator\tchoice" + "\ttime" * timed]
    for item_id, who, choice, seconds in found.votes:
        stamp = START + np.timedelta64(int(seconds * 1e6), "us")
        lines.append(f"{item_id}\t{who}\t{choice}" + f"\t{stamp}Z" * timed)
    votes.write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = Project.open(data, annotator="lead")
    import_votes(project, votes)
    template = get_template("piqa")
    cache = ScoreCache(project.workspace.conn)  # type: ignore[union-attr]
    items: list[Item] = project.items
    for m, logliks in enumerate(found.logliks):
        model = f"sim{m}.gguf:1:{m}"
        rows_scored = [
            (item_content_hash(item), tuple(ContinuationScore(float(v), 5) for v in logliks[n]))
            for n, item in enumerate(items)
        ]
        cache.store(model, template.key, rows_scored, RunRecord.of(model, f"sim{m}.gguf", template))
    project.workspace.close()  # type: ignore[union-attr]
    return data


def as_json(found: Round) -> str:
    """The round's planted facts, for a failing test's message."""
    return json.dumps({"bad": sorted(found.bad_annotators), "wrong_gold": sorted(found.wrong_gold)})
