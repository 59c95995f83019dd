"""``piqa-tui correct PATH``: a model corrects machine-made items; each change it makes is a pending suggestion.

The translate-then-correct pipeline's second step (docs/generation.md, "Batch correction"): by default the items
at stage ``draft`` whose origin is ``translated`` or ``drafted`` (``--stage``, ``--origin``, ``--ids``,
``--limit`` choose others), each shown with its source and people's earlier corrections of machine text in this
workspace (the ``correct-translation`` template). Nothing is written into an item: each changed field is a
suggestion a person takes change by change. Items that already have a correction suggestion are skipped. Ctrl-C
keeps every finished batch; ``--resume RUN`` asks only for the items the run has not answered.
"""

from __future__ import annotations

import argparse

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments
from piqa_tui.cli.commands.jobs import add_job_arguments, prepare, run_batch
from piqa_tui.core.authoring.correcting import (
    CORRECT_JOB,
    DEFAULT_ORIGINS,
    DEFAULT_STAGES,
    correction_slot,
    correction_targets,
)
from piqa_tui.core.authoring.runs import Slot
from piqa_tui.core.errors import InputError
from piqa_tui.core.round.origin import FILE
from piqa_tui.core.round.stages import STAGES
from piqa_tui.core.workspace.event_rules import ORIGIN_KINDS
from piqa_tui.core.workspace.project import Project

DEFAULT_TEMPLATE = "correct-translation"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--stage",
        default=",".join(DEFAULT_STAGES),
        help="correct items at these stages, comma-separated (default draft)",
    )
    parser.add_argument(
        "--origin",
        default=",".join(DEFAULT_ORIGINS),
        metavar="KINDS",
        help=f"correct items of these origins, comma-separated (default {','.join(DEFAULT_ORIGINS)})",
    )
    parser.add_argument("--ids", default="", metavar="ID,ID", help="correct only these items")
    parser.add_argument("--limit", type=int, help="correct only the first N items chosen")
    add_job_arguments(parser, CORRECT_JOB, DEFAULT_TEMPLATE)


def run(args: argparse.Namespace) -> int:
    return run_batch(args, prepare(args, CORRECT_JOB, lambda project, template: plan(args, project)), "correcting")


def plan(args: argparse.Namespace, project: Project) -> list[Slot]:
    """One slot per item to correct (its id the key); InputError (one line) for a bad option or no items."""
    stages = _choices(args.stage, "--stage", STAGES)
    origins = _choices(args.origin, "--origin", (*ORIGIN_KINDS, FILE))
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be 1 or more")
    ids = [item_id.strip() for item_id in args.ids.split(",") if item_id.strip()]
    return [correction_slot(item) for item in correction_targets(project, stages, origins, ids, args.limit)]


def _choices(given: str, option: str, known: tuple[str, ...]) -> list[str]:
    chosen = [value.strip() for value in given.split(",") if value.strip()]
    wrong = [value for value in chosen if value not in known]
    if wrong or not chosen:
        raise InputError(f"{option} {wrong[0] if wrong else given!r}: choose from {', '.join(sorted(known))}")
    return chosen
