"""An index of units for the lexical signal that new units are checked against, and added to, a few at a time.

``find_duplicates`` searches one closed set of units; a draft run checks batch after batch of new drafts
against the dataset and the drafts kept before them (``core/authoring/repetition.py``). Searching the whole
set again for each batch would shingle, hash and search the dataset side once per batch; this index does
that side once per run and then costs, per new unit, one pass over the index's rows.

The answer is **exact**: the units of the index whose character 3-gram Jaccard with a query unit reaches the
threshold, the same grams (:func:`~piqa_tui.core.dedup.lexical.shingle`'s 40-bit hashes) and the same
comparison (``>= threshold - 1e-12``) as the search of ``find_duplicates``, with no estimate in between:

* the frequent grams of the units the index starts with each get a bit in a row per unit
  (``core/dedup/overlap.py``: :class:`~piqa_tui.core.dedup.overlap.GramTable`, kept fixed as units are
  added), so the frequent grams two units share are one AND and a popcount;
* every other gram of a unit is listed in ``postings`` (sorted ``gram << 24 | unit`` keys), so the other
  grams a query shares with each unit are counted by looking its own up there — those grams are not frequent,
  so their lists are short.

Frame-shaped drafts (``benchmarks/make_frame_drafts.py``) have a few hundred distinct grams in all, so nearly
every gram has a bit; real, varied text has most of its grams in the postings, each in few units.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from piqa_tui.core.dedup.lexical import NGRAM, on_every_core, shingle
from piqa_tui.core.dedup.overlap import GramTable, gram_bits, gram_table, popcount_rows

if TYPE_CHECKING:
    import numpy as np

UNIT_BITS = 24  # a posting is gram << 24 | unit: up to 16.7 million units in one index
MAX_UNITS = 1 << UNIT_BITS
_GRAM_MASK = (1 << 40) - 1


class LexicalIndex:
    """Units (each a tuple of folded fields, as ``find_duplicates`` compares them) that queries are checked
    against; :meth:`near` answers exactly, :meth:`add` appends units without touching the earlier ones."""

    def __init__(self, fields: Sequence[tuple[str, ...]], threshold: float) -> None:
        import numpy as np

        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        offsets, grams = shingle(fields, NGRAM)
        self.table: GramTable = gram_table(offsets, grams)
        self.rows = np.zeros((0, self.table.width // 64), dtype=np.uint64)
        self.sizes = np.zeros(0, dtype=np.int64)
        self.postings = np.zeros(0, dtype=np.uint64)
        self._append(offsets, grams)

    def __len__(self) -> int:
        return len(self.sizes)

    def add(self, fields: Sequence[tuple[str, ...]]) -> None:
        """Append units (numbered on from ``len(self)``); the gram bits stay those chosen at the start."""
        if fields:
            self._append(*shingle(fields, NGRAM))

    def _append(self, offsets: np.ndarray, grams: np.ndarray) -> None:
        import numpy as np

        first, count = len(self), len(offsets) - 1
        if first + count > MAX_UNITS:
            raise ValueError(f"a lexical index holds at most {MAX_UNITS:,} units")
        bits = gram_bits(offsets, grams, on_every_core, self.table)
        self.rows = np.concatenate([self.rows, bits.bits])
        self.sizes = np.concatenate([self.sizes, np.diff(offsets)])
        _, frequent = self.table.slots(grams)
        unit = np.repeat(np.arange(first, first + count, dtype=np.uint64), np.diff(offsets))
        new = np.sort((grams[~frequent] << np.uint64(UNIT_BITS)) | unit[~frequent])
        self.postings = np.insert(self.postings, np.searchsorted(self.postings, new), new)

    def near(self, fields: Sequence[tuple[str, ...]]) -> list[np.ndarray]:
        """For each query unit, the index's units (ascending) whose 3-gram Jaccard with it reaches the threshold."""
        offsets, grams = shingle(fields, NGRAM)
        return [self.similar(grams[offsets[q] : offsets[q + 1]])[0] for q in range(len(offsets) - 1)]

    def similar(self, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The units whose Jaccard with the unit of sorted gram hashes ``grams`` reaches the threshold, and
        those Jaccards."""
        import numpy as np

        size = len(grams)
        if not size or not len(self):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        at, frequent = self.table.slots(grams)
        row = np.zeros(self.table.width, dtype=bool)
        row[at[frequent]] = True
        query = np.packbits(row, bitorder="little").view(np.uint64)
        # J <= smaller / larger: only units of a size within the threshold's reach are counted.
        low, high = self.threshold * size - 1e-9, size / self.threshold + 1e-9
        reach = (self.sizes >= low) & (self.sizes <= high)
        units = np.flatnonzero(reach)
        # Gathering the rows costs more than counting them all when most units are within reach.
        if 2 * len(units) > len(self):
            frequent_shared = popcount_rows(self.rows & query)[units]
        else:
            frequent_shared = popcount_rows(self.rows[units] & query)
        shared = frequent_shared + self._shared_rare(grams[~frequent])[units]
        similarity = shared / np.maximum(size + self.sizes[units] - shared, 1)
        keep = similarity >= self.threshold - 1e-12
        return units[keep], similarity[keep]

    def _shared_rare(self, rare: np.ndarray) -> np.ndarray:
        """Per unit of the index, how many of the grams ``rare`` (none with a bit) it has."""
        import numpy as np

        if not len(rare) or not len(self.postings):
            return np.zeros(len(self), dtype=np.int64)
        lo = np.searchsorted(self.postings, rare << np.uint64(UNIT_BITS))
        hi = np.searchsorted(self.postings, (rare + np.uint64(1)) << np.uint64(UNIT_BITS))
        lengths = hi - lo
        where = np.repeat(lo - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + np.arange(lengths.sum())
        units = (self.postings[where] & np.uint64(MAX_UNITS - 1)).astype(np.int64)
        return np.bincount(units, minlength=len(self))
