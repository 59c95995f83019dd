"""A workspace file checked and copied as a whole: ``workspace check`` and ``workspace backup``.

Both read the file on a connection of their own that never writes, so they can
run while annotators work. The backup is SQLite's online backup: one consistent
snapshot (the WAL included), written as a single self-contained file.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from piqa_tui.core.errors import WorkspaceError
from piqa_tui.core.workspace.log import copy_database, file_uri, storage_error
from piqa_tui.core.workspace.replay import NEW_ITEM_KIND

# Items the log added and then withdrew (a draft undone: its latest ``new-item`` event, in the log's order,
# holds no fields); ``{order}`` is the order the events are in force in.
_WITHDRAWN = (
    "SELECT item_id FROM (SELECT item_id, new, row_number() OVER (PARTITION BY item_id ORDER BY {order}) AS latest"
    f" FROM events WHERE kind = '{NEW_ITEM_KIND}') WHERE latest = 1 AND coalesce(new, '') = ''"
)
# What a workspace holds, by the SQL that counts it; a table an old workspace lacks counts 0. The items are
# those the events name, less the drafts undone: an item the log no longer holds is no item.
_COUNTS = {
    "events": "SELECT count(*) FROM events",
    "votes": "SELECT count(*) FROM events WHERE kind = 'vote'",
    "annotators": "SELECT count(DISTINCT annotator) FROM events",
    "items": f"SELECT count(DISTINCT item_id) FROM events WHERE item_id IS NOT NULL AND item_id NOT IN ({_WITHDRAWN})",
    "scores": "SELECT count(*) FROM model_scores",
}


@dataclass(frozen=True)
class Contents:
    """The result of ``check_workspace``: whether SQLite finds the file sound, and what it holds."""

    path: str
    ok: bool
    problems: list[str]
    workspace_id: str | None
    dataset: str | None
    counts: dict[str, int]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _open(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise WorkspaceError(f"{path}: no such workspace file; give the .piqa.sqlite file")
    try:
        return sqlite3.connect(f"{file_uri(path)}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        raise storage_error(path, exc, "could not read it") from None


def check_workspace(path: Path) -> Contents:
    """SQLite's ``integrity_check`` over the whole file, then what it holds (counted only when sound)."""
    conn = _open(path)
    try:
        try:
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        except sqlite3.DatabaseError as exc:  # not a database at all, or a header too damaged to read
            return Contents(str(path), False, [str(exc)], None, None, {})
        problems = [p for p in problems if p != "ok"]
        if problems:
            return Contents(str(path), False, problems, None, None, {})
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"events", "meta"} <= tables:
            return Contents(
                str(path), False, ["a SQLite database, but not a piqa-tui workspace (no events table)"], None, None, {}
            )
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        counts = {name: _count(conn, sql, tables) for name, sql in _COUNTS.items()}
        return Contents(str(path), True, [], meta.get("workspace_id"), meta.get("dataset_path"), counts)
    finally:
        conn.close()


def _count(conn: sqlite3.Connection, sql: str, tables: set[str]) -> int:
    table = sql.split(" FROM ")[1].split()[0]
    if table not in tables:
        return 0
    columns = {row[1] for row in conn.execute("PRAGMA table_info(events)")}
    order = "clock DESC, uid DESC" if {"clock", "uid"} <= columns else "seq DESC"  # the log's order, or an old one's
    return int(conn.execute(sql.replace("{order}", order)).fetchone()[0])


def backup_workspace(path: Path, out: Path) -> Contents:
    """Copy ``path`` to ``out`` while others may be writing; returns what the copy holds (checked)."""
    conn = _open(path)
    try:
        copy_database(conn, out)
    except sqlite3.Error as exc:
        raise storage_error(path, exc, "no copy was made") from None
    except OSError as exc:
        raise WorkspaceError(f"{out}: cannot write the copy ({exc.strerror}); choose another place") from None
    finally:
        conn.close()
    return check_workspace(out)
