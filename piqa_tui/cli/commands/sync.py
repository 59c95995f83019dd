"""``piqa-tui sync PATH``: the team's record through the dataset's git repository (``core.sync.exchange``).

Says what went out, what came in (votes, edits, other events, the conflicts the team now has), batches refused,
events named on items this dataset file no longer has (a newer or older version of it: they are kept, and apply
again when the item is back), a dataset file the merge brought in (the version the team committed), the votes
cast on solution texts changed since (stale: kept, said, never dropped), and what waits to be pushed. Exit 1 when a batch was refused, 0 otherwise (an
unreachable remote included: the work waits, committed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import open_project, print_json, say, warn
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.dataset.reading import read_source
from piqa_tui.core.sync.exchange import SyncReport, sync
from piqa_tui.core.text.terminal_safe import message_line
from piqa_tui.core.workspace.log import Workspace, default_location
from piqa_tui.core.workspace.preferences import parse_mapped
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.replay import NEW_ITEM_KIND
from piqa_tui.core.workspace.vote_targets import STALE, solution_key

_SHOWN_ITEMS = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the dataset file, inside the team's git repository")
    parser.add_argument(
        "--workspace", metavar="FILE", help="workspace database (default: PATH.piqa.sqlite beside the file)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    report = sync(Path(args.path), Path(args.workspace) if args.workspace else None)
    conflicts: int | None = None
    gone: list[str] = []
    stale: list[tuple[str, str]] = []
    known = None if set(report.received) - {"vote"} or report.dataset_updated else arrived_on(args, report)
    if known is None:  # the state is derived once, only when what came may conflict or leave votes stale
        project = open_project(args)
        conflicts = len(project.conflicts())
        gone = sorted(item for item in report.items if item not in project.index)
        stale = stale_votes(project)
    elif report.received:  # votes alone on the texts of this file: the dataset's ids and the log's new items suffice
        gone = sorted(report.items - known)
    for refused in report.refused:
        warn(refused)
    if args.json:  # conflicts: null when only votes came (they never conflict)
        print_json({**report.to_json(), "conflicts": conflicts, "items_not_here": gone, "stale_votes": len(stale)})
    else:
        for line in lines(report, conflicts, gone, args.path) + stale_lines(stale):
            say(message_line(line, limit=4000))
    return DATA_PROBLEMS if report.refused else OK


def arrived_on(args: argparse.Namespace, report: SyncReport) -> set[str] | None:
    """The ids of the dataset file's items and of the items its workspace's log adds, without replaying the log;
    None when that does not suffice: a dataset without an id column (its ids are derived by the project), or a
    received vote on a solution text this file does not hold for its item (stale here, or after an edit)."""
    dataset = Path(args.path)
    ws_path = Path(args.workspace) if args.workspace else default_location(dataset)
    if not report.received:
        return set()
    parsed = parse_mapped(read_source(dataset), ws_path)
    if parsed.layout.id is None:
        return None
    texts = {item.id: item.solutions for item in parsed.items}
    keys: dict[str, set[str]] = {}
    for item_id, key in report.vote_keys:
        if item_id not in texts:
            continue
        if item_id not in keys:
            keys[item_id] = {solution_key(text) for text in texts[item_id]}
        if key not in keys[item_id]:
            return None
    ws = Workspace(ws_path, read_only=True)
    try:
        added = {item for (_, item) in ws.event_fields([NEW_ITEM_KIND], "item_id")}
    finally:
        ws.close()
    return set(texts) | added


def stale_votes(project: Project) -> list[tuple[str, str]]:
    """(item, annotator) of every current vote cast on a solution text changed since (``STALE``), in file order."""
    votes = project.state.votes
    return [
        (item.id, who)
        for item in project.items
        for who, vote in sorted(votes.get(item.id, {}).items())
        if vote.choice == STALE
    ]


def stale_lines(stale: list[tuple[str, str]]) -> list[str]:
    """What no longer applies as it was cast: said, never dropped."""
    if not stale:
        return []
    named = ", ".join(f"{item} ({who})" for item, who in stale[:_SHOWN_ITEMS]) + (
        " …" if len(stale) > _SHOWN_ITEMS else ""
    )
    return [
        f"{len(stale)} votes were cast on solution texts changed since ({named}): kept in the workspace as stale, "
        "they count for no decision until their annotators vote again (the items are back in their needs-votes "
        "queues)"
    ]


def lines(report: SyncReport, conflicts: int | None, gone: list[str], dataset: str) -> list[str]:
    """What went out, what came in, what no longer applies, what waits."""
    out = f"sent {report.sent} events in {len(report.batches_sent)} batches" if report.sent else "nothing new to send"
    came = ", ".join(f"{n} {kind}" for kind, n in sorted(report.received.items()))
    found = [out, f"received {sum(report.received.values())} events ({came})" if came else "nothing new came in"]
    if conflicts is not None:
        found.append(
            f"{conflicts} conflicts: resolve them in the TUI (queue conflicts) or list them with "
            f"piqa-tui workspace conflicts {dataset}"
            if conflicts
            else "no conflicts"
        )
    text = "; ".join(found)
    result = [f"{text} ({report.repository}, machine {report.machine})"]
    if gone:
        named = ", ".join(gone[:_SHOWN_ITEMS]) + (" …" if len(gone) > _SHOWN_ITEMS else "")
        result.append(
            f"{len(gone)} items the received work names are not in this dataset file ({named}): kept in the "
            "workspace, they apply again when the items are back"
        )
    if report.dataset_updated:
        result.append(
            f"{dataset} is now the version the team committed: the work recorded here replays over it "
            "(reopen it where it is open)"
        )
    if report.dataset_state:
        result.append(
            f"the dataset file is {report.dataset_state} in the repository: the team sees it once it is committed "
            f"and pushed (git add {dataset} && git commit, then sync)"
        )
    if report.settings:
        result.append("settings differ (this workspace's kept): " + "; ".join(report.settings))
    if report.pushed:
        result.append(f"pushed to {report.remote}")
    elif report.remote is None:
        result.append(
            f"{report.waiting} events wait to be pushed: this repository has no remote (git remote add origin URL)"
        )
    else:
        result.append(f"{report.waiting} events wait to be pushed: {report.offline}; the next sync pushes them")
    return result
