"""``piqa-tui stage PATH [ITEM...] --to STAGE``: move items between the authoring stages (draft, review,
validation, done) as one undoable action; ``--import DRAFTS`` adds a file's items as drafts; without either,
how many items are at each stage and how much the drafts were corrected."""

from __future__ import annotations

import argparse
from collections import Counter

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.round.stages import (
    HEAVY_CORRECTION,
    STAGES,
    StageError,
    add_items,
    check_stage,
    correction_rates,
    correction_summary,
    read_drafts,
    set_stage,
    stage_of,
)
from piqa_tui.core.workspace.project import Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("items", nargs="*", metavar="ITEM", help="ids of the items to move")
    parser.add_argument("--to", dest="stage", metavar="STAGE", help=f"the stage to move them to: {', '.join(STAGES)}")
    parser.add_argument("--from", dest="source", metavar="STAGE", help="move every item now at this stage")
    parser.add_argument("--where", metavar="COLUMN=VALUE", help="move every item whose column holds this value")
    parser.add_argument(
        "--import", dest="drafts", metavar="FILE", help="add the items of FILE (any dataset format) as drafts"
    )


def run(args: argparse.Namespace) -> int:
    project = open_project(args, create=bool(args.stage or args.drafts))
    if args.drafts:
        return _import(project, args)
    if args.stage:
        return _move(project, args)
    if args.items or args.source or args.where:
        raise StageError("say where the items go with --to STAGE (or leave out ITEM, --from and --where to list)")
    return _show(project, args)


def _import(project: Project, args: argparse.Namespace) -> int:
    if args.stage or args.items:
        raise StageError("--import adds drafts on its own; move them later with --to")
    found = read_drafts(project, args.drafts)
    ids = add_items(project, found.drafts)
    if args.json:
        print_json({"imported": ids, "stage": "draft", "columns_left_out": list(found.left_out)})
        return OK
    say(f"imported {len(ids)} draft{'s' * (len(ids) != 1)} from {args.drafts} (ids {ids[0]} …); undo takes them away")
    if found.left_out:
        say(_left_out_line(found.left_out))
    return OK


def _left_out_line(columns: tuple[str, ...], shown: int = 10) -> str:
    """The line naming the drafts file's columns an import left out (the first ``shown`` of them)."""
    names = ", ".join(columns[:shown]) + (f" and {len(columns) - shown} more" if len(columns) > shown else "")
    return (
        f"left out {len(columns)} column{'s' * (len(columns) != 1)} the dataset does not have: {names}; "
        "add the column to the dataset to keep it"
    )


def selected(project: Project, args: argparse.Namespace) -> list[str]:
    """The ids ``ITEM``, ``--from`` and ``--where`` name (all of them when several are given), in file order."""
    if not (args.items or args.source or args.where):
        raise StageError("name the items to move: ids, --from STAGE or --where COLUMN=VALUE")
    chosen = [project.item(i).id for i in args.items]
    if args.source:
        check_stage(args.source)
        chosen += [item.id for item in project.items if stage_of(project, item.id) == args.source]
    if args.where:
        column, sep, value = args.where.partition("=")
        if not sep or column not in project.dataset.meta_columns:
            raise StageError(f"--where {args.where}: give COLUMN=VALUE with one of the file's columns")
        chosen += [item.id for item in project.items if item.meta.get(column, "") == value]
    return list(dict.fromkeys(chosen))


def _move(project: Project, args: argparse.Namespace) -> int:
    stage = check_stage(args.stage)
    ids = selected(project, args)
    moved = set_stage(project, ids, stage) if ids else 0
    if args.json:
        print_json({"stage": stage, "selected": len(ids), "moved": moved})
    else:
        say(f"moved {moved} of {len(ids)} item{'s' * (len(ids) != 1)} to {stage} (the others were there already)")
    return OK


def _show(project: Project, args: argparse.Namespace) -> int:
    counts = Counter(stage_of(project, item.id) for item in project.items)
    rates = correction_rates(project)
    summary = correction_summary(rates)
    if args.json:
        print_json(
            {
                "stages": {stage: counts[stage] for stage in STAGES},
                "correction_rate": rates,
                "mean_correction_rate": summary.mean if summary else None,
                "share_corrected_over_30_percent": summary.heavy if summary else None,
            }
        )
        return OK
    say("  ".join(f"{stage} {counts[stage]}" for stage in STAGES))
    if summary is not None:
        say(
            f"correction: {summary.corrected} of {summary.items} items in the authoring stages corrected, "
            f"mean character edit rate {summary.mean:.1%}, {summary.heavy:.0%} corrected more than "
            f"{HEAVY_CORRECTION:.0%}"
        )
    return OK
