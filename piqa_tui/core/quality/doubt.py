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

    @property
    def in_doubt(self) -> bool:
        return self.score < DOUBT_BELOW

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


def _models_phrase(predictions: list[int], label: int) -> str | None:
    """What the models that scored the item say against ``label`` (None: none of them disagrees)."""
    against = [p for p in predictions if p != label]
    if not against:
        return None
    favourite = max(set(against), key=against.count)
    n, m = len(predictions), against.count(favourite)
    if n == 1:
        return f"the model prefers {favourite + 1}"
    if m == n:
        return f"{'both' if n == 2 else 'all'} models prefer {favourite + 1}"
    return f"{m} of {n} models prefer {favourite + 1}"


def _reliability_phrase(weights: np.ndarray, choices: np.ndarray, label: int, named: bool) -> str | None:
    """Whether those who voted ``label`` are all less reliable than all who voted otherwise (``named``: the
    line has just counted them, so "the two" says who)."""
    mine, others = weights[choices == label], weights[choices != label]
    if not len(mine) or not len(others) or mine.max() >= others.min():
        return None
    if named:
        return "that one is the least reliable" if len(mine) == 1 else f"the {_count(len(mine))} are the least reliable"
    who = "the one" if len(mine) == 1 else f"the {_count(len(mine))}"
    return f"{who} who voted {label + 1} {'is' if len(mine) == 1 else 'are'} the least reliable"


def reason_line(
    label: int, which: str, choices: np.ndarray, weights: np.ndarray, predictions: list[int], consensus: int
) -> str:
    """Why a label is in doubt, in one line: "2 of 3 voted 1, but the two are the least reliable and all
    models prefer 2" (solutions counted from 1)."""
    n, mine = len(choices), int((choices == label).sum())
    if which == "decided":
        lead = f"{mine} of {n} voted {label + 1}"
    elif which == "gold and decided":
        lead = f"gold is {label + 1} and {mine} of {n} voted for it"
    else:
        lead = f"gold is {label + 1}"
    against = []
    if which == "gold" and mine < n:
        other = np.bincount(choices[choices != label]).argmax()
        against.append(f"{int((choices == other).sum())} of {n} voted {other + 1}")
    named = which != "gold"
    for phrase in (_reliability_phrase(weights, choices, label, named), _models_phrase(predictions, label)):
        if phrase:
            against.append(phrase)
    if not against:
        against.append(f"the weighted votes favour {consensus + 1}")
    return f"{lead}, but {' and '.join(against)}"


def _which(gold: int, decided: int, label: int) -> str:
    if gold == label and decided == label:
        return "gold and decided"
    return "gold" if gold == label else "decided"


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
    order = np.argsort(table.item, kind="stable")
    starts = np.searchsorted(table.item[order], np.arange(len(table.items) + 1))
    out = []
    for i in ranked.tolist():
        votes = order[starts[i] : starts[i + 1]]
        choices = table.choice[votes]
        weights = found.annotator_weight[table.annotator[votes]]
        predictions = [int(np.argmax(m.probs[i])) for m in models if m.scored[i]]
        which = _which(int(gold[i]), int(decided[i]), int(label[i]))
        line = reason_line(int(label[i]), which, choices, weights, predictions, int(found.consensus[i]))
        posterior = tuple(float(p) for p in found.posterior[i])
        out.append(Doubt(ids[i], int(label[i]), which, float(score[i]), int(found.consensus[i]), posterior, line))
    return out
