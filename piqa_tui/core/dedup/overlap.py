"""Exact gram overlaps of many unit pairs, cheaply: the frequent grams as rows of bits, the rest bounded.

The lexical search verifies every candidate pair with its exact 3-gram
Jaccard. Merging two sorted gram lists per pair costs a sort of ~150 keys;
on drafts that share a sentence frame (benchmarks/make_frame_drafts.py) a
million candidates sit just under the threshold and that merge was most of
the time. Frame-shaped text has few distinct grams (about 1,200 among
100,000 short Darija items), so each unit here gets a row of :data:`WIDTH`
bits, one per frequent gram (the most common grams of a sample of the
units), and the overlap of those grams is ``popcount(row_a & row_b)``: a
gather and four vector instructions per pair.

A unit's other grams (``rare``) are not in its row. For a pair, the exact
intersection is the bits' count plus the shared rare grams, which is at most
the smaller rare count: when either unit has no rare gram the bits alone
give the exact intersection, and when even the bound cannot reach the
threshold the pair is rejected exactly. Only the pairs left (both units with
rare grams, and the bound above the threshold) need the full merge, which
the caller does as before. Nothing here is an estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np

WIDTH = 2048  # bits per unit at most (256 bytes): frame-shaped pools have ~1,200 distinct grams
TABLE_BITS = 20  # the lookup table from gram hash to bit: 2**20 int16 slots (2 MB)
SAMPLE_UNITS = 16_384  # the frequent grams are counted on about this many units, spread over the input
_UNITS_PER_BLOCK = 4096  # bits are set for this many units at a time (a 1 MB bool block per 256 bits)
PAIRS_PER_CHUNK = 1 << 15  # overlaps are counted on this many pairs at a time (~16 MB of gathered rows)

T = TypeVar("T")
R = TypeVar("R")
Parallel = Callable[[Callable[[T], R], Iterable[T]], Iterator[R]]


@dataclass(frozen=True)
class GramBits:
    """Per unit: a row of bits over the frequent grams (``bits``, uint64 words) and how many of its
    grams are not among them (``rare``)."""

    bits: np.ndarray
    rare: np.ndarray


def _frequent_grams(offsets: np.ndarray, grams: np.ndarray) -> np.ndarray:
    """Sorted hashes of the (at most WIDTH) grams found in the most units of an evenly spread sample."""
    import numpy as np

    n_units = len(offsets) - 1
    step = max(1, n_units // SAMPLE_UNITS)
    picked = np.arange(0, n_units, step)
    lengths = offsets[picked + 1] - offsets[picked]
    first = np.repeat(offsets[picked] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    sample = grams[first + np.arange(lengths.sum())]
    values, counts = np.unique(sample, return_counts=True)
    top = np.argsort(-counts, kind="stable")[:WIDTH]
    return np.sort(values[top])


def _slot_table(vocab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A direct-address table from a gram hash's low :data:`TABLE_BITS` bits to its bit in the row (-1: none),
    and the grams that keep a bit. Two frequent grams that fall on one slot both go without a bit (their
    grams count as rare), so a lookup is one gather and one comparison, and never wrong."""
    import numpy as np

    slot = (vocab & np.uint64((1 << TABLE_BITS) - 1)).astype(np.int64)
    count = np.bincount(slot, minlength=1 << TABLE_BITS)
    vocab = vocab[count[slot] == 1]
    table = np.full(1 << TABLE_BITS, -1, dtype=np.int16)
    table[(vocab & np.uint64((1 << TABLE_BITS) - 1)).astype(np.int64)] = np.arange(len(vocab), dtype=np.int16)
    return table, vocab


@dataclass(frozen=True)
class GramTable:
    """Which grams get a bit in a unit's row: the frequent grams (``vocab``, sorted) and the direct-address
    ``table`` from a gram hash's low bits to its bit (:func:`_slot_table`). Fixed once chosen, so that rows
    made later (``core/dedup/lexical_index.py`` adds units to an index) line up with the earlier ones."""

    table: np.ndarray
    vocab: np.ndarray

    @property
    def width(self) -> int:
        """Bits per row: the vocabulary rounded up to whole 64-bit words (at least one)."""
        return max(64, -(-len(self.vocab) // 64) * 64)

    def slots(self, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each gram, its bit (meaningless where it has none) and whether it has one."""
        import numpy as np

        at = self.table[(grams & np.uint64((1 << TABLE_BITS) - 1)).astype(np.int64)].astype(np.int64)
        padded = np.r_[self.vocab, np.zeros(1, dtype=np.uint64)]  # "no bit" (-1) reads the padding
        return at, (at >= 0) & (padded[at] == grams)


def gram_table(offsets: np.ndarray, grams: np.ndarray) -> GramTable:
    """The bits for the most frequent grams of the units ``(offsets, grams)``."""
    import numpy as np

    table, vocab = _slot_table(_frequent_grams(offsets, grams) if len(grams) else np.zeros(0, dtype=np.uint64))
    return GramTable(table, vocab)


def gram_bits(
    offsets: np.ndarray, grams: np.ndarray, parallel: Parallel[tuple[int, int], None], table: GramTable | None = None
) -> GramBits:
    """Each unit's row of bits over the frequent grams, and its count of the other grams; ``table``: the bits
    to use (default: those of these units' own most frequent grams)."""
    import numpy as np

    n_units = len(offsets) - 1
    chosen = table if table is not None else gram_table(offsets, grams)
    width = chosen.width
    packed = np.zeros((n_units, width // 8), dtype=np.uint8)
    rare = np.zeros(n_units, dtype=np.int64)

    def block(bounds: tuple[int, int]) -> None:
        u0, u1 = bounds
        at, hit = chosen.slots(grams[offsets[u0] : offsets[u1]])
        unit = np.repeat(np.arange(u1 - u0), np.diff(offsets[u0 : u1 + 1]))
        rows = np.zeros((u1 - u0, width), dtype=bool)
        rows[unit[hit], at[hit]] = True
        packed[u0:u1] = np.packbits(rows, axis=1, bitorder="little")
        rare[u0:u1] = np.diff(offsets[u0 : u1 + 1]) - np.bincount(unit[hit], minlength=u1 - u0)

    for _ in parallel(block, [(u, min(u + _UNITS_PER_BLOCK, n_units)) for u in range(0, n_units, _UNITS_PER_BLOCK)]):
        pass
    return GramBits(packed.view(np.uint64), rare)


def popcount_rows(words: np.ndarray) -> np.ndarray:
    """Set bits per row of a uint64 matrix (numpy >= 2 counts them in hardware; older numpy, a byte table)."""
    import numpy as np

    count = getattr(np, "bitwise_count", None)
    if count is not None:
        return np.add.reduce(count(words), axis=1, dtype=np.int64)
    table = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)
    return np.add.reduce(table[words.view(np.uint8)], axis=1, dtype=np.int64)


def shared_frequent(bits: GramBits, a: np.ndarray, b: np.ndarray, parallel: Parallel[int, np.ndarray]) -> np.ndarray:
    """How many frequent grams units ``a[i]`` and ``b[i]`` share, in chunks on every core."""
    import numpy as np

    out = np.zeros(len(a), dtype=np.int64)
    starts = range(0, len(a), PAIRS_PER_CHUNK)

    def chunk(s: int) -> np.ndarray:
        e = s + PAIRS_PER_CHUNK
        return popcount_rows(bits.bits[a[s:e]] & bits.bits[b[s:e]])

    for s, part in zip(starts, parallel(chunk, starts)):
        out[s : s + len(part)] = part
    return out
