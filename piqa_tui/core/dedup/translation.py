"""Translations between items written in different scripts: standardised embeddings, mutual nearest neighbours.

A language model's sentence vectors carry a large offset per language and
script: a Tamil sentence and its English translation are far apart (mean-pooled
Gemma 3 270M: cosine -0.98 before anything is done), so no cosine threshold
finds translations. Two steps take most of that away (measured in
docs/dedup.md, "Which model finds translations"):

1. **Standardise each script's vectors on their own**: subtract the mean of
   the items written in that script and divide each dimension by its standard
   deviation there. What is common to all Tamil items (the language) goes;
   what tells one item from the others stays.
2. **Report a pair only when it stands out**, in the spirit of the margin
   criterion of bitext mining (Artetxe & Schwenk, 2019): the two items must be
   each other's nearest neighbour across the two scripts, and their cosine must
   stand out from the cosines of each of them with every item of the other
   script: the mean of the two z-scores must exceed what the best of that many
   unrelated items reaches by chance, sqrt(2 ln m) for m items, by at least
   :data:`MIN_EXCESS` standard deviations. A fixed cosine would mean something
   else for every pair of languages and model, and a fixed z-score would let
   more chance pairs through as the files grow; standing out from one's own
   neighbours by more than chance does neither.

Every item of one script is compared with every item of the other (tiles of
matrix products keeping each row's and column's best; the means and spreads
come from two d x d products, :func:`_moments`): the cost grows with the
product of the two sides' sizes, 15.8 s for 50,000 x 50,000 items on two
cores (BENCHMARKS.md), against over an hour to embed them the first time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MIN_EXCESS = 1.0  # standard deviations above the chance maximum; measured in docs/dedup.md
MIN_GROUP = 16  # a script with fewer items is standardised with the statistics of all items
# Two files in one script are searched for translations of each other only when their vectors' means lie
# this far apart (:func:`centroid_gap`): measured with multilingual-e5 in docs/dedup.md, two halves of one
# dataset 0.005-0.036, Algerian and Moroccan Darija 0.11, English and Italian 0.58, MSA and Darija 0.50.
MIN_LANGUAGE_GAP = 0.2
_TILE = 2048


@dataclass(frozen=True)
class TranslationPairs:
    """Pairs (i, j) of rows, their cosine after standardisation, and their score (z-score above chance)."""

    i: np.ndarray
    j: np.ndarray
    cosine: np.ndarray
    score: np.ndarray


def standardised(vectors: np.ndarray, scripts: Sequence[str | None]) -> np.ndarray:
    """Unit rows of ``vectors`` standardised per dimension within each script (see the module docstring)."""
    import numpy as np

    x = np.asarray(vectors, dtype=np.float32)
    out, rest = _within_scripts(x, scripts, MIN_GROUP)
    if rest.any():
        out[rest] = _zscores(x[rest], x)
    return _unit_rows(out)


def _within_scripts(x: np.ndarray, scripts: Sequence[str | None], min_group: int) -> tuple[np.ndarray, np.ndarray]:
    """A copy of ``x`` whose rows in scripts of at least ``min_group`` items are standardised within
    their script (not yet unit length), and the mask of the rows left as they were."""
    import numpy as np

    out = x.copy()
    labels = np.array([s or "" for s in scripts], dtype=object)
    rest = np.ones(len(x), dtype=bool)
    for script in set(labels.tolist()):
        rows = np.flatnonzero(labels == script)
        if len(rows) >= min_group:
            out[rows] = _zscores(x[rows], x[rows])
            rest[rows] = False
    return out, rest


def _unit_rows(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def centroid_gap(a: np.ndarray, b: np.ndarray) -> float:
    """How far apart two sets of vectors lie: the squared distance of their means over their mean spread
    (total variance). About 1/len(a) + 1/len(b) for two samples of one population; large when the two
    are in different languages (or, less, from different sources)."""

    spread = (float(a.var(axis=0).sum()) + float(b.var(axis=0).sum())) / 2
    return float(((a.mean(axis=0) - b.mean(axis=0)) ** 2).sum()) / max(spread, 1e-12)


def semantic_view(
    vectors: np.ndarray, scripts: Sequence[str | None], threshold: float, *, min_group: int, small_threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Vectors to search for same-language duplicates and each row's cosine threshold, for a model whose
    cosines crowd together by language (multilingual-e5: distinct Tamil items at 0.96).

    The rows of a script with at least ``min_group`` items are standardised within it (:func:`standardised`)
    and compared with ``threshold``; a script with fewer items has no statistics of its own, so its rows
    stay raw and are compared with ``small_threshold`` (near copies only). Only pairs within one script
    mean anything here: translations have their own rule. Figures: docs/dedup.md, "Which model finds
    paraphrases".
    """
    import numpy as np

    x, raw = _within_scripts(np.asarray(vectors, dtype=np.float32), scripts, min_group)
    x[~raw] = _unit_rows(x[~raw])
    return x, np.where(raw, small_threshold, threshold).astype(np.float32)


