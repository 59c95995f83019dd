"""Items as polars columns, for the passes that look at every item at once (validate, stats).

Polars runs string tests in Rust over whole columns, which is what keeps
``validate`` and ``stats`` well under a second on 100,000 items.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import SCRIPTS

if TYPE_CHECKING:
    import polars as pl


def text_frame(items: list[Item]) -> pl.DataFrame:
    """Columns ``prompt``, ``s0`` … ``s{k-1}`` (k = the most solutions any item has; null where an item has fewer)."""
    import polars as pl

    width = max((len(i.solutions) for i in items), default=2)
    names = ["prompt", *(f"s{k}" for k in range(width))]
    return pl.DataFrame(
        {
            "prompt": [i.prompt for i in items],
            **{f"s{k}": [i.solutions[k] if k < len(i.solutions) else None for i in items] for k in range(width)},
        },
        schema={name: pl.String for name in names},
    )


def scripts_maybe_present(texts: Iterable[str], chunk: int = 1 << 21) -> list[str]:
    """Names of ``SCRIPTS`` that may occur in ``texts``: a superset, found in a few numpy passes.

    Every ``SCRIPTS`` range lies in the Basic Multilingual Plane, so a
    character's UTF-8 lead byte and the byte after it name the 64-code-point
    block it is in; a script whose ranges touch no block seen is certainly
    absent. The caller counts the candidates exactly. Text goes through in
    chunks of about ``chunk`` characters, so memory stays flat.
    """
    import numpy as np

    seen = np.zeros(1024, dtype=bool)
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= chunk:
            _mark_blocks("\n".join(batch), seen)
            batch, size = [], 0
    if batch:
        _mark_blocks("\n".join(batch), seen)
    present = []
    for name, ranges in SCRIPTS.items():
        if any(seen[lo >> 6 : (hi >> 6) + 1].any() for lo, hi in _spans(ranges)):
            present.append(name)
    return present


def _mark_blocks(text: str, seen) -> None:  # noqa: ANN001 (a numpy bool array of 1024 blocks)
    import numpy as np

    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    lead = np.flatnonzero((data >= 0xC2) & (data < 0xF0))
    lead = lead[lead + 1 < data.size]
    first, second = data[lead].astype(np.uint32), data[lead + 1].astype(np.uint32)
    two = first < 0xE0  # 110xxxxx 10yyyyyy: U+0080-U+07FF
    block = np.where(two, (((first & 0x1F) << 6) | (second & 0x3F)) >> 6, ((first & 0x0F) << 6) | (second & 0x3F))
    seen |= np.bincount(block, minlength=1024)[:1024] > 0
    folded = data | 0x20
    seen[1] |= bool(np.any((folded >= ord("a")) & (folded <= ord("z"))))  # ASCII letters (U+0040-U+007F)


def _spans(ranges: str) -> list[tuple[int, int]]:
    """``"A-Za-z\\u00c0-\\u024f"`` as code point pairs."""
    spans, i = [], 0
    while i < len(ranges):
        if i + 2 < len(ranges) and ranges[i + 1] == "-":
            spans.append((ord(ranges[i]), ord(ranges[i + 2])))
            i += 3
        else:
            spans.append((ord(ranges[i]), ord(ranges[i])))
            i += 1
    return spans
