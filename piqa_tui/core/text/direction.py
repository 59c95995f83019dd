"""Which way a paragraph runs: detected from its letters, or set for a dataset or a column.

Light on purpose (no Rich, no shaping): the config file and the workspace
name directions without loading the display adapter (``core.text.bidi``),
which lays text out in the direction chosen here.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from bidi import get_base_level


class Direction(StrEnum):
    """A paragraph's direction: detected (``auto``) or set for a dataset or a column."""

    AUTO = "auto"
    RTL = "rtl"
    LTR = "ltr"


DIRECTION_CYCLE = (Direction.AUTO, Direction.RTL, Direction.LTR)


def detect_direction(text: str) -> Direction:
    """``rtl`` or ``ltr``: the direction a reader of the paragraph sees.

    UAX #9 takes the first strong character (rules P2/P3), which lays a Darija
    sentence that opens with a French word ("l'ampoule تاع الصالة تحرقت")
    out left to right.  Here the first strong character decides only while
    its direction has at least 30% of the paragraph's strong letters; below
    that, the direction most strong letters have decides.  So a leading
    "ok" or "l'ampoule" does not turn an Arabic sentence around, while
    "ديرها f (l'eau chaude)" stays right-to-left as UAX #9 has it.
    """
    counts = {"L": 0, "R": 0}
    first = ""
    for ch in text:
        kind = unicodedata.bidirectional(ch)
        if kind in ("L", "R", "AL"):
            side = "L" if kind == "L" else "R"
            counts[side] += 1
            first = first or side
    if not first:
        return Direction.RTL if text and get_base_level(text) == 1 else Direction.LTR
    if 10 * counts[first] < 3 * (counts["L"] + counts["R"]):
        first = "R" if counts["R"] > counts["L"] else "L"
    return Direction.RTL if first == "R" else Direction.LTR


def is_rtl(text: str, direction: Direction | str = Direction.AUTO) -> bool:
    """True when ``text`` is laid out right to left: as set, or detected (``detect_direction``)."""
    direction = Direction(direction)
    if direction is Direction.AUTO:
        direction = detect_direction(text)
    return direction is Direction.RTL


@dataclass(frozen=True)
class Directions:
    """The direction set for a dataset and for some of its columns; unset means ``auto``.

    Columns are named as the program knows them: ``prompt``, ``solutions``
    (every solution column), ``note``, or a metadata column's own name.
    """

    dataset: Direction = Direction.AUTO
    columns: tuple[tuple[str, Direction], ...] = ()

    def of(self, field: str) -> Direction:
        """The direction of one field (``solution2`` counts as ``solutions``, ``meta:X`` as ``X``)."""
        column = column_of(field)
        for name, direction in self.columns:
            if name == column:
                return direction
        return self.dataset

    def with_column(self, column: str, direction: Direction | str) -> Directions:
        """A copy with ``column`` set to ``direction``."""
        column = column_of(column)
        kept = tuple((name, d) for name, d in self.columns if name != column)
        return Directions(self.dataset, tuple(sorted((*kept, (column, Direction(direction))))))


def column_of(field: str) -> str:
    """The name a direction is set under for a field of the item view."""
    if field.startswith("solution"):
        return "solutions"
    return field.removeprefix("meta:")
