"""The decision policy of a dataset: when the votes on an item settle its gold label.

Teams release items by majority (2 of 3 annotators) or by unanimity (4 of 4).
A :class:`Policy` turns the votes on one item, plus an optional adjudicated
label, into a :class:`Decision`: a status and the decided label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
else:
    from piqa_tui.core.numeric import np  # imported on its first use: core/numeric.py

SKIP = "skip"  # a vote that says "not sure": counted as cast, never as a choice


class Status(StrEnum):
    """Where an item stands; the values are the words shown to users and written to JSON."""

    NEEDS_VOTES = "needs-votes"
    AGREED = "agreed"
    DISAGREEMENT = "disagreement"
    ADJUDICATED = "adjudicated"
    AGAINST_GOLD = "votes-against-gold"  # agreed under the policy, on another solution than the file's gold label


STATUSES = tuple(Status)  # a status's index here is its code in :meth:`Policy.decide_many`


@dataclass(frozen=True, slots=True)
class Decision:
    """A status and the label it decides (``None`` unless agreed or adjudicated)."""

    status: Status
    label: int | None = None


@dataclass(frozen=True, slots=True)
class Policy:
    """How many votes, and how alike, settle an item's label.

    ``kind="majority"`` (k of n): the item is

    * **agreed** on choice *c* when *c* has at least ``k`` votes, strictly more
      than any other choice, and at least ``min_votes`` votes are in;
    * **disagreement** when it is not agreed and no choice can reach ``k``
      with the votes still to come (``n`` minus the votes in, never below 0):
      always once ``n`` votes are in, and earlier when ``k`` is out of reach
      (e.g. 0 and 1 under 3 of 3);
    * **needs-votes** otherwise.

    ``kind="unanimity"``: the item is **agreed** when at least ``min_votes``
    votes are in and all are equal; **disagreement** as soon as two votes
    differ; **needs-votes** otherwise. ``n`` is the panel size and
    ``min_votes`` defaults to it (unanimity 4 of 4: ``Policy.unanimity(4)``).

    Either way an adjudicated label wins: the status is **adjudicated** with
    that label, whatever the votes say. ``min_votes`` defaults to ``k``
    (majority) or ``n`` (unanimity). Votes are the choices of distinct
    annotators, their latest vote each, with "unsure/skip" left out.
    """

    kind: Literal["majority", "unanimity"] = "majority"
    k: int = 2
    n: int = 3
    min_votes: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("majority", "unanimity"):
            raise ValueError(f"unknown policy {self.kind!r}; use 'majority' or 'unanimity'")
        if not 1 <= self.k <= self.n:
            raise ValueError(f"a {self.k}-of-{self.n} policy needs 1 ≤ k ≤ n")
        if self.min_votes is not None and self.min_votes < 1:
            raise ValueError("min_votes must be at least 1")

    @classmethod
    def majority(cls, k: int = 2, n: int = 3, min_votes: int | None = None) -> Policy:
        """Agreed when ``k`` of ``n`` annotators pick the same choice."""
        return cls("majority", k, n, min_votes)

    @classmethod
    def unanimity(cls, n: int = 4, min_votes: int | None = None) -> Policy:
        """Agreed when all of at least ``min_votes`` (default ``n``) votes are equal."""
        return cls("unanimity", n, n, min_votes)

    @property
    def required_votes(self) -> int:
        """The fewest votes that can settle an item under this policy."""
        if self.min_votes is not None:
            return self.min_votes
        return self.k if self.kind == "majority" else self.n

    def decide(self, votes: Iterable[int], adjudicated: int | None = None) -> Decision:
        """The status and label of one item from its votes and optional adjudication."""
        if adjudicated is not None:
            return Decision(Status.ADJUDICATED, adjudicated)
        tally = Counter(votes).most_common()
        if self.kind == "unanimity":
            return self._unanimity(tally)
        return self._majority(tally)

    def decide_many(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`decide` for many items at once, adjudications aside, from an items × choices matrix of vote counts.

        Returns each item's status, as its index in ``STATUSES``, and its label (-1 where none).
        Worked out choice by choice (a few columns), which numpy does much faster than along rows.
        """
        counts = np.asarray(counts, np.int64)
        counts = counts.reshape(len(counts), -1 if counts.size else 0)  # a dataset without items: 0 × 0
        columns = [counts[:, k] for k in range(counts.shape[1])] or [np.zeros(len(counts), np.int64)]
        cast, top = sum(columns[1:], columns[0].copy()), np.maximum.reduce(columns)
        label = np.full(len(counts), -1)  # the first choice with the top count, as Counter.most_common ranks ties
        for k in reversed(range(len(columns))):
            label[columns[k] == top] = k
        status = np.full(len(counts), STATUSES.index(Status.NEEDS_VOTES))
        if self.kind == "unanimity":
            distinct = sum((column > 0).astype(np.int64) for column in columns)
            agreed = (distinct == 1) & (top >= self.required_votes)
            disagreement = distinct > 1
        else:
            runner_up = np.maximum.reduce([np.where(label == k, 0, column) for k, column in enumerate(columns)])
            agreed = (top >= self.k) & (top > runner_up) & (cast >= self.required_votes)
            out_of_reach = top + np.maximum(self.n - cast, 0) < self.k
            all_in = cast >= max(self.n, self.required_votes)
            disagreement = ~agreed & (out_of_reach | all_in)
        status[disagreement] = STATUSES.index(Status.DISAGREEMENT)
        status[agreed] = STATUSES.index(Status.AGREED)
        return status, np.where(agreed, label, -1)

    def _majority(self, tally: list[tuple[int, int]]) -> Decision:
        """k of n: see the class docstring."""
        cast = sum(count for _, count in tally)
        top = tally[0][1] if tally else 0
        runner_up = tally[1][1] if len(tally) > 1 else 0
        if top >= self.k and top > runner_up and cast >= self.required_votes:
            return Decision(Status.AGREED, tally[0][0])
        still_to_come = max(self.n - cast, 0)
        out_of_reach = top + still_to_come < self.k
        all_in = cast >= max(self.n, self.required_votes)
        if out_of_reach or all_in:
            return Decision(Status.DISAGREEMENT)
        return Decision(Status.NEEDS_VOTES)

    def _unanimity(self, tally: list[tuple[int, int]]) -> Decision:
        """All equal: see the class docstring."""
        if len(tally) > 1:
            return Decision(Status.DISAGREEMENT)
        if tally and tally[0][1] >= self.required_votes:
            return Decision(Status.AGREED, tally[0][0])
        return Decision(Status.NEEDS_VOTES)
