"""Likely-wrong labels: each voted item's label-quality score, and in one line why it is in doubt.

An item carries up to two labels: the file's gold label and the label the votes (or a reviewer)
decided. Each is scored by CROWDLAB's weighted average of the votes (weighted by each annotator's
agreement with the others) and the stored models (``crowdlab``): the probability the average gives
that label. The item's score is its weaker label's; below ``DOUBT_BELOW`` the average prefers
another solution, and the label is *in doubt*. Items are ranked by the score, lowest first. An item
with neither label (no gold, votes undecided) is not scored: the disagreement queue has it. Nothing
here changes a label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from piqa_tui.core.quality.crowdlab import Crowdlab, ModelProbabilities
from piqa_tui.core.votes.agreement import VoteTable

DOUBT_BELOW = 0.5  # a label whose score is below this is in doubt: the weighted evidence prefers another
NUMBERS = ("none", "one", "two", "three", "four", "five", "six")


@dataclass(frozen=True)
class Doubt:
    """One item's label-quality verdict; labels are 0-based (the reason counts solutions from 1)."""

    item_id: str
    label: int  # the weaker of the item's labels
    which: str  # "gold", "decided", or "gold and decided" (the same label)
    score: float  # CROWDLAB's probability of ``label``: low = likely wrong
    consensus: int  # CROWDLAB's consensus solution
    posterior: tuple[float, ...]  # CROWDLAB's weighted average per solution
    reason: str

    def brief_json(self) -> dict[str, object]:
        """Which label, its score and why."""
        return {
            "id": self.item_id,
            "label": self.label,
            "which": self.which,
            "score": round(self.score, 4),
            "reason": self.reason,
        }

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.item_id,
            "label": self.label,
            "which": self.which,
            "score": round(self.score, 4),
            "consensus": self.consensus,
            "posterior": [round(p, 4) for p in self.posterior],
            "reason": self.reason,
        }


