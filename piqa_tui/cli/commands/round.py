"""``piqa-tui round PATH import ROUND.toml | show``: declare the round (people, roles, routing) and show it."""

from __future__ import annotations

import argparse
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.round.assignment import check_columns
from piqa_tui.core.round.declaration import Round, RoundError, read_round_file
from piqa_tui.core.round.recorded import assignment_in_force, round_in_force, round_part


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("action", choices=["import", "show"], help="import a round file, or show the round in force")
    parser.add_argument("round_file", nargs="?", metavar="ROUND.toml", help="import: the round file (docs/rounds.md)")


def run(args: argparse.Namespace) -> int:
    if args.action == "import":
        return _import(args)
    project = open_project(args)
    declared = round_in_force(project.workspace)
    if declared is None:
        raise RoundError(
            f"{project.dataset.path}: no round in its workspace; import one with piqa-tui round PATH import ROUND.toml"
        )
    assignment = assignment_in_force(project.workspace)
    counts = {person.name: len(assignment.of(person.name)) for person in declared.annotators}
    if args.json:
        print_json({**declared.to_json(), "assigned": counts})
    else:
        _show(declared, counts)
    return OK


def _import(args: argparse.Namespace) -> int:
    if not args.round_file:
        raise RoundError("piqa-tui round import: give the round file, e.g. piqa-tui round data.tsv import round.toml")
    source = Path(args.round_file)
    declared = read_round_file(source)
    project = open_project(args, create=True)
    check_columns(declared, project.dataset.meta_columns, str(source))
    assert project.workspace is not None  # create=True makes one
    part = round_part(declared, project.workspace)
    if part is not None:
        project.record([part])
    if args.json:
        print_json({"recorded": part is not None, "round": declared.to_json()})
    else:
        done = "imported" if part is not None else "already in force; nothing recorded"
        after = f"next: piqa-tui assign {project.dataset.path}"
        say(f"round {declared.name or '(unnamed)'} {done}: {_summary(declared)}; {after}")
    return OK


def _summary(declared: Round) -> str:
    validators = declared.validators
    routing = declared.routing
    rules = [f"same {', '.join(routing.same)}"] if routing.same else []
    rules += [f"never the {', '.join(routing.never)}"] if routing.never else []
    rules += ["balanced load"] if routing.balance else []
    return (
        f"{len(declared.annotators)} annotators, {len(validators)} active validators, "
        f"{declared.validators_per_item} validator{'s' * (declared.validators_per_item != 1)} per item, "
        f"routing: {', '.join(rules) or 'none'}, seed {declared.seed}"
        + (", solutions shuffled per validator" if declared.shuffle else "")
    )


def _show(declared: Round, counts: dict[str, int]) -> None:
    say(f"round {declared.name or '(unnamed)'}: {_summary(declared)}")
    width = max(len(a.name) for a in declared.annotators)
    for person in declared.annotators:
        attributes = "; ".join(f"{key} {', '.join(values)}" for key, values in person.attributes)
        state = "" if person.active else " (left)"
        say(
            f"  {person.name.ljust(width)}  {', '.join(person.roles)}{state}"
            f"{'  ' + attributes if attributes else ''}  assigned {counts.get(person.name, 0)}"
        )
    for line in question_lines(declared):
        say(line)


def question_lines(declared: Round) -> list[str]:
    """The round's extra questions, one line each: id, kind, the answers it takes, policy and text."""
    lines = ["questions:"] if declared.questions else []
    return lines + [f"  {q.id}  {q.kind} ({q.hint}), policy {q.policy}: {q.text}" for q in declared.questions]
