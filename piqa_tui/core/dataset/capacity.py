"""What a dataset's layout can hold: as many solutions per item as it has solution columns.

A file with three option columns (ArabCulture's ``option_a``..``option_c``) cannot hold a fourth solution:
an item written with one would lose it on export, and a validator's screen, which has one block per solution
column, would never show it. Every path that adds items asks ``solutions_refused`` first and refuses in one
line; writing asks ``refuse_overflow`` and refuses rather than drop text; voting counts only the solutions on
screen (``shown_solutions``).
"""

from __future__ import annotations

from collections.abc import Iterable

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.layout import Layout
from piqa_tui.core.errors import ExportError

NAMED = 3  # items named in a refusal; the rest are counted


def room(layout: Layout) -> int:
    """The most solutions an item of this layout can have: one per solution column."""
    return len(layout.solutions)


def columns_text(layout: Layout) -> str:
    """``3 solution columns (option_a, option_b, option_c)``."""
    count = room(layout)
    return f"{count} solution column{'s' * (count != 1)} ({', '.join(layout.solutions)})"


def solutions_refused(layout: Layout, count: int) -> str | None:
    """Why an item of ``count`` solutions cannot join a dataset of ``layout`` (None: it fits)."""
    if count <= room(layout):
        return None
    return f"the dataset has {columns_text(layout)}: an item here has at most {room(layout)} solutions, not {count}"


def shown_solutions(layout: Layout, item: Item) -> int:
    """How many of the item's solutions a screen of this layout shows (one block per solution column)."""
    return min(len(item.solutions), room(layout))


def overflowing(layout: Layout, items: Iterable[Item]) -> list[Item]:
    """The items with more solutions than the layout has columns, in the order given."""
    most = room(layout)
    return [item for item in items if len(item.solutions) > most]


def refuse_overflow(layout: Layout, items: Iterable[Item], target: str) -> None:
    """``ExportError`` when writing ``items`` to ``target`` would drop a solution no column can hold."""
    over = overflowing(layout, items)
    if not over:
        return
    named = ", ".join(f"{item.id} ({len(item.solutions)} solutions)" for item in over[:NAMED])
    more = f" and {len(over) - NAMED} more" if len(over) > NAMED else ""
    raise ExportError(
        f"{target} has {columns_text(layout)}, so writing it would drop a solution of {named}{more}; "
        "undo those items, or flag them 'remove' and export with --drop-flagged"
    )
