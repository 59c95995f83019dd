"""Bringing another copy's work into a workspace: the union of two event logs.

Every event has a global id (``uid``) and a Lamport clock, so a merge inserts
the other copy's events this one lacks, keeping their ids, clocks, times and
authors; the current state is then derived again in canonical order, the same
on every machine whatever order the copies were merged in. A vote or an
adjudication already held by content (the same vote file imported on both
machines) is not counted twice. All of it is one write transaction: a merge
that fails or is killed leaves the workspace as it was.

The merge works on the two logs alone: the other copy is read without writing it (``source``), every one of its
events and settings passes the gate (``gate``) before the transaction begins, and the binding to the dataset is
checked from the binding rows and the dataset file's hash, without reading the dataset or replaying anything.
Whoever needs the state derives it once afterwards (``workspace merge`` does, for the conflicts it names).
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.errors import PiqaError, WorkspaceError
from piqa_tui.core.sync.gate import SETTINGS, check_settings, checked_events, refusal
from piqa_tui.core.sync.source import open_source
from piqa_tui.core.workspace.event_rules import shown
from piqa_tui.core.workspace.log import CANONICAL, EVENT_COLUMNS, Workspace

# An event the target already holds by content, though under another id (see Workspace.insert_votes and
# insert_adjudications): the same vote or adjudication imported from one file on both machines.
_SAME_VOTE = "SELECT seq FROM events WHERE kind = 'vote' AND item_id = ? AND annotator = ? AND time = ? AND new IS ?"
_SAME_ADJUDICATION = (
    "SELECT seq FROM events WHERE kind = 'adjudicate' AND item_id = ? AND annotator = ? AND time = ? AND new IS ?"
)
_BY_CONTENT = {"vote": _SAME_VOTE, "adjudicate": _SAME_ADJUDICATION}
_LAST_GIVEN = (  # the highest sequence number ever given: the next insert's is one above it
    "SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0),"
    " COALESCE((SELECT MAX(seq) FROM events), 0))"
)
_CHECK = "piqa-tui workspace check"
_INSERT = (
    "INSERT INTO events(time, annotator, kind, item_id, field, old, new, action, note, uid, clock)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass
class MergeReport:
    """What a merge brought: new events by kind, how many were here already, and the settings."""

    source: Path
    new: Counter[str] = field(default_factory=Counter)
    already: int = 0
    meta_taken: list[str] = field(default_factory=list)  # settings the target lacked, taken from the source
    meta_differences: list[str] = field(default_factory=list)  # settings both have, differently: the target's kept

    @property
    def added(self) -> int:
        return sum(self.new.values())

    def to_json(self) -> dict[str, object]:
        return {
            "source": str(self.source),
            "new": dict(sorted(self.new.items())),
            "added": self.added,
            "already": self.already,
            "meta_taken": self.meta_taken,
            "meta_differences": self.meta_differences,
        }


def merge_workspace(
    target: Workspace, source_path: Path, force: bool = False, dataset_sha256: str | None = None
) -> MergeReport:
    """Insert, in the source's canonical order, every event of the workspace at ``source_path`` that ``target``
    lacks, and take the shared settings it has no value for; one transaction. Refuses (``PiqaError``) the target
    itself, a file that is not a workspace, one whose events or settings fail the gate, and one bound to another
    dataset file than ``target`` (or the dataset file whose hash is ``dataset_sha256``) unless ``force``."""
    _refuse_self(target, source_path)
    with open_source(source_path) as source:
        _check_binding(target, source, force, dataset_sha256)
        meta = _shared_meta(source)
        check_settings(source_path, meta)
        rows = _source_events(source).fetchall()
    held = {uid for (uid,) in target.conn.execute("SELECT uid FROM events")}  # only grows until the write
    for _ in checked_events(source_path, (row for row in rows if row[10] not in held)):
        pass  # every event the target lacks passes the gate before the write begins
    report = MergeReport(source_path)
    with target.write() as conn:
        _insert_events(conn, rows, report)
        _merge_meta(conn, meta, report)
    return report


def _refuse_self(target: Workspace, source_path: Path) -> None:
    try:
        same = source_path.exists() and os.path.samefile(source_path, target.path)
    except OSError:
        same = False
    if same:
        raise PiqaError(f"{source_path} is this workspace itself; name another copy's workspace file to merge")


def _check_binding(target: Workspace, source: Workspace, force: bool, dataset_sha256: str | None) -> None:
    """Copies of one workspace are bound to the same dataset file; another file's edits would replay over it. A
    source without binding rows is taken only from a copy of this very workspace (the same workspace id)."""
    if force:
        return
    try:
        mine, theirs = target.binding(), source.binding()
    except ValueError:  # a size that is no number: rows no version of piqa-tui wrote
        raise PiqaError(f"{source.path}: its dataset binding rows are unreadable; --force merges anyway") from None
    if theirs is None:
        if source.workspace_id is not None and source.workspace_id == target.workspace_id:
            return
        raise PiqaError(
            f"{source.path} has no binding to a dataset file (its dataset rows are missing) and is no copy of this "
            "workspace; merge it only if it is the same dataset: --force merges anyway"
        )
    known = {sha for sha in (mine[2] if mine else None, dataset_sha256) if sha}
    if not known or theirs[2] in known:
        return
    here = mine[2] if mine else dataset_sha256 or ""
    raise PiqaError(
        f"{source.path} was made on a different dataset file (sha256 {theirs[2][:12]}…, this one's "
        f"{here[:12]}…); merge it only if it is the same dataset: --force merges anyway and its edits "
        "replay over this file's content"
    )


def _source_events(source: Workspace) -> sqlite3.Cursor:
    """The other copy's events in its canonical order, read as they come (each checked by the gate in turn)."""
    return source.conn.execute(f"SELECT {EVENT_COLUMNS}, uid, clock FROM events ORDER BY {CANONICAL}")


