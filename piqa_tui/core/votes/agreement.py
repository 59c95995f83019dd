"""Inter-annotator agreement on gold-label votes: Fleiss' κ, Cohen's κ, Krippendorff's α, Gwet's AC1.

Input is the latest vote per item and annotator as ``(item_id, annotator, choice)``
triples, with "unsure/skip" votes already left out by the caller. Choices are
0-based category codes. Everything is computed with numpy from integer-coded
count matrices, so 100,000 items cost well under a second.

The values equal statsmodels' ``fleiss_kappa``, scikit-learn's
``cohen_kappa_score`` and the ``krippendorff`` package (nominal) on the same
votes; AC1/AC2 equal the ``irrCAC`` package's. A value that is mathematically undefined
is ``None`` with a reason; it is never shown as 0 or 1. Bootstrap intervals come from
:mod:`piqa_tui.core.votes.uncertainty` when the report is asked for them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING, Literal

from piqa_tui.core.votes.uncertainty import (
    Bootstrap,
    GwetWeights,
    Interval,
    Intervals,
    bootstrap_intervals,
    gwet_coefficient,
    gwet_weights,
)

if TYPE_CHECKING:
    import numpy as np
else:
    from piqa_tui.core.numeric import np  # imported on its first use: core/numeric.py

Vote = tuple[str, str, int]
Weights = Literal["linear", "quadratic"] | None

ALL_ONE_CATEGORY = "every vote is in one category: expected agreement is 1, {} undefined"
NO_MULTI_VOTE_ITEMS = "no item has 2 or more votes"


# --------------------------------------------------------------------------- votes


@dataclass(frozen=True, eq=False)
class VoteTable:
    """Votes encoded as parallel integer arrays, so every measure is a few numpy calls.

    Annotator codes follow the sorted annotator names; item codes follow first
    appearance. Build one with :meth:`from_votes` and pass it to any function
    here instead of the triples to skip re-encoding.
    """

    item: np.ndarray
    annotator: np.ndarray
    choice: np.ndarray
    items: tuple[str, ...]
    annotators: tuple[str, ...]
    n_categories: int

    @classmethod
    def from_votes(cls, votes: Iterable[Vote], n_categories: int | None = None) -> VoteTable:
        """Encode ``(item_id, annotator, choice)`` triples; raise ValueError on bad or repeated votes."""
        triples = list(votes)
        item_ids = [t[0] for t in triples]
        names = [t[1] for t in triples]
        item_codes: dict[str, int] = {}
        item = np.fromiter((item_codes.setdefault(i, len(item_codes)) for i in item_ids), np.int64, len(triples))
        annotators = tuple(sorted(set(names)))
        ann_codes = {a: k for k, a in enumerate(annotators)}
        annotator = np.fromiter((ann_codes[a] for a in names), np.int64, len(triples))
        choice = np.fromiter((t[2] for t in triples), np.int64, len(triples))
        k = _category_count(choice, n_categories)
        table = cls(item, annotator, choice, tuple(item_codes), annotators, k)
        table.check_unique()
        return table

    @classmethod
    def from_codes(
        cls,
        item: np.ndarray,
        item_names: list[str],
        annotator: np.ndarray,
        annotator_names: list[str],
        choice: np.ndarray,
        n_categories: int | None = None,
    ) -> VoteTable:
        """Votes already coded against name lists (one vote per item and annotator, the caller's promise).

        Gives the table :meth:`from_votes` gives for the same votes listed item by item in the order of
        ``item_names``: items without a vote are dropped, annotators re-coded in sorted order.
        """
        item_code, items = _compact(item, item_names)[1:]
        present = _unique(annotator, len(annotator_names))[0].tolist()
        names = sorted(annotator_names[a] for a in present)
        rank = {name: j for j, name in enumerate(names)}  # a look-up per annotator, not a scan of the list
        recode = np.zeros(len(annotator_names), np.int64)
        recode[present] = [rank[annotator_names[a]] for a in present]
        choice = np.asarray(choice, np.int64)
        return cls(item_code, recode[annotator], choice, items, tuple(names), _category_count(choice, n_categories))

    def canonical(self) -> VoteTable:
        """The same votes with the items coded in sorted id order and the votes sorted by item, then annotator.

        Votes that arrived in another order (another machine, a merge) then give the very same arrays: sums add
        in the same order and a seeded bootstrap draws the same items, so every figure is equal to the last bit.
        """
        order = np.asarray(sorted(range(len(self.items)), key=self.items.__getitem__), np.int64)
        recode = np.empty(len(order), np.int64)
        recode[order] = np.arange(len(order))
        item = recode[self.item]
        votes = np.lexsort((self.annotator, item))
        items = tuple(self.items[i] for i in order.tolist())
        return VoteTable(
            item[votes], self.annotator[votes], self.choice[votes], items, self.annotators, self.n_categories
        )

    def with_categories(self, n_categories: int) -> VoteTable:
        """The same votes counted over ``n_categories`` categories (ValueError if a choice is out of range)."""
        return replace(self, n_categories=_category_count(self.choice, n_categories))

    def check_unique(self) -> None:
        """Reject a second vote by one annotator on one item: the caller must pass the latest only."""
        key = self.item * max(len(self.annotators), 1) + self.annotator
        uniq, counts = np.unique(key, return_counts=True)
        if len(uniq) < len(key):
            dup = int(uniq[np.argmax(counts > 1)])
            item, ann = divmod(dup, len(self.annotators))
            raise ValueError(
                f"annotator {self.annotators[ann]!r} voted more than once on item "
                f"{self.items[item]!r}; pass only the latest vote"
            )

    def subset(self, mask: np.ndarray) -> VoteTable:
        """The votes where ``mask`` is true, re-coded compactly (annotators keep their names).

        What this table has worked out that still holds comes along: the vote pairs when they were,
        the counts and majorities when the mask keeps whole items (a breakdown by group).
        """
        kept, item, items = _compact(self.item[mask], self.items)
        annotator, annotators = _compact(self.annotator[mask], self.annotators)[1:]
        subset = VoteTable(item, annotator, self.choice[mask], items, annotators, self.n_categories)
        derived = subset.__dict__  # where cached_property keeps its values
        raters = np.bincount(item, minlength=len(items))
        whole_items = np.array_equal(raters, self.raters[kept])
        if "pairs" in self.__dict__:  # worked out already (never made here: they grow with the square of the raters)
            renumber = np.cumsum(mask) - 1
            first, second = self.pairs
            both = mask[first] if whole_items else mask[first] & mask[second]  # a pair's votes share an item
            derived["pairs"] = (renumber[first[both]], renumber[second[both]])
        if whole_items:
            derived["raters"] = raters
            derived["majority"] = tuple(flags[mask] for flags in self.majority)
        return subset

    @property
    def n_votes(self) -> int:
        return len(self.choice)

    @cached_property
    def counts(self) -> np.ndarray:
        """Items × categories matrix of vote counts: the input of Fleiss' κ and Krippendorff's α."""
        k = self.n_categories
        flat = np.bincount(self.item * k + self.choice, minlength=len(self.items) * k)
        return flat.reshape(len(self.items), k)

    def column_sums(self, rows: np.ndarray) -> np.ndarray:
        """``self.counts[rows].sum(axis=0)``, one category at a time."""
        return np.array([column[rows].sum() for column in self._columns], dtype=np.int64)

    @property
    def _columns(self) -> list[np.ndarray]:
        """The counts category by category: with 2-4 categories, numpy is several times faster
        column by column than along the rows of the matrix (all sums here are of integers: exact)."""
        counts = self.counts
        return [counts[:, k] for k in range(counts.shape[1])]

    @cached_property
    def raters(self) -> np.ndarray:
        """Votes per item."""
        return _total(self._columns, len(self.items))

    @cached_property
    def squares(self) -> np.ndarray:
        """Per item, the sum over categories of count²."""
        return _total([c * c for c in self._columns], len(self.items))

    @cached_property
    def agreeing_pairs(self) -> np.ndarray:
        """Per item, the ordered pairs of votes that agree: the sum over categories of count·(count - 1)."""
        return _total([c * (c - 1) for c in self._columns], len(self.items))

    @cached_property
    def top(self) -> np.ndarray:
        """Per item, the count of its most common choice."""
        columns = self._columns
        return np.maximum.reduce(columns) if columns else np.zeros(len(self.items), np.int64)

    @cached_property
    def majority(self) -> tuple[np.ndarray, np.ndarray]:
        """Per vote: whether the *other* votes on its item have a single most common choice, and whether it is this vote's.

        Worked out once per item and choice (the other votes are the item's counts less this one).
        """
        columns = self._columns
        has = np.zeros(self.counts.shape, bool)
        hit = np.zeros(self.counts.shape, bool)
        for c in range(len(columns)):
            others = [column - 1 if k == c else column for k, column in enumerate(columns)]
            top = np.maximum.reduce(others)
            has[:, c] = (top > 0) & (_total([o == top for o in others], len(top)) == 1)
            hit[:, c] = has[:, c] & (others[c] == top)
        return has[self.item, self.choice], hit[self.item, self.choice]

    @property
    def vote_pairs(self) -> int:
        """How many pairs of votes share an item (what ``pairs`` would hold), from the raters per item alone."""
        raters = self.raters
        return int((raters * (raters - 1)).sum()) // 2

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pair of votes on one item, as vote indices: (the lower annotator's, the higher's)."""
        order = np.lexsort((self.annotator, self.item))
        item = self.item[order]
        max_raters = int(np.bincount(item).max()) if len(item) else 0
        firsts, seconds = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for d in range(1, max_raters):
            i = np.flatnonzero(item[:-d] == item[d:])
            firsts.append(order[i])
            seconds.append(order[i + d])
        return np.concatenate(firsts), np.concatenate(seconds)


def _unique(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for codes in ``0..size-1``; without sorting when size is small."""
    if size > 4 * len(codes) + 65536:
        values, inverse = np.unique(codes, return_inverse=True)
        return values, inverse.ravel()
    used = np.bincount(codes, minlength=size) > 0
    return np.flatnonzero(used), (np.cumsum(used) - 1)[codes]


def _total(columns: list[np.ndarray], n: int) -> np.ndarray:
    """The element-wise sum of equal-length integer (or boolean) arrays, as int64."""
    out = np.zeros(n, np.int64)
    for column in columns:
        out += column
    return out


def _compact(codes: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Which names are in use (a mask), the codes renumbered over them in their order
    (``np.unique``'s inverse, without sorting), and those names."""
    used = np.zeros(len(names), bool)
    used[codes] = True
    return used, (np.cumsum(used) - 1)[codes], tuple(compress(names, used.tolist()))


def _category_count(choice: np.ndarray, n_categories: int | None) -> int:
    """Check the codes are in ``0..n_categories-1`` (or infer the count as max + 1)."""
    if len(choice) and choice.min() < 0:
        raise ValueError(f"choice {int(choice.min())} is negative; choices are 0-based category codes")
    top = int(choice.max()) + 1 if len(choice) else 0
    if n_categories is None:
        return max(top, 1)
    if top > n_categories:
        raise ValueError(f"choice {top - 1} is out of range for {n_categories} categories")
    return n_categories


def _table(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> VoteTable:
    """Accept triples or an already encoded table."""
    if isinstance(votes, VoteTable):
        return votes
    return VoteTable.from_votes(votes, n_categories)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Measure:
    """One agreement value, or ``None`` with the reason it is undefined; ``n`` is what it rests on."""

    value: float | None
    reason: str | None = None
    n: int = 0

    @classmethod
    def undefined(cls, reason: str, n: int = 0) -> Measure:
        return cls(None, reason, n)


@dataclass(frozen=True, slots=True)
class FleissKappa:
    """Fleiss' κ over the items that have the modal number of raters; the rest are left out."""

    value: float | None
    reason: str | None
    raters_per_item: int
    items_used: int
    items_left_out: int

    @property
    def measure(self) -> Measure:
        return Measure(self.value, self.reason, self.items_used)


# --------------------------------------------------------------------------- measures


def fleiss_kappa(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> FleissKappa:
    """Fleiss' κ (as statsmodels' ``fleiss_kappa``), on the items with the modal number of raters.

    Fleiss' κ needs the same number of raters on every item, so it uses the most
    common count among items with 2+ votes (ties go to the larger count) and
    reports how many items with votes were left out.
    """
    table = _table(votes, n_categories)
    raters = table.raters
    voted = int((raters > 0).sum())
    multi = raters[raters >= 2]
    if not len(multi):
        return FleissKappa(None, NO_MULTI_VOTE_ITEMS, 0, 0, voted)
    freq = np.bincount(multi)
    m = int(len(freq) - 1 - np.argmax(freq[::-1]))  # modal count, larger on ties
    used = raters == m
    n_used = int(used.sum())
    left_out = voted - n_used
    totals = table.column_sums(used)
    if np.count_nonzero(totals) < 2:
        return FleissKappa(None, ALL_ONE_CATEGORY.format("κ"), m, n_used, left_out)
    p_item = (table.squares[used] - m) / (m * (m - 1))
    p_cat = totals / totals.sum()
    p_e = float(p_cat @ p_cat)
    kappa = (float(p_item.mean()) - p_e) / (1.0 - p_e)
    return FleissKappa(kappa, None, m, n_used, left_out)


def krippendorff_alpha(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> Measure:
    """Krippendorff's α, nominal: any number of raters per item, missing votes allowed.

    Built from the coincidence matrix; only items with 2+ votes are pairable, so
    ``n`` is the number of those items.
    """
    table = _table(votes, n_categories)
    pairable = table.raters >= 2
    m = table.raters[pairable]
    if not len(m):
        return Measure.undefined(NO_MULTI_VOTE_ITEMS)
    n = float(m.sum())
    within = float((table.agreeing_pairs[pairable] / (m - 1)).sum())  # diagonal of coincidences
    n_c = table.column_sums(pairable).astype(float)
    expected = n * n - float(n_c @ n_c)
    if expected == 0:
        return Measure.undefined(ALL_ONE_CATEGORY.format("α"), len(m))
    return Measure(1.0 - (n - 1.0) * (n - within) / expected, None, len(m))


def percent_unanimous(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> Measure:
    """Percentage (0-100) of items with 2+ votes on which every vote is the same."""
    table = _table(votes, n_categories)
    raters = table.raters
    multi = raters >= 2
    if not multi.any():
        return Measure.undefined(NO_MULTI_VOTE_ITEMS)
    unanimous = table.top[multi] == raters[multi]
    return Measure(100.0 * float(unanimous.mean()), None, int(multi.sum()))


def gwet_ac1(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> Measure:
    """Gwet's AC1 (nominal): any number of raters, missing ratings allowed; ``n`` counts items with 2+ votes.

    Unlike κ it stays meaningful when one label dominates: its chance agreement shrinks as the votes
    pile into one category instead of tending to 1.
    """
    return gwet_ac2(votes, "identity", n_categories)


def gwet_ac2(
    votes: Iterable[Vote] | VoteTable, weights: GwetWeights = "quadratic", n_categories: int | None = None
) -> Measure:
    """Gwet's AC2: AC1 with partial credit between ordered categories (0 < 1 < 2 …), for ordinal scales.

    ``weights`` as irrCAC names them (``identity`` gives AC1); the categories are the table's 0..q-1.
    """
    table = _table(votes, n_categories)
    if table.n_categories < 2:
        return Measure.undefined("only one category: chance agreement is 1, AC1 undefined")
    value, n = gwet_coefficient(table.counts, gwet_weights(table.n_categories, weights))
    if not n:
        return Measure.undefined(NO_MULTI_VOTE_ITEMS)
    return Measure(value, None if value is not None else "chance agreement is 1, AC1 undefined", n)


def _pair_tables(table: VoteTable) -> dict[tuple[int, int], np.ndarray]:
    """Contingency table (K × K counts) per annotator pair (lo, hi) that shares an item."""
    keys, tables = _pair_arrays(table)
    n_ann = len(table.annotators)
    return {divmod(int(key), n_ann): tables[j] for j, key in enumerate(keys)}


def _pair_arrays(table: VoteTable) -> tuple[np.ndarray, np.ndarray]:
    """The annotator pairs that share an item, as codes ``lo * annotators + hi`` in order, and their contingency
    tables (pairs × K × K): only those pairs, never an annotators × annotators matrix."""
    first, second = table.pairs
    a_lo, a_hi, c_lo, c_hi = table.annotator[first], table.annotator[second], table.choice[first], table.choice[second]
    n_ann, k = len(table.annotators), table.n_categories
    keys, inv = _unique(a_lo * n_ann + a_hi, n_ann * n_ann)
    flat = np.bincount(inv * k * k + c_lo * k + c_hi, minlength=len(keys) * k * k)
    return keys, flat.reshape(len(keys), k, k)


def kappa_from_table(table: np.ndarray, weights: Weights = None) -> Measure:
    """Cohen's κ from a K × K contingency table (rows: first annotator), as scikit-learn computes it.

    Weighted κ treats categories as ordered and, like ``cohen_kappa_score`` and
    R's ``irr::kappa2``, spaces them by rank among the categories either
    annotator used.
    """
    n = int(table.sum())
    if n < 2:
        return Measure.undefined("fewer than 2 items rated by both", n)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    rank = np.cumsum((rows + cols) > 0) - 1
    dist = np.abs(rank[:, None] - rank[None, :]).astype(float)
    w = {None: (dist > 0).astype(float), "linear": dist, "quadratic": dist**2}[weights]
    expected = float((w * np.outer(rows, cols)).sum())
    if expected == 0:
        return Measure.undefined(ALL_ONE_CATEGORY.format("κ"), n)
    return Measure(1.0 - n * float((w * table).sum()) / expected, None, n)


def cohen_kappa(
    votes: Iterable[Vote] | VoteTable,
    a: str,
    b: str,
    weights: Weights = None,
    n_categories: int | None = None,
) -> Measure:
    """Cohen's κ between annotators ``a`` and ``b`` on the items both rated."""
    table = _table(votes, n_categories)
    if a == b:
        return Measure.undefined("an annotator compared with themself")
    names = {name: i for i, name in enumerate(table.annotators)}
    if a not in names or b not in names:
        missing = a if a not in names else b
        return Measure.undefined(f"annotator {missing!r} has no votes")
    pair = _pair_tables(table.subset(np.isin(table.annotator, [names[a], names[b]])))
    if not pair:
        return Measure.undefined("no items rated by both")
    contingency = next(iter(pair.values()))
    return kappa_from_table(contingency if a < b else contingency.T, weights)


def cohen_matrix(
    votes: Iterable[Vote] | VoteTable,
    weights: Weights = None,
    n_categories: int | None = None,
) -> dict[str, dict[str, Measure]]:
    """Cohen's κ for every pair of annotators, both ways round: ``matrix[a][b]`` (no diagonal)."""
    table = _table(votes, n_categories)
    pairs = _pair_tables(table)
    names = table.annotators
    matrix: dict[str, dict[str, Measure]] = {a: {} for a in names}
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            contingency = pairs.get((i, j))
            measure = (
                kappa_from_table(contingency, weights)
                if contingency is not None
                else Measure.undefined("no items rated by both")
            )
            matrix[a][names[j]] = matrix[names[j]][a] = measure
    return matrix


PAIRS_IN_FULL = 50  # annotators up to whom every pair's Cohen's κ is reported; past them the pairs are summarised
MAX_VOTE_PAIRS = 2_000_000  # pairs of votes on one item a summary works κ out from (about 100 MB); past it: counted
PAIRS_LISTED = 10  # pairs a summary names: those with the fewest shared items, and those with the lowest κ


@dataclass(frozen=True, slots=True)
class PairKappa:
    """One annotator pair's Cohen's κ (unweighted) and the items both rated (``kappa.n``)."""

    first: str
    second: str
    kappa: Measure

    def to_json(self) -> dict[str, object]:
        return {"pair": [self.first, self.second], "kappa": self.kappa.value, "items": self.kappa.n}


@dataclass(frozen=True)
class PairSummary:
    """Cohen's κ over every annotator pair that shares an item, summarised (past ``PAIRS_IN_FULL`` annotators).

    ``pairs`` counts the pairs that share an item and ``defined`` those with a κ (2+ shared items, not all in one
    category); ``low``/``median``/``high`` are over the defined ones. ``fewest`` and ``lowest`` name
    ``PAIRS_LISTED`` pairs each: the fewest shared items, the lowest κ (ties by name). Past ``MAX_VOTE_PAIRS`` pairs
    of votes on one item nothing per pair is worked out: ``pairs`` is None and ``reason`` says why."""

    annotators: int
    vote_pairs: int
    pairs: int | None
    defined: int = 0
    low: float | None = None
    median: float | None = None
    high: float | None = None
    fewest: tuple[PairKappa, ...] = ()
    lowest: tuple[PairKappa, ...] = ()
    reason: str | None = None

    def renamed(self, name: Callable[[str], str]) -> PairSummary:
        def each(found: tuple[PairKappa, ...]) -> tuple[PairKappa, ...]:
            return tuple(replace(p, first=name(p.first), second=name(p.second)) for p in found)

        return replace(self, fewest=each(self.fewest), lowest=each(self.lowest))

    def to_json(self) -> dict[str, object]:
        return {
            "annotators": self.annotators,
            "listed_in_full_up_to": PAIRS_IN_FULL,
            "vote_pairs": self.vote_pairs,
            "pairs_sharing_items": self.pairs,
            "pairs_with_kappa": self.defined,
            "kappa_min": self.low,
            "kappa_median": self.median,
            "kappa_max": self.high,
            "fewest_shared_items": [p.to_json() for p in self.fewest],
            "lowest_kappa": [p.to_json() for p in self.lowest],
            "reason": self.reason,
        }


def pair_summary(
    votes: Iterable[Vote] | VoteTable, n_categories: int | None = None, max_vote_pairs: int = MAX_VOTE_PAIRS
) -> PairSummary:
    """Cohen's κ (unweighted) of every annotator pair that shares an item, as a :class:`PairSummary`: the κ of all
    pairs at once from their contingency tables, in memory linear in the vote pairs and bounded by
    ``max_vote_pairs`` (the same values as :func:`cohen_matrix`, which lists each pair)."""
    table = _table(votes, n_categories)
    n_ann, vote_pairs = len(table.annotators), table.vote_pairs
    if vote_pairs > max_vote_pairs:
        reason = (
            f"not worked out per pair: {vote_pairs:,} pairs of votes share an item, more than the "
            f"{max_vote_pairs:,} a summary reads; Fleiss' κ, α and AC1 cover every vote"
        )
        return PairSummary(n_ann, vote_pairs, None, reason=reason)
    keys, tables = _pair_arrays(table)
    n = tables.sum(axis=(1, 2))
    agree = np.einsum("pkk->p", tables)
    expected = n * n - (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1)
    defined = (n >= 2) & (expected > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(defined, 1.0 - n * (n - agree) / np.where(defined, expected, 1), np.nan)
    names = table.annotators

    def listed(order: np.ndarray) -> tuple[PairKappa, ...]:
        found = []
        for j in order[:PAIRS_LISTED].tolist():
            lo, hi = divmod(int(keys[j]), n_ann)
            measure = (
                Measure(float(kappa[j]), None, int(n[j]))
                if defined[j]
                else Measure.undefined(_undefined_pair(int(n[j])), int(n[j]))
            )
            found.append(PairKappa(names[lo], names[hi], measure))
        return tuple(found)

    values = kappa[defined]
    middle = float(np.median(values)) if len(values) else None
    by_kappa = np.lexsort((keys, np.where(defined, kappa, np.inf)))[: int(defined.sum())]
    return PairSummary(
        n_ann,
        vote_pairs,
        len(keys),
        int(defined.sum()),
        float(values.min()) if len(values) else None,
        middle,
        float(values.max()) if len(values) else None,
        listed(np.lexsort((keys, n))),
        listed(by_kappa),
        None if len(values) else "no pair has a defined κ",
    )


def _undefined_pair(shared: int) -> str:
    """Why a pair's κ is undefined, in :func:`kappa_from_table`'s words."""
    return "fewer than 2 items rated by both" if shared < 2 else ALL_ONE_CATEGORY.format("κ")


def agreement_with_majority(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> dict[str, Measure]:
    """Per annotator, the percentage of their votes that match the majority of the *other* votes.

    The annotator's own vote is left out so it cannot vote for itself. An item
    counts only where the other votes have a single most common choice; with
    one other vote that vote is the majority, and a tie among the others skips
    the item.
    """
    table = _table(votes, n_categories)
    has_majority, hit = table.majority
    reason = "no item where the other annotators have a majority"
    return _rates(table, has_majority, hit, reason)


def agreement_with_gold(
    votes: Iterable[Vote] | VoteTable,
    gold: Mapping[str, int | None] | np.ndarray,
    n_categories: int | None = None,
) -> dict[str, Measure]:
    """Per annotator, the percentage of their votes on items with a gold label that equal it.

    ``gold`` maps item ids to labels, or is an array of labels in the order of the table's items (-1: none).
    """
    table = _table(votes, n_categories)
    return _gold_rates(table, gold_labels(table, gold))


def gold_labels(table: VoteTable, gold: Mapping[str, int | None] | np.ndarray) -> np.ndarray:
    """The gold label of each of the table's items (-1 for none); an array is taken as already that."""
    if isinstance(gold, np.ndarray):
        return gold
    return np.fromiter((-1 if (g := gold.get(i)) is None else g for i in table.items), np.int64, len(table.items))


def _gold_rates(table: VoteTable, labels: np.ndarray) -> dict[str, Measure]:
    item_gold = labels[table.item]
    has_gold = item_gold >= 0
    return _rates(table, has_gold, has_gold & (item_gold == table.choice), "no votes on items with a gold label")


def _rates(table: VoteTable, counted: np.ndarray, hit: np.ndarray, reason: str) -> dict[str, Measure]:
    """Percent of ``counted`` votes that are ``hit``, per annotator."""
    n_ann = len(table.annotators)
    totals = np.bincount(table.annotator[counted], minlength=n_ann)
    hits = np.bincount(table.annotator[hit], minlength=n_ann)
    return {
        name: Measure(100.0 * float(hits[i]) / float(totals[i]), None, int(totals[i]))
        if totals[i]
        else Measure.undefined(reason)
        for i, name in enumerate(table.annotators)
    }


# --------------------------------------------------------------------------- report

MIN_ITEMS = 30  # items with 2+ votes below which a group's figures say nothing
MAX_WIDTH = 0.4  # an interval wider than this says nothing either


@dataclass(frozen=True)
class AgreementReport:
    """Every agreement measure on one set of votes (``piqa_tui.render.agreement`` shows it)."""

    n_items: int
    n_votes: int
    annotators: tuple[str, ...]
    fleiss: FleissKappa
    krippendorff: Measure
    unanimous: Measure
    cohen: dict[str, dict[str, Measure]]
    with_majority: dict[str, Measure]
    with_gold: dict[str, Measure] = field(default_factory=dict)
    votes_per_annotator: dict[str, int] = field(default_factory=dict)
    ac1: Measure = field(default_factory=lambda: Measure.undefined(NO_MULTI_VOTE_ITEMS))
    intervals: Intervals | None = None  # None: not asked for (``bootstrap=None``)
    pairs: PairSummary | None = None  # past PAIRS_IN_FULL annotators: the pairs summarised, ``cohen`` left empty

    @property
    def caution(self) -> str | None:
        """Why these figures are too uncertain to say anything, in plain words (None: they can be read).

        The rule: fewer than ``MIN_ITEMS`` items with 2+ votes, or a κ interval (α's where κ has none)
        wider than ``MAX_WIDTH``.
        """
        pairable = self.krippendorff.n
        if pairable < MIN_ITEMS:
            return f"too few items to say anything: {pairable} with 2+ votes, {MIN_ITEMS} needed"
        if self.intervals is None:
            return None
        for name, interval in (("κ", self.intervals.fleiss), ("α", self.intervals.krippendorff)):
            low, high = interval.low, interval.high
            if low is not None and high is not None:
                wide = high - low > MAX_WIDTH
                return f"too uncertain to say anything: {name} anywhere from {low:.2f} to {high:.2f}" if wide else None
        return None


def renamed_report(report: AgreementReport, names: Mapping[str, str]) -> AgreementReport:
    """``report`` with every annotator named by ``names`` (e.g. pseudonyms); the figures unchanged.
    An annotator ``names`` lacks keeps their name."""

    def name(a: str) -> str:
        return names.get(a, a)

    return replace(
        report,
        annotators=tuple(name(a) for a in report.annotators),
        cohen={name(a): {name(b): m for b, m in row.items()} for a, row in report.cohen.items()},
        with_majority={name(a): m for a, m in report.with_majority.items()},
        with_gold={name(a): m for a, m in report.with_gold.items()},
        votes_per_annotator={name(a): n for a, n in report.votes_per_annotator.items()},
        pairs=None if report.pairs is None else report.pairs.renamed(name),
        intervals=None
        if report.intervals is None
        else replace(
            report.intervals,
            cohen={name(a): {name(b): i for b, i in row.items()} for a, row in report.intervals.cohen.items()},
        ),
    )


def agreement_report(
    votes: Iterable[Vote] | VoteTable,
    n_categories: int | None = None,
    gold: Mapping[str, int | None] | np.ndarray | None = None,
    bootstrap: Bootstrap | None = None,
) -> AgreementReport:
    """Compute every measure once over the same encoded votes (``gold`` as in :func:`agreement_with_gold`);
    with ``bootstrap``, the intervals of κ, α, AC1 and each pair's κ too. Past ``PAIRS_IN_FULL`` annotators the
    pairs' κ are summarised (``pairs``; ``cohen`` is empty and no pair has an interval): a report, its JSON and
    its tables stay linear in the annotators, where a matrix of them grows with their square."""
    table = _table(votes, n_categories)
    per_ann = np.bincount(table.annotator, minlength=len(table.annotators))
    summarised = len(table.annotators) > PAIRS_IN_FULL
    report = AgreementReport(
        n_items=len(table.items),
        n_votes=table.n_votes,
        annotators=table.annotators,
        fleiss=fleiss_kappa(table),
        krippendorff=krippendorff_alpha(table),
        unanimous=percent_unanimous(table),
        cohen={} if summarised else cohen_matrix(table),
        pairs=pair_summary(table) if summarised else None,
        with_majority=agreement_with_majority(table),
        with_gold=_gold_rates(table, gold_labels(table, gold)) if gold is not None else {},
        votes_per_annotator={a: int(per_ann[i]) for i, a in enumerate(table.annotators)},
        ac1=gwet_ac1(table),
    )
    return report if bootstrap is None else replace(report, intervals=report_intervals(table, report, bootstrap))


def report_intervals(table: VoteTable, report: AgreementReport, bootstrap: Bootstrap) -> Intervals:
    """The bootstrap intervals of ``report``'s figures; a figure undefined on the votes themselves has
    none, for the reason it is undefined."""
    if not table.n_votes:
        none = Interval.undefined(NO_MULTI_VOTE_ITEMS)
        return Intervals(bootstrap, none, none, none, {})
    found = bootstrap_intervals(table, bootstrap, report.fleiss.raters_per_item, pairs=report.pairs is None)
    cohen = {a: {b: _unless_undefined(report.cohen[a][b], i) for b, i in row.items()} for a, row in found.cohen.items()}
    return Intervals(
        bootstrap,
        _unless_undefined(report.fleiss.measure, found.fleiss),
        _unless_undefined(report.krippendorff, found.krippendorff),
        _unless_undefined(report.ac1, found.ac1),
        cohen,
    )


def _unless_undefined(measure: Measure, interval: Interval) -> Interval:
    return interval if measure.value is not None else Interval.undefined(measure.reason or "undefined")


# --------------------------------------------------------------------------- breakdown


@dataclass(frozen=True)
class AgreementBreakdown:
    """One :class:`AgreementReport` per value of a categorical column (e.g. dialect, domain)."""

    column: str
    groups: dict[str, AgreementReport]


def agreement_by(
    votes: Iterable[Vote] | VoteTable,
    group_of: Callable[[str], Hashable] | Mapping[str, Hashable],
    n_categories: int | None = None,
    gold: Mapping[str, int | None] | np.ndarray | None = None,
    column: str = "group",
    bootstrap: Bootstrap | None = None,
) -> AgreementBreakdown:
    """Split the votes by each item's group (``group_of(item_id)``) and report each group
    (with ``bootstrap``, its intervals from resampling the group's own items).

    Items whose group is ``None`` (or missing from a mapping) form the group
    ``"(none)"``; groups are ordered by name.
    """
    table = _table(votes, n_categories)
    lookup = group_of.get if isinstance(group_of, Mapping) else group_of
    names = ["(none)" if (g := lookup(i)) is None else str(g) for i in table.items]
    groups = sorted(set(names))
    code = {g: j for j, g in enumerate(groups)}
    item_group = np.fromiter((code[g] for g in names), np.int64, len(names))
    labels = None if gold is None else gold_labels(table, gold)
    return agreement_by_codes(table, item_group, groups, labels, column, bootstrap=bootstrap)


def agreement_by_codes(
    table: VoteTable,
    item_group: np.ndarray,
    groups: Sequence[str],
    gold: np.ndarray | None = None,
    column: str = "group",
    whole: AgreementReport | None = None,
    bootstrap: Bootstrap | None = None,
) -> AgreementBreakdown:
    """:func:`agreement_by` with the groups already coded: ``item_group`` holds an index into ``groups``
    for each of the table's items, ``gold`` their labels (-1: none). Groups come in ``groups``' order;
    those with no votes are left out. ``whole``, the report of the whole table with that gold, serves
    a group that holds every item (a column with one value).
    """
    reports = {}
    for j, name in enumerate(groups):
        in_group = item_group == j
        if whole is not None and bool(in_group.all()):
            reports[name] = whole
        elif in_group.any():
            subset = table.subset(in_group[table.item])
            reports[name] = agreement_report(subset, gold=None if gold is None else gold[in_group], bootstrap=bootstrap)
    return AgreementBreakdown(column, reports)
