"""What a command that changes many items at once (``edit``, ``stage --to``) selects, records and says.

Both select items (ids, and ``--where COLUMN=VALUE`` read the same way), build one undoable part, record it unless ``--dry-run``, and answer the same way: one JSON
object (what was set, how many were selected and changed, the ids, whether it was a dry run) or a line naming
the items changed, the ones that held the value already, and a dry run's note. One piece of code, so the two
commands cannot drift apart in what they say.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field

from piqa_tui.cli.commands.dataset_args import say
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.workspace.log import Part
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.id_list import batch_line


def add_where_argument(parser: argparse.ArgumentParser) -> None:
    """``--where COLUMN=VALUE``, repeatable: only the items whose column holds the value (see :func:`condition`)."""
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="COLUMN=VALUE",
        help="only the items whose column holds this value (repeat it: items that match every one)",
    )


def condition(project: Project, where: str, error: type[PiqaError]) -> tuple[str, str]:
    """``(column, value)`` of one ``--where COLUMN=VALUE``; ``error`` (one line) when the file has no such column."""
    column, sep, value = where.partition("=")
    if not sep or column not in project.dataset.meta_columns:
        raise error(f"--where {where}: give COLUMN=VALUE with one of the file's columns")
    return column, value


@dataclass
class BatchChange:
    """``part``, the change of the ``selected`` items (None: none of them changes), named by a verb:
    ``verb`` ("move") and its past ``done`` ("moved", also the JSON key of the count)."""

    verb: str
    done: str
    selected: list[str]
    part: Part | None
    dry_run: bool
    changed: list[str] = field(init=False)  # the ids the part changes, once each, in its order

    def __post_init__(self) -> None:
        changes = self.part.changes if self.part is not None else ()
        self.changed = list(dict.fromkeys(str(change.item_id) for change in changes))

    @property
    def said(self) -> str:
        """The verb as the line says it: "moved", or "would move" on a dry run."""
        return f"would {self.verb}" if self.dry_run else self.done

    def record(self, project: Project) -> None:
        """Record the part as one action, unless there is none or this is a dry run."""
        if self.part is not None and not self.dry_run:
            project.record([self.part])

    def to_json(self, target: dict[str, object]) -> dict[str, object]:
        """``target`` (what the items were given) with the counts, the ids and whether it was a dry run."""
        counts = {"selected": len(self.selected), self.done: len(self.changed), "items": self.changed}
        return {**target, **counts, "dry_run": self.dry_run}

    def say_lines(self, target: str, already: Callable[[int], str], nothing: str) -> None:
        """The line naming the items changed into ``target`` (``already``: the words for the N selected that
        held it already), or, none selected, "no item ``nothing``"; then a dry run's note."""
        if not self.selected:
            say(f"no item {nothing}; nothing {self.said}")
            return
        there = len(self.selected) - len(self.changed)
        say(batch_line(self.said, self.changed, len(self.selected), target, already(there) if there else ""))
        if self.dry_run:
            say(f"--dry-run recorded nothing; run it again without --dry-run to {self.verb} them")
