"""How sure an agreement figure is: Gwet's AC1/AC2, and percentile bootstrap intervals over items.

κ collapses when one label dominates (expected agreement near 1), so Gwet's AC1, whose chance
agreement stays small, stands beside it; AC2 is the same with weights for ordered categories. Both
follow Gwet's multi-rater formula (any number of raters, missing ratings allowed) and equal the
``irrCAC`` package's ``CAC.gwet``.

Every interval comes from one bootstrap over items: the items are drawn with replacement, as many as
there are, ``resamples`` times from a seeded generator, and each figure is worked out again on every
draw; the interval is the middle ``level`` share of those values (percentiles). Nothing loops over
items in Python: each figure is a closed form of a few per-item sums, so every resample is one
matrix product of its item counts with per-item feature columns. Items with the very same votes
(common with few annotators) are pooled into one unit first; their counts in a resample then follow
a multinomial draw, which is exactly how many times resampling the items would pick them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import numpy as np
else:
    from piqa_tui.core.numeric import np  # imported on its first use: core/numeric.py

GwetWeights = Literal["identity", "linear", "quadratic", "ordinal"]

DEFAULT_RESAMPLES = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
CHUNK_CELLS = 4_000_000  # resampled item indices held at once (32 MB of int64)
DENSE_PAIR_CELLS = 4_000_000  # pair cells per unit multiplied as a matrix up to this size (32 MB)


class CodedVotes(Protocol):
    """What a bootstrap reads from a vote table (``piqa_tui.core.votes.agreement.VoteTable`` is one)."""

    @property
    def item(self) -> np.ndarray: ...
    @property
    def annotator(self) -> np.ndarray: ...
    @property
    def choice(self) -> np.ndarray: ...
    @property
    def items(self) -> tuple[str, ...]: ...
    @property
    def annotators(self) -> tuple[str, ...]: ...
    @property
    def n_categories(self) -> int: ...
    @property
    def counts(self) -> np.ndarray: ...
    @property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]: ...


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """How the intervals are made: resamples of the items, the confidence level, and the seed."""

    resamples: int = DEFAULT_RESAMPLES
    level: float = DEFAULT_LEVEL
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"resamples must be 1 or more, not {self.resamples}")
        if not 0 < self.level < 1:
            raise ValueError(f"the confidence level must be between 0 and 1, not {self.level}")

    def describe(self) -> str:
        """The method in one line, for the notes under a table."""
        return (
            f"{self.level:.0%} intervals: percentile bootstrap over items, {self.resamples} resamples, seed {self.seed}"
        )


@dataclass(frozen=True, slots=True)
class Interval:
    """The bounds of a bootstrap interval, or ``None`` with the reason there is none."""

    low: float | None
    high: float | None
    reason: str | None = None

    @classmethod
    def undefined(cls, reason: str) -> Interval:
        return cls(None, None, reason)

    @property
    def width(self) -> float | None:
        return None if self.low is None or self.high is None else self.high - self.low


@dataclass(frozen=True)
class Intervals:
    """The intervals of one report's figures; ``cohen[a][b]`` for every pair that shares an item, both ways."""

    bootstrap: Bootstrap
    fleiss: Interval
    krippendorff: Interval
    ac1: Interval
    cohen: dict[str, dict[str, Interval]]


# --------------------------------------------------------------------------- Gwet


def gwet_weights(n_categories: int, weights: GwetWeights = "identity") -> np.ndarray:
    """Gwet's agreement weights for categories 0..q-1 (1 on the diagonal), as irrCAC's ``Weights`` builds them."""
    k = np.arange(n_categories, dtype=float)
    dist = np.abs(k[:, None] - k[None, :])
    span = max(n_categories - 1, 1)
    if weights == "identity":
        return np.eye(n_categories)
    if weights == "linear":
        return 1.0 - dist / span
    if weights == "quadratic":
        return 1.0 - dist**2 / span**2
    if weights == "ordinal":
        pairs = (dist + 1) * dist / 2  # categories between k and l, counted as pairs
        return 1.0 - pairs / max(float(pairs.max()), 1.0)
    raise ValueError(f"unknown weights {weights!r}: identity, linear, quadratic or ordinal")


