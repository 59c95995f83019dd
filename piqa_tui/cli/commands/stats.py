"""``piqa-tui stats PATH``: counts, label balance, lengths, scripts, categorical breakdowns."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import progress_line, reading
from piqa_tui.core.errors import InputError
from piqa_tui.core.report.stats import compute_stats
from piqa_tui.render.safe_text import rich_text
from piqa_tui.render.stats import SHOWN_BREAKDOWNS, StatsTables, stats_json

if TYPE_CHECKING:
    from piqa_tui.core.workspace.project import Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="show the breakdown of this column (default: the first 20 categorical columns)",
    )


def run(args: argparse.Namespace) -> int:
    with progress_line(args) as progress:
        progress.show(reading(args))
        project = open_project(args)
        progress.show(f"counting {len(project.items):,} items")
        stats = compute_stats(project.items, project.dataset.meta_columns)
        if args.by:
            stats.categories = {column: _counts_of(project, stats.categories, column) for column in args.by}
    if args.json:
        print_json({"path": str(project.dataset.path), "layout": project.dataset.layout.to_json(), **stats_json(stats)})
    else:
        console = Console()
        heading = rich_text(project.dataset.name, "bold", one_line=True)
        dataset = project.dataset
        heading.append_text(rich_text(f" — {dataset.format}, layout {dataset.layout.name}", highlight=True))
        console.print(heading)
        console.print(StatsTables(stats, limit=None if args.by else SHOWN_BREAKDOWNS))
    return OK


def _counts_of(project: Project, categories: dict[str, dict[str, int]], column: str) -> dict[str, int]:
    """Items per value of ``column`` (any metadata column, categorical or not); InputError naming the choices."""
    if column in categories:
        return categories[column]
    if column not in project.dataset.meta_columns:
        raise InputError(
            f"--by {column}: no such metadata column (have: {', '.join(project.dataset.meta_columns[:10])})"
        )
    return dict(Counter(item.meta.get(column, "") for item in project.items).most_common())
