"""Duplicates inside a dataset and between two datasets (leakage).

Five signals, strongest first:

* ``exact`` — the same item after folding (:func:`~piqa_tui.core.dedup.folding.fold`): NFKC, case
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
  at least ``semantic_threshold`` (default: the model's own; 0.9 for a model
  that has none); runs only when an
  :class:`~piqa_tui.core.dedup.semantic.Embedder` is given. A model with a
  ``semantic_view`` (the default multilingual-e5-small) compares vectors
  standardised within each script, pairs within one script only.
* ``translation`` — two items written in different scripts (Tamil and
  English, say) of which one is likely a translation of the other, the leak
  that matters when pipelines translate test items. With a ``translator``
  (an embedder for this signal alone), the pairs come from
  :func:`~piqa_tui.core.dedup.translation.translation_pairs`: vectors
  standardised per script, mutual nearest neighbours that stand out from
  chance; without one, from the semantic embeddings when their cosine is at
  least ``translation_threshold``. In a leakage check, a translator with a
  ``same_script_excess`` also pairs the two files within one script when they
  lie apart like two languages (MSA and Darija, Italian and English).
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
pairs reach 0.9, while 99% of paraphrase-like copies do (with lexical); with
multilingual-e5-small standardised per script, 0.8 keeps 98.3% pair precision
on PIQA, Tamil and Arabic items together, with 97.3% of paraphrase-like copies.

Clusters are connected components of the duplicate pairs (union-find). A
cluster's ``signal`` is the strongest signal whose pairs alone connect all of
its members; its ``similarity`` is the mean similarity of the pairs of that
signal in it (1.0 for ``exact`` and ``prompt``; Jaccard for ``lexical``;
cosine for ``semantic`` and ``translation``).

The modules: ``folding`` (what text dedup compares, the keys), ``lexical``
(MinHash/LSH candidates verified by Jaccard), ``semantic`` (embeddings), and
this one, which joins the signals into clusters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.folding import Units, group_units
from piqa_tui.core.dedup.lexical import UnionFind, lexical_pairs, lsh_bands

if TYPE_CHECKING:  # numpy is imported on first use: `piqa-tui --help` need not pay for it
    import numpy as np

    from piqa_tui.core.dedup.semantic import Embedder

Progress = Callable[[int, int], None]
Edge = tuple[int, int, float, str]  # unit a, unit b, similarity, signal

SIGNALS = ("exact", "lexical", "semantic", "translation", "prompt")
DEFAULT_THRESHOLD = 0.8
DEFAULT_SEMANTIC_THRESHOLD = 0.9
DEFAULT_TRANSLATION_THRESHOLD = 0.9


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


class Steps:
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


# --------------------------------------------------------------------------- semantic


def _semantic_pairs(
    units: Units,
    items: Sequence[Item],
    embedder: Embedder,
    threshold: float,
    cross_only: bool,
    steps: Steps,
    scripts: _Scripts,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of units whose embeddings are at least ``threshold`` alike (each pair once; across the two
    sides only when ``cross_only``).

    An embedder with a ``semantic_view`` (multilingual-e5) compares vectors standardised per script,
    each row with its own threshold (:func:`~piqa_tui.core.dedup.translation.semantic_view`), and pairs
    within one script only: its translations come from the translation rule."""
    import numpy as np

    from piqa_tui.core.dedup.semantic import similar_pairs

    texts = [items[m[0]].text for m in units.members]
    vectors = embedder.embed(texts, progress=_advancing(steps))
    view = getattr(embedder, "semantic_view", None)
    limits = label = None
    if view is not None:
        label = np.array([x or "" for x in scripts()], dtype=object)
        vectors, limits = view(vectors, label.tolist(), threshold)
    if not cross_only:
        left = right = np.arange(len(texts))
        i, j, sim = similar_pairs(vectors, None, threshold=float(limits.min()) if limits is not None else threshold)
    else:
        side = np.asarray(units.side)
        left, right = np.flatnonzero(side & 1), np.flatnonzero(side & 2)
        floor = (
            float(min(limits[left].min(initial=1.0), limits[right].min(initial=1.0)))
            if limits is not None
            else threshold
        )
        i, j, sim = similar_pairs(vectors[left], vectors[right], threshold=floor)
    a, b = left[i], right[j]
    keep = a != b  # a unit on both sides is an exact duplicate, reported already
    if limits is not None and label is not None:  # both come from the semantic view
        keep &= (label[a] == label[b]) & (sim >= limits[a])
    return a[keep], b[keep], sim[keep]


