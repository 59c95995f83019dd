"""``piqa-tui stage PATH [ITEM...] --to STAGE``: move items between the authoring stages (draft, review,
validation, done) as one undoable action; ``--import DRAFTS`` adds a file's items as drafts; without either,
how many items are at each stage and how much the drafts were corrected (per origin and model, too).

``ITEM``, ``--from`` and ``--where`` narrow each other, as they read: ``--from draft --where author=amina`` is
amina's drafts. A move names the items it moved; ``--dry-run`` names those it would move and records nothing."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import asdict

from piqa_tui.cli.commands.batch_change import BatchChange, add_where_argument, condition
from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.round.origin import correction_by_origin
from piqa_tui.core.round.stages import (
    HEAVY_CORRECTION,
    STAGES,
    StageError,
    add_items,
    check_stage,
    correction_rates,
    correction_summary,
    read_drafts,
    stage_of,
    stage_part,
)
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.id_list import name_some


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("items", nargs="*", metavar="ITEM", help="ids of the items to move")
    parser.add_argument("--to", dest="stage", metavar="STAGE", help=f"the stage to move them to: {', '.join(STAGES)}")
    parser.add_argument("--from", dest="source", metavar="STAGE", help="only the items now at this stage")
    add_where_argument(parser)
    parser.add_argument(
        "--import", dest="drafts", metavar="FILE", help="add the items of FILE (any dataset format) as drafts"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say which items would move (or be imported) and record nothing"
    )


def run(args: argparse.Namespace) -> int:
    project = open_project(args, create=bool(args.stage or args.drafts) and not args.dry_run)
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
    if args.dry_run:
        count = len(found.drafts)
        if args.json:
            print_json({"would_import": count, "stage": "draft", "columns_left_out": list(found.left_out)})
        else:
            say(f"would import {count} draft{'s' * (count != 1)} from {args.drafts}; --dry-run recorded nothing")
            if found.left_out:
                say(_left_out_line(found.left_out))
        return OK
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
    names = name_some(columns, shown)
    return (
        f"left out {len(columns)} column{'s' * (len(columns) != 1)} the dataset does not have: {names}; "
        "add the column to the dataset to keep it"
    )


def selected(project: Project, args: argparse.Namespace) -> list[str]:
    """The ids that ``ITEM``, ``--from`` and every ``--where`` all name, in file order: each one given narrows
    the others, so ``--from draft --where author=amina`` is amina's drafts, not every draft and all of amina's."""
    if not (args.items or args.source or args.where):
        raise StageError("name the items to move: ids, --from STAGE or --where COLUMN=VALUE")
    named = {project.item(i).id for i in args.items}  # an unknown id is one line, before anything is recorded
    source = check_stage(args.source) if args.source else None
    wanted = [condition(project, where, StageError) for where in args.where]
    return [
        item.id
        for item in project.items
        if (not args.items or item.id in named)
        and (source is None or stage_of(project, item.id) == source)
        and all(item.meta.get(column, "") == value for column, value in wanted)
    ]


def _filters(args: argparse.Namespace) -> str:
    """The selection in words, for a move that finds no item: "at draft with author=amina"."""
    parts = [f"among {len(args.items)} named"] if args.items else []
    parts += [f"at {args.source}"] if args.source else []
    parts += [f"with {' and '.join(args.where)}"] if args.where else []
    return " ".join(parts)


def _move(project: Project, args: argparse.Namespace) -> int:
    stage = check_stage(args.stage)
    ids = selected(project, args)
    batch = BatchChange("move", "moved", ids, stage_part(project, ids, stage) if ids else None, args.dry_run)
    batch.record(project)
    if args.json:
        print_json(batch.to_json({"stage": stage}))
        return OK
    batch.say_lines(stage, lambda there: f"{there} {'was' if there == 1 else 'were'} there already", _filters(args))
    return OK


def _show(project: Project, args: argparse.Namespace) -> int:
    counts = Counter(stage_of(project, item.id) for item in project.items)
    rates = correction_rates(project)
    summary = correction_summary(rates)
    by_origin = correction_by_origin(project, rates)
    if args.json:
        print_json(
            {
                "stages": {stage: counts[stage] for stage in STAGES},
                "correction_rate": rates,
                "mean_correction_rate": summary.mean if summary else None,
                "share_corrected_over_30_percent": summary.heavy if summary else None,
                "correction_by_origin": [asdict(row) for row in by_origin],
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
    for row in by_origin:
        say(f"  {row.origin}: {row.items} items, {row.corrected} corrected, mean edit rate {row.mean:.1%}")
    return OK
