"""The workspace: an append-only SQLite log of everything done to a dataset.

Every edit, vote, flag, note and decision is one row in ``events``, committed
before the user sees it take effect, so a killed process or a dropped SSH
connection loses nothing. WAL mode, a busy timeout and short ``BEGIN
IMMEDIATE`` transactions let several annotators' processes write at once.
The current state (and undo/redo) is derived from the log; see ``project``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import sqlite3
import tempfile
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from urllib.parse import quote

from piqa_tui.core.dataset.atomic import default_file_mode
from piqa_tui.core.errors import WorkspaceBusy, WorkspaceError, WorkspaceUnwritable
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.workspace.event_rules import CLOCK_LIMIT, RULES, check_event, latest_time
from piqa_tui.core.workspace.limits import check_value

SCHEMA_VERSION = "2"  # 2: events carry a global id (uid) and a Lamport clock, for merging copies
WORKSPACE_SUFFIX = ".piqa.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    annotator TEXT NOT NULL,
    kind TEXT NOT NULL,
    item_id TEXT,
    field TEXT,
    old TEXT,
    new TEXT,
    action INTEGER,
    note TEXT,
    uid TEXT,
    clock INTEGER
);
CREATE INDEX IF NOT EXISTS events_by_item ON events(item_id);
CREATE INDEX IF NOT EXISTS events_by_kind ON events(kind, seq);
CREATE UNIQUE INDEX IF NOT EXISTS one_vote_per_instant
    ON events(item_id, annotator, time, new) WHERE kind = 'vote';
CREATE TABLE IF NOT EXISTS row_ids(row INTEGER PRIMARY KEY, id TEXT NOT NULL, content TEXT NOT NULL);
"""
# Made after the migration has added the columns to an older workspace.
_ORDER_SCHEMA = """
CREATE UNIQUE INDEX IF NOT EXISTS events_by_uid ON events(uid);
CREATE INDEX IF NOT EXISTS events_in_order ON events(clock, uid);
"""
# Every new event's global id and clock, set per row inside the recording transaction (see Workspace._stamps):
# the clock is one above every clock the log holds (its own and any merged in), so locally seq order is clock
# order. The id is a random prefix drawn per connection and a count: unique everywhere, and one connection's ids
# are neighbours in the id index (wholly random ids made a 300,000-vote import twice as slow).
_NEXT_SEQ = "(SELECT COALESCE(MAX(seq), 0) FROM events) + 1"
NEW_UID = "'{writer}' || printf('%016x', " + _NEXT_SEQ + ")"
_CLOCK_GAP = "SELECT (SELECT COALESCE(MAX(clock), 0) FROM events) - (SELECT COALESCE(MAX(seq), 0) FROM events)"
# The canonical order of the log, the same on every machine that holds the same events.
CANONICAL = "clock, uid"
EVENT_COLUMNS = "seq, time, annotator, kind, item_id, field, old, new, action, note"  # Event's fields, in order


def value_name(kind: str, field: str | None, item_id: str | None) -> str:
    """How a one-line error names the value of an event: ``the note on x3``, ``the answer 'q1' on x3``."""
    named = kind if field in (None, kind, "item") else f"{kind} {field!r}"
    return f"the {named}" + (f" on {item_id}" if item_id else "")


