"""The lexical signal: items whose character 3-grams are mostly the same, found without comparing all pairs.

Jaccard similarity of the sets of character 3-grams of the folded prompt and
solutions. Character n-grams need no tokeniser, so the same code serves
Darija spelling variation, Tamil agglutination and English typos. Grams never
span two fields, so the order of the solutions does not matter either.
3-grams beat 4- and 5-grams by a small margin on PIQA (docs/dedup.md) and are
kinder to short words with variable spelling.

Each unit (an item's folded fields) becomes the set of 40-bit hashes of its
character 3-grams; 150 multiply-add MinHash rows (32-bit lanes, a cache-sized
block of units at a time) are cut into bands chosen so that a pair exactly at
the threshold shares at least one band with probability >= 99.9%
(:func:`lsh_bands`). Every candidate is then verified with the **exact**
Jaccard, so nothing is reported on an estimate: the overlap of its frequent
grams is counted from rows of bits (core/dedup/overlap.py), which decides
most pairs exactly on their own; only a pair whose units both have rare
grams, and whose bound still reaches the threshold, has its gram lists merged,
and such a candidate whose b-bit MinHash sketch agrees on too few rows
(:func:`sketch_floor`: a pair at the threshold falls below with probability
<= 1e-4) is dropped unverified.
Shingling, MinHash, estimates and exact Jaccard run on every core the
process may use (:func:`workers`), in threads: numpy releases the GIL.

Why buckets are capped. Items drafted from templates share most of their
n-grams: on the file ``benchmarks/make_large.py`` writes, thousands of items
land in one bucket of every band, and "every pair in a bucket" made time and
memory grow with the square of the count (13.9 GB, and still running, at
100,000 items). Three things bound the work by the number of units instead:

* A bucket of at most :data:`BUCKET_CAP` units proposes all its pairs, as
  before; this is every bucket of real, non-repetitive data (PIQA valid's
  largest bucket has 3 units), so results there are unchanged.
* A larger bucket proposes each unit with the next :data:`WINDOW` units in
  the order of each of :data:`ORDERS` *other* bands' keys, when they share
  that key too. Units that are near copies of each other usually share that
  other band, so they sit next to each other in that order; a bucket of
  mutual near copies (a template) is chained together by the windows, which
  is all single-linkage clusters need, while two neighbours with different
  keys are random members of the bucket (in drafts of distinct items on one
  opening, not duplicates).
* Bands are searched one after the other, and a candidate whose two units are
  already in one cluster (union-find over the pairs verified so far) is not
  verified again, nor is a pair that already failed. A cluster of k units
  therefore costs about k verifications, not k².

So at most ``n * (BUCKET_CAP / 2 + ORDERS * WINDOW)`` pairs are proposed per band
whatever the data, and far fewer in practice (:attr:`LexicalPairs.estimated`
and :attr:`LexicalPairs.verified` count them; tests/test_dedup.py holds them
to a linear bound on template corpora). A near copy hidden in a bucket larger
than the cap is still found in the usual case: the pair shares several bands
(6.5 of 25 on average at the 0.8 threshold) and needs only one whose bucket
is small or whose window holds both; tests/test_dedup.py plants near copies
among real goals that all share one long pair of solutions (every bucket
crowded) and finds every one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from piqa_tui.core.cores import usable_cores
from piqa_tui.core.dedup.folding import Units
from piqa_tui.core.dedup.overlap import gram_bits, shared_frequent

if TYPE_CHECKING:  # numpy is imported on first use: `piqa-tui --help` need not pay for it
    import numpy as np

Advance = Callable[[int], None]  # reports work done, in the units of the caller's progress total

NGRAM = 3
MINHASH_PERMUTATIONS = 150
BUCKET_CAP = 32  # a bucket up to this size proposes every pair in it (real data never gets near it)
ORDERS = 2  # ... in the orders of this many other bands
WINDOW = 4  # a larger bucket proposes each unit with this many next units in another band's order

SKETCH_MISS = 1e-4  # a pair exactly at the threshold is dropped by the MinHash estimate with at most this probability

_ITEMS_PER_CHUNK = 4096  # shingling works on this many items at a time to bound memory
_GRAMS_PER_BLOCK = 1 << 17  # MinHash hashes about this many grams at a time (1 MB: stays in a core's cache)
_PAIRS_PER_CHUNK = 4096  # exact Jaccard is verified on this many pairs at a time (~50 MB of work arrays)
_SKETCH_PAIRS = 1 << 15  # MinHash estimates are compared on this many pairs at a time (~10 MB)

T = TypeVar("T")
R = TypeVar("R")


def workers() -> int:
    """The cores this process may keep busy, read from the machine (its affinity under any CPU quota)."""
    return usable_cores()


def on_every_core(work: Callable[[T], R], parts: Iterable[T]) -> Iterator[R]:
    """``work`` over ``parts`` in order, on every core: numpy releases the GIL inside its loops."""
    parts = list(parts)
    if workers() == 1 or len(parts) < 2:
        yield from map(work, parts)
        return
    yield from _pool(workers()).map(work, parts)


@lru_cache(maxsize=1)
def _pool(threads: int) -> ThreadPoolExecutor:
    """One pool for the process: a search hands it hundreds of short batches, each waited for."""
    return ThreadPoolExecutor(threads, thread_name_prefix="dedup")


@dataclass(frozen=True)
class LexicalPairs:
    """Unit pairs ``(a[i], b[i])`` whose exact Jaccard ``similarity[i]`` reaches the threshold.

    ``verified`` is how many candidate pairs were decided exactly (from the rows of
    frequent-gram bits, or by merging gram lists), and ``estimated`` how many needed
    the merge and had their MinHash estimate compared first: the cost of the
    search, which must grow with the number of units, not its square.
    """

    a: np.ndarray
    b: np.ndarray
    similarity: np.ndarray
    verified: int
    estimated: int = 0


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads the bits of uint64 values (wrapping arithmetic)."""
    import numpy as np

    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting: numpy 2's default hash-based unique is ~10x slower on uint64 keys."""
    import numpy as np

    x = np.sort(x)
    keep = np.empty(len(x), dtype=bool)
    keep[:1] = True
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    return x[keep]


