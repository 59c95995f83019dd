"""Per annotator: how reliable, how fast, and whether they changed — the figures a lead talks to people about.

Accuracy is Dawid–Skene's, competence MACE's (``reliability``); agreement with the majority is with
the majority of the *other* votes on an item, and with gold over items that have a gold label
(``votes.agreement``). Speed comes from the times of the annotator's current votes: the gap before a
vote is the time spent on it, and a gap longer than ``BREAK_SECONDS`` is a break, not work. A gap shorter
than ``STAMPED_SECONDS`` is no time spent either: a votes file imported without times stamps its votes with the
import time one microsecond apart (as ``core/round/progress.py`` reads them too), and a stretch of such votes
only is *untimed* — no rate at all, never millions of votes an hour.
Drift compares the first and the last quarter of an annotator's votes (by time) on the same figures;
there, accuracy is the Dawid–Skene posterior of the solution they voted, averaged over the quarter's
votes (the model's confusion matrices are fitted to all of their work at once and cannot drift).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from piqa_tui.core.quality.reliability import DawidSkene, Mace
from piqa_tui.core.votes.agreement import VoteTable

BREAK_SECONDS = 30 * 60  # a longer gap between two votes is a break
STAMPED_SECONDS = 1.0  # a shorter gap is votes stamped together (a file imported without times), not work
FLAG_MIN_VOTES = 20  # fewer votes than this: too few to flag an annotator for anything
QUARTER_MIN_VOTES = 20  # drift is judged only when each quarter holds this many votes
DRIFT_DROP = 0.15  # ... and flagged when agreement with the consensus falls by this much
DRIFT_P = 0.001  # ... with a one-sided two-proportion z-test below this p-value
RANDOM_COMPETENCE = 0.3  # MACE competence below this: votes mostly at random (or systematically off)
CHANCE_MARGIN = 0.1  # Dawid–Skene accuracy this far below chance: systematically picks another solution
LOW_ACCURACY = 0.7  # Dawid–Skene accuracy below this: often wrong


@dataclass(frozen=True)
class Span:
    """One annotator's figures over a stretch of their votes (None: nothing to measure)."""

    votes: int
    accuracy: float | None  # mean Dawid–Skene posterior of the solution voted
    with_consensus: float | None  # share of votes on the Dawid–Skene consensus
    with_majority: float | None  # share matching the other votes' majority, where they have one
    with_gold: float | None  # share equal to the gold label, where there is one
    votes_per_hour: float | None
    median_seconds: float | None
    untimed: bool = False  # its gaps are all stamped together (imported without times): no pace to measure

    def to_json(self) -> dict[str, object]:
        return {name: _round(value) for name, value in self.__dict__.items()}


@dataclass(frozen=True)
class AnnotatorFigures:
    """Everything the audit says about one annotator; ``flags`` say in words why to talk to them."""

    name: str
    votes: int
    accuracy: float  # Dawid–Skene: P(their vote is the answer)
    competence: float  # MACE: P(they know the answer rather than guess)
    weight: float | None  # CROWDLAB's weight of their votes (None: not computed)
    overall: Span
    first: Span  # the first quarter of their votes, by time
    last: Span  # the last quarter
    flags: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.name,
            "votes": self.votes,
            "accuracy": _round(self.accuracy),
            "competence": _round(self.competence),
            "weight": _round(self.weight),
            **self.overall.to_json(),
            "first_quarter": self.first.to_json(),
            "last_quarter": self.last.to_json(),
            "flags": list(self.flags),
        }


def _round(value: object) -> object:
    return round(value, 4) if isinstance(value, float) else value


def vote_seconds(times: list[str]) -> np.ndarray:
    """Seconds since the epoch of log times (``2026-11-26T00:33:41.123456Z``); NaN where one does not parse."""
    stripped = [t[:-1] if t[-1:] in "Zz" else t for t in times]
    try:
        stamps = np.array(stripped, dtype="datetime64[us]")
    except ValueError:
        stamps = np.array([_stamp(t) for t in stripped], dtype="datetime64[us]")
    seconds = stamps.astype("int64").astype(float) / 1e6
    return np.where(np.isnat(stamps), np.nan, seconds)


def _stamp(text: str) -> np.datetime64:
    try:
        return np.datetime64(text, "us")
    except ValueError:
        return np.datetime64("NaT", "us")


def _share(hit: np.ndarray, counted: np.ndarray) -> float | None:
    n = int(counted.sum())
    return float(hit[counted].sum()) / n if n else None