def _gwet_features(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per item: has 2+ ratings, its weighted agreement share, has a rating, and its share per category."""
    raters = counts.sum(axis=1)
    multi, rated = raters >= 2, raters >= 1
    agreeing = (counts * (counts @ weights.T - 1)).sum(axis=1)
    share_agreeing = np.where(multi, agreeing / np.where(multi, raters * (raters - 1), 1), 0.0)
    shares = counts / np.where(rated, raters, 1)[:, None]
    return np.column_stack([multi, share_agreeing, rated, shares]).astype(float)


def _gwet_from_sums(sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Gwet's coefficient per row of summed :func:`_gwet_features` (NaN where undefined)."""
    q = weights.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_a = sums[:, 1] / sums[:, 0]
        pi = sums[:, 3:] / sums[:, 2:3]
        p_e = float(weights.sum()) * (pi * (1 - pi)).sum(axis=1) / (q * (q - 1)) if q >= 2 else np.ones(len(sums))
        value = (p_a - p_e) / (1 - p_e)
    return np.where((sums[:, 0] > 0) & (p_e < 1), value, np.nan)


def gwet_coefficient(counts: np.ndarray, weights: np.ndarray) -> tuple[float | None, int]:
    """Gwet's AC1 (identity weights) or AC2 from an items × categories count matrix, and the items with 2+ ratings.

    Chance agreement is the share of ratings spread over the categories, Σ π(1 - π) / (q - 1) (times the
    weights' total over q): it is small when one label dominates, where κ's expected agreement tends to 1.
    """
    rated = counts[counts.sum(axis=1) > 0]
    value = _gwet_from_sums(np.ones((1, len(rated))) @ _gwet_features(rated, weights), weights)[0]
    return (None if np.isnan(value) else float(value)), int((rated.sum(axis=1) >= 2).sum())


# --------------------------------------------------------------------------- the other figures, from sums


def _fleiss_features(counts: np.ndarray, raters_per_item: int) -> np.ndarray:
    used = counts.sum(axis=1) == raters_per_item
    squares = (counts * counts).sum(axis=1)
    return np.column_stack([used, squares * used, counts * used[:, None]]).astype(float)


def _fleiss_from_sums(sums: np.ndarray, m: int) -> np.ndarray:
    """Fleiss' κ (as ``agreement.fleiss_kappa``) per row of summed :func:`_fleiss_features`."""
    n, totals = sums[:, 0], sums[:, 2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_item = (sums[:, 1] - m * n) / (m * (m - 1) * n)
        p_cat = totals / totals.sum(axis=1, keepdims=True)
        p_e = (p_cat * p_cat).sum(axis=1)
        value = (p_item - p_e) / (1 - p_e)
    return np.where((n > 0) & ((totals > 0).sum(axis=1) >= 2), value, np.nan)


def _alpha_features(counts: np.ndarray) -> np.ndarray:
    raters = counts.sum(axis=1)
    pairable = raters >= 2
    agreeing = (counts * (counts - 1)).sum(axis=1)
    within = np.where(pairable, agreeing / np.where(pairable, raters - 1, 1), 0.0)
    return np.column_stack([raters * pairable, within, counts * pairable[:, None]]).astype(float)


def _alpha_from_sums(sums: np.ndarray) -> np.ndarray:
    """Krippendorff's α, nominal (as ``agreement.krippendorff_alpha``), per row of summed :func:`_alpha_features`."""
    n, within, n_c = sums[:, 0], sums[:, 1], sums[:, 2:]
    expected = n * n - (n_c * n_c).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (n - 1.0) * (n - within) / expected
    return np.where((n > 0) & (expected > 0), value, np.nan)


def _cohen_from_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's κ, unweighted, for resamples × pairs × K × K contingency tables (NaN where undefined)."""
    n = tables.sum(axis=(2, 3))
    diagonal = np.einsum("bpkk->bp", tables)
    expected = n * n - (tables.sum(axis=3) * tables.sum(axis=2)).sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - n * (n - diagonal) / expected
    return np.where((n >= 2) & (expected > 0), value, np.nan)


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class _Units:
    """The items pooled by identical votes: what a resample counts."""

    counts: np.ndarray  # units × categories
    size: np.ndarray  # items per unit
    of_item: np.ndarray  # each item's unit
    edge_unit: np.ndarray  # (unit, pair cell) of every vote pair on a unit's first item, by cell
    edge_cell: np.ndarray  # pair index × K² + first choice × K + second choice
    pairs: list[tuple[int, int]]  # annotator codes (lower, higher) of each pair index


def _patterns(votes: CodedVotes) -> tuple[np.ndarray, int] | None:
    """One integer per item that is equal exactly for items with the same votes by the same people, and
    the bound of those integers (None when the annotators are too many to code that in 62 bits)."""
    base = votes.n_categories + 1
    bits = len(votes.annotators) * np.log2(base)
    if bits > 62:
        return None
    digit = (votes.choice + 1) * np.power(base, votes.annotator, dtype=np.int64)
    if bits <= 52:  # a float sum of integers below 2**53 is exact
        code = np.bincount(votes.item, weights=digit, minlength=len(votes.items)).astype(np.int64)
    else:
        code = np.zeros(len(votes.items), np.int64)
        np.add.at(code, votes.item, digit)
    return code, int(base) ** len(votes.annotators)


def _renumber(codes: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes in order and each code's index among them (``np.unique`` without sorting when
    the codes are small)."""
    if bound > 4 * len(codes) + 65536:
        values, inverse = np.unique(codes, return_inverse=True)
        return values, inverse.ravel()
    used = np.bincount(codes, minlength=bound) > 0
    return np.flatnonzero(used), (np.cumsum(used) - 1)[codes]


def _units(votes: CodedVotes, pairs: bool = True) -> _Units:
    n_items, k = len(votes.items), votes.n_categories
    found = _patterns(votes)
    if found is None:
        first_item, of_item = np.arange(n_items), np.arange(n_items)
    else:
        kinds, of_item = _renumber(*found)
        order = np.argsort(of_item, kind="stable")
        first_item = order[np.searchsorted(of_item[order], np.arange(len(kinds)))]
    lower, higher = votes.pairs if pairs else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    n_ann = len(votes.annotators)
    pair_codes, pair_index = _renumber(votes.annotator[lower] * n_ann + votes.annotator[higher], n_ann * n_ann)
    cell = pair_index * k * k + votes.choice[lower] * k + votes.choice[higher]
    first = np.zeros(n_items, bool)
    first[first_item] = True
    kept = first[votes.item[lower]]
    order = np.argsort(cell[kept], kind="stable")
    return _Units(
        counts=votes.counts[first_item],
        size=np.bincount(of_item, minlength=len(first_item)),
        of_item=of_item,
        edge_unit=of_item[votes.item[lower][kept]][order],
        edge_cell=cell[kept][order],
        pairs=[divmod(int(c), n_ann) for c in pair_codes],
    )


def _resampled(units: _Units, bootstrap: Bootstrap) -> Iterator[np.ndarray]:
    """Per resample (in chunks of rows), how many times each unit is drawn, as floats for matrix products."""
    rng = np.random.default_rng(bootstrap.seed)
    n_items, n_units = len(units.of_item), len(units.size)
    rows = max(1, CHUNK_CELLS // max(n_items, 1))
    for start in range(0, bootstrap.resamples, rows):
        chunk = min(rows, bootstrap.resamples - start)
        if n_units * 8 <= n_items:  # few kinds of items: a multinomial draw per resample is exact and cheap
            yield rng.multinomial(n_items, units.size / n_items, size=chunk).astype(float)
            continue
        drawn = rng.integers(0, n_items, (chunk, n_items))
        if n_units < n_items:  # items pooled into units: count the units drawn
            drawn = units.of_item[drawn]
        drawn += np.arange(chunk)[:, None] * n_units
        yield np.bincount(drawn.ravel(), minlength=chunk * n_units).reshape(chunk, n_units).astype(float)


def _pair_cells(units: _Units, k: int) -> np.ndarray | None:
    """Units × (pair cells) one-hot counts, when small enough to multiply (None: sum the cells instead)."""
    width = len(units.pairs) * k * k
    if len(units.size) * width > DENSE_PAIR_CELLS:
        return None
    cells = np.zeros((len(units.size), width))
    np.add.at(cells, (units.edge_unit, units.edge_cell), 1.0)
    return cells


def _pair_tables(drawn: np.ndarray, units: _Units, k: int, cells: np.ndarray | None) -> np.ndarray:
    """Resamples × pairs × K × K contingency tables: the drawn counts summed per pair cell."""
    if cells is not None:
        return (drawn @ cells).reshape(len(drawn), len(units.pairs), k, k)
    tables = np.zeros((len(drawn), len(units.pairs) * k * k))
    if len(units.edge_cell):
        starts = np.flatnonzero(np.r_[True, np.diff(units.edge_cell) != 0])
        tables[:, units.edge_cell[starts]] = np.add.reduceat(drawn[:, units.edge_unit], starts, axis=1)
    return tables.reshape(len(drawn), len(units.pairs), k, k)


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class Replicates:
    """Every figure on every resample (NaN where undefined there): the raw material of the intervals."""

    fleiss: np.ndarray
    krippendorff: np.ndarray
    ac1: np.ndarray
    cohen: np.ndarray  # resamples × pairs
    pairs: list[tuple[int, int]]


def replicates(votes: CodedVotes, bootstrap: Bootstrap, fleiss_raters: int, pairs: bool = True) -> Replicates:
    """Fleiss' κ (on items with ``fleiss_raters`` votes), α, AC1 and each pair's κ (unless ``pairs`` is false) on
    every resample of the items."""
    units = _units(votes, pairs)
    return _figures(votes, units, _resampled(units, bootstrap), fleiss_raters)


def weighted_figures(votes: CodedVotes, multiplicity: np.ndarray, fleiss_raters: int) -> Replicates:
    """The figures of the votes with each item counted ``multiplicity[r, i]`` times, for every row r:
    what one resample is (a row of ones gives the figures of the votes themselves)."""
    units = _units(votes)
    rows = np.atleast_2d(multiplicity).astype(float)
    pooled = np.zeros((len(rows), len(units.size)))
    for r, row in enumerate(rows):  # a loop over rows (resamples), not items
        pooled[r] = np.bincount(units.of_item, weights=row, minlength=len(units.size))
    return _figures(votes, units, iter([pooled]), fleiss_raters)


def _figures(votes: CodedVotes, units: _Units, draws: Iterator[np.ndarray], fleiss_raters: int) -> Replicates:
    """Every figure for each row of unit counts in ``draws``: one matrix product per chunk, no loop over items."""
    k = votes.n_categories
    identity = gwet_weights(k)
    features = [_fleiss_features(units.counts, fleiss_raters), _alpha_features(units.counts)]
    features.append(_gwet_features(units.counts, identity))
    widths = np.cumsum([0] + [f.shape[1] for f in features])
    stacked = np.hstack(features)
    found: dict[str, list[np.ndarray]] = {"fleiss": [], "alpha": [], "ac1": [], "cohen": []}
    m = max(fleiss_raters, 2)
    cells = _pair_cells(units, k)
    for drawn in draws:
        sums = drawn @ stacked
        found["fleiss"].append(_fleiss_from_sums(sums[:, widths[0] : widths[1]], m))
        found["alpha"].append(_alpha_from_sums(sums[:, widths[1] : widths[2]]))
        found["ac1"].append(_gwet_from_sums(sums[:, widths[2] : widths[3]], identity))
        found["cohen"].append(_cohen_from_tables(_pair_tables(drawn, units, k, cells)))
    cohen = np.vstack(found["cohen"]) if found["cohen"] else np.zeros((0, len(units.pairs)))
    fleiss, alpha, ac1 = (np.concatenate(found[key]) for key in ("fleiss", "alpha", "ac1"))
    return Replicates(fleiss, alpha, ac1, cohen, units.pairs)


def percentile_interval(values: np.ndarray, level: float) -> Interval:
    """The middle ``level`` share of the defined values; none when the figure is undefined in more
    resamples than the interval may leave out (a figure undefined that often has no meaningful spread)."""
    defined = values[np.isfinite(values)]
    missing = len(values) - len(defined)
    if not len(defined) or missing > (1 - level) * len(values):
        return Interval.undefined(f"undefined in {missing} of {len(values)} resamples")
    low, high = linear_percentiles(defined, [50 * (1 - level), 50 * (1 + level)])
    return Interval(float(low), float(high))


def linear_percentiles(values: np.ndarray, percents: list[float]) -> np.ndarray:
    """``np.percentile(values, percents)`` of 1-D finite values, the very same floats, by numpy's own steps (default
    "linear" method: the same partition, indices and interpolation) without its ``np.unique`` of the indices, whose
    first call imports ``numpy.ma`` (0.06-0.15 s, more than the bootstrap itself)."""
    ordered = values.flatten()
    count = ordered.shape[0]
    virtual = (count - 1) * np.true_divide(percents, 100)
    below, nxt = np.floor(virtual), np.floor(virtual) + 1
    above = virtual >= count - 1
    below[above], nxt[above] = -1, -1  # past the last value: the last value
    below[virtual < 0], nxt[virtual < 0] = 0, 0
    below, nxt = below.astype(np.intp), nxt.astype(np.intp)
    ordered.partition(np.array(sorted({0, -1, *below.tolist(), *nxt.tolist()}), np.int64), axis=0)
    low, high = ordered[below], ordered[nxt]
    gamma = np.asanyarray(virtual - below, dtype=virtual.dtype)
    step = high - low
    found = np.add(low, step * gamma)
    np.subtract(high, step * (1 - gamma), out=found, where=gamma >= 0.5, casting="unsafe", dtype=type(found.dtype))
    return found


def bootstrap_intervals(votes: CodedVotes, bootstrap: Bootstrap, fleiss_raters: int, pairs: bool = True) -> Intervals:
    """The intervals of Fleiss' κ, Krippendorff's α, AC1 and every pair's Cohen's κ from one bootstrap over items
    (``pairs`` false: no pair's, when a report summarises the pairs; ``cohen`` is then empty)."""
    found = replicates(votes, bootstrap, fleiss_raters, pairs)
    level = bootstrap.level
    if fleiss_raters < 2:
        fleiss = Interval.undefined("no item has 2 or more votes")
    else:
        fleiss = percentile_interval(found.fleiss, level)
    names = votes.annotators
    cohen: dict[str, dict[str, Interval]] = {a: {} for a in names} if pairs else {}
    for j, (lo, hi) in enumerate(found.pairs):
        cohen[names[lo]][names[hi]] = cohen[names[hi]][names[lo]] = percentile_interval(found.cohen[:, j], level)
    return Intervals(
        bootstrap,
        fleiss,
        percentile_interval(found.krippendorff, level),
        percentile_interval(found.ac1, level),
        cohen,
    )