# --------------------------------------------------------------------------- clusters


def find_duplicates(
    items: Sequence[Item],
    *,
    against: Sequence[Item] | None = None,
    semantic: Embedder | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    semantic_threshold: float | None = None,
    translation_threshold: float = DEFAULT_TRANSLATION_THRESHOLD,
    sources: tuple[str, str] = ("items", "against"),
    progress: Progress | None = None,
    translator: Embedder | None = None,
) -> list[Cluster]:
    """Clusters of duplicate items, strongest signal first.

    Without ``against``: duplicates among ``items``. With ``against``
    (leakage): only clusters in which an item of ``items`` duplicates an item of
    ``against``; every member then carries its source name from ``sources``.
    ``semantic``: an embedder, or None for exact, lexical and prompt signals
    only (no translations either, unless ``translator`` embeds for that signal alone).
    ``semantic_threshold``: None takes the embedder's own (its ``semantic_threshold``
    attribute, else :data:`DEFAULT_SEMANTIC_THRESHOLD`): a cosine threshold belongs to a model.
    ``progress(done, total)`` is called as work advances; raising from it
    cancels the run. Raises :class:`~piqa_tui.core.errors.ModelError` when the
    embedder fails.
    """
    if semantic_threshold is None:
        semantic_threshold = model_threshold(semantic)
    thresholds = {
        "threshold": threshold,
        "semantic_threshold": semantic_threshold,
        "translation_threshold": translation_threshold,
    }
    for name, value in thresholds.items():
        if not 0.0 < value <= 1.0:
            raise ValueError(f"{name} must be in (0, 1], got {value}")
    leakage = against is not None
    everything: list[Item] = [*items, *(against or ())]
    n_checked = len(items)
    units = group_units(everything, n_checked)
    n_units = len(units.members)
    bands, _ = lsh_bands(threshold)
    total = 2 * n_units + bands + n_units * ((semantic is not None) + (translator is not None))
    steps = Steps(progress, total)

    def member(pos: int) -> Member:
        """The Member for a position in ``items + against``; ``index`` is the position in its own input."""
        if pos < n_checked:
            return Member(everything[pos].id, pos, sources[0] if leakage else None)
        return Member(everything[pos].id, pos - n_checked, sources[1])

    scripts = _Scripts(units, everything)
    links = _link(
        units, everything, semantic, (threshold, semantic_threshold, translation_threshold), leakage, steps, scripts
    )
    if translator is not None and n_units > 1:
        _link_translations(units, everything, translator, links, leakage, steps, scripts)
    clusters, text_cluster = _text_clusters(units, links, member, n_checked, leakage)
    clusters.extend(_prompt_clusters(units.prompt_keys, n_checked, text_cluster, member, leakage))
    steps.finish()
    rank = {s: i for i, s in enumerate(SIGNALS)}
    clusters.sort(key=lambda c: (rank[c.signal], -c.similarity, c.members[0].source or "", c.members[0].index))
    return clusters


@dataclass
class _Links:
    """The lexical, semantic and translation pairs between units, and the components they join."""

    edges: list[Edge]
    lex: UnionFind  # joined by lexical pairs only: a cluster within one lexical component is "lexical"
    same_language: UnionFind  # joined by lexical and semantic pairs: within one, "semantic"
    full: UnionFind  # joined by all three: otherwise "translation"
    empty: list[bool]  # units with no text (every field empty): validate's problem, not duplicates


