"""``piqa-tui round PATH import ROUND.toml | show | guidelines FILE.md | questions | reply ID TEXT``: declare the
round (people, roles, routing), show it, record its guidelines, and list and answer the annotators' questions."""

from __future__ import annotations

import argparse
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say, warn
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.round.adjudication_queue import fitting_policy, panel_warning
from piqa_tui.core.round.assignment import check_columns
from piqa_tui.core.round.declaration import Round, RoundError, read_round_file
from piqa_tui.core.round.guidelines import (
    Guidelines,
    GuidelinesError,
    find_question,
    guideline_questions,
    guidelines_in_force,
    guidelines_part,
    read_guidelines_file,
    reply_part,
)
from piqa_tui.core.round.recorded import assignment_in_force, round_in_force, round_part
from piqa_tui.core.text.terminal_safe import show_invisible
from piqa_tui.core.votes.decisions import project_policy
from piqa_tui.core.workspace.project import Project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "action",
        choices=["import", "show", "guidelines", "questions", "reply"],
        help="import a round file; show the round in force; record guidelines (Markdown); list the guideline "
        "questions annotators asked; reply to one (marks it done)",
    )
    parser.add_argument(
        "round_file",
        nargs="?",
        metavar="ROUND.toml | FILE.md | QUESTION",
        help="import: the round file (docs/rounds.md); guidelines: the Markdown file; reply: the question's id",
    )
    parser.add_argument("reply_text", nargs="?", metavar="REPLY", help="reply: the answer to the question")
    parser.add_argument("--open", action="store_true", help="questions: only those without a reply")


def run(args: argparse.Namespace) -> int:
    if args.action == "import":
        return _import(args)
    if args.action in _GUIDELINE_ACTIONS:
        return _GUIDELINE_ACTIONS[args.action](args)
    project = open_project(args)
    declared = round_in_force(project.workspace)
    if declared is None:
        raise RoundError(
            f"{project.dataset.path}: no round in its workspace; import one with piqa-tui round PATH import ROUND.toml"
        )
    assignment = assignment_in_force(project.workspace)
    mine = assignment.by_annotator()
    counts = {person.name: len(mine.get(person.name, ())) for person in declared.annotators}
    guidelines = guidelines_in_force(project.workspace)
    if args.json:
        print_json({**declared.to_json(), "assigned": counts, "guidelines": guidelines and guidelines.to_json()})
    else:
        _show(declared, counts)
        say(f"guidelines: {_version(guidelines)}")
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
    _warn_if_undecidable(declared, project)
    if args.json:
        print_json({"recorded": part is not None, "round": declared.to_json()})
    else:
        done = "imported" if part is not None else "already in force; nothing recorded"
        after = f"next: piqa-tui assign {project.dataset.path}"
        say(f"round {declared.name or '(unnamed)'} {done}: {_summary(declared)}; {after}")
    return OK


def _warn_if_undecidable(declared: Round, project: Project) -> None:
    """Warn when the round's panel can leave items undecided under the votes' decision policy (core's answer)."""
    k = declared.validators_per_item
    solutions = max((len(item.solutions) for item in project.items), default=2)
    line = panel_warning(project_policy(project), k, solutions)
    if line is not None:
        warn(f"{line} — piqa-tui votes policy {project.dataset.path} {fitting_policy(k)}")


def _summary(declared: Round) -> str:
    validators = declared.validators
    routing = declared.routing
    rules = [f"same {', '.join(map(show_invisible, routing.same))}"] if routing.same else []
    rules += [f"never the {', '.join(map(show_invisible, routing.never))}"] if routing.never else []
    rules += ["balanced load"] if routing.balance else []
    return (
        f"{len(declared.annotators)} annotators, {len(validators)} active validators, "
        f"{declared.validators_per_item} validator{'s' * (declared.validators_per_item != 1)} per item, "
        f"routing: {', '.join(rules) or 'none'}, seed {declared.seed}"
        + (", solutions shuffled per validator" if declared.shuffle else "")
    )


