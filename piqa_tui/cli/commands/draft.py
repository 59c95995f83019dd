"""``piqa-tui draft PATH --meta category=cooking,cleaning --count 5``: a model drafts new items into stage ``draft``.

Each combination of the ``--meta`` values (``COLUMN=V1,V2``; the columns must be the dataset's) is asked for
``--count`` times; each request shows a few of the dataset's items nearest those values as examples. Drafts that
nearly copy the dataset or an earlier draft, lexically or in meaning, are rejected and counted (``near_copies``). The model writes a goal and solutions,
never a label: the validators' votes decide it (draft-then-validate, docs/generation.md). Ctrl-C keeps every
finished item; ``--resume RUN`` asks only for the items the run still lacks.
"""

from __future__ import annotations

import argparse
import itertools

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments
from piqa_tui.cli.commands.jobs import add_job_arguments, prepare, run_batch
from piqa_tui.core.authoring.job_templates import JobTemplate
from piqa_tui.core.authoring.runs import Slot
from piqa_tui.core.errors import InputError
from piqa_tui.core.workspace.project import Project

MAX_SLOTS = 100_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="COLUMN=V1,V2",
        help="metadata values to draft for (repeat for more columns; every combination is asked for)",
    )
    parser.add_argument("--count", type=int, default=1, help="drafts per combination of --meta values (default 1)")
    add_job_arguments(parser, "draft")


def run(args: argparse.Namespace) -> int:
    return run_batch(args, prepare(args, "draft", lambda project, template: plan(args, project, template)), "drafting")


def plan(args: argparse.Namespace, project: Project, template: JobTemplate) -> list[Slot]:
    """One slot per combination of the ``--meta`` values, ``--count`` times each; InputError for a bad option."""
    columns: dict[str, list[str]] = {}
    for given in args.meta:
        column, sep, values = given.partition("=")
        if not sep or not column.strip() or not values.strip():
            raise InputError(f"--meta {given!r}: write COLUMN=VALUE or COLUMN=V1,V2")
        if column not in project.dataset.meta_columns:
            have = ", ".join(project.dataset.meta_columns) or "none"
            raise InputError(f"--meta {column}: {project.dataset.path.name} has no such column (its columns: {have})")
        columns[column] = [v.strip() for v in values.split(",") if v.strip()]
    if not 1 <= args.count <= MAX_SLOTS:
        raise InputError(f"--count must be from 1 to {MAX_SLOTS:,}")
    combos = [dict(zip(columns, values)) for values in itertools.product(*columns.values())]
    missing = [column for column in template.meta_columns() if column not in columns]
    if missing:
        raise InputError(f"template {template.name!r} shows {{meta:{missing[0]}}}; give --meta {missing[0]}=…")
    if len(combos) * args.count > MAX_SLOTS:
        raise InputError(f"{len(combos) * args.count:,} drafts asked for; ask for at most {MAX_SLOTS:,} in one run")
    return [Slot(str(n), combo) for n, combo in enumerate(c for c in combos for _ in range(args.count))]
