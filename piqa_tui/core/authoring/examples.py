"""The dataset's items a draft prompt shows as examples: those most like what is asked for.

As the Indic team retrieved in-context examples by similarity to the taxonomy values asked for, a draft request
for ``category: cooking; country: Morocco`` is shown the items that share the most of those metadata values,
and among them those whose text is nearest the values' words (the character 3-gram Jaccard of
``core.dedup.lexical``, the duplicate search's own measure, so Darija spellings and Tamil word forms count).
Items still at ``draft`` are left out: an example should be an item people have already kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.folding import fold, folded_fields
from piqa_tui.core.dedup.lexical import jaccard, shingle


def similar_items(items: Sequence[Item], wanted: Mapping[str, str], k: int) -> list[Item]:
    """Up to ``k`` of ``items`` nearest the metadata ``wanted``: most shared values first, then nearest text."""
    if k <= 0 or not items:
        return []
    import numpy as np

    query = tuple(fold(value) for value in wanted.values() if value.strip()) or ("",)
    offsets, grams = shingle([query, *(folded_fields(item) for item in items)])
    others = np.arange(1, len(items) + 1, dtype=np.int64)
    near = jaccard(offsets, grams, np.zeros(len(items), dtype=np.int64), others)
    shared = [sum(item.meta.get(column) == value for column, value in wanted.items()) for item in items]
    order = sorted(range(len(items)), key=lambda i: (-shared[i], -float(near[i]), i))
    return [items[i] for i in order[:k]]
