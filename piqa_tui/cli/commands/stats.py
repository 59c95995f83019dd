"""``piqa-tui stats PATH``: counts, label balance, lengths, scripts, categorical breakdowns."""

from __future__ import annotations

import argparse

from rich.console import Console

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.report.stats import compute_stats
from piqa_tui.render.safe_text import markup_safe
from piqa_tui.render.stats import StatsTables, stats_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)


def run(args: argparse.Namespace) -> int:
    project = open_project(args)
    stats = compute_stats(project.items, project.dataset.meta_columns)
    if args.json:
        print_json({"path": str(project.dataset.path), "layout": project.dataset.layout.to_json(), **stats_json(stats)})
    else:
        console = Console()
        console.print(
            f"[bold]{markup_safe(project.dataset.name, one_line=True)}[/] — {project.dataset.format}, layout {project.dataset.layout.name}"
        )
        console.print(StatsTables(stats))
    return OK