def _show(declared: Round, counts: dict[str, int]) -> None:
    """The round as declared. Names, roles and attribute values are shown as they really are (a zero-width
    character as ``<U+200B>``), so two people or countries that print alike cannot be taken for one."""
    say(f"round {show_invisible(declared.name) or '(unnamed)'}: {_summary(declared)}")
    names = {person.name: show_invisible(person.name) for person in declared.annotators}
    width = max(len(name) for name in names.values())
    for person in declared.annotators:
        attributes = "; ".join(
            f"{show_invisible(key)} {', '.join(map(show_invisible, values))}" for key, values in person.attributes
        )
        state = "" if person.active else " (left)"
        say(
            f"  {names[person.name].ljust(width)}  {', '.join(map(show_invisible, person.roles))}{state}"
            f"{'  ' + attributes if attributes else ''}  assigned {counts.get(person.name, 0)}"
        )
    for line in question_lines(declared):
        say(line)


def question_lines(declared: Round) -> list[str]:
    """The round's extra questions, one line each: id, kind, the answers it takes, policy and text."""
    lines = ["questions:"] if declared.questions else []
    return lines + [
        f"  {show_invisible(q.id)}  {q.kind} ({q.hint}), policy {q.policy}: {q.text}" for q in declared.questions
    ]


# --------------------------------------------------------------------------- guidelines and questions


def _version(guidelines: Guidelines | None) -> str:
    if guidelines is None:
        return "none recorded (piqa-tui round PATH guidelines FILE.md)"
    return (
        f"version {guidelines.version}, sha256 {guidelines.sha256}, "
        f"recorded by {guidelines.recorded_by} at {guidelines.time}"
    )


def _guidelines(args: argparse.Namespace) -> int:
    if not args.round_file:
        raise GuidelinesError("piqa-tui round guidelines: give the Markdown file, e.g. round data.tsv guidelines g.md")
    text = read_guidelines_file(Path(args.round_file))
    project = open_project(args, create=True)
    assert project.workspace is not None  # create=True makes one
    part = guidelines_part(text, project.workspace)
    if part is not None:
        project.record([part])
    recorded = guidelines_in_force(project.workspace)
    if args.json:
        print_json({"recorded": part is not None, "guidelines": recorded and recorded.to_json()})
    else:
        done = "recorded" if part is not None else "already in force; nothing recorded"
        say(f"guidelines {done}: {_version(recorded)}")
    return OK


def _questions(args: argparse.Namespace) -> int:
    project = open_project(args)
    found = [q for q in guideline_questions(project.workspace) if q.open or not args.open]
    if args.json:
        print_json({"questions": [q.to_json() for q in found]})
        return OK
    waiting = sum(q.open for q in found)
    say(f"{len(found)} guideline question{'s' * (len(found) != 1)}, {waiting} without a reply")
    for q in found:
        say(f"  {q.id}  item {q.item_id}  {q.asked_by} at {q.time}{'' if q.open else '  (answered)'}")
        say(f"      asked: {q.text}")
        if not q.open:
            say(f"      reply by {q.replied_by}: {q.reply}")
    return OK


def _reply(args: argparse.Namespace) -> int:
    if not args.round_file or not args.reply_text:
        raise GuidelinesError(
            'piqa-tui round reply: give the question\'s id and the reply, e.g. round data.tsv reply q-1a2b3c "text"'
        )
    project = open_project(args, create=True)
    question = find_question(project.workspace, args.round_file)
    project.record([reply_part(question, args.reply_text)])
    if args.json:
        print_json({"replied": find_question(project.workspace, question.id).to_json()})
    else:
        say(f"replied to {question.id} on item {question.item_id}: marked done")
    return OK


_GUIDELINE_ACTIONS = {"guidelines": _guidelines, "questions": _questions, "reply": _reply}
