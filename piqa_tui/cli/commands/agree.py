"""``piqa-tui agree PATH``: inter-annotator agreement from the recorded votes."""

from __future__ import annotations

import argparse

from rich.console import Console

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.report.stats import categorical_columns
from piqa_tui.core.votes.decisions import (
    decision_counts,
    gold_changes,
    policy_spec,
    project_agreement,
    project_policy,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--by", action="append", metavar="COLUMN", help="break down by this column (default: every categorical column)")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables to paste into a paper")


def run(args: argparse.Namespace) -> int:
    project = open_project(args)
    by = args.by if args.by else categorical_columns(project.items, project.dataset.meta_columns)
    report, breakdowns = project_agreement(project, by)
    statuses = decision_counts(project)
    if args.json:
        print_json(
            {
                **report.to_json(),
                "policy": policy_spec(project_policy(project)),
                "status": statuses,
                "gold_changes": [change.to_json() for change in gold_changes(project)],
                "by": {column: b.to_json() for column, b in breakdowns.items()},
            }
        )
        return OK
    if args.markdown:
        print(report.to_markdown())
        for breakdown in breakdowns.values():
            print()
            print(breakdown.to_markdown())
        return OK
    console = Console()
    console.print(f"[bold]{project.dataset.name}[/] — policy {policy_spec(project_policy(project))}; "
                  + ", ".join(f"{k}: {v}" for k, v in statuses.items()))
    console.print(report)
    for breakdown in breakdowns.values():
        console.print(breakdown)
    return OK
