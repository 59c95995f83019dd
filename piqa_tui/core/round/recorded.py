"""The round and its assignment as the workspace records them, through the same write path as every action.

A round import is one ``round`` event (field ``round``, ``new`` the round's canonical JSON; the latest in
the log's order is in force, "" means none). An assignment is ``assign`` events, one per (item, validator)
that changes: ``field`` is the annotator, ``new`` the role ("validator"), or "" when the item is taken
away. An item's own panel size is an ``assign`` event with an empty ``field`` (no annotator can be named so):
``new`` the number of validators the item takes, "" back to the round's ``validators_per_item``; a reader
before panels skipped such events. The lead gives one item to one person by hand with the same ``assign``
event a draw records. Undo records the value that stood before, as for flags, so both are read back the
same way: the latest event per key wins.
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
PANEL_FIELD = ""  # the field of an ``assign`` event that sets an item's panel size, not an annotator's place


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
    panels: dict[str, int] = field(default_factory=dict)  # item id -> its own panel size (set by hand)
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

    def panel(self, item_id: str, default: int) -> int:
        """How many validators the item takes: its own panel size, else ``default`` (the round's)."""
        return self.panels.get(item_id, default)

    def pairs(self) -> set[tuple[str, str]]:
        return {(item, name) for item, names in self.items.items() for name in names}

    def __bool__(self) -> bool:
        return any(self.items.values())


def assignment_in_force(workspace: Workspace | None) -> Assignment:
    """The assignment the workspace's ``assign`` events leave in force (latest event per item and annotator)."""
    latest: dict[tuple[str, str], str] = {}
    panels: dict[str, int] = {}
    for event in workspace.events(kinds=[ASSIGN_KIND]) if workspace is not None else []:
        if event.item_id is None:
            continue
        if event.field:
            latest[(event.item_id, event.field)] = event.new or ""
        elif event.field == PANEL_FIELD and (event.new or "").isdecimal() and int(event.new or "0") > 0:
            panels[event.item_id] = int(event.new or "0")
        elif event.field == PANEL_FIELD:
            panels.pop(event.item_id, None)  # "": back to the round's panel
    items: dict[str, list[str]] = {}
    for (item, name), role in latest.items():
        if role:
            items.setdefault(item, []).append(name)
    return Assignment(
        {item: tuple(sorted(names)) for item, names in sorted(items.items())}, dict(sorted(panels.items()))
    )


def assignment_part(before: Assignment, after: Assignment, note: str) -> Part | None:
    """The ``assign`` changes that turn ``before`` into ``after`` (None when they are the same)."""
    old, new = before.pairs(), after.pairs()
    changes = [Change(item, name, VALIDATOR, "") for item, name in sorted(old - new)]
    changes += [Change(item, name, None, VALIDATOR) for item, name in sorted(new - old)]
    return Part(ASSIGN_KIND, tuple(changes), note) if changes else None


def given_part(before: Assignment, item_id: str, name: str) -> Part | None:
    """The ``assign`` change that gives ``item_id`` to ``name`` by hand (None: it is theirs already)."""
    if name in before.items.get(item_id, ()):
        return None
    return Part(ASSIGN_KIND, (Change(item_id, name, None, VALIDATOR),), f"{item_id} given to {name} by hand")


def panel_part(before: Assignment, item_id: str, size: int | None) -> Part | None:
    """The ``assign`` change that sets ``item_id``'s panel to ``size`` validators (None: back to the round's);
    None when it already is."""
    old = before.panels.get(item_id)
    if old == size:
        return None
    change = Change(item_id, PANEL_FIELD, None if old is None else str(old), "" if size is None else str(size))
    return Part(ASSIGN_KIND, (change,), f"panel of {item_id}: {size if size is not None else 'the round’s'}")


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
