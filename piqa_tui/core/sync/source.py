"""Another machine's workspace file, opened to be read and never written.

The file may sit on a read-only mount (a USB stick, a share) and its last work may still be in its ``-wal``: SQLite's
``immutable=1`` reads it without a lock and without making ``-wal``/``-shm`` files beside it, but also without
that ``-wal``. So a file with a ``-wal`` is copied with it into a private temporary folder and the copy opened
(SQLite folds the ``-wal`` in there), and a file with a hot rollback journal is refused with what to do. Only
real tables are read (an ``events`` that is a view is refused: it could compute anything, or never end); the
reading stops after ``READ_SECONDS`` (an SQLite progress handler) and its page cache is bounded.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from piqa_tui.core.errors import InputError
from piqa_tui.core.workspace.log import Workspace, file_uri

READ_SECONDS = 300.0  # reading another machine's log: minutes at most, whatever its file holds
_CACHE_KIB = 64 * 1024  # the source connection's page cache
_CHECK_EVERY = 10_000  # SQLite virtual-machine steps between two looks at the clock
_TABLES = ("events", "meta")
_WHAT = "name another copy's DATASET.piqa.sqlite"


class SourceRefused(InputError):
    """The other copy's file cannot be merged: one line naming it and what to do; nothing was merged."""


@contextmanager
def open_source(path: Path) -> Iterator[Workspace]:
    """The workspace at ``path`` opened read-only and immutable (see the module's docstring), closed after."""
    if not path.is_file():
        raise SourceRefused(f"{path}: no such workspace file; {_WHAT}")
    journal = Path(f"{path}-journal")
    if journal.is_file() and journal.stat().st_size:
        raise SourceRefused(
            f"{path}: its last transaction is unfinished (a {journal.name} beside it); open it once with piqa-tui "
            "where it was made (or copy it with piqa-tui workspace backup) and merge that; nothing was merged"
        )
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size:
        with tempfile.TemporaryDirectory(prefix="piqa-merge-") as folder:
            copy = Path(folder) / "source.piqa.sqlite"
            try:
                shutil.copyfile(path, copy)
                shutil.copyfile(wal, Path(f"{copy}-wal"))
            except OSError as exc:
                raise SourceRefused(
                    f"{path}: its last work is in {wal.name} and copying both to read them failed ({exc.strerror}); "
                    "open it once with piqa-tui where it was made, or copy it with piqa-tui workspace backup"
                ) from None
            with _opened(path, sqlite3.connect(copy, isolation_level=None, check_same_thread=False)) as source:
                yield source
        return
    uri = f"{file_uri(path)}?mode=ro&immutable=1"
    with _opened(path, sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)) as source:
        yield source


@contextmanager
def _opened(path: Path, conn: sqlite3.Connection) -> Iterator[Workspace]:
    """``conn`` checked to be a workspace of real tables, read within ``READ_SECONDS``, as a read-only Workspace."""
    try:
        conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        deadline = time.monotonic() + READ_SECONDS
        conn.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_EVERY)
        _check_tables(path, conn)
        source = Workspace(path, connection=conn)  # an older file's ids and clocks: a temporary view
        conn.execute("PRAGMA query_only = 1")
        conn.execute("SELECT seq, uid, clock FROM events LIMIT 1").fetchall()  # the view, for an older file
        conn.execute("SELECT key, value FROM main.meta LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        conn.close()
        raise _unreadable(path, exc) from None
    except BaseException:
        conn.close()
        raise
    try:
        yield source
    except sqlite3.Error as exc:
        raise _unreadable(path, exc) from None
    finally:
        conn.close()


def _check_tables(path: Path, conn: sqlite3.Connection) -> None:
    """Refuse a file whose ``events`` or ``meta`` is missing or no real table (a view, a virtual table)."""
    found = dict(conn.execute("SELECT name, type FROM main.sqlite_master WHERE name IN (?, ?)", _TABLES).fetchall())
    for name in _TABLES:
        if name not in found:
            raise SourceRefused(f"{path}: not a piqa-tui workspace (no {name} table); {_WHAT}")
        sql = conn.execute("SELECT sql FROM main.sqlite_master WHERE name = ?", (name,)).fetchone()[0] or ""
        if found[name] != "table" or sql.lstrip().upper().startswith("CREATE VIRTUAL"):
            raise SourceRefused(
                f"{path}: its {name} is a {found[name]}, not the table piqa-tui writes; a workspace made by piqa-tui "
                "has none; nothing was merged"
            )


def _unreadable(path: Path, exc: sqlite3.Error) -> SourceRefused:
    """SQLite's error reading the other copy, blamed on that file (never on this workspace)."""
    if isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc):
        return SourceRefused(f"{path}: reading it took over {READ_SECONDS:g} s; nothing was merged")
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or isinstance(exc, sqlite3.DatabaseError):
        return SourceRefused(f"{path}: not a piqa-tui workspace or damaged ({exc}); {_WHAT}; nothing was merged")
    return SourceRefused(f"{path}: cannot be read ({exc}); nothing was merged")
