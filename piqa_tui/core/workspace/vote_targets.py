"""Which solution a vote names: votes belong to solution texts, not to positions.

A vote event records the position the annotator pressed (``new``: "0", "1",
...) and the key of the text they saw there (``old``: :func:`solution_key`).
When solutions are swapped or reordered the key is found at its new position
and the vote moves with it; when the text was edited the key is found nowhere
and the vote is :data:`STALE` ("cast on an earlier version"): it counts for no
decision until the annotator votes again.

Votes recorded before keys existed (older workspaces, imported files without a
``solution`` column) name the text that stood at their position when they were
cast; :class:`SolutionHistory` rebuilds that from the edit events of the log.

A reviewer's decision belongs to text in the same way: an :class:`Adjudication`
records the solution text it chose, follows it through swaps and reorders
(:func:`adjudicated_choice`), and is set aside (``STALE``) while that text is
gone, so an edit sends the item back to its queue instead of releasing a label
nobody reviewed.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from piqa_tui.core.text.characters import nfc

STALE = "stale"  # the effective choice of a vote whose solution text changed after it was cast
KEY_LENGTH = 16


def solution_key(text: str) -> str:
    """A short, stable fingerprint of a solution's text (as stored: NFC)."""
    return hashlib.sha1(nfc(text).encode("utf-8")).hexdigest()[:KEY_LENGTH]


def is_solution_field(name: str | None) -> bool:
    return name is not None and name.startswith("solution")


@dataclass
class SolutionHistory:
    """The values each solution field of each item took in the log: (time, value) in log order,
    and the value before the first change (the ``old`` of the first event that changed it)."""

    changes: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    before: dict[tuple[str, str], str] = field(default_factory=dict)
    items: set[str] = field(default_factory=set)

    def add(self, item_id: str, name: str, time: str, old: str | None, value: str | None) -> None:
        """One solution field set to ``value`` at ``time`` (an edit, an undo or a redo)."""
        key = (item_id, name)
        self.before.setdefault(key, old or "")
        self.changes[key].append((time, value or ""))
        self.items.add(item_id)

    def text_at(self, item_id: str, name: str, time: str, current: str) -> str:
        """The field's text at ``time`` (``current`` when the log never changed it)."""
        key = (item_id, name)
        if key not in self.before:
            return current
        value = self.before[key]
        for when, new in self.changes[key]:
            if when <= time:
                value = new
        return value


def resolve_choice(
    solutions: tuple[str, ...],
    keys: tuple[str, ...],
    item_id: str,
    choice: str,
    key: str,
    time: str,
    history: SolutionHistory,
) -> str:
    """The solution a vote names now, as a 0-based index in text; ``STALE`` when its text is gone.

    Skip and withdrawn votes are returned as they are. ``keys`` are the solution keys of
    ``solutions`` (the item's current text). A vote without a key names the text at its
    position when it was cast (by ``history``).
    """
    if not choice.isdecimal():
        return choice
    index = int(choice)
    if not key:
        if index >= len(solutions):
            return STALE
        if item_id not in history.items:
            return choice
        key = solution_key(history.text_at(item_id, f"solution{index}", time, solutions[index]))
    if index < len(keys) and keys[index] == key:
        return choice
    return str(keys.index(key)) if key in keys else STALE


class Adjudication(NamedTuple):
    """A reviewer's decision on an item's label, as the log recorded it and as it stands now.

    ``label`` is the solution it names now (a 0-based index as text, moved with a swap) or ``STALE``
    while the text chosen is edited away (the adjudication is set aside); ``cast`` is the position
    chosen when it was recorded and ``text`` the solution text there (None when the item is unknown).
    """

    label: str
    reason: str
    who: str
    time: str
    text: str | None
    cast: str


def adjudicated_choice(keys: tuple[str, ...], text: str | None, cast: str) -> str:
    """Where the adjudicated ``text`` stands among the solutions with these ``keys``: its recorded position
    ``cast`` when the text is still there, else the first position that holds it, else ``STALE``."""
    if text is None or not cast.isdecimal():
        return cast
    key = solution_key(text)
    index = int(cast)
    if index < len(keys) and keys[index] == key:
        return cast
    return str(keys.index(key)) if key in keys else STALE
