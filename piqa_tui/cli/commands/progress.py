"""``piqa-tui progress PATH [--by COLUMN]``: how far the round is, per annotator, per item and per group, and how
often people kept what a model wrote (per job and model, ``core.authoring.kept``; only when a model wrote any)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.authoring.kept import KeptRow, kept_rows
from piqa_tui.core.round.adjudication_queue import counts_line, to_adjudicate, to_adjudicate_json
from piqa_tui.core.round.assignment import check_columns
from piqa_tui.core.round.declaration import RoundError
from piqa_tui.core.round.progress import AnnotatorProgress, GroupProgress, Progress, round_progress
from piqa_tui.core.round.recorded import assignment_in_force, round_in_force
from piqa_tui.core.text.bidi_mode import BidiMode, detect_mode
from piqa_tui.core.text.terminal_safe import isolated, kept_isolates, terminal_safe
from piqa_tui.core.votes.decisions import project_policy
from piqa_tui.render.progress import duration, figure


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="coverage per value of this column (default: the columns of the round's 'same' rules)",
    )


def run(args: argparse.Namespace) -> int:
    project = open_project(args)
    declared = round_in_force(project.workspace)
    if declared is None:
        raise RoundError(
            f"{project.dataset.path}: no round in its workspace; import one with piqa-tui round PATH import ROUND.toml"
        )
    by = args.by or list(declared.routing.same)
    for column in by:
        if column not in project.dataset.meta_columns:
            shown = ", ".join(project.dataset.meta_columns[:10]) or "none"
            raise RoundError(f"--by {column}: no such metadata column (have: {shown})")
    check_columns(declared, project.dataset.meta_columns, "the round in force")
    policy = project_policy(project)
    found = round_progress(project, declared, assignment_in_force(project.workspace), by, policy)
    stuck = to_adjudicate(project, policy)
    kept = kept_rows(project)
    if args.json:
        print_json(
            {
                "round": declared.name,
                **found.to_json(),
                "to_adjudicate": to_adjudicate_json(stuck),
                "model_suggestions": [row.to_json() for row in kept],
            }
        )
        return OK
    k = found.validators_per_item
    say(f"round {declared.name or '(unnamed)'}: {found.items} items, {k} validation{'s' * (k != 1)} each")
    _annotators(found.annotators)
    lead = f"{counts_line(stuck)} by the lead (A, with --reviewer)" if stuck else ""
    _say_naming(found.held_line, found.stuck_line)
    for line in (_needs(found), found.held_items_line(), found.panels_line(), lead):
        if line:
            say(line)
    for column, groups in found.groups.items():
        say(f"by {column}: " + "; ".join(_group(g) for g in groups))
    _kept(kept)
    return OK


def _kept(rows: list[KeptRow]) -> None:
    """What people did with the model's words, a line per job and model (nothing when a model wrote none)."""
    if rows:
        say("model suggestions, per job and model (kept rate: kept as the model wrote it / reviewed):")
    for row in rows:
        say(f"  {row.job} by {row.model}: {row.counts_text()}; kept rate {row.rate_text()}")


_HEADINGS = ("annotator", "assigned", "done", "remaining", "decided", "stuck", "items/h", "median s/item", "to finish")
_HELD = "held back"  # a column only when some assigned item left validation: without stages the table is as before


def _annotators(rows: tuple[AnnotatorProgress, ...]) -> None:
    held = any(row.held for row in rows)
    headings = (*_HEADINGS[:3], _HELD, *_HEADINGS[3:]) if held else _HEADINGS
    table = [headings] + [
        (
            row.name + ("" if row.active else " (left)"),
            str(row.assigned),
            str(row.done),
            *([str(row.held)] if held else []),
            str(row.remaining),
            str(row.outcome.decided),
            str(row.outcome.to_adjudicate),
            figure(row.pace.items_per_hour),
            figure(row.pace.median_seconds, 0),
            duration(row.pace.seconds_for(row.remaining)),
        )
        for row in rows
    ]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(headings))]
    for cells in table:
        say(
            "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
            )
        )


def _say_naming(*lines: Callable[[Callable[[str], str]], str]) -> None:
    """Print lines that name annotators (``Progress.held_line``, ``stuck_line``). On a terminal that does bidi
    itself (``bidi_mode.detect_mode``: Konsole, VTE, mlterm, or ``PIQA_TUI_BIDI=terminal``) each name is
    isolated (FSI … PDI), so a right-to-left name cannot pull the counts after it into its run; elsewhere (a
    pipe, a terminal that draws cells in the order received) the line is printed as it always was."""
    bidi = sys.stdout.isatty() and detect_mode() is BidiMode.TERMINAL
    for line in lines:
        text = line(isolated if bidi else str)
        if text and bidi:
            print(kept_isolates(terminal_safe(text)))
        elif text:
            say(text)


def _needs(found: Progress) -> str:
    needs = ", ".join(f"{n}: {count}" for n, count in found.need_counts().items())
    return f"items by validations still needed — {needs}"


def _group(group: GroupProgress) -> str:
    share = "—" if group.coverage is None else f"{group.coverage:.0%}"
    outcome = group.outcome
    why = f": {outcome.stuck_text()}" if outcome.to_adjudicate else ""
    return (
        f"{group.value or '(empty)'} {group.validated}/{group.wanted} ({share}, {group.items} items, "
        f"{outcome.decided} decided, {outcome.to_adjudicate} stuck{why})"
    )
