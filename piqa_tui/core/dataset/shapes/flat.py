"""The flat shape: one column per value, as TSV, CSV, Parquet and most JSONL files are; rows read and written as is.

No file is recognised as flat by looking: it is what a file is when no nested shape recognises its rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from piqa_tui.core.dataset.shapes.kind import FLAT


class Flat:
    """Rows as they are (see the module docstring)."""

    name = FLAT
    formats: tuple[str, ...] = ()

    def recognises(self, rows: Sequence[dict[str, object]]) -> bool:
        return False

    def flatten(self, row: dict[str, object]) -> dict[str, object]:
        return row

    def nest(self, flat: dict[str, object]) -> dict[str, object]:
        return flat