def _shared_meta(source: Workspace) -> dict[str, object]:
    """The settings that travel with the work (the keys of ``gate.SETTINGS``) that the other copy holds."""
    marks = ", ".join("?" * len(SETTINGS))
    return dict(source.conn.execute(f"SELECT key, value FROM main.meta WHERE key IN ({marks})", list(SETTINGS)))


def _insert_events(
    conn: sqlite3.Connection, rows: list[tuple], report: MergeReport, outside: dict[int, str] | None = None
) -> range:
    """Insert the events the target lacks, at once, each one's action (a local sequence number) pointed at the
    target's sequence number of the same event. The rows inserted in one statement take the sequence numbers that
    follow the last one given (AUTOINCREMENT: one above the highest ever), so each one's is known beforehand (an
    action naming a row further on is pointed after the insert). ``outside``: actions that name no row of ``rows``
    but an event by its global id (a batch's undo of an action an earlier batch brought). Returns the sequence
    numbers the inserted events took."""
    here = dict(conn.execute("SELECT uid, seq FROM events"))
    last = int(conn.execute(_LAST_GIVEN).fetchone()[0])
    named = outside or {}
    seqs: dict[int, int] = {}  # the source's sequence number -> the target's, for every event both now hold
    later: list[tuple[int, int]] = []  # (target seq, source action) of inserted events whose action comes further on
    fresh: list[tuple] = []
    taken: dict[tuple, int] = {}  # the votes and adjudications inserted here by content (see _held_by_content)
    for seq, time, annotator, kind, item_id, name, old, new, action, note, uid, clock in rows:
        content = (kind, item_id, annotator, time, new)
        found = here.get(uid)
        if found is None:
            found = taken.get(content) or _held_by_content(conn, kind, item_id, annotator, time, new)
        if found is not None:
            seqs[seq] = found
            report.already += 1
            continue
        seqs[seq] = here[uid] = last + len(fresh) + 1
        pointed = None if action is None else seqs.get(action) or here.get(named.get(action, ""))
        if action is not None and pointed is None:
            later.append((seqs[seq], action))
        fresh.append((time, annotator, kind, item_id, name, old, new, pointed, note, uid, clock))
        if kind in _BY_CONTENT:
            taken[content] = seqs[seq]
        report.new[kind] += 1
    conn.executemany(_INSERT, fresh)
    if int(conn.execute(_LAST_GIVEN).fetchone()[0]) != last + len(fresh):  # a trigger, or another program's schema
        raise WorkspaceError(f"the events were not numbered as inserted; nothing was recorded (check {_CHECK})")
    conn.executemany(
        "UPDATE events SET action = ? WHERE seq = ?",
        [(seqs.get(action) or here.get(named.get(action, "")), target) for target, action in later],
    )
    return range(last + 1, last + len(fresh) + 1)


def _held_by_content(
    conn: sqlite3.Connection, kind: str, item_id: str | None, annotator: str, time: str, new: str | None
) -> int | None:
    """The target's sequence number of a vote or adjudication it holds under another id, if any."""
    sql = _BY_CONTENT.get(kind)
    if sql is None:
        return None
    row = conn.execute(sql, (item_id, annotator, time, new)).fetchone()
    return None if row is None else int(row[0])


def _merge_meta(conn: sqlite3.Connection, meta: dict[str, object], report: MergeReport) -> None:
    """Take each shared setting the target lacks; one both have, differently, stays the target's and is named."""
    for key, value in sorted(meta.items()):
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
            report.meta_taken.append(key)
        elif row[0] != value:
            report.meta_differences.append(f"{key}: kept {row[0]!r}, the other copy has {value!r}")


def merge_rows(
    target: Workspace,
    source: Path,
    rows: list[tuple],
    meta: dict[str, object],
    outside: dict[int, str],
    record: Callable[[sqlite3.Connection, range], None],
) -> MergeReport:
    """``merge_workspace`` for events read from elsewhere than a workspace file (a sync batch, ``source`` names it):
    the same gate, the same insert, one transaction, in which ``record`` is called with the sequence numbers the new
    events took (the sync remembers what it received there, so a kill never leaves it half known). Rows are
    (seq, time, annotator, kind, item_id, field, old, new, action, note, uid, clock) with ``seq`` the row's number in
    the batch; an action naming no row is looked up in ``outside`` (number -> global id). An event whose global id the
    target holds with other content is refused: a file claiming another machine's event."""
    check_settings(source, meta)
    held = {uid for (uid,) in target.conn.execute("SELECT uid FROM events")}
    _check_claims(target.conn, source, [row for row in rows if row[10] in held])
    for _ in checked_events(source, (row for row in rows if row[10] not in held)):
        pass  # every event the target lacks passes the gate before the write begins
    report = MergeReport(source)
    with target.write() as conn:
        taken = _insert_events(conn, rows, report, outside)
        _merge_meta(conn, meta, report)
        record(conn, taken)
    return report


_HELD_CONTENT = "SELECT time, annotator, kind, item_id, field, old, new, note, clock FROM events WHERE uid = ?"


def _check_claims(conn: sqlite3.Connection, source: Path, rows: list[tuple]) -> None:
    """Refuse ``source`` when one of its events bears the global id of an event held here with other content."""
    for seq, time, annotator, kind, item_id, name, old, new, _action, note, uid, clock in rows:
        found = conn.execute(_HELD_CONTENT, (uid,)).fetchone()
        if found is not None and tuple(found) != (time, annotator, kind, item_id, name, old, new, note, clock):
            raise refusal(source, f"event {seq}", f"it bears the global id {shown(uid)} of another event, changed")
