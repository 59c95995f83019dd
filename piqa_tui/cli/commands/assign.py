"""``piqa-tui assign PATH [--seed N] [--top-up] [--dry-run]``: draw who validates which item, as one undoable
action, and name the items whose validators changed; ``--dry-run`` draws and reports the same, recording nothing.

``assign PATH --item ID --to NAME`` gives one item to one validator of the round by hand, and ``--item ID
--panel N`` sets how many validators that item takes (``N`` the round's ``validators_per_item``: back to it):
``assign`` events like a draw's, so they travel, merge and undo the same way, and a later draw or top-up
fills or keeps places to that size."""

from __future__ import annotations

import argparse
from collections import Counter

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.round.assignment import Draw, check_columns, draw
from piqa_tui.core.round.declaration import Round, RoundError
from piqa_tui.core.round.recorded import (
    Assignment,
    assignment_in_force,
    assignment_part,
    given_part,
    panel_part,
    round_in_force,
)
from piqa_tui.core.round.stages import FILE_STAGE, stage_of
from piqa_tui.core.votes.blind import has_voted
from piqa_tui.core.workspace.log import Part
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.id_list import name_some


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--seed", type=int, metavar="N", help="seed of the draw (default: the round's)")
    parser.add_argument(
        "--top-up",
        action="store_true",
        help="keep the assignment in force and fill only missing places (someone left or joined)",
    )
    parser.add_argument("--dry-run", action="store_true", help="draw and say what would change, recording nothing")
    parser.add_argument("--item", metavar="ID", help="one item, given by hand (--to) or given a panel size (--panel)")
    parser.add_argument(
        "--to", dest="validator", metavar="NAME", help="with --item: give the item to this validator of the round"
    )
    parser.add_argument("--panel", type=int, metavar="N", help="with --item: the item takes N validators")


def run(args: argparse.Namespace) -> int:
    project = open_project(args, create=not args.dry_run)
    declared = round_in_force(project.workspace)
    if declared is None:
        raise RoundError(
            f"{project.dataset.path}: no round in its workspace; import one first with "
            "piqa-tui round PATH import ROUND.toml"
        )
    check_columns(declared, project.dataset.meta_columns, "the round in force")
    before = assignment_in_force(project.workspace)
    if args.item is not None or args.validator is not None or args.panel is not None:
        return _by_hand(args, project, declared, before)
    found = draw(
        declared,
        project.items,
        args.seed,
        keep=before if args.top_up else None,
        done=lambda item_id, name: has_voted(project, item_id, name),
        ready=lambda item_id: stage_of(project, item_id) == FILE_STAGE,
        held=before,
    )
    note = f"seed {found.seed}{' top-up' if args.top_up else ''}"
    part = assignment_part(before, found.assignment, note)
    if part is not None and not args.dry_run:
        project.record([part])
    if args.json:
        print_json(_json(declared, found, part, args.dry_run))
    else:
        _report(declared, found, part, args.top_up, args.dry_run)
    return DATA_PROBLEMS if found.unstaffed else OK


def _changed_items(part: Part | None) -> list[str]:
    """The items whose validators the draw changes (given or taken back), in id order."""
    return sorted({str(change.item_id) for change in part.changes}) if part is not None else []


def _loads(declared: Round, found: Draw) -> dict[str, int]:
    load = Counter(name for names in found.assignment.items.values() for name in names)
    return {a.name: load[a.name] for a in declared.validators} | dict(load)


def _json(declared: Round, found: Draw, part: Part | None, dry_run: bool) -> dict[str, object]:
    changes = len(part.changes) if part is not None else 0
    return {
        "seed": found.seed,
        "dry_run": dry_run,
        "changes_recorded": 0 if dry_run else changes,
        "changes_drawn": changes,
        "items_changed": _changed_items(part),
        "kept": found.kept,
        "released": found.released,
        "not_at_validation": found.waiting,
        "per_annotator": _loads(declared, found),
        "assignment": {item: list(names) for item, names in found.assignment.items.items()},
        "unstaffed": [u.to_json() for u in found.unstaffed],
    }


def _report(declared: Round, found: Draw, part: Part | None, top_up: bool, dry_run: bool) -> None:
    changes = len(part.changes) if part is not None else 0
    pairs = sum(len(names) for names in found.assignment.items.values())
    counted = f"{changes} change{'s' * (changes != 1)}"
    if dry_run:
        recorded = f"{counted} drawn, none recorded (--dry-run)" if changes else "nothing would change"
    else:
        recorded = f"{counted} recorded" if changes else "nothing changed"
    kept = (
        f"; kept {found.kept}, took {found.released} back from people who left or may no longer take them"
        if top_up
        else ""
    )
    say(
        f"{'would assign' if dry_run else 'assigned'} {pairs} (item, validator) pairs over {len(found.assignment.items)} items "
        f"(seed {found.seed}{kept}); {recorded}"
    )
    if changed := _changed_items(part):
        verb = "would change" if dry_run else "changed"
        say(f"validators {verb} on {len(changed)} item{'s' * (len(changed) != 1)}: {name_some(changed)}")
    if found.waiting:
        say(
            f"{found.waiting} item{'s' * (found.waiting != 1)} not at stage validation left out "
            "(piqa-tui stage PATH shows where they are; assign --top-up once they reach it)"
        )
    say("per validator: " + ", ".join(f"{name} {n}" for name, n in _loads(declared, found).items()))
    if found.unstaffed:
        say(f"{len(found.unstaffed)} item{'s' * (len(found.unstaffed) != 1)} cannot be fully staffed:")
        for unstaffed in found.unstaffed:
            say(f"  {unstaffed.line()}")


def _by_hand(args: argparse.Namespace, project: Project, declared: Round, before: Assignment) -> int:
    """``--item ID --to NAME`` and ``--item ID --panel N``: one item, changed by the lead, as one action."""
    if args.item is None or (args.validator is None) == (args.panel is None) or args.top_up or args.seed is not None:
        raise RoundError("give --item ID with one of --to NAME or --panel N (and neither --seed nor --top-up)")
    if args.item not in project.index:
        raise RoundError(f"--item {args.item}: no item with that id in {project.dataset.path}")
    if args.validator is not None:
        _check_validator(declared, args.validator)
        part = given_part(before, args.item, args.validator)
    else:
        if not 1 <= args.panel <= len(declared.validators):
            raise RoundError(
                f"--panel {args.panel}: give 1 to {len(declared.validators)} (the round's active validators)"
            )
        part = panel_part(before, args.item, None if args.panel == declared.validators_per_item else args.panel)
    if part is not None and not args.dry_run:
        project.record([part])
    names = sorted({*before.items.get(args.item, ()), *([args.validator] if args.validator is not None else [])})
    panel = args.panel if args.panel is not None else before.panel(args.item, declared.validators_per_item)
    done = "nothing changed" if part is None else ("none recorded (--dry-run)" if args.dry_run else "recorded")
    if args.json:
        print_json(
            {
                "item": args.item,
                "validators": names,
                "panel": panel,
                "dry_run": args.dry_run,
                "changed": part is not None,
            }
        )
        return OK
    say(f"{args.item}: validators {', '.join(names) or 'none'}; panel {panel}; {done}")
    if len(names) != panel:
        what = "fills the rest" if len(names) < panel else "takes back the places nobody voted in"
        say(
            f"{args.item} has {len(names)} validator{'s' * (len(names) != 1)} for a panel of {panel}: assign --top-up {what}"
        )
    return OK


def _check_validator(declared: Round, name: str) -> None:
    """``RoundError`` in one line unless ``name`` is an active validator of the round."""
    person = declared.annotator(name)
    shown = ", ".join(a.name for a in declared.validators) or "none"
    if person is None:
        raise RoundError(f"--to {name}: not in the round {declared.name or '(unnamed)'} (its validators: {shown})")
    if not person.validates:
        why = (
            "left the round (active = false)"
            if not person.active
            else f"is a {'/'.join(person.roles)}, not a validator"
        )
        raise RoundError(f"--to {name}: {why}; give the item to one of its validators ({shown})")