@dataclass(frozen=True, eq=False)
class _PerVote:
    """Per vote, what the spans average: DS posterior of the choice, on the consensus, majority and gold hits."""

    posterior: np.ndarray
    consensus: np.ndarray
    has_majority: np.ndarray
    majority: np.ndarray
    has_gold: np.ndarray
    gold: np.ndarray


def _per_vote(table: VoteTable, ds: DawidSkene, gold: np.ndarray) -> _PerVote:
    has_majority, majority = table.majority
    item_gold = gold[table.item]
    return _PerVote(
        ds.posterior[table.item, table.choice],
        np.argmax(ds.posterior, axis=1)[table.item] == table.choice,
        has_majority,
        majority,
        item_gold >= 0,
        (item_gold >= 0) & (item_gold == table.choice),
    )


def _span(rows: np.ndarray, per: _PerVote, gaps: np.ndarray) -> Span:
    """The figures over the votes ``rows`` (indices into the table); ``gaps`` the seconds before each (NaN: none)."""
    if not len(rows):
        return Span(0, None, None, None, None, None, None)
    measured = gaps[np.isfinite(gaps)]
    worked = measured[(measured >= STAMPED_SECONDS) & (measured <= BREAK_SECONDS)]
    total = float(worked.sum())
    untimed = bool(len(measured)) and not (measured >= STAMPED_SECONDS).any()
    everywhere = np.ones(len(rows), bool)
    return Span(
        len(rows),
        float(per.posterior[rows].mean()),
        _share(per.consensus[rows], everywhere),
        _share(per.majority[rows], per.has_majority[rows]),
        _share(per.gold[rows], per.has_gold[rows]),
        len(worked) * 3600.0 / total if total > 0 else None,
        float(np.median(worked)) if len(worked) else None,
        untimed,
    )


def _drifted(first: Span, last: Span) -> bool:
    """Whether agreement with the consensus fell from the first quarter to the last beyond chance."""
    if min(first.votes, last.votes) < QUARTER_MIN_VOTES or first.with_consensus is None or last.with_consensus is None:
        return False
    p1, p2, n1, n2 = first.with_consensus, last.with_consensus, first.votes, last.votes
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if p1 - p2 < DRIFT_DROP or spread == 0:
        return p1 - p2 >= DRIFT_DROP
    return 0.5 * math.erfc((p1 - p2) / spread / math.sqrt(2)) < DRIFT_P


def _flags(accuracy: float, competence: float, first: Span, last: Span, k: int, votes: int) -> tuple[str, ...]:
    """Why to talk to an annotator, in words; empty when nothing stands out (or too few votes to say)."""
    flags: list[str] = []
    if votes < FLAG_MIN_VOTES:
        return ()
    chance = 1 / k
    if accuracy < chance - CHANCE_MARGIN:
        flags.append(f"systematically picks another solution (accuracy {accuracy:.2f}, chance {chance:.2f})")
    elif competence < RANDOM_COMPETENCE:
        flags.append(f"votes close to random (MACE competence {competence:.2f})")
    elif accuracy < LOW_ACCURACY:
        flags.append(f"often wrong (accuracy {accuracy:.2f})")
    if _drifted(first, last):
        flags.append(
            f"drifted: agreed with the consensus {first.with_consensus:.0%} at first, {last.with_consensus:.0%} lately"
        )
    return tuple(flags)


def annotator_figures(
    table: VoteTable,
    seconds: np.ndarray,
    gold: np.ndarray,
    ds: DawidSkene,
    mace_fit: Mace,
    weights: np.ndarray | None = None,
) -> list[AnnotatorFigures]:
    """Every annotator's figures, in the table's (sorted) order; ``seconds`` per vote, ``gold`` per item (-1: none)."""
    per = _per_vote(table, ds, gold)
    order = np.lexsort((np.nan_to_num(seconds, nan=np.inf), table.annotator))
    bounds = np.searchsorted(table.annotator[order], np.arange(len(table.annotators) + 1))
    found = []
    for a, name in enumerate(table.annotators):
        rows = order[bounds[a] : bounds[a + 1]]
        gaps = np.concatenate([[np.nan], np.diff(seconds[rows])]) if len(rows) else np.zeros(0)
        n = len(rows)
        quarter = n // 4
        first = _span(rows[:quarter], per, gaps[:quarter])
        last = _span(rows[n - quarter :], per, gaps[n - quarter :]) if quarter else _span(rows[:0], per, gaps[:0])
        accuracy, knows = float(ds.accuracy[a]), float(mace_fit.competence[a])
        found.append(
            AnnotatorFigures(
                name,
                n,
                accuracy,
                knows,
                None if weights is None else float(weights[a]),
                _span(rows, per, gaps),
                first,
                last,
                _flags(accuracy, knows, first, last, table.n_categories, n),
            )
        )
    return found
