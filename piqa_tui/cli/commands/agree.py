"""``piqa-tui agree PATH``: inter-annotator agreement from the recorded votes."""

from __future__ import annotations

import argparse

from rich.console import Console

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
    warn,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import progress_line, reading
from piqa_tui.core.report.stats import categorical_columns
from piqa_tui.core.round.adjudication_queue import counts_line, to_adjudicate, to_adjudicate_json
from piqa_tui.core.round.positions import PositionReport, position_report
from piqa_tui.core.text.terminal_safe import invisible_twins, message_line, terminal_safe, twins_line
from piqa_tui.core.votes.decisions import agreement_summary, gold_changes_json, policy_spec, set_aside
from piqa_tui.core.votes.exchange import texts_held
from piqa_tui.core.votes.uncertainty import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, Bootstrap
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.agreement import (
    BreakdownTable,
    ReportTables,
    breakdown_json,
    position_heading,
    report_json,
    set_aside_json,
    set_aside_line,
    summary_markdown,
)
from piqa_tui.render.questions import QuestionTables, questions_section, round_question_agreements
from piqa_tui.render.safe_text import rich_text
from piqa_tui.render.stats import SHOWN_BREAKDOWNS, more_columns_line

DOUBTS_LISTED = 20  # the lowest-scored labels in doubt agree --json lists; the count always covers them all


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--by", action="append", metavar="COLUMN", help="break down by this column (default: every categorical column)"
    )
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables to paste into a paper")
    add_interval_arguments(parser)
    parser.add_argument(
        "--top",
        type=_top,
        default=DOUBTS_LISTED,
        metavar="N|all",
        help=f"--json: labels in doubt to list, lowest score first (default {DOUBTS_LISTED}; all: every one, "
        "as audit --json --top N)",
    )


def _top(text: str) -> int | None:
    """``--top``'s count (None: all)."""
    return None if text.strip().lower() == "all" else _count(text, "none listed", " or 'all'")


def _count(text: str, zero: str, other: str = "") -> int:
    """A whole number of 0 or more from the command line (``zero``: what 0 means; ``other``: what else it may be)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number{other}: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 ({zero}) or more{other}, got {text}")
    return value


def add_interval_arguments(parser: argparse.ArgumentParser) -> None:
    """``--resamples`` and ``--seed``: how the bootstrap intervals are made (the defaults give the same every run)."""
    parser.add_argument(
        "--resamples",
        type=_resamples,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"bootstrap resamples of the items for the {DEFAULT_LEVEL * 100:.0f}%% intervals "
        f"(default {DEFAULT_RESAMPLES}; 0: no intervals)",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed of the bootstrap (default {DEFAULT_SEED})"
    )


def _resamples(text: str) -> int:
    return _count(text, "no intervals")


def bootstrap_of(args: argparse.Namespace) -> Bootstrap | None:
    """The bootstrap the arguments ask for (None: ``--resamples 0``, no intervals)."""
    return Bootstrap(args.resamples, DEFAULT_LEVEL, args.seed) if args.resamples else None


def doubt_json(project: Project, top: int | None = DOUBTS_LISTED) -> dict[str, object]:
    """The labels in doubt: how many, and the lowest ``top`` (None: all) each with its score and reason
    (``piqa-tui audit`` adds the posteriors and the annotators)."""
    from piqa_tui.core.quality.audit import audit_labels
    from piqa_tui.settings.template_catalog import available_templates

    audit = audit_labels(project, known=available_templates(), annotators=False)
    listed = [doubt.brief_json() for doubt in audit.ranked(top)]
    return {**audit.summary_json(), "listed": len(listed), "items": listed}


def run(args: argparse.Namespace) -> int:
    with progress_line(args) as progress:
        progress.show(reading(args))
        project = open_project(args)
        progress.show(f"counting the votes on {len(project.items):,} items")
        by = args.by if args.by else categorical_columns(project.items, project.dataset.meta_columns)
        hidden = 0
        if not args.by and not args.json and len(by) > SHOWN_BREAKDOWNS:
            hidden, by = len(by) - SHOWN_BREAKDOWNS, by[:SHOWN_BREAKDOWNS]  # tables nobody reads cost time too
        found = agreement_summary(project, by, bootstrap=bootstrap_of(args))
        aside = set_aside(project)
        held = texts_held(project, aside)
        stuck = to_adjudicate(project, found.policy)
        positions = position_report(project)
    if twins := invisible_twins(found.report.annotators):
        warn(twins_line(twins))
    if args.json:
        print_json(
            {
                **report_json(found.report),
                "policy": policy_spec(found.policy),
                "status": found.statuses,
                "gold_changes": gold_changes_json(project, found.policy),
                "set_aside": [set_aside_json(item_id, a, held[item_id]) for item_id, a in aside.items()],
                "to_adjudicate": to_adjudicate_json(stuck),
                "by": {column: breakdown_json(b) for column, b in found.breakdowns.items()},
                "doubt": doubt_json(project, args.top),
                "position_preference": [p.to_json() for p in positions.preferences],
                "position_preference_left_out": positions.to_json(),
                "questions": [q.to_json() for q in round_question_agreements(project)],
            }
        )
        return OK
    if args.markdown:  # the very text the TUI's agreement screen copies (y) and saves (w)
        print(terminal_safe(summary_markdown(found, project.dataset.name)))
        if hidden:
            say(f"\n{more_columns_line(hidden)}")
        if questions := round_question_agreements(project):
            print(terminal_safe(questions_section(questions)))
        return OK
    console = Console()
    heading = rich_text(project.dataset.name, "bold", one_line=True)
    statuses = ", ".join(f"{k}: {v}" for k, v in found.statuses.items())
    heading.append_text(rich_text(f" — policy {policy_spec(found.policy)}; {statuses}", highlight=True))
    console.print(heading)
    for item_id, adjudication in aside.items():
        say(message_line(set_aside_line(item_id, adjudication, held[item_id])))
    if stuck:
        say(f"{counts_line(stuck)}: a reviewer settles them with A (piqa-tui {project.dataset.path} --reviewer)")
    console.print(ReportTables(found.report))
    for breakdown in found.breakdowns.values():
        console.print(BreakdownTable(breakdown))
    if hidden:
        say(more_columns_line(hidden))
    if questions := round_question_agreements(project):
        console.print(QuestionTables(questions))
    _position_lines(positions)
    return OK


def _position_lines(found: PositionReport) -> None:
    """Each annotator's solution position furthest from chance, as shown to them (shuffled or file order), and
    the votes left out because the order they were shown in is unknown here."""
    for line in position_heading(found):
        say(message_line(line))
    for preference in found.preferences:
        say(f"  {preference.describe()}")
