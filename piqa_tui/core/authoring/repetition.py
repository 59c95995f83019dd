"""Repetition control while drafting: a new draft that nearly copies the dataset or an earlier draft is not added.

Asked for many items on one theme, a model repeats itself (the Indic team rejected such goals by hand). Each
batch of new drafts is checked with the project's lexical duplicate search (``core.dedup.lexical``: character
3-gram Jaccard over the folded goal and solutions, the threshold ``dedup`` uses) against the dataset's items
and every draft admitted before it. A draft whose duplicate cluster already holds an item or an admitted draft is
rejected, so of a batch of near copies the first is kept; the run counts the rejections.
"""

from __future__ import annotations

from collections.abc import Sequence

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import DEFAULT_THRESHOLD
from piqa_tui.core.dedup.folding import folded_fields
from piqa_tui.core.dedup.lexical import UnionFind, search_lexical


class RepetitionGate:
    """The items seen so far (the dataset, then each admitted draft); ``admit`` says which new drafts are new."""

    def __init__(self, items: Sequence[Item], threshold: float = DEFAULT_THRESHOLD) -> None:
        self.threshold = threshold
        self.seen: list[tuple[str, ...]] = [folded_fields(item) for item in items]
        self.rejected = 0

    def admit(self, drafts: Sequence[Item]) -> list[bool]:
        """For each draft in order, whether it is kept (and joins the seen items) or is a near copy."""
        if not drafts:
            return []
        new = [folded_fields(item) for item in drafts]
        fields = self.seen + new
        found = search_lexical(fields, self.threshold)
        clusters = UnionFind(len(fields))
        for a, b in zip(found.a.tolist(), found.b.tolist()):
            clusters.union(a, b)
        first_new = len(self.seen)
        taken = {clusters.find(u) for u in range(first_new)}  # the clusters that hold a seen item
        kept: list[bool] = []
        for offset in range(len(new)):
            root = clusters.find(first_new + offset)
            kept.append(root not in taken)
            if kept[-1]:
                taken.add(root)
                self.seen.append(new[offset])
        self.rejected += kept.count(False)
        return kept
