"""Duplicates inside a dataset and between two datasets (leakage).

Four signals, strongest first:

* ``exact`` — the same item after folding (see :func:`fold`): NFKC, case
  folding, punctuation and whitespace folded, Arabic spelling variants (alef
  forms, taa marbuta/haa, alef maqsura/yaa, tatweel, harakat) and Indic nukta
  and zero-width joiners removed. Solution order does not matter, so an item
  copied with its solutions swapped is still an exact duplicate.
* ``lexical`` — Jaccard similarity of the sets of character 3-grams of the
  folded prompt and solutions is at least ``threshold`` (default 0.8).
  Character n-grams need no tokeniser, so the same code serves Darija spelling
  variation, Tamil agglutination and English typos. Grams never span two
  fields, so the order of the solutions does not matter either.
* ``semantic`` — cosine similarity of sentence embeddings of the item text is
  at least ``semantic_threshold`` (default 0.9); runs only when an
  :class:`~piqa_tui.core.dedup.semantic.Embedder` is given.
* ``prompt`` — the folded prompt alone is the same while the items are not
  duplicates by the signals above: the same goal with other solutions.

An item's own solutions are never compared with each other: a minimal pair is
near-identical by design, and identical solutions are ``validate``'s business.

Why these defaults (measured on PIQA valid, 1,838 items; see docs/dedup.md and
benchmarks/bench_dedup.py): the most similar pair of *distinct* PIQA items
(template recipes, "How to make <brand> Ice Cream at home") has a 3-gram
Jaccard of 0.79 and the 99.9th percentile of nearest neighbours is 0.78, while
planted near copies (1-3 typos, 1-2 words changed, solutions swapped, case
and punctuation changed) have a median of 0.95 and 96% of them reach 0.8.
3-grams beat 4- and 5-grams by a small margin there and are kinder to short
words with variable spelling. Semantic, with all-MiniLM-L6-v2: the most
similar distinct PIQA items reach a cosine of 0.92 and only 2 of 1.7 million
pairs reach 0.9, while 99% of paraphrase-like copies do (with lexical).

How it scales: candidate pairs come from MinHash LSH (150 hash functions,
banded so that a pair at the threshold becomes a candidate with probability
> 99.9%) and are then verified with the exact Jaccard, so no pair is
reported on an estimate. Work and memory grow with the amount of text, not
with the square of the number of items; items with the same exact key are
compared once. Measured on the same 20,000 items on 2 cores:
``rapidfuzz.process.cdist`` with a score cutoff (all pairs, in chunks) took
282 s, datasketch's MinHashLSH 5.6 s, this 1.6 s.

Clusters are connected components of the duplicate pairs (union-find). A
cluster's ``signal`` is the strongest signal whose pairs alone connect all of
its members; its ``similarity`` is the mean similarity of the pairs of that
signal in it (1.0 for ``exact`` and ``prompt``; Jaccard for ``lexical``;
cosine for ``semantic``).
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import INVISIBLE

if TYPE_CHECKING:  # numpy is imported on first use: `piqa-tui --help` need not pay for it
    import numpy as np

    from piqa_tui.core.dedup.semantic import Embedder

Progress = Callable[[int, int], None]

SIGNALS = ("exact", "lexical", "semantic", "prompt")
NGRAM = 3
DEFAULT_THRESHOLD = 0.8
DEFAULT_SEMANTIC_THRESHOLD = 0.9
MINHASH_PERMUTATIONS = 150

_ITEMS_PER_CHUNK = 4096  # shingling works on this many items at a time to bound memory
_PAIRS_PER_CHUNK = 4096  # exact Jaccard is verified on this many pairs at a time (~50 MB of work arrays)


# --------------------------------------------------------------------------- folding

_ALEF_VARIANTS = "أإآٱ"
_ARABIC_DELETE = (
    "\u0640"  # tatweel
    + "".join(map(chr, range(0x064B, 0x0660)))  # harakat, shadda, sukun, combining hamza/madda
    + "\u0670"  # superscript (dagger) alef
    + "".join(map(chr, [*range(0x06D6, 0x06DD), *range(0x06DF, 0x06E5), 0x06E7, 0x06E8, *range(0x06EA, 0x06EE)]))
)
_INDIC_NUKTA = "\u093c\u09bc\u0a3c\u0abc\u0b3c\u0c3c\u0cbc"
# Devanagari letters that NFC keeps precomposed with a nukta (the others are
# composition exclusions, so NFC already splits them into letter + nukta).
_NUKTA_LETTERS = {"\u0929": "\u0928", "\u0931": "\u0930", "\u0934": "\u0933"}
_ARABIC_LETTERS = {"ة": "ه", "ى": "ي", "ی": "ي", "ک": "ك"}
_DIGITS = {chr(0x0660 + d): str(d) for d in range(10)} | {chr(0x06F0 + d): str(d) for d in range(10)}


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str | None]:
    """str.translate table: punctuation and spaces to ' ', marks deleted, variants mapped.

    Built on first use (a pass over all of Unicode, ~0.3 s) rather than at import.
    """
    table: dict[int, str | None] = {
        cp: " "
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp))[0] in "PZ" or chr(cp).isspace()
    }
    for ch in _ARABIC_DELETE + _INDIC_NUKTA + INVISIBLE:
        table[ord(ch)] = None
    for ch in _ALEF_VARIANTS:
        table[ord(ch)] = "ا"
    for src, dst in (_NUKTA_LETTERS | _ARABIC_LETTERS | _DIGITS).items():
        table[ord(src)] = dst
    return table


def fold(text: str) -> str:
    """The text as dedup compares it; never shown or stored.

    NFKC (NFC plus compatibility forms, which also undoes Arabic presentation
    forms pasted from PDFs), case folding, punctuation to spaces, runs of
    whitespace to one space, Arabic and Indic spelling variants folded.
    """
    if not text:
        return ""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_fold_table())
    return " ".join(folded.split())


def _folded_fields(item: Item) -> tuple[str, ...]:
    """Folded question (COPA cause/effect, usually ''), prompt, then solutions in sorted order."""
    return (fold(item.question or ""), fold(item.prompt), *sorted(fold(s) for s in item.solutions))


def item_key(item: Item) -> str:
    """The exact-duplicate key. Folding turns the separator (U+001F, a space to
    ``str.isspace``) into a space, so fields cannot run into each other."""
    return "\x1f".join(_folded_fields(item))


def _prompt_key(fields: tuple[str, ...]) -> str:
    return fields[0] + "\x1f" + fields[1] if fields[1] else ""


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Member:
    """One item of a cluster: its id, its position in its input, and its file in leakage mode."""

    id: str
    index: int
    source: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"id": self.id}
        if self.source is not None:
            out["source"] = self.source
        return out


@dataclass(frozen=True, slots=True)
class Pair:
    """Evidence: members ``a`` and ``b`` (positions in ``Cluster.members``) are duplicates."""

    a: int
    b: int
    similarity: float
    signal: str


@dataclass(frozen=True, slots=True)
class Cluster:
    """Items that duplicate each other.

    ``pairs`` is the evidence that connects the members (not every pair of
    them): what the duplicates screen shows side by side.
    """

    members: tuple[Member, ...]
    similarity: float
    signal: str
    pairs: tuple[Pair, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "members": [m.to_json() for m in self.members],
            "similarity": round(self.similarity, 4),
            "signal": self.signal,
        }


# --------------------------------------------------------------------------- progress


class _Steps:
    """Turns the stages of a run into one monotone (done, total) for a progress bar.

    A callback may raise to cancel the run (the TUI's worker does).
    """

    def __init__(self, callback: Progress | None, total: int) -> None:
        self.callback, self.total, self.done = callback, max(total, 1), 0

    def advance(self, amount: int) -> None:
        self.done = min(self.total, self.done + amount)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def finish(self) -> None:
        self.advance(self.total - self.done)


# --------------------------------------------------------------------------- units


@dataclass
class _Units:
    """Items grouped by exact key; lexical and semantic work is done once per unit.

    ``side`` is a bit set: 1 when the unit has items of the checked set, 2 when it
    has items of the ``against`` set.
    """

    members: list[list[int]]  # global item positions, checked items first
    side: list[int]
    fields: list[tuple[str, ...]]  # folded fields of the unit's first item
    prompt_keys: list[str]  # per item position: the key of the prompt signal


def _group_units(items: Sequence[Item], n_checked: int) -> _Units:
    index: dict[str, int] = {}
    units = _Units([], [], [], [])
    for pos, item in enumerate(items):
        fields = _folded_fields(item)
        units.prompt_keys.append(_prompt_key(fields))
        key = "\x1f".join(fields)
        u = index.get(key)
        if u is None:
            u = index[key] = len(units.members)
            units.members.append([])
            units.side.append(0)
            units.fields.append(tuple(f for f in fields if f))
        units.members[u].append(pos)
        units.side[u] |= 1 if pos < n_checked else 2
    return units


# --------------------------------------------------------------------------- lexical


def _mix(x: "np.ndarray") -> "np.ndarray":
    """splitmix64 finaliser: spreads the bits of uint64 values (wrapping arithmetic)."""
    import numpy as np

    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _shingle(fields: Sequence[tuple[str, ...]], n: int) -> tuple["np.ndarray", "np.ndarray"]:
    """Sorted, de-duplicated 40-bit hashes of each unit's character n-grams.

    Returns ``(offsets, grams)``: unit ``u`` owns ``grams[offsets[u]:offsets[u+1]]``.
    Each field is padded with a space so that word edges count, and fields are
    joined with NUL, which no gram may contain: grams never span two fields.
    (With ~1e6 distinct grams, 40-bit hashes collide about once: no effect on
    any similarity.)
    """
    import numpy as np

    bits = np.uint64(40)
    sizes = np.zeros(len(fields), dtype=np.int64)
    # A field of L characters has at most L + 3 - n grams. Filling an array of
    # that upper bound, instead of concatenating chunk results, never holds two
    # copies; pages past the real end are never touched, so never resident.
    out = np.empty(sum(len(f) + 3 for unit_fields in fields for f in unit_fields), dtype=np.uint64)
    filled = 0
    for start in range(0, len(fields), _ITEMS_PER_CHUNK):
        chunk = fields[start : start + _ITEMS_PER_CHUNK]
        segments, owner = [], []
        for u, unit_fields in enumerate(chunk):
            for f in unit_fields:
                segments.append(f" {f} ")
                owner.append(u)
        if not segments:
            continue
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
        keys = np.sort(((unit << bits) | (_mix(h) >> np.uint64(64 - 40)))[~bad])
        keep = np.empty(len(keys), dtype=bool)
        keep[:1] = True
        np.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = keys[keep]
        sizes[start : start + len(chunk)] = np.bincount((keys >> bits).astype(np.int64), minlength=len(chunk))
        out[filled : filled + len(keys)] = keys & np.uint64((1 << 40) - 1)
        filled += len(keys)
    offsets = np.zeros(len(fields) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets, out[:filled]


def _signatures(offsets: "np.ndarray", grams: "np.ndarray", k: int) -> "np.ndarray":
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


def _pairs_in_groups(order: "np.ndarray", starts: "np.ndarray", sizes: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
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


def _candidates(sig: "np.ndarray", bands: int, rows: int, steps: _Steps) -> "np.ndarray":
    """Unit pairs that share a whole band of their signatures, as sorted uint64 ``a << 32 | b`` (a < b)."""
    import numpy as np

    n = sig.shape[1]
    found: list[np.ndarray] = []
    for band in range(bands):
        acc = np.zeros(n, dtype=np.uint64)
        for r in range(rows):
            acc = _mix(acc ^ (sig[band * rows + r].astype(np.uint64) + np.uint64(r)))
        order = np.argsort(acc, kind="stable")
        ranked = acc[order]
        same = ranked[1:] == ranked[:-1]
        if same.any():
            starts = np.flatnonzero(np.r_[True, ~same])
            sizes = np.diff(np.r_[starts, n])
            many = sizes > 1
            a, b = _pairs_in_groups(order, starts[many], sizes[many])
            lo, hi = np.minimum(a, b).astype(np.uint64), np.maximum(a, b).astype(np.uint64)
            found.append(np.unique((lo << np.uint64(32)) | hi))
            if len(found) > 8:
                found = [np.unique(np.concatenate(found))]
        steps.advance(1)
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.uint64)


def _jaccard(offsets: "np.ndarray", grams: "np.ndarray", a: "np.ndarray", b: "np.ndarray") -> "np.ndarray":
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


def _lexical_pairs(
    units: _Units, threshold: float, cross_only: bool, steps: _Steps
) -> tuple["np.ndarray", "np.ndarray", "np.ndarray"]:
    """Unit pairs whose 3-gram Jaccard is >= threshold: (a, b, similarity)."""
    import numpy as np

    offsets, grams = _shingle(units.fields, NGRAM)
    steps.advance(len(units.fields))
    sig = _signatures(offsets, grams, MINHASH_PERMUTATIONS)
    steps.advance(len(units.fields))
    bands, rows = lsh_bands(threshold)
    cand = _candidates(sig[: bands * rows], bands, rows, steps)
    del sig
    a = (cand >> np.uint64(32)).astype(np.int64)
    b = (cand & np.uint64(0xFFFFFFFF)).astype(np.int64)
    if cross_only:
        side = np.asarray(units.side)
        keep = ((side[a] & 1) & (side[b] >> 1)) | ((side[a] >> 1) & (side[b] & 1))
        a, b = a[keep.astype(bool)], b[keep.astype(bool)]
    sim = _jaccard(offsets, grams, a, b)
    ok = sim >= threshold - 1e-12
    return a[ok], b[ok], sim[ok]


# --------------------------------------------------------------------------- semantic


def _semantic_pairs(
    units: _Units,
    items: Sequence[Item],
    embedder: "Embedder",
    threshold: float,
    cross_only: bool,
    steps: _Steps,
) -> tuple["np.ndarray", "np.ndarray", "np.ndarray"]:
    import numpy as np

    from piqa_tui.core.dedup.semantic import similar_pairs

    texts = [items[m[0]].text for m in units.members]
    done = 0

    def embedded(n_done: int, _total: int) -> None:
        nonlocal done
        steps.advance(n_done - done)
        done = n_done

    vectors = embedder.embed(texts, progress=embedded)
    if not cross_only:
        a, b, sim = similar_pairs(vectors, None, threshold=threshold)
        return a, b, sim
    side = np.asarray(units.side)
    left, right = np.flatnonzero(side & 1), np.flatnonzero(side & 2)
    i, j, sim = similar_pairs(vectors[left], vectors[right], threshold=threshold)
    a, b = left[i], right[j]
    distinct = a != b  # a unit on both sides is an exact duplicate, reported already
    return a[distinct], b[distinct], sim[distinct]


# --------------------------------------------------------------------------- clusters


class _UnionFind:
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


def find_duplicates(
    items: Sequence[Item],
    *,
    against: Sequence[Item] | None = None,
    semantic: "Embedder | None" = None,
    threshold: float = DEFAULT_THRESHOLD,
    semantic_threshold: float = DEFAULT_SEMANTIC_THRESHOLD,
    sources: tuple[str, str] = ("items", "against"),
    progress: Progress | None = None,
) -> list[Cluster]:
    """Clusters of duplicate items, strongest signal first.

    Without ``against``: duplicates among ``items``. With ``against``
    (leakage): only clusters in which an item of ``items`` duplicates an item of
    ``against``; every member then carries its source name from ``sources``.
    ``semantic``: an embedder, or None for exact, lexical and prompt signals
    only. ``progress(done, total)`` is called as work advances; raising from it
    cancels the run. Raises :class:`~piqa_tui.core.errors.ModelError` when the
    embedder fails.
    """
    for name, value in (("threshold", threshold), ("semantic_threshold", semantic_threshold)):
        if not 0.0 < value <= 1.0:
            raise ValueError(f"{name} must be in (0, 1], got {value}")
    leakage = against is not None
    everything: list[Item] = [*items, *(against or ())]
    n_checked = len(items)
    units = _group_units(everything, n_checked)
    n_units = len(units.members)
    bands, _ = lsh_bands(threshold)
    total = 2 * n_units + bands + (n_units if semantic is not None else 0)
    steps = _Steps(progress, total)

    def member(pos: int) -> Member:
        """The Member for a position in ``items + against``; ``index`` is the position in its own input."""
        if pos < n_checked:
            return Member(everything[pos].id, pos, sources[0] if leakage else None)
        return Member(everything[pos].id, pos - n_checked, sources[1])

    # Units with no text (every field empty) are validate's problem, not duplicates.
    empty = [not any(f) for f in units.fields]

    edges: list[tuple[int, int, float, str]] = []  # unit a, unit b, similarity, signal
    lex = _UnionFind(n_units)
    if n_units > 1:
        a, b, sim = _lexical_pairs(units, threshold, leakage, steps)
        for x, y, s in zip(a.tolist(), b.tolist(), sim.tolist()):
            if not (empty[x] or empty[y]):
                edges.append((x, y, s, "lexical"))
                lex.union(x, y)
    full = _UnionFind(n_units)
    full.parent = list(lex.parent)
    if semantic is not None and n_units > 1:
        a, b, sim = _semantic_pairs(units, everything, semantic, semantic_threshold, leakage, steps)
        for x, y, s in zip(a.tolist(), b.tolist(), sim.tolist()):
            if not (empty[x] or empty[y]) and lex.find(x) != lex.find(y):
                edges.append((x, y, s, "semantic"))
                full.union(x, y)

    components: dict[int, list[int]] = {}
    for u in range(n_units):
        if not empty[u]:
            components.setdefault(full.find(u), []).append(u)
    edges_of: dict[int, list[tuple[int, int, float, str]]] = {}
    for e in edges:
        edges_of.setdefault(full.find(e[0]), []).append(e)

    clusters: list[Cluster] = []
    text_cluster: dict[int, int] = {}  # item position -> component root, for the prompt signal
    for root, comp in components.items():
        if len(comp) == 1:
            u = comp[0]
            if len(units.members[u]) < 2 or (leakage and units.side[u] != 3):
                continue
            signal = "exact"
        else:
            signal = "lexical" if len({lex.find(u) for u in comp}) == 1 else "semantic"
        clusters.append(_build_cluster(comp, edges_of.get(root, []), signal, units, member, n_checked))
        for u in comp:
            for pos in units.members[u]:
                text_cluster[pos] = root

    clusters.extend(_prompt_clusters(units.prompt_keys, n_checked, text_cluster, member, leakage))
    steps.finish()
    rank = {s: i for i, s in enumerate(SIGNALS)}
    clusters.sort(key=lambda c: (rank[c.signal], -c.similarity, c.members[0].source or "", c.members[0].index))
    return clusters


def _build_cluster(
    comp: list[int],
    edges: list[tuple[int, int, float, str]],
    signal: str,
    units: _Units,
    member: Callable[[int], Member],
    n_checked: int,
) -> Cluster:
    positions = sorted(p for u in comp for p in units.members[u])
    slot = {pos: k for k, pos in enumerate(positions)}
    pairs: list[Pair] = []
    for u in comp:
        first, *rest = units.members[u]
        pairs.extend(Pair(slot[first], slot[p], 1.0, "exact") for p in rest)
    for x, y, sim, sig in edges:
        px, py = _facing(units.members[x], units.members[y], n_checked)
        pairs.append(Pair(slot[px], slot[py], sim, sig))
    own = [p.similarity for p in pairs if p.signal == signal]
    similarity = sum(own) / len(own) if own else 1.0
    return Cluster(tuple(member(p) for p in positions), similarity, signal, tuple(pairs))


def _facing(xs: list[int], ys: list[int], n_checked: int) -> tuple[int, int]:
    """Representatives of two units for an evidence pair, one from each file when
    they can be (in leakage mode a lexical or semantic pair always crosses files)."""
    for x in xs:
        for y in ys:
            if (x < n_checked) != (y < n_checked):
                return x, y
    return xs[0], ys[0]


def _prompt_clusters(
    prompt_keys: list[str],
    n_checked: int,
    text_cluster: dict[int, int],
    member: Callable[[int], Member],
    leakage: bool,
) -> list[Cluster]:
    groups: dict[str, list[int]] = {}
    for pos, key in enumerate(prompt_keys):
        if key:
            groups.setdefault(key, []).append(pos)
    out = []
    for positions in groups.values():
        if len(positions) < 2:
            continue
        if leakage and not (positions[0] < n_checked <= positions[-1]):
            continue
        # Already one text cluster: the prompt signal adds nothing.
        if len({text_cluster.get(p, -1 - p) for p in positions}) == 1:
            continue
        members = tuple(member(p) for p in positions)
        pairs = tuple(Pair(0, k, 1.0, "prompt") for k in range(1, len(positions)))
        out.append(Cluster(members, 1.0, "prompt", pairs))
    return out