def now() -> str:
    """The current time as ISO 8601 UTC with microseconds, the log's clock."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    time: str
    annotator: str
    kind: str
    item_id: str | None
    field: str | None
    old: str | None
    new: str | None
    action: int | None
    note: str | None


@dataclass(frozen=True, slots=True)
class Change:
    """One field change to record: part of an action that undo reverts as a whole.

    ``item_id`` is None for a decision about no single item (a duplicate cluster's, named by ``field``).
    """

    item_id: str | None
    field: str
    old: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class Part:
    """Changes of one kind with one note. An action is one or more parts: a compound action (a duplicate
    cluster resolved: its members flagged and its decision) is recorded in one transaction and undone as one."""

    kind: str
    changes: tuple[Change, ...]
    note: str | None = None


def default_location(dataset_path: Path) -> Path:
    """Beside the dataset when its folder is writable, else under the user data folder."""
    dataset_path = dataset_path.resolve()
    beside = dataset_path.with_name(dataset_path.name + WORKSPACE_SUFFIX)
    if beside.exists() or os.access(dataset_path.parent, os.W_OK):
        return beside
    return user_location(dataset_path)


def user_location(dataset_path: Path) -> Path:
    """The dataset's workspace under the user data folder (read-only folders, installed samples)."""
    from platformdirs import user_data_dir

    dataset_path = dataset_path.resolve()
    key = hashlib.sha1(os.fsencode(dataset_path)).hexdigest()[:12]  # a name not valid UTF-8 has bytes too
    return Path(user_data_dir("piqa-tui")) / "workspaces" / f"{dataset_path.name}-{key}{WORKSPACE_SUFFIX}"


DEFAULT_BUSY_TIMEOUT = 30.0  # seconds a write waits for another process's lock before giving up
EXIT_BUSY_TIMEOUT = 1.0  # the checkpoint on closing waits no longer: an exit never hangs on a busy peer
# A reader waits only for a lock that shuts out readers too (another process's exclusive locking mode,
# a WAL recovery); past this it reads the file without locking (see _connect_read_only).
READ_TIMEOUT = 2.0


class Workspace:
    """One connection to a workspace database (one per process and thread).

    ``read_only`` opens it without ever taking a lock or writing (validate, stats, agree work on a
    workspace on a read-only disk or one another process keeps locked). Every write first checks that
    the file on disk is still the one this connection has open (see ``file_identity``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float | None = None,
        read_only: bool = False,
        connection: sqlite3.Connection | None = None,
    ) -> None:
        """``connection``: one opened on the file already (another machine's copy, see ``core.sync.source``): read
        only, and read as it is, bad events included (the gate for incoming events judges them)."""
        self.path = Path(path)
        self.busy_timeout = DEFAULT_BUSY_TIMEOUT if busy_timeout is None else busy_timeout
        self.read_only = read_only or connection is not None
        self.notices: list[str] = []  # what happened to the file that the user should hear about
        self.detached: str | None = None  # why this connection may no longer record (the file was replaced)
        self.bad_events = 0  # events found breaking the log's rules on opening (see _leave_out_bad_events)
        try:
            if connection is not None:
                self.conn = connection
            else:
                self.conn = _connect_read_only(self.path, self.notices) if read_only else self._connect()
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc, "could not open it") from None
        except OSError as exc:
            raise WorkspaceUnwritable(
                f"{self.path}: cannot make the workspace ({exc.strerror}); choose a writable place with --workspace"
            ) from None
        self._identity = file_identity(self.path)
        self._finalizer = self._checkpoint_at_exit()
        self._writer = secrets.token_hex(8)
        self._new_uid = NEW_UID.format(writer=self._writer)
        # Events that break the log's rules (an older version merged them in): set aside, or read past (see left_out).
        self.left_out = self._leave_out_bad_events() if connection is None else []
        # ``events`` is a temporary view: an older workspace read without migrating it (its ids and clocks computed,
        # see _legacy_view), or one read past its bad events.
        self.legacy = self.read_only and _legacy_view(self.conn, self.left_out)

    def _leave_out_bad_events(self) -> list[int]:
        """The sequence numbers of the events that break the rules every event obeys (``event_rules``), named once in
        a notice: a writable workspace moves them to the table ``events_left_out`` (kept, never replayed), a read-only
        one reads past them. Nothing a file once let in ends every command in an error."""
        try:
            bad = bad_events(self.conn)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc, "could not open it") from None
        self.bad_events = len(bad)  # what another reader of the file (the votes read ahead) may still have seen
        if not bad:
            return []
        seq, reason = bad[0]
        what = f"{len(bad)} event{'s' if len(bad) != 1 else ''} break{'s' if len(bad) == 1 else ''} the log's rules"
        if self.read_only:
            self.notices.append(
                f"{self.path}: {what} (first: event {seq}: {reason}); left out of what this command reads; "
                "open it once to write and they are set aside for good"
            )
            return [s for s, _ in bad]
        with self.write() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS events_left_out AS SELECT *, '' AS reason FROM events WHERE 0")
            conn.executemany(
                "INSERT INTO events_left_out SELECT *, ? FROM events WHERE seq = ?", [(r, s) for s, r in bad]
            )
            conn.executemany("DELETE FROM events WHERE seq = ?", [(s,) for s, _ in bad])
        self.notices.append(
            f"{self.path}: {what} (first: event {seq}: {reason}); set aside in its table events_left_out and "
            "left out of the replay; check the copy it was merged from (piqa-tui workspace check)"
        )
        return []

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)  # idempotent, and takes no lock when the tables exist
            _migrate(conn)
            conn.executescript(_ORDER_SCHEMA)
            _ensure_meta(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise storage_error(self.path, exc, "could not open it") from None
        return conn

    def _checkpoint_at_exit(self) -> weakref.finalize | None:
        """A workspace nobody closed is checkpointed when it is collected or the interpreter exits
        (``weakref.finalize`` runs at exit), so every clean exit of a command leaves one complete file.
        The connection is left open: someone may still hold it."""
        if self.read_only:
            return None
        return weakref.finalize(self, checkpoint_connection, self.conn, self.busy_timeout)

    def close(self) -> None:
        """Checkpoint the WAL into the database file (so the ``.sqlite`` file alone holds everything) and close."""
        if self._finalizer is not None:
            self._finalizer.detach()
        close_connection(self.conn, not self.read_only)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction, taken at once so concurrent writers queue instead of failing.

        SQLite's errors become one-line ``WorkspaceError``s (busy, full disk, read-only), and the
        transaction is rolled back: nothing of a failed action is in the log or on screen.
        """
        if self.read_only:
            raise WorkspaceUnwritable(f"{self.path}: opened read-only; nothing was recorded")
        self.verify_file()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc, "nothing was recorded", self.busy_timeout) from None
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(self.conn)
            raise storage_error(self.path, exc, "nothing was recorded", self.busy_timeout) from None
        except BaseException:
            _rollback(self.conn)
            raise

    @contextmanager
    def waiting(self, seconds: float) -> Iterator[None]:
        """Wait at most ``seconds`` for another process's lock inside the block (a retry must not freeze a screen)."""
        saved, self.busy_timeout = self.busy_timeout, seconds
        self.conn.execute(f"PRAGMA busy_timeout={int(seconds * 1000)}")
        try:
            yield
        finally:
            self.busy_timeout = saved
            self.conn.execute(f"PRAGMA busy_timeout={int(saved * 1000)}")

    # ------------------------------------------------------- the file on disk

    def verify_file(self) -> None:
        """Check that the workspace file is still the one open here, before anything is recorded.

        Deleted: this connection still holds every event (an open file outlives its name), so it is
        written back to the path and the session goes on (a notice says so). Replaced by another file:
        that file is left alone, this session's copy is saved beside it and nothing more is recorded.
        """
        if self.detached:
            raise WorkspaceError(self.detached)
        identity = file_identity(self.path)
        if identity == self._identity:
            return
        if identity is None:
            self._restore_deleted()
        else:
            self._set_aside()

    def _restore_deleted(self) -> None:
        events = self.last_seq()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            copy_database(self.conn, self.path)
        except (OSError, sqlite3.Error) as exc:
            raise WorkspaceError(
                f"{self.path} was deleted while open and could not be written back ({exc}); "
                "keep this window open, free the folder, and try again"
            ) from None
        self._reconnect()
        self.notices.append(
            f"{self.path} was deleted while piqa-tui had it open; it was written back from this "
            f"session's copy ({events} events), nothing was lost"
        )

    def _set_aside(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        copy = self.path.with_name(f"{self.path.name}.recovered-{stamp}")
        try:
            copy_database(self.conn, copy)
            saved = f"this session's copy is saved as {copy}"
        except (OSError, sqlite3.Error) as exc:
            saved = f"this session's copy could not be saved ({exc}); keep this window open"
        self.detached = (
            f"{self.path} was replaced by another file while open; {saved}; nothing more is recorded here: "
            "quit and reopen, and bring the copy's votes over with `piqa-tui votes export` / `votes import`"
        )
        raise WorkspaceError(self.detached)

    def _reconnect(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
        _quiet_close(self.conn)
        self.conn = self._connect()
        self._identity = file_identity(self.path)
        self._finalizer = self._checkpoint_at_exit()

    def take_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices

    # ------------------------------------------------------------ meta & binding

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def workspace_id(self) -> str | None:
        """A random id made with the workspace: copies share it, another workspace does not."""
        return self.get_meta("workspace_id")

    def set_meta(self, values: dict[str, str]) -> None:
        with self.write() as conn:
            conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())

    def binding(self) -> tuple[str, int, str] | None:
        """(path, size, sha256) of the dataset file this workspace last saw, if any."""
        path, size, sha = (self.get_meta(k) for k in ("dataset_path", "dataset_size", "dataset_sha256"))
        return (path, int(size), sha) if path and size and sha else None

    def bind(self, path: Path, size: int, sha256: str) -> None:
        # SQLite holds text: a name that is not valid UTF-8 is kept with its odd bytes written \xNN
        name = os.fsencode(path.resolve()).decode("utf-8", "backslashreplace")
        self.set_meta({"dataset_path": name, "dataset_size": str(size), "dataset_sha256": sha256})

    # ------------------------------------------------------------------ row ids

    def row_ids(self) -> list[tuple[int, str, str]]:
        return self.conn.execute("SELECT row, id, content FROM row_ids ORDER BY row").fetchall()

    def set_row_ids(self, rows: Iterable[tuple[int, str, str]]) -> None:
        with self.write() as conn:
            conn.execute("DELETE FROM row_ids")
            conn.executemany("INSERT INTO row_ids(row, id, content) VALUES (?, ?, ?)", rows)

    # ------------------------------------------------------------------- events

    def _stamps(self, conn: sqlite3.Connection) -> str:
        """The SQL of a new row's id and clock in the transaction under way: the next sequence number plus the
        gap, taken once, between the highest clock and the highest sequence number, so the first row's clock is
        one above every clock and each next row's one more (one lookup per row, not two)."""
        return self._stamps_after(conn)[0]

    def _stamps_after(self, conn: sqlite3.Connection) -> tuple[str, str]:
        """``_stamps``, and the same SQL for a row that follows another inserted on this connection in the transaction
        under way: its sequence number is the last inserted row's plus one (``last_insert_rowid()``, which a row left
        out by OR IGNORE does not change), no look-up of the log's last row. A third of a bulk insert's time."""
        gap = int(conn.execute(_CLOCK_GAP).fetchone()[0])
        following = f"'{self._writer}' || printf('%016x', {_SEQ_AFTER_INSERT}), {_SEQ_AFTER_INSERT} + {gap}"
        return f"{self._new_uid}, {_NEXT_SEQ} + {gap}", following

    def append(
        self, annotator: str, kind: str, changes: list[Change], note: str | None = None, time: str | None = None
    ) -> int:
        """Append one action (one or more changes of one kind) and return its action id."""
        return self.append_action(annotator, [Part(kind, tuple(changes), note)], time)

    def append_action(self, annotator: str, parts: Iterable[Part], time: str | None = None) -> int:
        """Append one action made of ``parts``, all in one transaction, and return its action id.

        Every event carries the id (the sequence number of the first), so undo finds and reverts them
        together; the first part's kind is the action's kind on the undo stack.
        """
        parts = list(parts)
        if not any(part.changes for part in parts):
            raise WorkspaceError("nothing to record: an action needs at least one change")
        action = self.append_checked(annotator, lambda: parts, time)
        assert action is not None  # there was a change to record
        return action

    def append_checked(
        self, annotator: str, build: Callable[[], Iterable[Part]], time: str | None = None
    ) -> int | None:
        """Append the action ``build`` returns, calling it under the write lock: what it reads of the log is
        what the action is recorded on, whoever wrote last. It may raise (nothing is recorded) or return no
        change (None: nothing was). Returns the action id."""
        when = time or now()
        with self.write() as conn:
            rows = [(part.kind, change, part.note) for part in build() for change in part.changes]
            for kind, change, note in rows:  # before anything is written: a value over the bound records nothing
                check_value(change.new, value_name(kind, change.field, change.item_id))
                check_value(note, f"the note of a {kind}")
            checked([(kind, when, annotator, c.item_id, c.field, c.old, c.new, note) for kind, c, note in rows])
            action = None
            for kind, change, note in rows:
                cur = conn.execute(
                    "INSERT INTO events(time, annotator, kind, item_id, field, old, new, action, note, uid, clock)"
                    f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {self._stamps(conn)})",
                    (when, annotator, kind, change.item_id, change.field, change.old, change.new, action, note),
                )
                if action is None:
                    action = cur.lastrowid
                    conn.execute("UPDATE events SET action = ? WHERE seq = ?", (action, action))
        return action

    def append_marker(
        self,
        annotator: str,
        kind: str,
        action: int,
        compensation: Iterable[tuple[str, str | None, str, str | None, str | None, str | None]] = (),
        check: Callable[[], None] | None = None,
    ) -> int:
        """Append an undo/redo marker that points at ``action``, and in the same transaction the
        (kind, item_id, field, old, new, note) events that undo or redo it (see ``undo``), whose action
        is the marker's sequence number. ``check`` runs first, under the write lock: raising, it records nothing."""
        when = now()
        compensation = list(compensation)
        checked([(kind, when, annotator, None, None, None, None, None)])
        checked([(row[0], when, annotator, *row[1:]) for row in compensation])
        with self.write() as conn:
            if check is not None:
                check()
            cur = conn.execute(
                f"INSERT INTO events(time, annotator, kind, action, uid, clock) VALUES (?, ?, ?, ?, {self._stamps(conn)})",
                (when, annotator, kind, action),
            )
            marker = cur.lastrowid
            assert marker is not None  # set by every INSERT
            conn.executemany(
                "INSERT INTO events(time, annotator, kind, item_id, field, old, new, note, action, uid, clock)"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {self._stamps(conn)})",
                [(when, annotator, *event, marker) for event in compensation],
            )
        return marker

    def annotator_names(self, ordered: bool = True) -> list[str]:
        """Everyone who voted or adjudicated, in the order of their first such event (by clock, then name: the
        same on every machine that holds the same events); ``ordered=False``: in no set order, for a third of the
        cost on a large log (no sort by the first event)."""
        if not ordered:
            sql = "SELECT DISTINCT annotator FROM events WHERE kind IN ('vote', 'adjudicate')"
        else:
            sql = (
                "SELECT annotator FROM events WHERE kind IN ('vote', 'adjudicate') GROUP BY annotator"
                " ORDER BY min(clock), annotator"
            )
        return [name for (name,) in self.conn.execute(sql)]

    def insert_votes(self, votes: Iterable[tuple[str, str, str, str, str | None]], note: str | None = None) -> int:
        """Add (item_id, annotator, choice, time, solution key) votes; ones already recorded are skipped.
        Returns how many were new."""
        votes = votes if isinstance(votes, list) else list(votes)
        with self.write() as conn:
            before = conn.total_changes
            literal = conn.execute("SELECT quote(?)", (note,)).fetchone()[0]  # SQLite's own quoting of the note
            first, following = self._stamps_after(conn)  # while the clock index is there to answer
            insert = (  # the tuples as given and the note in the statement: no tuple made per vote
                "INSERT OR IGNORE INTO events(item_id, annotator, new, time, old, kind, field, note, uid, clock)"
                f" VALUES (?, ?, ?, ?, ?, 'vote', 'choice', {literal}, {{}})"
            ).format
            held = int(conn.execute(_LAST_SEQ).fetchone()[0])
            if held and 3 * _held_share(conn, votes) * len(votes) > held:  # a file imported again, grown: most here
                votes = _unseen_votes(conn, votes)
            if len(votes) <= held:  # a few on a log: the indexes stay
                _insert_in_order(conn, insert(first), insert(following), votes)
                return conn.total_changes - before
            # More votes than the log holds: the indexes are built again after the rows, the unique index of the votes
            # too. Were a vote one it skips (a repeat in the file, or one the log holds), building it again fails:
            # then all is undone back to the savepoint and done again without those votes.
            conn.execute("SAVEPOINT bulk_votes")
            try:
                with _indexes_rebuilt(conn, _BULK_INDEXES):
                    _insert_in_order(conn, insert(first), insert(following), votes)
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK TO bulk_votes")
                before = conn.total_changes  # which counts the rows undone too
                with _indexes_rebuilt(conn, _BULK_INDEXES):
                    _insert_in_order(conn, insert(first), insert(following), _unseen_votes(conn, votes))
            conn.execute("RELEASE bulk_votes")
            return conn.total_changes - before

    def insert_adjudications(self, rows: Iterable[tuple[str, ...] | tuple[str | None, ...]]) -> int:
        """Add (item_id, annotator, label, time, text chosen, reason[, field]) adjudications brought from elsewhere
        (the field, "label" when not given, names the adjudication each was made on); one already recorded (same
        item, annotator, time and label) is skipped. Returns how many were new."""
        rows = list(rows)
        checked([("adjudicate", r[3], r[1], r[0], r[6] if len(r) > 6 else "label", r[4], r[2], r[5]) for r in rows])
        with self.write() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT INTO events(item_id, annotator, new, time, old, note, field, kind, uid, clock)"
                f" SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, 'adjudicate', {self._stamps(conn)} WHERE NOT EXISTS (SELECT 1"
                " FROM events WHERE item_id = ?1 AND kind = 'adjudicate' AND annotator = ?2 AND time = ?4 AND new IS ?3)",
                ((*row[:6], row[6] if len(row) > 6 else "label") for row in rows),
            )
            return conn.total_changes - before

    def insert_events(self, kind: str, rows: Iterable[tuple[str, str, str, str, str]], note: str | None) -> int:
        """Add (time, annotator, item_id, field, new) events of ``kind`` brought from a file, in the order given:
        part of no action, so on nobody's undo stack (as imported votes). Returns how many."""
        rows = list(rows)
        for _, _, item_id, field, new in rows:
            check_value(new, value_name(kind, field, item_id))
        check_value(note, f"the note of the {kind} events")
        checked([(kind, time, who, item_id, name, None, new, note) for time, who, item_id, name, new in rows])
        with self.write() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT INTO events(time, annotator, item_id, field, new, kind, note, uid, clock)"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, {self._stamps(conn)})",
                [(*row, kind, note) for row in rows],
            )
            return conn.total_changes - before

    def event_rows(
        self, after: int = 0, upto: int | None = None, votes: bool = True, skip: Iterable[str] = ()
    ) -> sqlite3.Cursor:
        """Raw event tuples after a sequence number (and up to ``upto``), in canonical order (Event's fields).

        ``votes=False`` leaves the vote events out (``Project`` reads those column-wise), ``skip`` other kinds.
        """
        sql = f"SELECT {EVENT_COLUMNS}, clock, uid FROM events WHERE seq > ?"
        params: list[object] = [after]
        if upto is not None:
            sql += " AND seq <= ?"
            params.append(upto)
        left_out = sorted({*skip, *([] if votes else ["vote"])})
        if left_out:  # through the kind index, between the kinds left out: no scan of their events
            if not self.legacy:  # a view computes an old workspace's ids: it has no index to name
                sql = sql.replace("FROM events", "FROM events INDEXED BY events_by_kind")
            bounds = [None, *left_out, None]
            ranges = [
                " AND ".join(
                    part
                    for part in (f"kind > {_quoted(low)}" if low else "", f"kind < {_quoted(high)}" if high else "")
                    if part
                )
                for low, high in zip(bounds, bounds[1:])
            ]
            sql = " UNION ALL ".join(f"{sql} AND {where}" for where in ranges)
            params *= len(ranges)
        return self.conn.execute(f"SELECT {EVENT_COLUMNS} FROM ({sql}) ORDER BY {CANONICAL}", params)

    def clocks(self, after: int, upto: int) -> tuple[int, int]:
        """The lowest and highest clock of the events with a sequence number in (after, upto] ((0, 0): none)."""
        if after == 0:  # every event: the clock index answers the highest, and nothing was applied before
            return 0, int(self.conn.execute("SELECT COALESCE(MAX(clock), 0) FROM events").fetchone()[0])
        sql = "SELECT COALESCE(MIN(clock), 0), COALESCE(MAX(clock), 0) FROM events WHERE seq > ? AND seq <= ?"
        low, high = self.conn.execute(sql, (after, upto)).fetchone()
        return int(low), int(high)

    def count_votes(self, after: int, upto: int) -> int:
        """How many vote events have a sequence number in (after, upto]."""
        sql = "SELECT count(*) FROM events WHERE kind = 'vote' AND seq > ? AND seq <= ?"
        return int(self.conn.execute(sql, (after, upto)).fetchone()[0])

    def vote_columns(self, upto: int, columns: Iterable[str], sep: str) -> tuple:
        """Every vote event up to ``upto``, column-wise, in one row: the count, the sequence numbers joined
        by commas, then per column (``item_id``, ``annotator``, ``choice`` — NULL read as "" —, ``time``,
        ``annotator_choice`` — the two joined by U+001E) its count of non-NULL values and the values
        joined by ``sep``, all in log order; last, how many of them carry a solution key (votes imported
        without texts do not: then nobody needs that column read).

        One aggregate instead of a Python tuple per event: a 300,000-vote log reads in a fraction of
        the time. The scan goes by rowid (``+kind`` keeps the kind index out), which is log order;
        the sequence numbers let the caller check that.
        """
        return _vote_columns(self.conn, upto, columns, sep)

    def events(self, kinds: Iterable[str] | None = None, after: int = 0) -> list[Event]:
        """Events in canonical order, optionally only some kinds and only after a sequence number."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > ?"
        params: list[object] = [after]
        if kinds is not None:
            kinds = list(kinds)
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            params += kinds
        return [Event(*row) for row in self.conn.execute(sql + f" ORDER BY {CANONICAL}", params)]

    def event_fields(self, kinds: Iterable[str], fields: str) -> sqlite3.Cursor:
        """(kind, *fields) of the events of ``kinds``, in canonical order: plain tuples for a pass over many
        events (``fields`` is a comma-separated list of event columns)."""
        kinds = list(kinds)
        sql = f"SELECT kind, {fields} FROM events WHERE kind IN ({', '.join('?' * len(kinds))}) ORDER BY {CANONICAL}"
        return self.conn.execute(sql, kinds)

    def item_events(
        self, item_id: str, kinds: Iterable[str], after_clock: int, upto_clock: int
    ) -> list[tuple[str, str, str, str]]:
        """(kind, annotator, new, time) of an item's events of ``kinds`` with a clock after ``after_clock`` and
        up to ``upto_clock``, in canonical order: what was recorded on it between two states of the log."""
        kinds = list(kinds)
        sql = (
            f"SELECT kind, annotator, COALESCE(new, ''), time FROM events WHERE item_id = ? AND kind IN "
            f"({', '.join('?' * len(kinds))}) AND clock > ? AND clock <= ? ORDER BY {CANONICAL}"
        )
        return self.conn.execute(sql, (item_id, *kinds, after_clock, upto_clock)).fetchall()

    def last_seq(self) -> int:
        return int(self.conn.execute(_LAST_SEQ).fetchone()[0])

    def log_state(self) -> dict[str, object]:
        """What a release records of the log it came from: how many events, the last one's clock and time, and
        the SHA-256 of every event in canonical order (its global fields, not this copy's sequence numbers), so
        two copies that merged the same events give the same hash."""
        digest = hashlib.sha256()
        count, clock, time = 0, 0, ""
        sql = (
            f"SELECT uid, clock, time, annotator, kind, item_id, field, old, new, note FROM events ORDER BY {CANONICAL}"
        )
        for row in self.conn.execute(sql):
            line = json.dumps(row, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            digest.update(line.encode("utf-8") + b"\n")
            count += 1
            clock, time = max(clock, int(row[1] or 0)), max(time, str(row[2] or ""))
        return {"events": count, "last_clock": clock, "last_time": time, "events_sha256": digest.hexdigest()}


def checked(rows: Iterable[tuple[object, ...]]) -> None:
    """Refuse (``WorkspaceError``, nothing recorded) an event this program is about to write that breaks the rules
    every event obeys (``event_rules``): (kind, time, annotator, item_id, field, old, new, note) each."""
    latest = latest_time()
    for row in rows:
        try:
            check_event(row, latest=latest)
        except ValueError as exc:
            raise WorkspaceError(f"refused to record a {row[0]} event: {exc}; nothing was recorded") from None


_BAD_CLOCKS = f"clock IS NULL OR clock < 0 OR clock >= {CLOCK_LIMIT}"  # through the clock index: text and blobs too


def bad_events(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """(seq, reason) of the events in the log that break what a replay relies on (``event_rules``, times aside), in
    log order. Only where such events can hide is looked at, through the indexes: a clock out of range or not an
    integer, a kind not in the rules, an event of a kind that names an item without one, a payload its reader would
    not read. A few look-ups on a log of any size."""
    columns = {row[1] for row in conn.execute("PRAGMA main.table_info(events)")}
    if not {"seq", "kind", "item_id", "clock"} <= columns:
        return []  # no log (not a workspace: whoever reads it says so), or one without clocks (migrated on writing)
    kinds, kind = [], conn.execute("SELECT MIN(kind) FROM main.events").fetchone()[0]
    while kind is not None:
        kinds.append(kind)
        kind = conn.execute("SELECT MIN(kind) FROM main.events WHERE kind > ?", (kind,)).fetchone()[0]
    unknown = [k for k in kinds if not isinstance(k, str) or k not in RULES]
    itemed = [k for k, rule in RULES.items() if rule.item == "needed" and k in kinds]
    payloads = [k for k in ("new-item", "round") if k in kinds]
    fields = "seq, kind, time, annotator, item_id, field, old, new, note, clock"
    where = [_BAD_CLOCKS]
    where += [f"kind = ?{n + 1}" for n in range(len(unknown))]
    marks = ", ".join(f"'{k}'" for k in itemed)
    where += [f"item_id IS NULL AND kind IN ({marks})"] if itemed else []
    where += [f"kind = '{k}'" for k in payloads]
    sql = " UNION ".join(f"SELECT {fields} FROM main.events WHERE {w}" for w in where) + " ORDER BY seq"
    bad = []
    for seq, *event, clock in conn.execute(sql, unknown):
        try:
            check_event(event, times=False)
            if type(clock) is not int or not 0 <= clock < CLOCK_LIMIT:
                raise ValueError(f"clock {str(clock)[:40]!r} is not an integer from 0 to 2^62")
        except ValueError as exc:
            bad.append((int(seq), str(exc)))
    return bad


_LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM events"
_SEQ_AFTER_INSERT = "(last_insert_rowid() + 1)"


def _quoted(kind: str) -> str:
    """An event kind as an SQL string literal (kinds are the program's own words: letters and hyphens)."""
    if not kind.replace("-", "").isalpha():
        raise ValueError(f"not an event kind: {kind!r}")
    return f"'{kind}'"


def _insert_in_order(conn: sqlite3.Connection, first: str, following: str, rows: list) -> None:
    """Insert ``rows`` with ``first`` (SQL that looks the log's last sequence number up) one at a time until one is
    inserted (a skipped one inserts none), then the rest at once with ``following`` (SQL that takes it from
    ``last_insert_rowid()``; see ``Workspace._stamps_after``)."""
    taken = len(rows)
    for k, row in enumerate(rows):
        if conn.execute(first, row).rowcount:
            taken = k + 1
            break
    conn.executemany(following, rows[taken:])


# Indexes a bulk insert larger than the log leaves out and builds again afterwards, in the same transaction: one
# sort per index costs less than 300,000 insertions into each (a 300,000-vote import: a fifth less CPU). The unique
# index of the votes too: a vote it would have skipped makes building it fail, and the insert is done again without
# those votes (``insert_votes``, ``_unseen_votes``).
_BULK_INDEXES = ("events_by_item", "events_by_kind", "events_by_uid", "events_in_order", "one_vote_per_instant")


_HELD_VOTE = "SELECT 1 FROM events WHERE kind = 'vote' AND item_id = ? AND annotator = ? AND time = ? AND new = ?"


def _held_share(
    conn: sqlite3.Connection, votes: list[tuple[str, str, str, str, str | None]], probes: int = 256
) -> float:
    """The share of an even sample of ``votes`` the log holds already (a look-up each in the votes' unique index).

    A file imported again with a few more votes (a day's votes exported whole every evening) is mostly here:
    skipping each through the index costs about three times what reading every vote key of the log once and
    leaving out the known ones does (``_unseen_votes``), so that is done when the share times the file's size
    is over a third of the log."""
    sample = votes[:: max(1, len(votes) // probes)][:probes]
    found = sum(1 for v in sample if v[2] is not None and conn.execute(_HELD_VOTE, (v[0], v[1], v[3], v[2])).fetchone())
    return found / len(sample) if sample else 0.0


@gc_paused()  # a tuple per vote, no cycles
def _unseen_votes(
    conn: sqlite3.Connection, votes: list[tuple[str, str, str, str, str | None]]
) -> list[tuple[str, str, str, str, str | None]]:
    """The votes INSERT OR IGNORE would add under ``one_vote_per_instant``: each (item, annotator, choice, time) the
    first time, unless the log holds it (a NULL choice is never the same as another, as in a unique index)."""
    keys = list(map(itemgetter(0, 1, 2, 3), votes))
    held = conn.execute("SELECT item_id, annotator, new, time FROM events WHERE kind = 'vote' AND new IS NOT NULL")
    seen = set(held)
    fresh = []
    for vote, key in zip(votes, keys):
        if key[2] is None or key not in seen:
            fresh.append(vote)
            if key[2] is not None:
                seen.add(key)
    return fresh


@contextmanager
def _indexes_rebuilt(conn: sqlite3.Connection, names: tuple[str, ...]) -> Iterator[None]:
    """Inside a write transaction: drop the indexes ``names`` for the block and create them again, as the file
    defines them, after it (a failure rolls the whole back)."""
    marks = ", ".join("?" * len(names))
    sql = f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ({marks})"
    found = conn.execute(sql, names).fetchall() if names else []
    for name, _ in found:
        conn.execute(f"DROP INDEX {name}")
    yield
    for _, definition in found:
        conn.execute(definition)


PAIR_SEP = "\x1e"  # between annotator and choice in the "annotator_choice" vote column


def _vote_columns(conn: sqlite3.Connection, upto: int, columns: Iterable[str], sep: str) -> tuple:
    exprs = {
        "item_id": "item_id",
        "annotator": "annotator",
        "choice": "ifnull(new, '')",
        "time": "time",
        "solution": "ifnull(old, '')",
        "annotator_choice": f"annotator || char({ord(PAIR_SEP)}) || ifnull(new, '')",
    }
    never_null = ("choice", "solution", "annotator_choice")  # (the annotator is NOT NULL): count(*) counts them
    parts = "".join(f", count({'*' if c in never_null else exprs[c]}), group_concat({exprs[c]}, :sep)" for c in columns)
    keyed = "count(nullif(old, ''))"  # the votes that carry a solution key, counted in the same pass
    sql = f"SELECT count(*), group_concat(seq, ','){parts}, {keyed} FROM events WHERE seq <= :upto AND +kind = 'vote'"
    return tuple(conn.execute(sql, {"upto": upto, "sep": sep}).fetchone())


def read_vote_columns(path: Path, columns: Iterable[str], sep: str) -> tuple[int, tuple]:
    """The last sequence number and ``Workspace.vote_columns`` up to it, read on a connection of its own
    (so another thread can read while the workspace's connection is busy; nothing is written)."""
    conn = sqlite3.connect(
        path, timeout=READ_TIMEOUT
    )  # a failure here leaves the reading to the workspace's connection
    try:
        upto = int(conn.execute(_LAST_SEQ).fetchone()[0])
        return upto, _vote_columns(conn, upto, columns, sep)
    finally:
        conn.close()


# ----------------------------------------------------------- connections and files


def legacy_uid(*fields: object) -> str:
    """The global id of an event recorded before events had one: a hash of (workspace id, seq, time, annotator,
    kind, item_id, field, old, new, note), so two copies of one old workspace give their shared events one id."""
    text = json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_LEGACY_FIELDS = "seq, time, annotator, kind, item_id, field, old, new, note"


def _missing_order(conn: sqlite3.Connection) -> tuple[list[str], bool]:
    """The order columns the events table lacks, and whether some events have no id (written by an older program)."""
    columns = {row[1] for row in conn.execute("PRAGMA main.table_info(events)")}
    if not columns:
        return [], False  # no event log: not a workspace, which whoever reads it says
    missing = [name for name in ("uid", "clock") if name not in columns]
    if missing:
        return missing, True
    return [], conn.execute("SELECT 1 FROM main.events WHERE uid IS NULL LIMIT 1").fetchone() is not None


def _clock_offset(conn: sqlite3.Connection, has_clock: bool) -> int:
    """What to add to the sequence number of an event without a clock: nothing in an old workspace (clock = seq),
    enough to follow every clocked event when an older program appended to a newer workspace."""
    if not has_clock:
        return 0
    high, low = conn.execute("SELECT MAX(clock), MIN(CASE WHEN clock IS NULL THEN seq END) FROM main.events").fetchone()
    return max(0, (high or 0) - (low or 0) + 1)


def _workspace_id(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM main.meta WHERE key = 'workspace_id'").fetchone()
    return row[0] if row else ""


def _migrate(conn: sqlite3.Connection) -> None:
    """Give every event a global id and a clock (an older workspace, opened for writing): once, in one transaction."""
    missing, unset = _missing_order(conn)
    if not unset:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        missing, unset = _missing_order(conn)  # another process may have migrated it meanwhile
        for name in missing:
            conn.execute(f"ALTER TABLE events ADD COLUMN {name} {'TEXT' if name == 'uid' else 'INTEGER'}")
        conn.create_function("legacy_uid", 10, legacy_uid, deterministic=True)
        offset = _clock_offset(conn, "clock" not in missing)
        conn.execute(  # one pass over the rows: both columns at once
            f"UPDATE events SET clock = IFNULL(clock, seq + ?), uid = IFNULL(uid, legacy_uid(?, {_LEGACY_FIELDS}))"
            " WHERE uid IS NULL OR clock IS NULL",
            (offset, _workspace_id(conn)),
        )
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _legacy_view(conn: sqlite3.Connection, left_out: list[int]) -> bool:
    """On a read-only connection to an older workspace, a temporary view named ``events`` that adds the ids and
    clocks the migration would give (nothing is written to the file), and leaves out the events ``left_out``;
    False when the file has them and none is left out."""
    try:
        missing, unset = _missing_order(conn)
    except sqlite3.Error:
        return False  # not a workspace: what reads it says so
    past = f" WHERE seq NOT IN ({', '.join(map(str, left_out))})" if left_out else ""
    if not unset:
        if left_out:
            conn.execute(f"CREATE TEMP VIEW events AS SELECT * FROM main.events{past}")
        return bool(left_out)
    conn.create_function("legacy_uid", 10, legacy_uid, deterministic=True)
    offset = _clock_offset(conn, "clock" not in missing)
    stored = not missing
    uid = f"legacy_uid('{_workspace_id(conn).replace(chr(39), chr(39) * 2)}', {_LEGACY_FIELDS})"
    conn.execute(
        f"CREATE TEMP VIEW events AS SELECT seq, time, annotator, kind, item_id, field, old, new, action, note,"
        f" {f'COALESCE(uid, {uid})' if stored else uid} AS uid,"
        f" {f'COALESCE(clock, seq + {offset})' if stored else 'seq'} AS clock FROM main.events{past}"
    )
    return True


def _ensure_meta(conn: sqlite3.Connection) -> None:
    """Write the schema version and the workspace id once; an existing workspace needs no write lock to open."""
    present = {key for (key,) in conn.execute("SELECT key FROM meta WHERE key IN ('schema_version', 'workspace_id')")}
    if len(present) < 2:
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('workspace_id', ?)", (uuid.uuid4().hex,))


def _connect_read_only(path: Path, notices: list[str]) -> sqlite3.Connection:
    """A connection that never writes: ``mode=ro`` (sees the WAL), else ``immutable=1`` (no locks at all,
    for a read-only disk whose WAL index cannot be made), with a notice that the WAL is not read then."""
    if not path.is_file():
        raise WorkspaceError(f"{path}: no such workspace file")
    uri = file_uri(path)
    conn = sqlite3.connect(
        f"{uri}?mode=ro", uri=True, timeout=READ_TIMEOUT, check_same_thread=False, isolation_level=None
    )
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False, isolation_level=None)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if Path(f"{path}-wal").is_file() and Path(f"{path}-wal").stat().st_size:
        notices.append(
            f"{path}: read without its WAL (the disk is read-only or the file locked): "
            "work recorded since the last checkpoint is not counted"
        )
    return conn


def file_uri(path: Path) -> str:
    """``path`` as an SQLite URI (for ``mode=ro`` / ``immutable=1``), with its special characters escaped."""
    return f"file:{quote(os.fsencode(path.resolve()))}"  # the name's bytes: one not valid UTF-8 opens too


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, None when there is none: a replaced file has another inode."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def copy_database(source: sqlite3.Connection, out: Path) -> None:
    """A consistent single-file copy of ``source`` at ``out`` (SQLite's online backup), written atomically.

    The backup reads one snapshot, WAL included, while others go on writing; the copy is switched to
    rollback journaling so it is one self-contained file, fsynced, then renamed into place.
    """
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        target = sqlite3.connect(tmp, isolation_level=None)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, default_file_mode())  # mkstemp's 0600 would lock the team out of the copy
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_existing(path: Path, timeout: float = 30.0) -> sqlite3.Connection:
    """A short side connection (score cache, embedding cache) to the workspace at ``path``.

    ``mode=rw``: a workspace deleted or moved while the app runs is never made
    again, empty, under the user's feet; they get one line instead.
    """
    try:
        conn = sqlite3.connect(
            f"{file_uri(path)}?mode=rw", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error:
        raise WorkspaceError(
            f"{path}: the workspace is gone (deleted or moved while in use); "
            "quit and open the dataset again to make a new one"
        ) from None
    conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    return conn


def checkpoint_file(path: Path) -> bool:
    """Checkpoint a workspace from a short connection of its own (a long session's periodic one);
    False when a reader or writer kept part of the WAL back (the next checkpoint takes it)."""
    try:  # mode=rw: a workspace deleted meanwhile is not made again, empty (verify_file writes it back)
        conn = sqlite3.connect(f"{file_uri(path)}?mode=rw", uri=True, timeout=EXIT_BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return busy == 0
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def checkpoint_connection(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Checkpoint (TRUNCATE) waiting at most ``EXIT_BUSY_TIMEOUT`` for a peer, then restore the busy timeout."""
    try:
        conn.execute(f"PRAGMA busy_timeout={int(EXIT_BUSY_TIMEOUT * 1000)}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
    except sqlite3.Error:
        pass  # closed already, or a peer kept it busy: its own exit checkpoints; the WAL still holds everything


def close_connection(conn: sqlite3.Connection, checkpoint: bool) -> None:
    """Checkpoint (TRUNCATE) then close: ``Workspace.close``, so the ``.sqlite`` file alone holds everything."""
    if checkpoint:
        checkpoint_connection(conn, EXIT_BUSY_TIMEOUT)
    _quiet_close(conn)


def _quiet_close(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except sqlite3.Error:
        pass


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open (SQLite has already rolled back after some errors, e.g. a full disk)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def storage_error(
    path: Path, exc: sqlite3.Error, consequence: str, busy_timeout: float | None = None
) -> WorkspaceError:
    """SQLite's error as one line a user can act on (what, where, what to do)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        waited = f" for more than {busy_timeout:g} s" if busy_timeout is not None else ""
        return WorkspaceBusy(
            f"{path}: workspace busy: another process has held its lock{waited}; {consequence}; "
            "try again when it is done"
        )
    if name == "SQLITE_FULL":
        return WorkspaceUnwritable(f"{path}: the disk is full; {consequence}; free some space and try again")
    refusal = (
        write_refusal(path)
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_IOERR"))
        else None
    )
    if refusal is not None or name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or name == "SQLITE_PERM":
        return WorkspaceUnwritable(
            f"{path}: the workspace cannot be written ({refusal or 'read-only file, folder or disk'}); "
            f"{consequence}; make it writable or open a copy with --workspace"
        )
    if name.startswith("SQLITE_IOERR"):
        return WorkspaceUnwritable(
            f"{path}: the disk failed to write ({exc}); {consequence}; check the disk and try again"
        )
    if name.startswith(DAMAGED) or not name:
        return WorkspaceError(
            f"{path}: not a usable workspace database ({exc}): damaged, or no workspace; {consequence}; "
            "`piqa-tui workspace check` says what is wrong: restore it from a copy `piqa-tui workspace backup` made, "
            "or move it aside and reopen"
        )
    return WorkspaceError(f"{path}: {exc}; {consequence}")


DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")  # SQLite's names for a file that is damaged or no database

_REFUSALS = {
    errno.EPERM: "the file is immutable or append-only: lsattr shows it, chattr -i clears it",
    errno.EACCES: "no permission to write the file",
    errno.EROFS: "the disk is mounted read-only",
}


def write_refusal(path: Path) -> str | None:
    """Why the system refuses to open the workspace (or its folder) for writing, in words; None when it does not.

    SQLite reports such a refusal as a read-only database or a disk I/O error; the open says which it is.
    """
    try:
        if path.exists():
            os.close(os.open(path, os.O_RDWR))
        elif not os.access(path.parent, os.W_OK):
            return "the folder is read-only"
    except OSError as exc:
        return _REFUSALS.get(exc.errno or 0, exc.strerror or str(exc))
    return None
