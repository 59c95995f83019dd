"""What a workspace remembers about how its dataset is read: paragraph directions and where each annotator was.

Kept in the workspace's ``meta`` table (one key each), not in the event log:
they change how the dataset is shown and where the TUI reopens, never the
data, so undo, exports and agreement never see them.  Keys:

* ``direction`` and ``direction:COLUMN``: ``auto``, ``rtl`` or ``ltr`` for the
  whole dataset and for one column (``prompt``, ``solutions``, ``note`` or a
  metadata column's name), set from the TUI.
* ``position:ANNOTATOR``: the id of the item the annotator was on.
* ``mapping``: the column mapping chosen in the TUI's mapping dialog, in
  ``--map`` form; used whenever no ``--map`` is given (``parse_mapped``). One
  that names a column the file no longer has (renamed or dropped since) is one
  line saying so, which the CLI ends on and the TUI answers with its mapping
  dialog, whose choice replaces the kept mapping.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from piqa_tui.core.dataset.layout import format_mapping, parse_mapping, shown_columns
from piqa_tui.core.dataset.reading import Dataset, SourceFile, parse_dataset
from piqa_tui.core.errors import LayoutError, MappedColumnMissing
from piqa_tui.core.text.direction import Direction, Directions
from piqa_tui.core.workspace.log import Workspace

_DIRECTION = "direction"
_POSITION = "position:"
MAPPING_KEY = "mapping"


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


def stored_mapping(ws_path: Path) -> dict[str, str] | None:
    """The mapping kept in the workspace file at ``ws_path``, read before the dataset (and the workspace) opens.

    ``None`` when there is none or the file cannot be read here; opening the
    workspace then reports what is wrong with it.
    """
    try:
        conn = sqlite3.connect(f"file:{ws_path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (MAPPING_KEY,)).fetchone()
        finally:
            conn.close()
        return parse_mapping(row[0]) if row else None
    except (sqlite3.Error, LayoutError):
        return None


def parse_mapped(source: SourceFile, ws_path: Path, mapping: dict[str, str] | None = None) -> Dataset:
    """``source`` parsed under ``mapping``, else under the mapping the workspace at ``ws_path`` keeps (if any).

    A kept mapping naming a column the file no longer has raises ``LayoutError`` in one line: what (the
    column), where (the dataset and its workspace) and what to do (map the columns again).
    """
    kept = stored_mapping(ws_path) if mapping is None and ws_path.is_file() else None
    try:
        return parse_dataset(source, mapping or kept)
    except MappedColumnMissing as exc:
        if kept is None:
            raise
        raise LayoutError(
            f"{source.path}: the column mapping kept in its workspace ({ws_path}) names column '{exc.column}', "
            f"which the file no longer has (its columns: {shown_columns(exc.columns)}); map the columns again: "
            "the TUI asks and keeps the new mapping, or give --map prompt=COL,solutions=COL|COL,label=COL"
        ) from None


def store_mapping(ws: Workspace | None, mapping: dict[str, str]) -> None:
    """Keep ``mapping`` so that the next open needs no ``--map``."""
    if ws is not None:
        ws.set_meta({MAPPING_KEY: format_mapping(mapping)})
