"""``sync``: the team's record through the dataset's git repository, offline first, with no server of our own.

One sync: the events this machine has not shared yet are written as an immutable batch (``batch``) under
``.piqa/batches/<dataset path>/<machine>/``, a folder only this machine writes (two machines never touch one file,
so a git merge never conflicts on one), and committed; the remote's commits are fetched and merged; every batch of
another machine not applied yet goes through the same gate and merge as ``workspace merge``
(``merge.merge_rows``); the result is pushed (a push refused because someone pushed first: fetch, merge, retry).
Without a remote that answers, the batch stays committed here and the report says how many events wait.

What this machine has shared and applied is kept in the workspace's ``meta`` table, written in the transaction that
does it, so a kill at any step leaves workspace and repository consistent and the next sync finishes the job:
``sync_shared`` (the last local sequence number a batch covers; a batch file the meta does not know yet, written
before a kill, is adopted from its name), ``sync_received`` (ranges of sequence numbers above it that batches
brought: never shared again), ``sync_applied`` (each machine's batches applied). The machine's id is drawn once
per workspace file and place (``machine``: a copied workspace draws its own).

``catch_up`` applies the batches a repository already holds (a newcomer's fresh clone) when a dataset is opened,
with no git command: the same gate and merge, so opening a clone shows everyone's work before any sync.

Test hook: ``PIQA_TUI_SYNC_STOP_AFTER=batch|commit|fetch|merge|apply`` ends the process at once (``os._exit``)
after that step, as a kill would (tests/test_sync.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.dataset.reading import file_digest, read_source
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.sync.batch import (
    BATCH_EVENTS,
    NAME,
    Batch,
    BatchRefused,
    Header,
    decode,
    encode,
    read_batch,
    write_batch,
)
from piqa_tui.core.sync.gate import SETTINGS, Refused
from piqa_tui.core.sync.git import GitError, Repository, Unreachable, open_repository, work_tree_of
from piqa_tui.core.sync.machine import machine_id, stored_id
from piqa_tui.core.sync.merge import merge_rows
from piqa_tui.core.workspace.log import Workspace, default_location, now
from piqa_tui.core.workspace.outputs import check_workspace_path

BATCHES = Path(".piqa") / "batches"
SHARED_KEY, RECEIVED_KEY, APPLIED_KEY, LAST_KEY = (
    "sync_shared",
    "sync_received",
    "sync_applied",
    "sync_last",
)
STOP_ENV = "PIQA_TUI_SYNC_STOP_AFTER"
PUSH_TRIES = 5
_CACHE_KIB = 64 * 1024
_ROWS = "SELECT seq, time, annotator, kind, item_id, field, old, new, action, note, uid, clock FROM events"


@dataclass
class SyncReport:
    """What one sync did: events out, events in (by kind), refused batches, what waits to be pushed."""

    repository: Path
    machine: str
    sent: int = 0
    batches_sent: list[str] = field(default_factory=list)
    received: Counter[str] = field(default_factory=Counter)
    already: int = 0
    batches_received: int = 0
    refused: list[str] = field(default_factory=list)
    remote: str | None = None
    pushed: bool = False
    offline: str | None = None
    waiting: int = 0
    items: set[str] = field(default_factory=set)  # the items the received events name
    dataset_state: str | None = None  # the dataset file "not committed" or "changed since its last commit"
    dataset_updated: bool = False  # the merge brought another committed version of the dataset file
    vote_keys: set[tuple[str, str]] = field(default_factory=set)  # (item, solution key) of each vote received
    settings: list[str] = field(default_factory=list)  # shared settings both have, differently (this one's kept)

    def to_json(self) -> dict[str, object]:
        return {
            "repository": str(self.repository),
            "machine": self.machine,
            "sent": self.sent,
            "batches_sent": self.batches_sent,
            "received": dict(sorted(self.received.items())),
            "already": self.already,
            "batches_received": self.batches_received,
            "refused": self.refused,
            "remote": self.remote,
            "pushed": self.pushed,
            "offline": self.offline,
            "waiting": self.waiting,
            "settings_differ": self.settings,
            "dataset_file": self.dataset_state or "committed",
            "dataset_updated": self.dataset_updated,
        }


def sync(dataset: Path, workspace: Path | None = None, stop: threading.Event | None = None) -> SyncReport:
    """Share, fetch, apply and push (see the module's docstring). ``GitError`` (one line, nothing local lost) for
    a repository that is not ready; an unreachable remote is no error: the report says what waits. ``stop``: set,
    a fetch or push under way ends at once and the sync with ``Stopped`` (what it committed stays)."""
    source = read_source(dataset)
    repo = open_repository(source.path.resolve().parent, stop)
    try:
        where = source.path.resolve().relative_to(repo.root.resolve()).as_posix()
    except ValueError:
        raise GitError(f"{dataset}: the dataset file lies outside its repository {repo.root}") from None
    ws_path = workspace or default_location(source.path)
    check_workspace_path(source.path, ws_path, source.identity)
    _refuse_committed_workspace(repo, ws_path)
    ws = Workspace(ws_path)
    ws.conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")  # a batch's inserts into every index of a large log
    try:
        bound, path, seen = ws.binding(), source.path, source.sha256
        if bound is None:
            ws.bind(path, source.size, seen)
        del source
        report = _sync(ws, repo, where)
        if report.dataset_updated and (bound is None or bound[2] == seen) and not ws.row_ids():
            # The team's version, taken by the merge over the one this workspace saw: its events replay over it
            # as on every machine, nothing to review. (A file without an id column keeps the binding: opening it
            # finds its rows again by their text first.)
            sha, size = file_digest(path)
            ws.bind(path, size, sha)
        return report
    finally:
        ws.close()


def _refuse_committed_workspace(repo: Repository, ws_path: Path) -> None:
    """A workspace committed to the repository (``git add -f``) would travel as a file every machine overwrites:
    refused, with what to do (it stays on disk, only leaves git's index)."""
    try:
        name = ws_path.resolve().relative_to(repo.root.resolve()).as_posix()
    except ValueError:
        return
    tracked = repo.git("ls-files", "--", name, f"{name}-wal", f"{name}-shm").stdout.split()
    if tracked:
        raise GitError(
            f"{repo.root}: the workspace {tracked[0]} is committed to the repository, where every machine would "
            f"overwrite it: git rm --cached {tracked[0]} && git commit (the file stays here), then sync again; "
            "nothing was synced"
        )


def _sync(ws: Workspace, repo: Repository, where: str) -> SyncReport:
    machine = machine_id(ws)
    root = repo.root / BATCHES / where
    report = SyncReport(repo.root, machine, remote=repo.remote())
    version = repo.blob(where)  # the dataset file's committed version before the team's commits are merged in
    _adopt(ws, root / machine, where, report)
    _share(ws, root / machine, where, machine, report)
    repo.ensure_rules()  # committed with the batches (again after a kill between writing and committing them)
    rules = [repo.root / ".gitignore", repo.root / ".gitattributes"]
    repo.commit([root / machine, *rules], f"piqa-tui sync: {where} from {machine}")
    _stop("commit")
    for _ in range(PUSH_TRIES if report.remote else 0):
        assert report.remote is not None
        try:
            repo.fetch(report.remote)
            _stop("fetch")
            tracking = repo.tracking(report.remote)
            if repo.has(tracking):
                repo.merge_in(tracking)
            _stop("merge")
            _apply(ws, root, where, machine, report)
            _stop("apply")
            if repo.has(tracking) and _same_commit(repo, tracking):
                report.pushed = True
                break
            if repo.push(report.remote):
                report.pushed = True  # (the push moved the tracking ref too)
                break
        except Unreachable as exc:
            report.offline = str(exc)
            break
    else:
        if report.remote:
            raise GitError(f"{repo.root}: others kept pushing while this sync tried {PUSH_TRIES} times; sync again")
    _apply(ws, root, where, machine, report)  # offline too: batches already in the work tree
    report.waiting = _waiting(repo, root / machine, report)
    report.dataset_state = repo.uncommitted(repo.root / where)
    report.dataset_updated = version is not None and repo.blob(where) not in (None, version)
    _remember(ws, report)
    return report


def catch_up(dataset: Path, workspace: Path | None = None) -> list[str]:
    """The team's batches already in the dataset's repository that the workspace has not applied (a newcomer's fresh
    clone, a ``git pull`` made by hand), applied through the same gate and merge as a sync, with no git command and
    no network; the workspace is made (and bound to the dataset file) when there is none. Returns one line saying
    what was applied and one per refused batch; nothing when there was nothing to apply (no repository, no batches,
    all applied: a few file system looks and two meta values). A workspace that cannot be written now (a read-only
    folder, locked by another process) is one line too: the work stays in the repository for the next open."""
    root = work_tree_of(dataset)
    if root is None:
        return []
    where = dataset.resolve().relative_to(root).as_posix()
    folder = root / BATCHES / where
    ws_path = workspace or default_location(dataset)
    try:
        if not folder.is_dir() or not _pending(folder, ws_path):
            return []
        source = read_source(dataset)
        check_workspace_path(source.path, ws_path, source.identity)
        ws = Workspace(ws_path)
        try:
            if ws.binding() is None:
                ws.bind(source.path, source.size, source.sha256)
            del source
            machine = machine_id(ws)
            report = SyncReport(root, machine)
            _apply(ws, folder, where, machine, report)
        finally:
            ws.close()
    except (PiqaError, OSError, sqlite3.Error) as exc:
        return [f"the team's work in {root} was not applied to {ws_path.name} now: {exc}"]
    came = ", ".join(f"{n} {kind}" for kind, n in sorted(report.received.items())) or "nothing new"
    lines = [
        f"applied {report.batches_received} batches of the team's work already in the repository ({came}); "
        "piqa-tui sync shares yours and brings what is newer"
    ]
    return (lines if report.batches_received else []) + report.refused


def _pending(folder: Path, ws_path: Path) -> bool:
    """Whether another machine's folder under ``folder`` holds a batch the workspace at ``ws_path`` has not
    applied (every one, when there is no workspace yet), read without writing it."""
    mine: str | None = None
    applied: dict = {}
    if ws_path.is_file():
        ws = Workspace(ws_path, read_only=True)
        try:
            mine = stored_id(ws)
            found = json.loads(ws.get_meta(APPLIED_KEY) or "{}")
        except (ValueError, sqlite3.Error):
            found = {}
        finally:
            ws.close()
        applied = found if isinstance(found, dict) else {}
    for machine in folder.iterdir():
        if machine.name == mine or not machine.is_dir():
            continue
        done = set(applied.get(machine.name, []))
        if any(path.name not in done for _, path in _batch_files(machine)):
            return True
    return False


def _same_commit(repo: Repository, ref: str) -> bool:
    heads = repo.git("rev-parse", "HEAD", ref).stdout.split()
    return len(heads) == 2 and heads[0] == heads[1]


def _stop(step: str) -> None:
    """The test hook: end the process here, as a kill would (no cleanup, no exit handlers)."""
    if os.environ.get(STOP_ENV) == step:
        os._exit(137)


# ------------------------------------------------------------------ this machine


def _meta_json(conn: sqlite3.Connection, key: str, default: object) -> object:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    try:
        return json.loads(row[0]) if row else default
    except ValueError:
        return default


def _shared(conn: sqlite3.Connection) -> int:
    value = _meta_json(conn, SHARED_KEY, 0)
    return value if type(value) is int else 0


def _set(conn: sqlite3.Connection, key: str, value: object) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        (key, json.dumps(value, sort_keys=True, allow_nan=False)),
    )


def _adopt(ws: Workspace, mine: Path, where: str, report: SyncReport) -> None:
    """Batches in this machine's folder beyond what the meta says was shared: written before a kill (their events are
    here: nothing is added), or the meta is older than the folder (a workspace restored from a backup: their events
    come back). Each goes through the merge, then the shared mark moves past it."""
    shared = _shared(ws.conn)
    for last, path in _batch_files(mine):
        if last > shared:
            _merge_batch(ws, path, where, report, adopted=last)


def _share(ws: Workspace, mine: Path, where: str, machine: str, report: SyncReport) -> None:
    """Write this machine's events not shared yet as batches, then move the shared mark past them."""
    for stale in mine.glob(".*.tmp") if mine.is_dir() else ():  # a batch half written when a sync was killed
        stale.unlink(missing_ok=True)
    conn = ws.conn
    shared = _shared(conn)
    received = _ranges(conn)
    every = conn.execute(f"{_ROWS} WHERE seq > ? ORDER BY seq", (shared,)).fetchall()  # one snapshot: an event
    upto = int(every[-1][0]) if every else shared  # another process records meanwhile comes after ``upto``
    rows = [row for row in every if not _inside(row[0], received)]
    settings = dict(
        conn.execute(f"SELECT key, value FROM meta WHERE key IN ({', '.join('?' * len(SETTINGS))})", list(SETTINGS))
    )
    first = shared + 1
    for start in range(0, len(rows), BATCH_EVENTS):
        chunk = rows[start : start + BATCH_EVENTS]
        last = upto if start + BATCH_EVENTS >= len(rows) else int(chunk[-1][0])
        header = Header(where, machine, first, last, len(chunk), settings)
        write_batch(mine, encode(header, chunk, _outside_actions(conn, chunk)), header.name())
        report.sent += len(chunk)
        report.batches_sent.append(header.name())
        _stop("batch")
        first = last + 1
    if upto > shared:
        with ws.write() as conn:
            if _shared(conn) == shared:  # another sync of this workspace did not move it meanwhile
                _set(conn, SHARED_KEY, upto)
                _set(conn, RECEIVED_KEY, [r for r in _ranges(conn) if r[1] > upto])


def _outside_actions(conn: sqlite3.Connection, rows: list[tuple]) -> dict[int, str]:
    """The global ids of the events the rows' actions name that are not among the rows."""
    seqs = {row[0] for row in rows}
    wanted = sorted({row[8] for row in rows if row[8] is not None and row[8] not in seqs})
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ", ".join("?" * len(part))
        found.update(conn.execute(f"SELECT seq, uid FROM events WHERE seq IN ({marks})", part))
    return found


def _ranges(conn: sqlite3.Connection) -> list[list[int]]:
    value = _meta_json(conn, RECEIVED_KEY, [])
    if not isinstance(value, list):
        return []
    return [r for r in value if isinstance(r, list) and len(r) == 2 and all(type(n) is int for n in r)]


def _inside(seq: int, ranges: list[list[int]]) -> bool:
    return any(a <= seq <= b for a, b in ranges)


# ------------------------------------------------------------------ the others


def _batch_files(folder: Path) -> list[tuple[int, Path]]:
    """(last sequence number, path) of the batch files in ``folder``, in the order they were written."""
    if not folder.is_dir():
        return []
    found = []
    for path in folder.iterdir():
        named = NAME.match(path.name)
        if named and path.is_file():
            found.append((int(named[1]), int(named[2]), path))
    return [(last, path) for _, last, path in sorted(found)]


def _apply(ws: Workspace, root: Path, where: str, machine: str, report: SyncReport) -> None:
    """Merge every batch of the other machines' folders not applied yet, one transaction each; a refused one is
    named in the report and applied by no later sync either (until it is replaced)."""
    if not root.is_dir():
        return
    applied = _meta_json(ws.conn, APPLIED_KEY, {})
    applied = applied if isinstance(applied, dict) else {}
    for folder in sorted(root.iterdir()):
        if folder.name == machine or not folder.is_dir():
            continue
        done = set(applied.get(folder.name, []))
        for _, path in _batch_files(folder):
            if path.name not in done:
                _merge_batch(ws, path, where, report)


def _merge_batch(ws: Workspace, path: Path, where: str, report: SyncReport, adopted: int | None = None) -> None:
    """One batch through the gate and the merge, its bookkeeping in the same transaction; refused: named."""
    try:
        batch = _checked(path, where)
    except BatchRefused as exc:
        _refuse(report, str(exc))
        return

    def record(conn: sqlite3.Connection, taken: range) -> None:
        if adopted is not None:
            if _shared(conn) < adopted:
                _set(conn, SHARED_KEY, adopted)
        else:
            applied = _meta_json(conn, APPLIED_KEY, {})
            applied = applied if isinstance(applied, dict) else {}
            applied[path.parent.name] = sorted({*applied.get(path.parent.name, []), path.name})
            _set(conn, APPLIED_KEY, applied)
        if taken:
            _received(conn, taken)

    try:
        merged = merge_rows(ws, path, batch.rows, dict(batch.header.settings), batch.outside, record)
    except Refused as exc:
        _refuse(report, str(exc).replace("nothing was merged", "nothing of it was applied"))
        return
    report.received.update(merged.new)
    report.already += merged.already
    report.batches_received += 1
    report.settings.extend(merged.meta_differences)
    report.items.update(row[4] for row in batch.rows if row[4] is not None)
    report.vote_keys.update((row[4], row[6]) for row in batch.rows if row[3] == "vote" and row[4] and row[6])


def _refuse(report: SyncReport, line: str) -> None:
    """Name a refused batch once per sync (the batches are looked at again after each fetch)."""
    if line not in report.refused:
        report.refused.append(line)


def _received(conn: sqlite3.Connection, taken: range) -> None:
    """Remember the sequence numbers a batch's events took: never shared again. Ranges that follow the shared mark
    with nothing of this machine's own between move the mark past them instead (a quiet machine keeps none)."""
    shared, ranges = _shared(conn), sorted([*_ranges(conn), [taken.start, taken.stop - 1]])
    while ranges and ranges[0][0] == shared + 1:
        shared = ranges.pop(0)[1]
    _set(conn, SHARED_KEY, shared)
    _set(conn, RECEIVED_KEY, ranges)


def _checked(path: Path, where: str) -> Batch:
    """The batch at ``path``, refused unless its header agrees with its name and place (its machine's folder, this
    dataset) and its events are what this program writes."""
    if path.is_symlink():
        raise BatchRefused(f"{path}: refused, nothing of it was applied: it is a symbolic link, not a batch file")
    header, body = read_batch(path)
    if header.dataset != where:
        raise BatchRefused(
            f"{path}: refused, nothing of it was applied: it was made on another dataset ({header.dataset[:80]})"
        )
    if header.machine != path.parent.name:
        raise BatchRefused(
            f"{path}: refused, nothing of it was applied: it claims to come from machine {header.machine[:40]}, "
            f"but lies in {path.parent.name}'s folder (a forged or misplaced batch)"
        )
    if header.name() != path.name:
        raise BatchRefused(f"{path}: refused, nothing of it was applied: its header names it {header.name()[:60]}")
    return decode(path, header, body)


def _waiting(repo: Repository, mine: Path, report: SyncReport) -> int:
    """The events of this machine's batches that the remote does not hold yet (as far as this repository knows)."""
    if report.pushed:
        return 0
    ref = repo.tracking(report.remote) if report.remote else "refs/nothing"
    count = 0
    for name in repo.missing_on(ref, mine):
        try:
            count += read_batch(repo.root / name)[0].events
        except (BatchRefused, PiqaError):
            continue
    return count


@dataclass(frozen=True)
class LastSync:
    """The last sync's outcome as ``_remember`` stored it: when (ISO 8601 UTC), events out, events in by kind,
    events of this machine's batches the remote does not hold yet."""

    time: str
    sent: int
    received: dict[str, int]
    waiting: int


def last_sync(ws: Workspace) -> LastSync | None:
    """The last sync of this workspace (None: never synced, or a summary this program did not write)."""
    try:
        stored = json.loads(ws.get_meta(LAST_KEY) or "null")
    except ValueError:
        return None
    if not isinstance(stored, dict) or not isinstance(stored.get("time"), str):
        return None
    received = stored.get("received")
    counts = {str(k): v for k, v in received.items() if type(v) is int} if isinstance(received, dict) else {}
    sent, waiting = stored.get("sent"), stored.get("waiting")
    return LastSync(stored["time"], sent if type(sent) is int else 0, counts, waiting if type(waiting) is int else 0)


def _remember(ws: Workspace, report: SyncReport) -> None:
    """The last sync's outcome in the meta, for the TUI (when, what arrived, what waits)."""
    summary = {
        "time": now(),
        "sent": report.sent,
        "received": dict(sorted(report.received.items())),
        "waiting": report.waiting,
    }
    ws.set_meta({LAST_KEY: json.dumps(summary, sort_keys=True, allow_nan=False)})
