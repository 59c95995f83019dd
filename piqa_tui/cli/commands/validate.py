"""``piqa-tui validate PATH``: one line per problem, a summary, exit 1 on any error."""

from __future__ import annotations

import argparse
import os

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    warn,
)
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.cli.progress import progress_line, reading
from piqa_tui.core.dataset.checks import RULES, CheckConfig, check_items, summary
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.terminal_safe import (
    invisible_twins,
    terminal_safe,
    twins_line,
)
from piqa_tui.core.workspace.project import Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--max-differences", type=int, default=2, metavar="N", help="words solutions may differ by (default 2)"
    )
    parser.add_argument(
        "--min-words", type=int, default=0, metavar="N", help="length policy: prompt+solutions at least N words (off)"
    )
    parser.add_argument("--rule", action="append", metavar="NAME", help=f"only these rules ({', '.join(RULES)})")
    parser.add_argument("--skip", action="append", default=[], metavar="NAME", help="skip these rules")


def run(args: argparse.Namespace) -> int:
    for name in (args.rule or []) + args.skip:
        if name not in RULES:
            raise PiqaError(f"unknown rule '{name}'; rules are: {', '.join(RULES)}")
    config = CheckConfig(
        max_differences=args.max_differences,
        min_words=args.min_words,
        rules=frozenset(args.rule) if args.rule else None,
        skip=frozenset(args.skip),
    )
    with progress_line(args) as progress:
        progress.show(reading(args))
        project = open_project(args)
        progress.show(f"checking {len(project.items):,} items")
        problems = check_items(project.items, project.dataset.raw_ids, config)
    errors = sum(1 for p in problems if p.level == "error")
    for line in look_alikes(project):
        warn(line)
    if args.json:
        print_json(
            {
                "path": str(project.dataset.path),
                "items": len(project.items),
                "errors": errors,
                "warnings": len(problems) - errors,
                "summary": summary(problems),
                "problems": [p.to_json() for p in problems],
            }
        )
    else:
        for p in problems:
            print("\t".join(terminal_safe(cell, one_line=True) for cell in (p.item_id, p.level, p.rule, p.detail)))
        counts = ", ".join(f"{rule}: {n}" for rule, n in summary(problems).items()) or "no problems"
        print(f"{len(project.items)} items, {errors} errors, {len(problems) - errors} warnings ({counts})")
    return DATA_PROBLEMS if errors else OK


def look_alikes(project: Project) -> list[str]:
    """Warnings for names that print like another: item ids differing only by invisible characters, and the
    dataset's file name when another file in its folder differs from it only so (typing what is shown opens
    the other one). A name with a zero-width joiner alone, as Persian or Indic names have, is not reported."""
    lines = []
    if twins := invisible_twins(item.id for item in project.items):
        lines.append(twins_line(twins, "item ids"))
    path = project.dataset.path
    try:
        names = os.listdir(path.parent)
    except OSError:
        names = []
    if pairs := [pair for pair in invisible_twins(sorted(names)) if path.name in pair]:
        lines.append(twins_line(pairs, "file names"))
    return lines
