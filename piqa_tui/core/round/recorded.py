"""The round and its assignment as the workspace records them, through the same write path as every action.

A round import is one ``round`` event (field ``round``, ``new`` the round's canonical JSON; the latest in
the log's order is in force, "" means none). An assignment is ``assign`` events, one per (item, validator)
that changes: ``field`` is the annotator, ``new`` the role ("validator"), or "" when the item is taken
away. Undo records the value that stood before, as for flags, so both are read back the same way: the
latest event per key wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.declaration import Round, RoundError
from piqa_tui.core.workspace.event_rules import register_payload
from piqa_tui.core.workspace.log import Change, Part, Workspace
from piqa_tui.core.workspace.project import Project

ROUND_KIND = "round"
ASSIGN_KIND = "assign"
ROUND_FIELD = "round"
VALIDATOR = "validator"


def check_round_payload(text: str) -> None:
    """A ``round`` event's ``new``: "" (none in force) or a round ``round_in_force`` reads; ValueError saying why."""
    if not text:
        return
    try:
        Round.from_canonical(text)
    except PiqaError as exc:
        raise ValueError(f"the round is unreadable ({exc})") from None
    except (TypeError, AttributeError, KeyError, IndexError):
        raise ValueError("the round is not a round table as piqa-tui records it") from None


register_payload(ROUND_KIND, check_round_payload)


def round_in_force(workspace: Workspace | None) -> Round | None:
    """The round the workspace's latest ``round`` event declares (None: none was imported, or it was undone)."""
    latest = _latest_round(workspace)
    return Round.from_canonical(latest) if latest else None


def _latest_round(workspace: Workspace | None) -> str | None:
    """The text of the latest ``round`` event, unread ("" or None: no round in force)."""
    latest = None
    for event in workspace.events(kinds=[ROUND_KIND]) if workspace is not None else []:
        if event.field == ROUND_FIELD:
            latest = event.new
    return latest


def round_part(declared: Round, workspace: Workspace) -> Part | None:
    """The change that puts ``declared`` in force (None when it already is: nothing to record). A round in force
    that cannot be read (a merged one over a bound) is replaced as recorded, so importing a good file mends it."""
    current = _latest_round(workspace) or None
    try:
        current = Round.from_canonical(current).canonical() if current else None
    except RoundError:
        pass
    if current == declared.canonical():
        return None
    return Part(ROUND_KIND, (Change(None, ROUND_FIELD, current, declared.canonical()),), declared.name or None)


@dataclass(frozen=True, slots=True)
class Assignment:
    """Who validates which item: item id → validator names (in name order)."""

    items: dict[str, tuple[str, ...]]
    _mine: dict[str, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)

    def of(self, annotator: str) -> list[str]:
        """The item ids assigned to ``annotator``, in id order."""
        return sorted(item for item, names in self.items.items() if annotator in names)

    def mine(self, annotator: str) -> frozenset[str]:
        """The item ids assigned to ``annotator`` (kept per annotator once asked: queues ask per item)."""
        found = self._mine.get(annotator)
        if found is None:
            found = self._mine[annotator] = frozenset(self.of(annotator))
        return found

    def by_annotator(self) -> dict[str, list[str]]:
        """Annotator → the item ids assigned to them in id order (``of`` for everyone, in one pass)."""
        found: dict[str, list[str]] = {}
        for item, names in sorted(self.items.items()):
            for name in names:
                found.setdefault(name, []).append(item)
        return found

    def pairs(self) -> set[tuple[str, str]]:
        return {(item, name) for item, names in self.items.items() for name in names}

    def __bool__(self) -> bool:
        return any(self.items.values())


def assignment_in_force(workspace: Workspace | None) -> Assignment:
    """The assignment the workspace's ``assign`` events leave in force (latest event per item and annotator)."""
    latest: dict[tuple[str, str], str] = {}
    for event in workspace.events(kinds=[ASSIGN_KIND]) if workspace is not None else []:
        if event.item_id is not None and event.field:
            latest[(event.item_id, event.field)] = event.new or ""
    items: dict[str, list[str]] = {}
    for (item, name), role in latest.items():
        if role:
            items.setdefault(item, []).append(name)
    return Assignment({item: tuple(sorted(names)) for item, names in sorted(items.items())})


def assignment_part(before: Assignment, after: Assignment, note: str) -> Part | None:
    """The ``assign`` changes that turn ``before`` into ``after`` (None when they are the same)."""
    old, new = before.pairs(), after.pairs()
    changes = [Change(item, name, VALIDATOR, "") for item, name in sorted(old - new)]
    changes += [Change(item, name, None, VALIDATOR) for item, name in sorted(new - old)]
    return Part(ASSIGN_KIND, tuple(changes), note) if changes else None


def assigned_to(project: Project, annotator: str | None = None) -> frozenset[str]:
    """The item ids assigned to ``annotator`` (default: the project's) as the project has replayed the log.

    A queue asks once per item: the assignment is read again only when the project has applied new events
    (its ``version``, which ``Ballots`` keys its decisions on too), so asking costs a set lookup.
    """
    if project.workspace is None:
        return frozenset()
    workspace = project.workspace
    assignment = project.memo.get(assigned_to, lambda: assignment_in_force(workspace))
    return assignment.mine(annotator or project.annotator)
