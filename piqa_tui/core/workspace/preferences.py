"""What a workspace remembers about how its dataset is read: paragraph directions and where each annotator was.

Kept in the workspace's ``meta`` table (one key each), not in the event log:
they change how the dataset is shown and where the TUI reopens, never the
data, so undo, exports and agreement never see them.  Keys:

* ``direction`` and ``direction:COLUMN``: ``auto``, ``rtl`` or ``ltr`` for the
  whole dataset and for one column (``prompt``, ``solutions``, ``note`` or a
  metadata column's name), set from the TUI.
* ``position:ANNOTATOR``: the id of the item the annotator was on.
"""

from __future__ import annotations

from piqa_tui.core.text.direction import Direction, Directions
from piqa_tui.core.workspace.log import Workspace

_DIRECTION = "direction"
_POSITION = "position:"


def stored_directions(ws: Workspace | None, under: Directions = Directions()) -> Directions:
    """``under`` (e.g. the config file's directions) with what the workspace stores set on top."""
    if ws is None:
        return under
    rows = ws.conn.execute("SELECT key, value FROM meta WHERE key = ? OR key LIKE ?", (_DIRECTION, _DIRECTION + ":%"))
    directions = under
    for key, value in rows.fetchall():
        if value not in Direction.__members__.values():
            continue  # written by a newer version: ignore rather than fail to open
        if key == _DIRECTION:
            directions = Directions(Direction(value), directions.columns)
        else:
            directions = directions.with_column(key.split(":", 1)[1], value)
    return directions


def store_direction(ws: Workspace | None, column: str | None, direction: Direction) -> None:
    """Remember ``direction`` for ``column`` (``None``: the whole dataset)."""
    if ws is not None:
        ws.set_meta({_DIRECTION if column is None else f"{_DIRECTION}:{column}": str(direction)})


def resume_position(ws: Workspace | None, annotator: str) -> str | None:
    """The id of the item ``annotator`` was on when they last left, if any."""
    return ws.get_meta(_POSITION + annotator) if ws is not None else None


def store_position(ws: Workspace | None, annotator: str, item_id: str) -> None:
    """Remember that ``annotator`` is on ``item_id``."""
    if ws is not None:
        ws.set_meta({_POSITION + annotator: item_id})
