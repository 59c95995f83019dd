"""``piqa-tui export PATH --to OUT``: the dataset with the workspace's edits, written atomically.

``--decided`` writes each agreed or adjudicated item's decided label (by the
dataset's policy) instead of the gold column; ``--vote-columns`` adds
``votes_1 … votes_N`` (the votes for solution 1 … N, numbered as people
number them, whatever the label column's own convention) and ``status``; ``--drop-flagged`` leaves out items
flagged for removal (e.g. duplicates resolved by keeping another copy).
OUT is never the dataset itself or its workspace; an existing OUT needs ``--force``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.writing import FORMATS, formula_cells, output_files, output_table
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import Project

if TYPE_CHECKING:
    from piqa_tui.core.votes.decisions import GoldChange

REMOVAL_FLAGS = ("remove", "duplicate")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--to", required=True, metavar="OUT", help="output file; the extension picks the format")
    parser.add_argument("--format", choices=FORMATS, help="override the format ('piqa' = .jsonl plus -labels.lst)")
    parser.add_argument(
        "--decided", action="store_true", help="write the label decided by the votes (policy) where there is one"
    )
    parser.add_argument(
        "--vote-columns", action="store_true", help="add votes per choice and the decision status as columns"
    )
    parser.add_argument(
        "--drop-flagged", action="store_true", help="leave out items flagged for removal (remove, duplicate)"
    )
    parser.add_argument("--flag-column", action="store_true", help="add a 'flags' column with each item's flag reasons")
    parser.add_argument(
        "--force", action="store_true", help="replace OUT if it exists (never the dataset or its workspace)"
    )
    parser.add_argument(
        "--escape-formulas",
        action="store_true",
        help="CSV/TSV: prefix ' to cells beginning with = + - @ so spreadsheets show them as text "
        "(changes those values; off by default)",
    )


def export_items(project: Project, decided: bool, drop_flagged: bool) -> tuple[list[Item], list[GoldChange]]:
    """The items to write, and (with ``decided``) the gold labels the decided ones change among them."""
    from piqa_tui.core.votes.decisions import decisions, gold_changes

    items = project.items
    if drop_flagged:
        items = [i for i in items if not any(r in project.state.flags.get(i.id, {}) for r in REMOVAL_FLAGS)]
    if not decided:
        return items, []
    found = decisions(project)
    kept = {i.id for i in items}
    changes = [c for c in gold_changes(project, found=found) if c.id in kept]
    return [i.with_changes(label=found[i.id].label) if found[i.id].label is not None else i for i in items], changes


def _label_text(label: int | None) -> str:
    return "none" if label is None else str(label + 1)


def print_changes(changes: list[GoldChange], limit: int = 20) -> None:
    """Say which gold labels the decided ones replaced (solution numbers from 1, as on screen)."""
    print(
        f"{len(changes)} label{'s' if len(changes) != 1 else ''} changed from the gold column by the votes and adjudications"
    )
    for change in changes[:limit]:
        say(f"  {terminal_safe(change.id, one_line=True)}: {_label_text(change.gold)} → {_label_text(change.decided)}")
    if len(changes) > limit:
        print(f"  … and {len(changes) - limit} more (--json lists them all)")


def vote_columns(project: Project, items: list[Item]) -> dict[str, list[object]]:
    from piqa_tui.core.votes.decisions import choices, decisions

    width = max((len(i.solutions) for i in items), default=2)
    found = decisions(project)
    columns: dict[str, list[object]] = {f"votes_{k + 1}": [] for k in range(width)}
    columns["status"] = []
    for item in items:
        counts = list(choices(project, item.id).values())
        for k in range(width):
            columns[f"votes_{k + 1}"].append(str(counts.count(k)))
        columns["status"].append(found[item.id].status.value)
    return columns


def run(args: argparse.Namespace) -> int:
    project = open_project(args)
    project.check_outputs(
        output_files(project.dataset, Path(args.to), args.format), replace=args.force
    )  # before any work
    items, changes = export_items(project, args.decided, args.drop_flagged)
    extra = vote_columns(project, items) if args.vote_columns else {}
    if args.flag_column:
        extra["flags"] = [",".join(sorted(project.state.flags.get(i.id, {}))) for i in items]
    written = project.export(
        args.to,
        args.format,
        items=items,
        extra_columns=extra or None,
        replace=args.force,
        escape_formulas=args.escape_formulas,
    )
    summary: dict[str, object] = {
        "written": [str(p) for p in written],
        "items": len(items),
        "edited": len(project.state.edited),
    }
    if args.decided:
        summary["gold_changes"] = [change.to_json() for change in changes]
    spreadsheet = written[0].suffix.lower() in (".csv", ".tsv", ".tab")
    if spreadsheet:
        summary["formula_cells"] = formula_cells(*output_table(project.dataset, items, extra or None))
        summary["formulas_escaped"] = bool(args.escape_formulas)
    if args.json:
        print_json(summary)
        return OK
    dropped = len(project.items) - len(items)
    say(
        f"wrote {len(items)} items ({len(project.state.edited)} edited, {dropped} dropped) to {', '.join(map(str, written))}"
    )
    if args.decided:
        print_changes(changes)
    if spreadsheet and summary["formula_cells"]:
        say(_formula_note(int(summary["formula_cells"]), args.escape_formulas))
    return OK


def _formula_note(count: int, escaped: bool) -> str:
    """What to tell a spreadsheet user about cells that begin with = + - or @."""
    cells = f"{count} cell{'s' if count != 1 else ''} begin{'s' if count == 1 else ''} with = + - or @"
    if escaped:
        return f"{cells}: written with a leading ' so spreadsheets show them as text (--escape-formulas)"
    return (
        f"{cells}: a spreadsheet may run them as formulas; if this file is for Excel, LibreOffice or "
        "Google Sheets, export again with --escape-formulas"
    )