def _link(
    units: Units,
    everything: list[Item],
    semantic: Embedder | None,
    thresholds: tuple[float, float, float],
    leakage: bool,
    steps: Steps,
    scripts: _Scripts,
) -> _Links:
    """Pairs of units by the lexical signal, then by the embeddings where lexical has not joined them already.

    ``thresholds``: lexical, semantic, translation.
    """
    n_units = len(units.members)
    links = _Links([], UnionFind(n_units), UnionFind(n_units), UnionFind(n_units), [not any(f) for f in units.fields])
    empty = links.empty
    if n_units > 1:
        a, b, sim = lexical_pairs(units, thresholds[0], leakage, steps.advance)
        for x, y, s in zip(a.tolist(), b.tolist(), sim.tolist()):
            if not (empty[x] or empty[y]):
                links.edges.append((x, y, s, "lexical"))
                links.lex.union(x, y)
    links.same_language.parent = list(links.lex.parent)
    links.full.parent = list(links.lex.parent)
    if semantic is not None and n_units > 1:
        # A model with a view of its own pairs one script only: the translation threshold is not its business.
        floor = thresholds[1] if hasattr(semantic, "semantic_view") else min(thresholds[1:])
        a, b, sim = _semantic_pairs(units, everything, semantic, floor, leakage, steps, scripts)
        found = [(x, y, s) for x, y, s in zip(a.tolist(), b.tolist(), sim.tolist()) if not (empty[x] or empty[y])]
        for x, y, s, signal in _meaning_edges(found, scripts.of, *thresholds[1:]):
            if links.lex.find(x) != links.lex.find(y):
                links.edges.append((x, y, s, signal))
                links.full.union(x, y)
                if signal == "semantic":
                    links.same_language.union(x, y)
    return links


def _link_translations(
    units: Units,
    everything: list[Item],
    translator: Embedder,
    links: _Links,
    leakage: bool,
    steps: Steps,
    scripts: _Scripts,
) -> None:
    """Add the ``translation`` pairs that ``translator``'s vectors find (see core/dedup/translation.py),
    with the translator's own bar (its ``translation_excess``, measured per model in docs/dedup.md)."""
    import numpy as np

    from piqa_tui.core.dedup.translation import MIN_EXCESS, translation_pairs

    texts = [everything[m[0]].text for m in units.members]
    vectors = translator.embed(texts, progress=_advancing(steps))
    written = [None if empty else script for script, empty in zip(scripts(), links.empty)]
    side = np.asarray(units.side)
    left, right = (np.flatnonzero(side & 1), np.flatnonzero(side & 2)) if leakage else (np.arange(len(texts)),) * 2
    found = translation_pairs(
        vectors, written, left, right, min_excess=getattr(translator, "translation_excess", MIN_EXCESS)
    )
    pairs = list(zip(found.i.tolist(), found.j.tolist(), found.cosine.tolist()))
    bar = getattr(translator, "same_script_excess", None)
    if leakage and bar is not None:
        pairs += _same_script_translations(vectors, written, side, bar)
    for x, y, cos in pairs:
        if links.lex.find(x) != links.lex.find(y):
            links.edges.append((x, y, cos, "translation"))
            links.full.union(x, y)


