"""``piqa-tui translate PATH --from SOURCE``: a model translates SOURCE's items into PATH's language as drafts.

Each item of SOURCE (any format the dataset reader knows) becomes a draft of PATH at stage ``draft``, its source
kept beside it in its origin (exported with ``export --origin-columns`` as ``source_goal``, ``source_sol1`` …)
for the post-editors (translate-then-correct, docs/generation.md). The solutions keep their order, so the
source's label (a person's) is the draft's; the model writes none. A translation that nearly copies an item of
PATH or an earlier translation is rejected and counted, its own source never counting (``near_copies``). Ctrl-C
keeps every finished item;
``--resume RUN`` translates only the items the run still lacks.
"""

from __future__ import annotations

import argparse

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments
from piqa_tui.cli.commands.jobs import add_job_arguments, prepare, run_batch
from piqa_tui.core.authoring.runs import Slot
from piqa_tui.core.dataset.reading import parse_dataset, read_source
from piqa_tui.core.errors import InputError
from piqa_tui.core.workspace.project import Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--from", dest="source", metavar="SOURCE", help="the items to translate (a dataset file)")
    parser.add_argument("--limit", type=int, help="translate only the first N items of SOURCE")
    add_job_arguments(parser, "translate")


def run(args: argparse.Namespace) -> int:
    if not args.resume and not args.source:
        raise InputError("give --from SOURCE (the items to translate), or --resume RUN")
    return run_batch(args, prepare(args, "translate", lambda project, template: plan(args, project)), "translating")


def plan(args: argparse.Namespace, project: Project) -> list[Slot]:
    """One slot per item of SOURCE (its id the key), carrying the fields the prompt and the origin need."""
    source = parse_dataset(read_source(args.source))
    items = source.items[: args.limit] if args.limit else source.items
    if not items:
        raise InputError(f"{args.source}: no items to translate")
    columns = set(project.dataset.meta_columns)
    return [
        Slot(
            item.id,
            {k: v for k, v in item.meta.items() if k in columns},
            {"id": item.id, "prompt": item.prompt, "solutions": list(item.solutions), "label": item.label},
        )
        for item in items
    ]
