"""The lexical signal: items whose character 3-grams are mostly the same, found without comparing all pairs.

Jaccard similarity of the sets of character 3-grams of the folded prompt and
solutions. Character n-grams need no tokeniser, so the same code serves
Darija spelling variation, Tamil agglutination and English typos. Grams never
span two fields, so the order of the solutions does not matter either.
3-grams beat 4- and 5-grams by a small margin on PIQA (docs/dedup.md) and are
kinder to short words with variable spelling.

Each unit (an item's folded fields) becomes the set of 40-bit hashes of its
character 3-grams; 150 multiply-shift MinHash rows are cut into bands chosen
so that a pair exactly at the threshold shares at least one band with
probability >= 99.9% (:func:`lsh_bands`). Every candidate is then verified
with the **exact** Jaccard, so nothing is reported on an estimate.

Why buckets are capped. Items drafted from templates share most of their
n-grams: on the file ``benchmarks/make_large.py`` writes, thousands of items
land in one bucket of every band, and "every pair in a bucket" made time and
memory grow with the square of the count (13.9 GB, and still running, at
100,000 items). Three things bound the work by the number of units instead:

* A bucket of at most :data:`BUCKET_CAP` units proposes all its pairs, as
  before; this is every bucket of real, non-repetitive data (PIQA valid's
  largest bucket has 3 units), so results there are unchanged.
* A larger bucket proposes each unit with the next :data:`WINDOW` units in
  the order of each of :data:`ORDERS` *other* bands' keys. Units that are near copies of each other
  usually share that other band too, so they sit next to each other in that
  order; a bucket of mutual near copies (a template) is chained together by
  the windows, which is all single-linkage clusters need.
* Bands are searched one after the other, and a candidate whose two units are
  already in one cluster (union-find over the pairs verified so far) is not
  verified again, nor is a pair that already failed. A cluster of k units
  therefore costs about k verifications, not k².

So at most ``n * (BUCKET_CAP / 2 + ORDERS * WINDOW)`` pairs are verified per band
whatever the data, and far fewer in practice (:attr:`LexicalPairs.verified`
counts them; tests/test_dedup.py holds it to a linear bound on a template
corpus). A near copy hidden in a bucket larger than the cap is still found in
the usual case: the pair shares several bands (6.5 of 25 on average at the
0.8 threshold) and needs only one whose bucket is small or whose window
holds both; tests/test_dedup.py plants near copies among real goals that all
share one long pair of solutions (every bucket crowded) and finds every one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piqa_tui.core.dedup.folding import Units

if TYPE_CHECKING:  # numpy is imported on first use: `piqa-tui --help` need not pay for it
    import numpy as np

Advance = Callable[[int], None]  # reports work done, in the units of the caller's progress total

NGRAM = 3
MINHASH_PERMUTATIONS = 150
BUCKET_CAP = 32  # a bucket up to this size proposes every pair in it (real data never gets near it)
ORDERS = 2  # ... in the orders of this many other bands
WINDOW = 4  # a larger bucket proposes each unit with this many next units in another band's order

_ITEMS_PER_CHUNK = 4096  # shingling works on this many items at a time to bound memory
_PAIRS_PER_CHUNK = 4096  # exact Jaccard is verified on this many pairs at a time (~50 MB of work arrays)


@dataclass(frozen=True)
class LexicalPairs:
    """Unit pairs ``(a[i], b[i])`` whose exact Jaccard ``similarity[i]`` reaches the threshold.

    ``verified`` is how many candidate pairs had their exact Jaccard computed:
    the cost of the search, which must grow with the number of units, not its square.
    """

    a: np.ndarray
    b: np.ndarray
    similarity: np.ndarray
    verified: int


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
    for start in range(0, len(fields), _ITEMS_PER_CHUNK):
        chunk = fields[start : start + _ITEMS_PER_CHUNK]
        keys = _chunk_grams(chunk, n)
        sizes[start : start + len(chunk)] = np.bincount((keys >> np.uint64(40)).astype(np.int64), minlength=len(chunk))
        out[filled : filled + len(keys)] = keys & np.uint64((1 << 40) - 1)
        filled += len(keys)
    offsets = np.zeros(len(fields) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets, out[:filled]


def signatures(offsets: np.ndarray, grams: np.ndarray, k: int = MINHASH_PERMUTATIONS) -> np.ndarray:
    """MinHash signatures, shape (k, units), one multiply-shift hash per row."""
    import numpy as np

    rng = np.random.default_rng(20240611)  # fixed: results must not change between runs
    mult = rng.integers(0, 2**63, size=k, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    add = rng.integers(0, 2**63, size=k, dtype=np.uint64)
    n_units = len(offsets) - 1
    sig = np.full((k, n_units), np.iinfo(np.uint32).max, dtype=np.uint32)
    for u0 in range(0, n_units, _ITEMS_PER_CHUNK * 4):
        u1 = min(n_units, u0 + _ITEMS_PER_CHUNK * 4)
        x = _mix(grams[offsets[u0] : offsets[u1]])
        sizes = np.diff(offsets[u0 : u1 + 1])
        filled = np.flatnonzero(sizes > 0)
        starts = (offsets[u0:u1] - offsets[u0])[filled]
        if not len(filled):
            continue
        for p in range(k):
            h = ((x * mult[p] + add[p]) >> np.uint64(32)).astype(np.uint32)
            sig[p, u0 + filled] = np.minimum.reduceat(h, starts)
    return sig


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

    keys = np.zeros((bands, sig.shape[1]), dtype=np.uint64)
    for band in range(bands):
        acc = keys[band]
        for r in range(rows):
            acc = _mix(acc ^ (sig[band * rows + r].astype(np.uint64) + np.uint64(r)))
        keys[band] = acc
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


def _band_candidates(key: np.ndarray, *secondary: np.ndarray) -> Iterator[np.ndarray]:
    """Candidate unit pairs of one band, in batches of unique uint64 ``a << 32 | b`` (a < b).

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
    yield _pair_keys(*_pairs_in_groups(order, starts[small], sizes[small]))
    big = sizes > BUCKET_CAP
    if not big.any():
        return
    bucket = np.repeat(np.arange(len(sizes)), sizes)
    at = np.flatnonzero(np.repeat(big, sizes))
    for other in secondary:
        by_other = np.lexsort((other, key))  # by bucket, then by the other band's key
        a_parts, b_parts = [], []
        for d in range(1, WINDOW + 1):
            p = at[at + d < n]
            p = p[bucket[p] == bucket[p + d]]
            a_parts.append(by_other[p])
            b_parts.append(by_other[p + d])
        yield _pair_keys(np.concatenate(a_parts), np.concatenate(b_parts))


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unique ``min << 32 | max`` keys of the pairs (a[i], b[i])."""
    import numpy as np

    a, b = a.astype(np.uint64), b.astype(np.uint64)
    return _sorted_unique((np.minimum(a, b) << np.uint64(32)) | np.maximum(a, b))


def jaccard(offsets: np.ndarray, grams: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact Jaccard of the gram sets of units ``a[i]`` and ``b[i]``, vectorised in chunks."""
    import numpy as np

    sizes = np.diff(offsets)
    out = np.zeros(len(a), dtype=np.float64)
    for s in range(0, len(a), _PAIRS_PER_CHUNK):
        pa, pb = a[s : s + _PAIRS_PER_CHUNK], b[s : s + _PAIRS_PER_CHUNK]
        both = np.concatenate([pa, pb])
        lengths = sizes[both]
        pair = np.tile(np.arange(len(pa), dtype=np.uint64), 2)
        # Gather each unit's grams: positions offsets[u] .. offsets[u]+size-1.
        first = np.repeat(offsets[both] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
        g = grams[first + np.arange(lengths.sum())]
        keys = np.sort((np.repeat(pair, lengths) << np.uint64(40)) | g)
        shared = keys[1:] == keys[:-1]  # a gram present in both sets (each set has no repeats)
        inter = np.bincount((keys[1:][shared] >> np.uint64(40)).astype(np.int64), minlength=len(pa))
        union = sizes[pa] + sizes[pb] - inter
        out[s : s + len(pa)] = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
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


class _Search:
    """The band-by-band search: skips pairs already connected or already rejected, verifies the rest."""

    def __init__(self, offsets: np.ndarray, grams: np.ndarray, threshold: float, side: np.ndarray | None) -> None:
        import numpy as np

        self.offsets, self.grams, self.threshold, self.side = offsets, grams, threshold, side
        self.components = UnionFind(len(offsets) - 1)
        self.rejected = np.zeros(0, dtype=np.uint64)
        self.found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.verified = 0

    def verify(self, cand: np.ndarray) -> None:
        import numpy as np

        a = (cand >> np.uint64(32)).astype(np.int64)
        b = (cand & np.uint64(0xFFFFFFFF)).astype(np.int64)
        roots = self.components.roots()
        keep = (roots[a] != roots[b]) & ~np.isin(cand, self.rejected, assume_unique=True)
        if self.side is not None:  # leakage: only pairs across the two files count
            keep &= ((self.side[a] & 1) & (self.side[b] >> 1) | (self.side[a] >> 1) & (self.side[b] & 1)).astype(bool)
        cand, a, b = cand[keep], a[keep], b[keep]
        sim = jaccard(self.offsets, self.grams, a, b)
        self.verified += len(cand)
        ok = sim >= self.threshold - 1e-12
        self.rejected = _sorted_unique(np.concatenate([self.rejected, cand[~ok]]))
        for x, y in zip(a[ok].tolist(), b[ok].tolist()):
            self.components.union(x, y)
        self.found.append((a[ok], b[ok], sim[ok]))


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
    sig = signatures(offsets, grams, MINHASH_PERMUTATIONS)
    step(len(fields))
    bands, rows = lsh_bands(threshold)
    keys = _band_keys(sig, bands, rows)
    del sig
    search = _Search(offsets, grams, threshold, side)
    for band in range(bands):
        for batch in _band_candidates(keys[band], *(keys[(band + k) % bands] for k in range(1, ORDERS + 1))):
            search.verify(batch)
        step(1)
    a, b, sim = (np.concatenate(parts) for parts in zip(*search.found))
    return LexicalPairs(a, b, sim, search.verified)


def lexical_pairs(
    units: Units, threshold: float, cross_only: bool, advance: Advance
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit pairs whose 3-gram Jaccard is >= threshold, enough of them to connect every cluster: (a, b, similarity).

    ``cross_only``: only pairs between a unit of the checked file and one of the other (leakage).
    """
    import numpy as np

    found = search_lexical(units.fields, threshold, np.asarray(units.side) if cross_only else None, advance)
    return found.a, found.b, found.similarity
