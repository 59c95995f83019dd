"""The history of a dataset's releases, kept in the workspace's log: what each release was and how to make it again.

Every ``export --release`` records one ``release`` event (field: the release's name; ``new``: the JSON of
``payload``): when and by whom it was made, the export options it was written with, the SHA-256 of each of its
files and the state of the log it came from (events, last clock and time, hash: ``Workspace.log_state``). The
event travels with the record (merge, sync: the gate checks it as every other event, ``event_rules``).

A release is made again from the workspace by opening a copy of the workspace that holds only the events it was
made from (``as_of``: those up to the recorded clock, checked against the recorded hash); the dataset file must be
the one it was made from (its SHA-256 is recorded too).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from piqa_tui.core.errors import ExportError
from piqa_tui.core.workspace.log import Workspace, copy_database

RELEASE_KIND = "release"


class HistoryError(ExportError):
    """A recorded release cannot be found or made again: one line."""


@dataclass(frozen=True)
class Recorded:
    """One recorded release, as its event holds it."""

    name: str
    time: str
    by: str
    args: dict[str, object]  # the export options it was written with (``export`` argument names)
    files: dict[str, str]  # path in the folder -> SHA-256, the manifest included
    log: dict[str, object]  # the log state it came from (``Workspace.log_state``)
    dataset: dict[str, object]  # file, sha256
    defaults: str | None  # the project's release defaults in force when it was made (workspace meta)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "time": self.time,
            "by": self.by,
            "options": self.args,
            "files": self.files,
            "log": self.log,
            "dataset": self.dataset,
        }


def payload(recorded: Recorded) -> str:
    """The ``new`` of a release event: its JSON, keys sorted (the same release gives the same text)."""
    data = {**recorded.to_json(), "defaults": recorded.defaults}
    data.pop("by")  # the event's annotator
    data.pop("time")  # the event's time
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def recorded_releases(workspace: Workspace | None) -> list[Recorded]:
    """Every release the log records, in the log's order (a name recorded twice: both, the later last)."""
    if workspace is None:
        return []
    found = []
    for event in workspace.events([RELEASE_KIND]):
        data = json.loads(event.new or "{}")
        found.append(
            Recorded(
                name=event.field or "",
                time=event.time,
                by=event.annotator,
                args=dict(data.get("options", {})),
                files=dict(data.get("files", {})),
                log=dict(data.get("log", {})),
                dataset=dict(data.get("dataset", {})),
                defaults=data.get("defaults"),
            )
        )
    return found


def find_release(workspace: Workspace | None, name: str) -> Recorded:
    """The latest recorded release named ``name``; one line naming the recorded ones when there is none."""
    found = [r for r in recorded_releases(workspace) if r.name == name]
    if not found:
        known = ", ".join(dict.fromkeys(r.name for r in recorded_releases(workspace))) or "none"
        raise HistoryError(f"no release named {name!r} is recorded in the workspace (recorded: {known})")
    return found[-1]


def as_of(workspace: Workspace, recorded: Recorded, out: Path, defaults_key: str) -> Path:
    """A copy of the workspace at ``out`` holding only the events ``recorded`` was made from, the release
    defaults then in force and the id of the workspace it was made in (a clone has its own); refused (one line) when the log no longer holds exactly those events."""
    copy_database(workspace.conn, out)
    last_clock = recorded.log.get("last_clock")
    conn = sqlite3.connect(out)
    try:
        with conn:
            conn.execute("DELETE FROM events WHERE clock > ?", (last_clock,))
            conn.execute("DROP TABLE IF EXISTS events_left_out")
            conn.execute("DELETE FROM meta WHERE key = ?", (defaults_key,))
            if recorded.defaults is not None:
                conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (defaults_key, recorded.defaults))
            if isinstance(recorded.log.get("id"), str):  # the manifest names the workspace it came from
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('workspace_id', ?)", (recorded.log["id"],)
                )
    finally:
        conn.close()
    state = Workspace(out, read_only=True)
    try:
        now = state.log_state()
    finally:
        state.close()
    if now["events_sha256"] != recorded.log.get("events_sha256"):
        raise HistoryError(
            f"the workspace no longer holds the log release {recorded.name!r} was made from "
            f"({recorded.log.get('events')} events up to clock {last_clock}; now {now['events']}): events older "
            "than it came in by a merge, so it cannot be made again byte for byte"
        )
    return out
