"""What a sync did, in words for the TUI: the toast after a sync and the header's note on the last one.

The CLI says the same in lines of its own (``cli/commands/sync.py``); the TUI has one toast and a few header
cells, so this is the short form: out, in by kind, conflicts, what waits to be pushed.
"""

from __future__ import annotations

from datetime import UTC, datetime

from piqa_tui.core.sync.exchange import LastSync, SyncReport


def sync_toast(report: SyncReport, conflicts: int | None) -> str:
    """One toast: what went out, what came in by kind, the conflicts the team now has, refused batches, what waits.
    ``conflicts``: None when only votes came (they never conflict)."""
    parts = [f"sent {report.sent} events" if report.sent else "nothing new to send"]
    came = ", ".join(f"{n} {kind}" for kind, n in sorted(report.received.items()))
    parts.append(f"received {sum(report.received.values())} events ({came})" if came else "nothing new came in")
    if conflicts:
        parts.append(f"{conflicts} conflicts: resolve them in the conflicts queue (F)")
    if report.refused:
        parts.append(f"{len(report.refused)} batches refused: {report.refused[0]}")
    if report.dataset_updated:
        parts.append("the dataset file is now the version the team committed: read again, your work replayed over it")
    if report.dataset_state:
        parts.append(f"the dataset file is {report.dataset_state} in the repository: commit it, then sync")
    if report.pushed:
        parts.append(f"pushed to {report.remote}")
    elif report.remote is None:
        parts.append(f"{report.waiting} events wait to be pushed: the repository has no remote (git remote add)")
    else:
        parts.append(f"{report.waiting} events wait to be pushed: {report.offline}; the next sync pushes them")
    return "sync: " + "; ".join(parts)


def sync_status(last: LastSync | None, syncing: bool) -> str:
    """The header's note: ``syncing``, or when the last sync was (local time) and what waits; empty: never synced."""
    if syncing:
        return "syncing"
    if last is None:
        return ""
    try:
        when = datetime.strptime(last.time, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).astimezone()
    except ValueError:
        return ""
    today = datetime.now().astimezone().date()
    shown = when.strftime("%H:%M") if when.date() == today else when.strftime("%d %b %H:%M")
    return f"synced {shown}" + (f", {last.waiting} to push" if last.waiting else "")