def examined_labels(gold: np.ndarray, decided: np.ndarray, posterior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the weaker of its gold and decided labels (-1: neither) and that label's score (NaN: none)."""
    rows = np.arange(len(gold))
    k = posterior.shape[1]
    gold_score = np.where((gold >= 0) & (gold < k), posterior[rows, np.clip(gold, 0, k - 1)], np.inf)
    decided_score = np.where(decided >= 0, posterior[rows, np.clip(decided, 0, k - 1)], np.inf)
    label = np.where(decided_score < gold_score, decided, np.where(gold_score < np.inf, gold, decided))
    score = np.minimum(gold_score, decided_score)
    return np.where(np.isfinite(score), label, -1), np.where(np.isfinite(score), score, np.nan)


def _count(n: int) -> str:
    return NUMBERS[n] if n < len(NUMBERS) else str(n)


@dataclass(frozen=True)
class Grounds:
    """What one item's reason line rests on, as counts (solutions 0-based, -1: none)."""

    label: int  # the label in doubt
    which: str  # "gold", "decided" or "gold and decided"
    votes: int
    for_label: int  # votes for ``label``
    other: int  # the most voted other solution
    for_other: int
    least_reliable: bool  # every annotator who voted ``label`` weighs less than every one who did not
    models: int  # model runs that scored the item
    favourite: int  # the other solution most of them prefer
    for_favourite: int
    consensus: int


def _models_phrase(g: Grounds) -> str | None:
    """What the models that scored the item say against its label (None: none of them disagrees)."""
    if g.favourite < 0:
        return None
    if g.models == 1:
        return f"the model prefers {g.favourite + 1}"
    if g.for_favourite == g.models:
        return f"{'both' if g.models == 2 else 'all'} models prefer {g.favourite + 1}"
    return f"{g.for_favourite} of {g.models} models prefer {g.favourite + 1}"


def _reliability_phrase(g: Grounds) -> str | None:
    """Whether those who voted the label are the least reliable; a line that has just counted them says "the two"."""
    if not g.least_reliable:
        return None
    one = g.for_label == 1
    if g.which != "gold":
        return "that one is the least reliable" if one else f"the {_count(g.for_label)} are the least reliable"
    who = "the one" if one else f"the {_count(g.for_label)}"
    return f"{who} who voted {g.label + 1} {'is' if one else 'are'} the least reliable"


def reason_line(g: Grounds) -> str:
    """Why a label is in doubt, in one line: "2 of 3 voted 1, but the two are the least reliable and all
    models prefer 2" (solutions counted from 1)."""
    if g.which == "decided":
        lead = f"{g.for_label} of {g.votes} voted {g.label + 1}"
    elif g.which == "gold and decided":
        lead = f"gold is {g.label + 1} and {g.for_label} of {g.votes} voted for it"
    else:
        lead = f"gold is {g.label + 1}"
    against = []
    if g.which == "gold" and g.other >= 0:
        against.append(f"{g.for_other} of {g.votes} voted {g.other + 1}")
    against += [phrase for phrase in (_reliability_phrase(g), _models_phrase(g)) if phrase]
    if not against:
        against.append(f"the weighted votes favour {g.consensus + 1}")
    return f"{lead}, but {' and '.join(against)}"


def _which(gold: np.ndarray, decided: np.ndarray, label: np.ndarray) -> list[str]:
    both = (gold == label) & (decided == label)
    return np.where(both, "gold and decided", np.where(gold == label, "gold", "decided")).tolist()


def _least_reliable(table: VoteTable, rows: np.ndarray, label: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Per item of ``rows``: everyone who voted its label weighs less than everyone who voted otherwise."""
    where = np.full(len(table.items), -1)
    where[rows] = np.arange(len(rows))
    at = where[table.item]
    kept = at >= 0
    at, choice, w = at[kept], table.choice[kept], weight[table.annotator[kept]]
    mine = choice == label[at]
    heaviest_mine = np.full(len(rows), -np.inf)
    lightest_other = np.full(len(rows), np.inf)
    np.maximum.at(heaviest_mine, at[mine], w[mine])
    np.minimum.at(lightest_other, at[~mine], w[~mine])
    return np.isfinite(heaviest_mine) & np.isfinite(lightest_other) & (heaviest_mine < lightest_other)


def _model_favourites(
    models: list[ModelProbabilities], rows: np.ndarray, label: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item of ``rows``: models that scored it, the other solution most prefer (-1: none), how many do."""
    scored = np.zeros(len(rows), np.int64)
    against = np.zeros((len(rows), k), np.int64)
    for model in models:
        pick = np.argmax(model.probs[rows], axis=1)
        used = model.scored[rows]
        scored += used
        np.add.at(against, (np.flatnonzero(used & (pick != label)), pick[used & (pick != label)]), 1)
    most = against.max(axis=1)
    return scored, np.where(most > 0, np.argmax(against, axis=1), -1), most


def grounds(
    table: VoteTable,
    rows: np.ndarray,
    label: np.ndarray,
    which: list[str],
    found: Crowdlab,
    models: list[ModelProbabilities],
) -> list[Grounds]:
    """The grounds of the items at ``rows`` (table items) for their ``label``, worked out for all at once."""
    n = np.arange(len(rows))
    counts = table.counts[rows]
    for_label = counts[n, label]
    others = counts.copy()
    others[n, label] = -1
    other, for_other = np.argmax(others, axis=1), others.max(axis=1)
    least = _least_reliable(table, rows, label, found.annotator_weight)
    scored, favourite, for_favourite = _model_favourites(models, rows, label, table.n_categories)
    columns = (
        label.tolist(),
        which,
        table.raters[rows].tolist(),
        for_label.tolist(),
        np.where(for_other > 0, other, -1).tolist(),
        for_other.tolist(),
        least.tolist(),
        scored.tolist(),
        favourite.tolist(),
        for_favourite.tolist(),
        found.consensus[rows].tolist(),
    )
    made: dict[tuple, Grounds] = {}  # items on the same grounds share one (a few dozen kinds among thousands)
    return [made.get(values) or made.setdefault(values, Grounds(*values)) for values in zip(*columns)]


def doubts(
    table: VoteTable,
    ids: list[str],
    gold: np.ndarray,
    decided: np.ndarray,
    found: Crowdlab,
    models: list[ModelProbabilities],
    limit: int | None = None,
) -> list[Doubt]:
    """The scored items, lowest score first (``limit``: only that many), each with its reason.

    ``ids``, ``gold`` and ``decided`` are per table item; ties keep the table's order.
    """
    label, score = examined_labels(gold, decided, found.posterior)
    ranked = np.flatnonzero(label >= 0)
    ranked = ranked[np.argsort(score[ranked], kind="stable")][:limit]
    chosen = label[ranked]
    which = _which(gold[ranked], decided[ranked], chosen)
    posteriors = found.posterior[ranked].tolist()
    reasons: dict[Grounds, str] = {}  # one line per distinct grounds
    return [
        Doubt(
            ids[i], g.label, g.which, s, g.consensus, tuple(p), reasons.get(g) or reasons.setdefault(g, reason_line(g))
        )
        for i, s, g, p in zip(
            ranked.tolist(),
            score[ranked].tolist(),
            grounds(table, ranked, chosen, which, found, models),
            posteriors,
        )
    ]