def _same_script_translations(
    vectors: np.ndarray, written: list[str | None], side: np.ndarray, bar: float
) -> list[tuple[int, int, float]]:
    """In a leakage check, translations between the two files within one script (MSA and Darija, English
    and Italian): the translation rule with each file as a side, at the stricter ``bar`` the model measured
    for it, and only when the two files' vectors lie apart like two languages do
    (:data:`~piqa_tui.core.dedup.translation.MIN_LANGUAGE_GAP`): inside one language, topics make pairs
    stand out by chance (two halves of PIQA: 20 such pairs in 500 x 500 items). Units in both files are
    exact duplicates, reported already."""
    import numpy as np

    from piqa_tui.core.dedup.translation import MIN_LANGUAGE_GAP, centroid_gap, translation_pairs

    script = np.array([w or "" for w in written], dtype=object)
    out: list[tuple[int, int, float]] = []
    for name in sorted(set(script.tolist()) - {""}):
        here, there = np.flatnonzero((side == 1) & (script == name)), np.flatnonzero((side == 2) & (script == name))
        if len(here) > 1 and len(there) > 1 and centroid_gap(vectors[here], vectors[there]) >= MIN_LANGUAGE_GAP:
            rows = np.concatenate([here, there])
            labels = ["here"] * len(here) + ["other"] * len(there)
            found = translation_pairs(
                vectors[rows], labels, np.arange(len(here)), np.arange(len(here), len(rows)), min_excess=bar
            )
            out += zip(rows[found.i].tolist(), rows[found.j].tolist(), found.cosine.tolist())
    return out


def model_threshold(embedder: object) -> float:
    """The semantic threshold measured for ``embedder``'s model (its ``semantic_threshold``), else the default."""
    return float(getattr(embedder, "semantic_threshold", DEFAULT_SEMANTIC_THRESHOLD))


class _Scripts:
    """The main script of each unit's text (None without letters): ``of(unit)`` for a few units,
    ``()`` for all of them, each worked out once when first asked for."""

    def __init__(self, units: Units, items: Sequence[Item]) -> None:
        self.units, self.items = units, items
        self._known: dict[int, str | None] = {}

    def of(self, unit: int) -> str | None:
        from piqa_tui.core.text.characters import dominant_script

        if unit not in self._known:
            self._known[unit] = dominant_script(self.items[self.units.members[unit][0]].text)
        return self._known[unit]

    def __call__(self) -> list[str | None]:
        return [self.of(u) for u in range(len(self.units.members))]


def _advancing(steps: Steps) -> Progress:
    """A progress callback for one stage that moves ``steps`` by what the stage reports done."""
    done = 0

    def embedded(n_done: int, _total: int) -> None:
        nonlocal done
        steps.advance(n_done - done)
        done = n_done

    return embedded


def _meaning_edges(
    pairs: list[tuple[int, int, float]],
    script: Callable[[int], str | None],
    semantic_threshold: float,
    translation_threshold: float,
) -> list[Edge]:
    """Embedding pairs as ``semantic`` edges (same script, cosine >= semantic_threshold) and ``translation``
    edges (two scripts, cosine >= translation_threshold); text without letters counts as the same script."""
    out: list[Edge] = []
    for x, y, s in pairs:
        a, b = script(x), script(y)
        translated = None not in (a, b) and a != b
        if s >= (translation_threshold if translated else semantic_threshold):
            out.append((x, y, s, "translation" if translated else "semantic"))
    return out


def _text_clusters(
    units: Units, links: _Links, member: Callable[[int], Member], n_checked: int, leakage: bool
) -> tuple[list[Cluster], dict[int, int]]:
    """The exact, lexical, semantic and translation clusters, and each clustered item position's component root."""
    full = links.full
    components: dict[int, list[int]] = {}
    for u in range(len(units.members)):
        if not links.empty[u]:
            components.setdefault(full.find(u), []).append(u)
    edges_of: dict[int, list[Edge]] = {}
    for e in links.edges:
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
            signal = _connecting_signal(comp, links)
        clusters.append(_build_cluster(comp, edges_of.get(root, []), signal, units, member, n_checked))
        for u in comp:
            for pos in units.members[u]:
                text_cluster[pos] = root
    return clusters, text_cluster


def _connecting_signal(comp: list[int], links: _Links) -> str:
    """The strongest signal whose pairs (with the stronger ones) connect all of ``comp``."""
    if len({links.lex.find(u) for u in comp}) == 1:
        return "lexical"
    return "semantic" if len({links.same_language.find(u) for u in comp}) == 1 else "translation"


def _build_cluster(
    comp: list[int],
    edges: list[Edge],
    signal: str,
    units: Units,
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
