"""``piqa-tui edit PATH [ITEM...] [--where COLUMN=VALUE] --set COLUMN=VALUE``: set metadata columns on many
items at once, as one undoable action.

``ITEM`` and every ``--where`` narrow each other (``--where topic=`` is the items whose topic is empty). The
values are ``edit`` events like a field typed in the TUI: they travel with ``workspace merge`` and ``sync``, an
edit of the same item's column on another copy shows as a conflict, and one undo takes the whole command back.
The command names the items it changed; ``--dry-run`` names those it would change and records nothing."""

from __future__ import annotations

import argparse

from piqa_tui.cli.commands.batch_change import BatchChange, add_where_argument, condition
from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.round.metadata import MetadataError, metadata_part, parse_settings
from piqa_tui.core.text.terminal_safe import shortened
from piqa_tui.core.workspace.project import Project

SHOWN_VALUE = 60  # characters of a value the line shows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("items", nargs="*", metavar="ITEM", help="ids of the items to edit")
    add_where_argument(parser)
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="COLUMN=VALUE",
        help="the value to give a metadata column (repeat it for several columns)",
    )
    parser.add_argument("--dry-run", action="store_true", help="say which items would change and record nothing")


def run(args: argparse.Namespace) -> int:
    if not args.settings:
        raise MetadataError("say what to set with --set COLUMN=VALUE")
    if not (args.items or args.where):
        raise MetadataError("name the items to edit: ids or --where COLUMN=VALUE")
    project = open_project(args)  # refused input makes no workspace
    values = parse_settings(project, args.settings)
    ids = _selected(project, args)
    part = metadata_part(project, ids, values) if ids else None
    if part is not None and not args.dry_run:  # checked: now opened for writing
        if project.workspace is not None:
            project.workspace.close()
        project = open_project(args, create=True)
        part = metadata_part(project, ids, values)
    batch = BatchChange("change", "changed", ids, part, args.dry_run)
    batch.record(project)
    if args.json:
        print_json(batch.to_json({"set": values}))
        return OK
    held = "it" if len(values) == 1 else "them"
    setting = ", ".join(f"{column}={shortened(value, SHOWN_VALUE)}" for column, value in values.items())
    batch.say_lines(setting, lambda there: f"{there} held {held} already", "matches")
    if batch.changed and not args.dry_run:
        say(f"one undo by {project.annotator} (ctrl+z in the TUI) takes the whole edit back")
    return OK


def _selected(project: Project, args: argparse.Namespace) -> list[str]:
    """The ids that ``ITEM`` and every ``--where`` all name, in file order."""
    named = {project.item(i).id for i in args.items}  # an unknown id is one line, before anything is recorded
    wanted = [condition(project, where, MetadataError) for where in args.where]
    return [
        item.id
        for item in project.items
        if (not args.items or item.id in named) and all(item.meta.get(c, "") == v for c, v in wanted)
    ]