def _chunk_grams(chunk: Sequence[tuple[str, ...]], n: int) -> np.ndarray:
    """Sorted unique ``unit << 40 | gram hash`` keys of one chunk of units (unit = position in the chunk)."""
    import numpy as np

    segments, owner = [], []
    for u, unit_fields in enumerate(chunk):
        for f in unit_fields:
            segments.append(f" {f} ")
            owner.append(u)
    if not segments:
        return np.zeros(0, dtype=np.uint64)
    lengths = np.fromiter((len(s) + 1 for s in segments), dtype=np.int64, count=len(segments))
    text = "\x00".join(segments) + "\x00" * n
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    width = len(codes) - n + 1
    h = np.zeros(width, dtype=np.uint64)
    bad = np.zeros(width, dtype=bool)
    for k in range(n):
        c = codes[k : k + width]
        h = h * np.uint64(0x100000001B3) + c
        bad |= c == 0
    unit = np.repeat(np.asarray(owner, dtype=np.uint64), lengths)[:width]
    return _sorted_unique(((unit << np.uint64(40)) | (_mix(h) >> np.uint64(64 - 40)))[~bad])


def shingle(fields: Sequence[tuple[str, ...]], n: int = NGRAM) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, de-duplicated 40-bit hashes of each unit's character n-grams.

    Returns ``(offsets, grams)``: unit ``u`` owns ``grams[offsets[u]:offsets[u+1]]``.
    Each field is padded with a space so that word edges count, and fields are
    joined with NUL, which no gram may contain: grams never span two fields.
    (With ~1e6 distinct grams, 40-bit hashes collide about once: no effect on
    any similarity.)
    """
    import numpy as np

    sizes = np.zeros(len(fields), dtype=np.int64)
    # A field of L characters has at most L + 3 - n grams. Filling an array of
    # that upper bound, instead of concatenating chunk results, never holds two
    # copies; pages past the real end are never touched, so never resident.
    out = np.empty(sum(len(f) + 3 for unit_fields in fields for f in unit_fields), dtype=np.uint64)
    filled = 0
    starts = range(0, len(fields), _ITEMS_PER_CHUNK)
    chunks = on_every_core(lambda start: _chunk_grams(fields[start : start + _ITEMS_PER_CHUNK], n), starts)
    for start, keys in zip(starts, chunks):
        count = min(_ITEMS_PER_CHUNK, len(fields) - start)
        sizes[start : start + count] = np.bincount((keys >> np.uint64(40)).astype(np.int64), minlength=count)
        out[filled : filled + len(keys)] = keys & np.uint64((1 << 40) - 1)
        filled += len(keys)
    offsets = np.zeros(len(fields) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets, out[:filled]


def _hash_functions(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` multiply-add hash functions mod 2**32 (odd multipliers), fixed: results must not change
    between runs."""
    import numpy as np

    rng = np.random.default_rng(20240611)
    mult = rng.integers(0, 2**31, size=k, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    add = rng.integers(0, 2**32, size=k, dtype=np.uint64).astype(np.uint32)
    return mult, add


def _unit_blocks(offsets: np.ndarray, grams_per_block: int) -> list[tuple[int, int]]:
    """Consecutive unit ranges ``[u0, u1)`` of about ``grams_per_block`` grams each (at least one unit)."""
    import numpy as np

    n_units = len(offsets) - 1
    bounds = [0]
    while bounds[-1] < n_units:
        u = int(np.searchsorted(offsets, offsets[bounds[-1]] + grams_per_block, side="right")) - 1
        bounds.append(min(n_units, max(u, bounds[-1] + 1)))
    return list(zip(bounds, bounds[1:]))


def _block_signatures(offsets: np.ndarray, grams: np.ndarray, u0: int, u1: int, k: int) -> np.ndarray:
    """MinHash values of units ``u0..u1``, shape (k, u1 - u0), uint32.

    Row ``p`` is ``min((x * mult[p] + add[p]) mod 2**32)`` over the unit's grams
    ``x`` (the top 32 bits of their mixed 40-bit hashes): 32-bit lanes, twice as
    many per vector instruction as 64-bit ones.
    """
    import numpy as np

    mult, add = _hash_functions(k)
    sig = np.full((k, u1 - u0), np.iinfo(np.uint32).max, dtype=np.uint32)
    x = (_mix(grams[offsets[u0] : offsets[u1]]) >> np.uint64(32)).astype(np.uint32)
    sizes = np.diff(offsets[u0 : u1 + 1])
    filled = np.flatnonzero(sizes > 0)
    if not len(filled):
        return sig
    starts = (offsets[u0:u1] - offsets[u0])[filled]
    h = np.empty_like(x)
    for p in range(k):
        np.multiply(x, mult[p], out=h)
        np.add(h, add[p], out=h)
        sig[p, filled] = np.minimum.reduceat(h, starts)
    return sig


def minhash(offsets: np.ndarray, grams: np.ndarray, bands: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The LSH band keys, shape (bands, units), and each unit's sketch for estimates, shape (units, k).

    The sketch keeps 8 low bits (8-15) of each of the ``k`` MinHash values (b-bit
    MinHash): two units agree on a row with probability J + (1 - J) / 256, so
    the number of agreeing rows estimates their Jaccard J at 150 bytes a unit.
    Computed a block of units at a time, on every core, so that the full
    32-bit signatures (600 bytes a unit) are never held for all units.
    """
    import numpy as np

    k = MINHASH_PERMUTATIONS
    n_units = len(offsets) - 1
    keys = np.empty((bands, n_units), dtype=np.uint64)
    sketch = np.empty((n_units, k), dtype=np.uint8)

    def block(bounds: tuple[int, int]) -> None:
        u0, u1 = bounds
        sig = _block_signatures(offsets, grams, u0, u1, k)
        keys[:, u0:u1] = _band_keys(sig, bands, rows)
        sketch[u0:u1] = (sig >> np.uint32(8)).astype(np.uint8).T  # bits 8-15: uniform, and mixed from 16 bits of x

    for _ in on_every_core(block, _unit_blocks(offsets, _GRAMS_PER_BLOCK)):
        pass
    return keys, sketch


def sketch_floor(threshold: float, k: int = MINHASH_PERMUTATIONS, miss: float = SKETCH_MISS) -> int:
    """The fewest agreeing sketch rows a candidate needs to be verified: a pair exactly at ``threshold``
    agrees on fewer with probability <= ``miss`` (binomial; a pair above it, less still)."""
    p = threshold + (1 - threshold) / 256
    below = 0.0
    for c in range(k + 1):
        below += math.comb(k, c) * p**c * (1 - p) ** (k - c)
        if below > miss:
            return c
    return k


def lsh_bands(threshold: float, k: int = MINHASH_PERMUTATIONS, target: float = 0.999) -> tuple[int, int]:
    """(bands, rows) for ``k`` hashes: the most selective banding that still makes
    a pair at ``threshold`` a candidate with probability >= ``target``."""
    best = (k, 1)
    for rows in range(1, k + 1):
        bands = k // rows
        if 1 - (1 - threshold**rows) ** bands >= target:
            best = (bands, rows)
        else:
            break
    return best


def _band_keys(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One uint64 key per band and unit: the hash of the unit's ``rows`` MinHash values in that band."""
    import numpy as np

    by_band = sig[: bands * rows].reshape(bands, rows, sig.shape[1]).astype(np.uint64)
    keys = np.zeros((bands, sig.shape[1]), dtype=np.uint64)
    for r in range(rows):
        keys = _mix(keys ^ (by_band[:, r] + np.uint64(r)))
    return keys


def _pairs_in_groups(order: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (a, b) inside each group ``order[start:start+size]`` without a Python loop."""
    import numpy as np

    per_group = sizes * (sizes - 1) // 2
    group = np.repeat(np.arange(len(sizes)), per_group)
    k = np.arange(per_group.sum()) - np.repeat(np.cumsum(per_group) - per_group, per_group)
    g = sizes[group]
    # Pair number k of a group of g enumerates (i, j), i < j, row by row: row i
    # starts at i*(2g-i-1)/2. Invert with the quadratic formula, then fix rounding.
    i = ((2 * g - 1 - np.sqrt((2 * g - 1) ** 2 - 8 * k)) // 2).astype(np.int64)
    row_start = i * (2 * g - i - 1) // 2
    i -= row_start > k
    row_start = i * (2 * g - i - 1) // 2
    over = k - row_start >= g - 1 - i
    i += over
    row_start = i * (2 * g - i - 1) // 2
    j = i + 1 + (k - row_start)
    base = starts[group]
    return order[base + i], order[base + j]


def _band_candidates(key: np.ndarray, *secondary: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Candidate unit pairs of one band, in batches of arrays ``(a, b)`` (a pair may repeat).

    Buckets (units with the same ``key``) of at most BUCKET_CAP units give every
    pair; larger ones give each unit with the next WINDOW units in the order of
    each ``secondary`` key, one batch per order, so that the caller can skip
    the pairs an earlier batch already connected.
    """
    import numpy as np

    n = len(key)
    order = np.argsort(key, kind="stable")
    ranked = key[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    sizes = np.diff(np.r_[starts, n])
    small = (sizes > 1) & (sizes <= BUCKET_CAP)
    yield _pairs_in_groups(order, starts[small], sizes[small])
    big = sizes > BUCKET_CAP
    if not big.any():
        return
    crowded = order[np.repeat(big, sizes)]  # the units of the large buckets, in input order within each
    crowded.sort()
    for other in secondary:
        # Units with equal (key, other key) side by side, in input order among themselves: one sort of a
        # hash of both keys (two groups would interleave only if their 64-bit hashes collided: odds ~1e-10).
        by_other = crowded[np.argsort(_mix(key[crowded] ^ _mix(other[crowded])), kind="stable")]
        ranked_key, ranked_other = key[by_other], other[by_other]
        a_parts, b_parts = [], []
        for d in range(1, WINDOW + 1):
            same = (ranked_key[:-d] == ranked_key[d:]) & (ranked_other[:-d] == ranked_other[d:])
            p = np.flatnonzero(same)
            a_parts.append(by_other[p])
            b_parts.append(by_other[p + d])
        yield np.concatenate(a_parts), np.concatenate(b_parts)


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unique ``min << 32 | max`` keys of the pairs (a[i], b[i])."""
    import numpy as np

    a, b = a.astype(np.uint64), b.astype(np.uint64)
    return _sorted_unique((np.minimum(a, b) << np.uint64(32)) | np.maximum(a, b))


def jaccard(offsets: np.ndarray, grams: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact Jaccard of the gram sets of units ``a[i]`` and ``b[i]``, vectorised in chunks on every core."""
    import numpy as np

    sizes = offsets[1:] - offsets[:-1]
    inter = shared_grams(offsets, grams, a, b)
    union = sizes[a] + sizes[b] - inter
    return np.where(union > 0, inter / np.maximum(union, 1), 0.0)


def shared_grams(offsets: np.ndarray, grams: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many grams units ``a[i]`` and ``b[i]`` share, by merging their sorted lists, in chunks on every core."""
    import numpy as np

    out = np.zeros(len(a), dtype=np.int64)
    starts = range(0, len(a), _PAIRS_PER_CHUNK)
    for s, part in zip(
        starts,
        on_every_core(
            lambda s: _chunk_shared(offsets, grams, a[s : s + _PAIRS_PER_CHUNK], b[s : s + _PAIRS_PER_CHUNK]), starts
        ),
    ):
        out[s : s + len(part)] = part
    return out


def _chunk_shared(offsets: np.ndarray, grams: np.ndarray, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Shared grams of one chunk of pairs: their grams keyed by pair, sorted, neighbours compared."""
    import numpy as np

    sizes = offsets[1:] - offsets[:-1]
    both = np.concatenate([pa, pb])
    lengths = sizes[both]
    pair = np.tile(np.arange(len(pa), dtype=np.uint64), 2)
    # Gather each unit's grams: positions offsets[u] .. offsets[u]+size-1.
    first = np.repeat(offsets[both] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    g = grams[first + np.arange(lengths.sum())]
    # Both halves are already sorted (each unit's grams are, and pairs are numbered in order): a merge.
    keys = np.sort((np.repeat(pair, lengths) << np.uint64(40)) | g, kind="stable")
    shared = keys[1:] == keys[:-1]  # a gram present in both sets (each set has no repeats)
    return np.bincount((keys[1:][shared] >> np.uint64(40)).astype(np.int64), minlength=len(pa))


def agreeing_rows(sketch: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many sketch rows units ``a[i]`` and ``b[i]`` agree on, in chunks on every core."""
    import numpy as np

    out = np.zeros(len(a), dtype=np.int64)
    starts = range(0, len(a), _SKETCH_PAIRS)

    def chunk(s: int) -> np.ndarray:
        return np.count_nonzero(sketch[a[s : s + _SKETCH_PAIRS]] == sketch[b[s : s + _SKETCH_PAIRS]], axis=1)

    for s, part in zip(starts, on_every_core(chunk, starts)):
        out[s : s + len(part)] = part
    return out


class UnionFind:
    """Union-find over units (the smaller root wins), with a vectorised view of every root for filtering candidates."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def roots(self) -> np.ndarray:
        import numpy as np

        p = np.asarray(self.parent, dtype=np.int64)
        while True:  # pointer jumping: trees are shallow (path halving), so a few rounds
            up = p[p]
            if np.array_equal(up, p):
                return p
            p = up


class _Components:
    """Union-find over units held in one numpy array: a batch of verified pairs is joined at once
    (hook each larger root under the smaller, then pointer jumping), and every unit's root is one lookup."""

    def __init__(self, n: int) -> None:
        import numpy as np

        self.parent = np.arange(n, dtype=np.int64)

    def roots(self) -> np.ndarray:
        import numpy as np

        p = self.parent
        while True:
            up = p[p]
            if np.array_equal(up, p):
                self.parent = p
                return p
            p = up

    def join(self, a: np.ndarray, b: np.ndarray) -> None:
        import numpy as np

        while len(a):
            roots = self.roots()
            ra, rb = roots[a], roots[b]
            apart = ra != rb
            a, b, ra, rb = a[apart], b[apart], ra[apart], rb[apart]
            np.minimum.at(self.parent, np.maximum(ra, rb), np.minimum(ra, rb))


class _Search:
    """The band-by-band search: skips pairs already connected or already rejected, rejects or accepts
    what the frequent grams' bits decide exactly, drops the rest whose MinHash estimate is far below
    the threshold, and verifies what is left by merging the gram lists."""

    def __init__(
        self, offsets: np.ndarray, grams: np.ndarray, sketch: np.ndarray, threshold: float, side: np.ndarray | None
    ) -> None:
        import numpy as np

        self.offsets, self.grams, self.sketch, self.threshold, self.side = offsets, grams, sketch, threshold, side
        self.sizes = offsets[1:] - offsets[:-1]
        self.bits = gram_bits(offsets, grams, on_every_core)
        self.floor = sketch_floor(threshold, sketch.shape[1])
        self.components = _Components(len(offsets) - 1)
        # sorted: pairs that failed after a merge (the bits decide the others again faster than a lookup)
        self.rejected = np.zeros(0, dtype=np.uint64)
        self.found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.verified = 0
        self.estimated = 0

    def verify(self, a: np.ndarray, b: np.ndarray) -> None:
        """Check the candidate pairs ``(a[i], b[i])`` (repeats allowed) and join the ones that pass."""
        import numpy as np

        roots = self.components.roots()
        keep = roots[a] != roots[b]
        if self.side is not None:  # leakage: only pairs across the two files count
            keep &= ((self.side[a] & 1) & (self.side[b] >> 1) | (self.side[a] >> 1) & (self.side[b] & 1)).astype(bool)
        cand = _pair_keys(a[keep], b[keep])
        cand = cand[~_contains(self.rejected, cand)]
        a = (cand >> np.uint64(32)).astype(np.int64)
        b = (cand & np.uint64(0xFFFFFFFF)).astype(np.int64)
        sa, sb = self.sizes[a], self.sizes[b]
        possible = np.minimum(sa, sb) >= self.threshold * np.maximum(sa, sb) - 1e-9  # J <= smaller / larger
        cand, a, b, sa, sb = cand[possible], a[possible], b[possible], sa[possible], sb[possible]
        # J >= t  <=>  |A & B| >= t (|A| + |B|) / (1 + t): a bound below that rejects the pair exactly.
        need = self.threshold * (sa + sb) / (1 + self.threshold) - 1e-9
        inter = shared_frequent(self.bits, a, b, on_every_core)
        unknown = np.minimum(self.bits.rare[a], self.bits.rare[b])  # shared rare grams: at most this many
        at = np.flatnonzero((unknown > 0) & (inter + unknown >= need))
        self.verified += len(cand)
        if len(at):  # both units have grams outside the bits: the estimate, then the merge
            self.estimated += len(at)
            likely = agreeing_rows(self.sketch, a[at], b[at]) >= self.floor
            inter[at[~likely]] = 0
            at = at[likely]
            inter[at] = shared_grams(self.offsets, self.grams, a[at], b[at])
        sim = inter / np.maximum(sa + sb - inter, 1)
        ok = sim >= self.threshold - 1e-12
        merged = np.zeros(len(cand), dtype=bool)
        merged[at] = True
        self.rejected = _sorted_unique(np.concatenate([self.rejected, cand[merged & ~ok]]))
        self.components.join(a[ok], b[ok])
        self.found.append((a[ok], b[ok], sim[ok]))


def _contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in the sorted array ``sorted_keys`` (binary search, no copy of either)."""
    import numpy as np

    if not len(sorted_keys):
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


def search_lexical(
    fields: Sequence[tuple[str, ...]],
    threshold: float,
    side: np.ndarray | None = None,
    advance: Advance | None = None,
) -> LexicalPairs:
    """Unit pairs whose character 3-gram Jaccard is >= ``threshold``, enough to connect every cluster.

    ``fields``: each unit's folded, non-empty fields. ``side``: per unit, bit 1
    when it has items of the checked file and bit 2 of the other file; given,
    only pairs across the files are verified. ``advance(k)`` reports progress:
    ``2 * len(fields) + bands`` steps in all.
    """
    import numpy as np

    step = advance or (lambda k: None)
    offsets, grams = shingle(fields, NGRAM)
    step(len(fields))
    bands, rows = lsh_bands(threshold)
    keys, sketch = minhash(offsets, grams, bands, rows)
    step(len(fields))
    search = _Search(offsets, grams, sketch, threshold, side)
    for band in range(bands):
        for batch in _band_candidates(keys[band], *(keys[(band + k) % bands] for k in range(1, ORDERS + 1))):
            search.verify(*batch)
        step(1)
    a, b, sim = (np.concatenate(parts) for parts in zip(*search.found))
    return LexicalPairs(a, b, sim, search.verified, search.estimated)


def lexical_pairs(
    units: Units, threshold: float, cross_only: bool, advance: Advance
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit pairs whose 3-gram Jaccard is >= threshold, enough of them to connect every cluster: (a, b, similarity).

    ``cross_only``: only pairs between a unit of the checked file and one of the other (leakage).
    """
    import numpy as np

    found = search_lexical(units.fields, threshold, np.asarray(units.side) if cross_only else None, advance)
    return found.a, found.b, found.similarity
