"""Repetition control while drafting: a new draft that nearly copies the dataset or a kept draft is not added.

Asked for many items on one theme, a model repeats itself (the Indic team rejected such goals by hand). Each
batch of new drafts is checked, draft by draft in order, against the items seen so far: the dataset's items
and every draft kept before it (in this batch or an earlier one). A draft is rejected

* **lexically** when its character 3-gram Jaccard with a seen item reaches ``threshold`` (the ``dedup``
  lexical signal: folded goal and solutions, 0.8 by default), exactly as ``find_duplicates`` compares two
  units (``core/dedup/lexical_index.py``: the dataset side is hashed once per run, not once per batch);
* else **semantically**, when an embedder is given, by the ``semantic`` signal's rule within one script
  (``core/dedup/semantic_index.py``: the dataset embedded once per run, through the workspace's cache).

A rejected draft is not a seen item: the drafts after it are compared with what was kept, so the answers do
not depend on how the drafts were cut into batches. A translation is checked the same way, except that its
own source, when the dataset holds it, never counts against it (``sources``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import DEFAULT_THRESHOLD
from piqa_tui.core.dedup.folding import folded_fields
from piqa_tui.core.dedup.lexical import NGRAM, shingle
from piqa_tui.core.dedup.lexical_index import LexicalIndex

if TYPE_CHECKING:
    from piqa_tui.core.dedup.semantic import Embedder, Progress
    from piqa_tui.core.dedup.semantic_index import SemanticIndex

KEPT, LEXICAL, SEMANTIC = "kept", "lexical", "semantic"  # what became of a draft


@dataclass(frozen=True)
class Verdicts:
    """What became of each draft of a batch, in order: :data:`KEPT`, :data:`LEXICAL` or :data:`SEMANTIC`."""

    of: tuple[str, ...]

    @property
    def kept(self) -> list[bool]:
        return [v == KEPT for v in self.of]

    def count(self, verdict: str) -> int:
        return self.of.count(verdict)


class RepetitionGate:
    """The items seen so far (the dataset, then each kept draft); :meth:`check` says which new drafts are new.

    ``embedder``: also reject paraphrases (None: lexical only); ``semantic_threshold``: None takes the
    model's own; ``progress(done, total)`` follows the embedding of ``items``.
    """

    def __init__(
        self,
        items: Sequence[Item],
        threshold: float = DEFAULT_THRESHOLD,
        embedder: Embedder | None = None,
        semantic_threshold: float | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.threshold = threshold
        seen = [folded_fields(item) for item in items]
        self.lexical = LexicalIndex(seen, threshold)
        self.keys: dict[tuple[str, ...], list[int]] = {}  # an item's folded fields -> its rows (a source's)
        for row, fields in enumerate(seen):
            self.keys.setdefault(fields, []).append(row)
        self.semantic: SemanticIndex | None = None
        if embedder is not None:
            from piqa_tui.core.dedup.semantic_index import SemanticIndex

            self.semantic = SemanticIndex(embedder, [item.text for item in items], semantic_threshold, progress)
        self.rejected = {LEXICAL: 0, SEMANTIC: 0}

    def admit(self, drafts: Sequence[Item]) -> list[bool]:
        """For each draft in order, whether it is kept (and joins the seen items) or is a near copy."""
        return self.check(drafts).kept

    def check(self, drafts: Sequence[Item], sources: Sequence[Item | None] | None = None) -> Verdicts:
        """What becomes of each draft, in order; the kept ones join the seen items. ``sources[k]``: the item
        draft ``k`` translates, which never counts against it."""
        if not drafts:
            return Verdicts(())
        fields = [folded_fields(item) for item in drafts]
        own = [self._rows_of(source) for source in (sources or [None] * len(drafts))]
        verdicts = self._lexical(fields, own)
        if self.semantic is not None:
            self._semantic(self.semantic, drafts, verdicts, own)
        kept = [k for k, v in enumerate(verdicts) if v == KEPT]
        first = len(self.lexical)
        self.lexical.add([fields[k] for k in kept])
        for n, k in enumerate(kept):
            self.keys.setdefault(fields[k], []).append(first + n)
        for verdict in (LEXICAL, SEMANTIC):
            self.rejected[verdict] += verdicts.count(verdict)
        return Verdicts(tuple(verdicts))

    def _rows_of(self, source: Item | None) -> frozenset[int]:
        return frozenset(self.keys.get(folded_fields(source), ())) if source is not None else frozenset()

    def _lexical(self, fields: list[tuple[str, ...]], own: list[frozenset[int]]) -> list[str]:
        """Each draft against the seen items, then against the drafts of the batch kept before it."""
        import numpy as np

        offsets, grams = shingle(fields, NGRAM)
        units = [grams[offsets[k] : offsets[k + 1]] for k in range(len(fields))]
        verdicts: list[str] = []
        for k, unit in enumerate(units):
            rows, _ = self.lexical.similar(unit)
            copies = set(rows.tolist()) - own[k]
            for j in range(k):
                if not copies and verdicts[j] == KEPT and len(unit) and len(units[j]):
                    shared = len(np.intersect1d(unit, units[j], assume_unique=True))
                    if shared / max(len(unit) + len(units[j]) - shared, 1) >= self.threshold - 1e-12:
                        copies.add(-1 - j)
            verdicts.append(LEXICAL if copies else KEPT)
        return verdicts

    @staticmethod
    def _semantic(index: SemanticIndex, drafts: Sequence[Item], verdicts: list[str], own: list[frozenset[int]]) -> None:
        """Mark :data:`SEMANTIC` the drafts kept lexically that are alike a seen item's or a kept draft's
        vector; add the ones still kept to ``index``. Only the drafts kept lexically are embedded."""
        candidates = [k for k, v in enumerate(verdicts) if v == KEPT]
        new = index.embed([drafts[k].text for k in candidates])
        for n, k in enumerate(candidates):
            rows, _ = index.near(new, n)
            earlier = any(verdicts[candidates[m]] == KEPT and index.alike(new, n, m) for m in range(n))
            if earlier or set(rows.tolist()) - own[k]:
                verdicts[k] = SEMANTIC
        index.add(new, [n for n, k in enumerate(candidates) if verdicts[k] == KEPT])