def _zscores(rows: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return (rows - reference.mean(axis=0)) / (reference.std(axis=0) + 1e-6)


def translation_pairs(
    vectors: np.ndarray,
    scripts: Sequence[str | None],
    left: np.ndarray,
    right: np.ndarray,
    *,
    min_excess: float = MIN_EXCESS,
    standardise: bool = True,
) -> TranslationPairs:
    """Pairs (a row of ``left``, a row of ``right``) in different scripts that are likely translations.

    ``left`` and ``right``: row numbers of ``vectors`` (the same rows for a
    search inside one dataset, the two files in a leakage check). Rows without
    a script (no letters) are never paired. Each pair of scripts is searched on
    its own; a pair comes once, as (left row, right row) or, inside one
    dataset, with the smaller row first.
    """
    import numpy as np

    z = standardised(vectors, scripts) if standardise else np.asarray(vectors, dtype=np.float32)
    label = np.array([s or "" for s in scripts], dtype=object)
    same_set = np.array_equal(np.sort(left), np.sort(right))
    found: list[tuple[np.ndarray, ...]] = []
    groups = sorted({s for s in label[left].tolist() if s} | {s for s in label[right].tolist() if s})
    for ga in groups:
        for gb in groups:
            if ga == gb or (same_set and ga > gb):
                continue
            a = left[label[left] == ga]
            b = right[label[right] == gb]
            if len(a) > 1 and len(b) > 1:
                x, y, c, s = _mutual_standouts(z[a], z[b], min_excess)
                found.append((a[x], b[y], c, s))
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return TranslationPairs(empty, empty, np.zeros(0, np.float32), np.zeros(0, np.float32))
    i, j, c, s = (np.concatenate(parts) for parts in zip(*found))
    if same_set:
        i, j = np.minimum(i, j), np.maximum(i, j)
    return TranslationPairs(i.astype(np.int64), j.astype(np.int64), c.astype(np.float32), s.astype(np.float32))


def _mutual_standouts(a: np.ndarray, b: np.ndarray, min_excess: float) -> tuple[np.ndarray, ...]:
    """Rows x of ``a`` and y of ``b`` that are each other's nearest, with a mean z-score at least
    ``min_excess`` above the chance maximum (:func:`chance_maximum`)."""
    import numpy as np

    row_mean, row_std = _moments(a, b)
    col_mean, col_std = _moments(b, a)
    row_max, row_best = np.full(len(a), -np.inf, dtype=np.float32), np.zeros(len(a), dtype=np.int64)
    col_max, col_best = np.full(len(b), -np.inf, dtype=np.float32), np.zeros(len(b), dtype=np.int64)
    for r0 in range(0, len(a), _TILE):
        for c0 in range(0, len(b), _TILE):
            tile = a[r0 : r0 + _TILE] @ b[c0 : c0 + _TILE].T
            _keep_best(tile, row_max[r0 : r0 + len(tile)], row_best[r0 : r0 + len(tile)], c0)
            _keep_best_columns(tile, col_max[c0 : c0 + tile.shape[1]], col_best[c0 : c0 + tile.shape[1]], r0)
    x = np.arange(len(a))
    y = row_best
    mutual = col_best[y] == x
    x, y = x[mutual], y[mutual]
    cos = row_max[x].astype(np.float64)
    score = ((cos - row_mean[x]) / row_std[x] + (cos - col_mean[y]) / col_std[y]) / 2
    score -= (chance_maximum(len(b)) + chance_maximum(len(a))) / 2
    keep = score >= min_excess
    return x[keep], y[keep], cos[keep], score[keep]


def _moments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean and standard deviation of each row of ``a @ b.T``, without forming it: the mean is
    ``a . mean(b)`` and the mean square ``a^T (b^T b / m) a``, in float64 (O((n + m) d^2), where the
    matrix would cost O(n m d))."""
    import numpy as np

    centre, gram = np.zeros(b.shape[1]), np.zeros((b.shape[1], b.shape[1]))
    for s in range(0, len(b), _TILE):  # in float64, a block at a time: memory stays at a tile's
        block = b[s : s + _TILE].astype(np.float64)
        centre += block.sum(axis=0)
        gram += block.T @ block
    centre, gram = centre / len(b), gram / len(b)
    mean, square = np.empty(len(a)), np.empty(len(a))
    for s in range(0, len(a), _TILE):
        block = a[s : s + _TILE].astype(np.float64)
        mean[s : s + len(block)] = block @ centre
        square[s : s + len(block)] = np.einsum("ij,ij->i", block @ gram, block)
    return mean, np.sqrt(np.maximum(square - mean * mean, 1e-12))


def _keep_best(tile: np.ndarray, best: np.ndarray, where: np.ndarray, offset: int) -> None:
    """Update each row's best value ``best`` and its column ``where`` (+ ``offset``) from ``tile``."""
    import numpy as np

    column = tile.argmax(axis=1)
    top = np.take_along_axis(tile, column[:, None], axis=1)[:, 0]
    better = top > best
    best[better], where[better] = top[better], column[better] + offset


def _keep_best_columns(tile: np.ndarray, best: np.ndarray, where: np.ndarray, offset: int) -> None:
    """:func:`_keep_best` for the columns of ``tile``. numpy's argmax down a column is some 40 times
    slower than along a row, so it runs only on the columns whose maximum improved, transposed."""
    import numpy as np

    top = tile.max(axis=0)
    better = np.flatnonzero(top > best)
    if len(better):
        best[better] = top[better]
        where[better] = np.ascontiguousarray(tile[:, better].T).argmax(axis=1) + offset


def chance_maximum(m: int) -> float:
    """About the largest z-score among ``m`` unrelated items (the maximum of m normal variables)."""
    import math

    return math.sqrt(2 * math.log(max(m, 2)))
