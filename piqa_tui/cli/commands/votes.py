"""``piqa-tui votes import|export|policy PATH FILE``: votes and adjudications as long-format files, and the
decision policy. ``--answers FILE`` brings the answers to the round's extra questions along, as a file of
their own."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
    warn,
)
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.text.terminal_safe import invisible_twins, message_line, show_invisible, twins_line
from piqa_tui.core.votes.decisions import (
    parse_policy,
    policy_spec,
    project_policy,
    set_project_policy,
)
from piqa_tui.core.votes.exchange import (
    WHOLE_RECORD,
    export_answers,
    export_votes,
    import_answers,
    left_out,
    left_out_line,
)
from piqa_tui.core.votes.files import Lacking, import_votes
from piqa_tui.core.workspace.project import Project

if TYPE_CHECKING:
    from piqa_tui.core.round.declaration import Round


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", choices=["import", "export", "policy"], help="import/export a votes file, or show/set the policy"
    )
    add_dataset_arguments(parser)
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE|POLICY",
        help="votes file (.tsv/.csv/.jsonl/.parquet; long or wide); for policy: majority:2/3 or unanimity:4",
    )
    parser.add_argument(
        "--current", action="store_true", help="export only each annotator's current vote (default: every vote event)"
    )
    parser.add_argument(
        "--answers",
        metavar="ANSWERS",
        help="also export/import the answers to the round's extra questions with this file (.tsv/.csv/.jsonl)",
    )
    parser.add_argument(
        "--force", action="store_true", help="export: replace FILE if it exists (never the dataset or its workspace)"
    )


def run(args: argparse.Namespace) -> int:
    project = open_project(args, create=args.action != "export")
    if args.action == "policy":
        if args.file:
            set_project_policy(project, parse_policy(args.file))
        spec = policy_spec(project_policy(project))
        print_json({"policy": spec}) if args.json else say(f"decision policy: {spec}")
        return OK
    if args.answers and not args.file:
        return exchange_answers(project, args)
    if not args.file:
        print(f"piqa-tui votes {args.action}: error: give the votes FILE", file=sys.stderr)
        return 2
    if args.action == "export":
        if project.workspace is None:
            print(
                f"piqa-tui: error: {message_line(project.dataset.path)} has no workspace yet, so no votes to export",
                file=sys.stderr,
            )
            return 2
        project.check_outputs([Path(args.file)], replace=args.force)
        count = export_votes(project, args.file, current_only=args.current)
        if args.answers:
            exchange_answers(project, args)
        behind = left_out(project, answers=bool(args.answers))
        if args.json:
            print_json({"written": args.file, "votes": count, "left_out": behind, "whole_record": WHOLE_RECORD})
        else:
            say(f"wrote {count} votes and adjudications to {args.file}")
            if behind:
                warn(left_out_line(args.file, behind))
        return OK
    workspace = project.workspace
    known = workspace.annotator_names(ordered=False) if workspace is not None else []  # nothing to read when new
    with gc_paused():  # a tuple per vote, no cycles: a collection would walk 300,000 of them for nothing
        result = import_votes(project, args.file, refresh=False)  # the process ends here: no need to read them back
    if workspace is not None and invisible_twins([*known, *result.annotators]):  # rare: then named in log order
        warn(twins_line(invisible_twins(workspace.annotator_names())))
    if args.answers and exchange_answers(project, args) != OK:
        return DATA_PROBLEMS
    if args.json:
        print_json(
            {
                "read": result.read,
                "new": result.new,
                "shape": result.shape,
                "stamped": result.stamped,
                "adjudications": result.adjudications,
                "new_adjudications": result.new_adjudications,
                "bad": [{b.unit: b.line, "reason": b.reason} for b in result.bad],
                "lacking": (result.lacking or Lacking()).to_json(),
            }
        )
        return DATA_PROBLEMS if result.bad else OK
    for bad in result.bad:  # an id or a name with a zero-width character in it is shown with it
        print(message_line(show_invisible(f"{args.file}: {bad}")), file=sys.stderr)
    if result.stamped:
        say(
            f"{args.file} has no time column: its votes count in file order, stamped with the import time {result.stamped}"
        )
    what, decided = "votes", ""
    if result.adjudications:
        what = "votes and adjudications"
        decided = f" ({result.new_adjudications} of {result.adjudications} adjudications new)"
    say(
        f"read {result.read} {what} ({result.shape} file): {result.new} new, "
        f"{result.read - result.new - len(result.bad)} already recorded, {len(result.bad)} rejected{decided}"
    )
    for line in lacking_lines(result.lacking or Lacking()):
        warn(line)
    return DATA_PROBLEMS if result.bad else OK


def lacking_lines(found: Lacking) -> list[str]:
    """What the imported votes and adjudications were cast on that this copy lacks, a line per kind of lack."""
    lines = []
    if found.unheld_votes:
        lines.append(
            f"{found.unheld_votes} of the file's votes were cast on a solution text this copy never had (edited on "
            f"another machine; a votes file carries no edits): they count for nothing here; {WHOLE_RECORD}"
        )
    if found.edited_votes:
        lines.append(f"{found.edited_votes} of the file's votes were cast on a solution text edited since: stale")
    if found.unheld_adjudications:
        lines.append(
            f"{len(found.unheld_adjudications)} adjudications ({_listed(found.unheld_adjudications)}) chose a "
            f"solution text this copy never had: they decide nothing here; {WHOLE_RECORD}"
        )
    if found.edited_adjudications:
        lines.append(
            f"{len(found.edited_adjudications)} adjudications ({_listed(found.edited_adjudications)}) chose a "
            "solution text edited since: set aside"
        )
    return lines


def _listed(item_ids: tuple[str, ...], shown: int = 5) -> str:
    more = f", and {len(item_ids) - shown} more" if len(item_ids) > shown else ""
    return ", ".join(item_ids[:shown]) + more


def exchange_answers(project: Project, args: argparse.Namespace) -> int:
    """Export or import the answers to the round's extra questions (``--answers FILE``): a file of its own,
    one row per answer (item_id, annotator, question, answer, time); an import checks each answer against
    the round in force and reports a bad row in one line."""
    from piqa_tui.core.round.recorded import round_in_force  # rounds and their questions: only with --answers

    path = Path(args.answers)
    if args.action == "export":
        if project.workspace is None:
            raise PiqaError(f"{project.dataset.path} has no workspace yet, so no answers to export")
        project.check_outputs([path], replace=args.force)
        count = export_answers(project, path, current_only=args.current)
        if not args.json:
            say(f"wrote {count} answers to {args.answers}")
        return OK
    declared = round_in_force(project.workspace)
    result = import_answers(project, path, lambda who, question, raw: _checked_answer(declared, who, question, raw))
    for line, reason in result.bad:
        print(message_line(f"{args.answers}:{line}: {reason}"), file=sys.stderr)
    if args.json:
        if not args.file:  # with a votes file, its summary is the one JSON document printed
            print_json(
                {
                    "answers_read": result.read,
                    "answers_new": result.new,
                    "answers_known": result.known,
                    "answers_bad": len(result.bad),
                }
            )
    else:
        say(
            f"read {result.read} answers: {result.new} new, {result.known} already recorded or older than the "
            f"answer here, {len(result.bad)} rejected"
        )
    return DATA_PROBLEMS if result.bad else OK


def _checked_answer(declared: Round | None, annotator: str, question_id: str, raw: str) -> str:
    """The answer as the round's question stores it; ``PiqaError`` when the round asks no such question, or
    ``annotator`` is no one the round names (whoever answers is a person of the round)."""
    question = declared.question(question_id) if declared is not None else None
    if question is None or declared is None:
        raise PiqaError(f"the round in force asks no question '{question_id}'; import the round file first")
    if declared.annotator(annotator) is None:
        raise PiqaError(
            f"{annotator!r} is not an annotator of the round in force; add them to the round file and import it again"
        )
    return question.answer(raw)
