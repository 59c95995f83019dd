"""Who changed each field last, and the conflicts between copies of one workspace merged since.

A field (or note) two people changed concurrently on two machines is a conflict once the copies are
merged: the later change in canonical order was made on a value that is not the one it replaced. Two
adjudications of one item made on different decisions in force are a conflict too. ``ConflictBook``
keeps this bookkeeping for the replay (``replay.Replay``), derived from the log alone, so that every
machine holding the same events shows the same conflicts, whatever order its log holds them in.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from piqa_tui.core.workspace.log import Event
from piqa_tui.core.workspace.vote_targets import Adjudication

ADJUDICATION = "adjudication"  # the field of a conflict between two adjudications of one item
# An adjudication event's field: "label" alone when what it was made on is unknown (older logs, vote files),
# "label@" when it was made on no adjudication, "label@MARK" when made on the adjudication with that mark.
ADJUDICATED_FIELD = "label"


@dataclass(frozen=True, slots=True)
class FieldConflict:
    """A field (``"note"`` for an item's note) two people changed concurrently, on copies merged since: the later
    change in canonical order (``current``, in force) was made on ``base``, not on the ``other`` value it replaced.

    Derived from the log alone, so every machine holding the same events shows the same conflicts.
    """

    item_id: str
    field: str
    base: str
    current: str
    other: str
    current_by: str
    current_time: str
    other_by: str
    other_time: str
    current_reason: str = ""  # an adjudication's reason (the other fields have none)
    other_reason: str = ""


def adjudication_mark(time: str, annotator: str, label: str) -> str:
    """An adjudication event's fingerprint by content (item aside): the same on every machine, even where one
    decision imported from a vote file on two machines has two event ids (a merge counts it once by content)."""
    return hashlib.sha1("\x1f".join((time, annotator, label)).encode("utf-8")).hexdigest()[:16]


def made_on(field: str | None) -> str | None:
    """The mark of the adjudication an adjudication event was made on ("" none in force; None: not recorded)."""
    prefix = ADJUDICATED_FIELD + "@"
    return field[len(prefix) :] if field and field.startswith(prefix) else None


def chosen_text(decision: Adjudication | None) -> str:
    """The solution text an adjudication chose ("" for none or a withdrawal; its position for an old one
    recorded without its text)."""
    if decision is None or not decision.cast:
        return ""
    return decision.text if decision.text is not None else f"solution {decision.cast}"


def decision_field(base: str | None) -> str:
    """An adjudication event's field for the adjudication it was made on (the inverse of ``made_on``)."""
    return ADJUDICATED_FIELD if base is None else f"{ADJUDICATED_FIELD}@{base}"


FieldKey = tuple[str, str]  # (item id, field name or "note")


class ConflictBook:
    """The replay's record of who changed what last, of every adjudication seen, and of the open conflicts."""

    def __init__(self) -> None:
        self.changed_by: dict[FieldKey, tuple[str, str]] = {}  # (item, field or "note") -> (annotator, time)
        self._conflicts: dict[FieldKey, FieldConflict] = {}  # (item, field or "note") -> its open conflict
        self._adjudicated_at: dict[str, str] = {}  # item -> the time of its latest adjudication event (withdrawals too)
        self._decided: set[str] = set()  # items with an adjudication event in the refresh under way
        self._decisions: dict[str, dict[str, Adjudication]] = defaultdict(dict)  # item -> mark -> decision
        self._decision_in_force: dict[str, str] = {}  # item -> the mark of its adjudication event in force
        self._bases: dict[str, dict[str, str]] = defaultdict(dict)  # item -> mark -> the mark it was made on

    # ------------------------------------------------------------ fields and notes

    def change(
        self, key: FieldKey, made_on: str | None, new: str | None, in_force: str | None, by: str, time: str
    ) -> None:
        """A change of ``key`` (the field held ``in_force`` before it; None: no such field) by ``by`` at ``time``:
        made on the value in force, it settles any conflict there; made on another value while the one in force
        came from an earlier event, it is a conflict (unless both sides wrote the same text)."""
        earlier = self.changed_by.get(key)
        if in_force is None or (made_on or "") == in_force:
            self._conflicts.pop(key, None)
        elif earlier is not None and (new or "") != in_force:
            self._conflicts[key] = FieldConflict(*key, made_on or "", new or "", in_force, by, time, *earlier)
        self.changed_by[key] = (by, time)

    def conflict(self, key: FieldKey) -> FieldConflict | None:
        return self._conflicts.get(key)

    def conflicts(self) -> list[FieldConflict]:
        return list(self._conflicts.values())

    def in_conflict(self, item_id: str) -> bool:
        """Whether a field or the note of the item is in conflict (the conflicts queue)."""
        return any(key[0] == item_id for key in self._conflicts)

    # --------------------------------------------------------------- adjudications

    def decide(self, event: Event) -> tuple[bool, Adjudication]:
        """An adjudication event: returns whether it is now the item's decision in force (unless the item has a
        later one, by time; a tie: this one), and the decision. One made on another adjudication than the one in
        force (on another machine, before a merge) is a conflict, found by ``settle`` once the refresh has read
        all of the item's decisions."""
        item_id = event.item_id or ""
        decision = Adjudication(
            event.new or "", event.note or "", event.annotator, event.time, event.old, event.new or ""
        )
        mark = adjudication_mark(event.time, event.annotator, event.new or "")
        self._decisions[item_id][mark] = decision  # a withdrawal too (label ""), for the conflicts it is part of
        in_force = self._adjudicated_at.get(item_id, "") <= event.time  # else a later decision was brought in first
        if in_force:
            self._adjudicated_at[item_id] = event.time
            self._decision_in_force[item_id] = mark
        base = made_on(event.field)
        if base is not None:
            self._bases[item_id].setdefault(mark, base)
        self._decided.add(item_id)
        return in_force, decision

    def settle(self) -> None:
        """After a refresh: the adjudication conflict of every item that had a decision in it, once per item."""
        for item_id in self._decided:
            self._recheck_decisions(item_id)
        self._decided = set()

    def decision_in_force(self, item_id: str) -> Adjudication | None:
        """The item's adjudication event in force (a withdrawal too; None: never adjudicated)."""
        return self._decisions[item_id].get(self._decision_in_force.get(item_id, ""))

    def adjudication_field(self, item_id: str) -> str:
        """The field a new adjudication event of the item records: made on the adjudication in force."""
        return decision_field(self._decision_in_force.get(item_id, ""))

    def _recheck_decisions(self, item_id: str) -> None:
        """The item's adjudication conflict, found by replaying its decisions in time order (who and what they
        chose break a tie), so that every machine holding the same decisions finds the same whatever order its
        log holds them in (events merged and brought in files arrive in any order): one made on the decision in
        force settles any conflict there; one made on another is a conflict with it, unless both chose one text
        or the one in force was made on it (it only arrived late). One made on nothing known takes no part."""
        key = (item_id, ADJUDICATION)
        self._conflicts.pop(key, None)
        decisions, bases = self._decisions[item_id], self._bases[item_id]
        in_force, at = "", ""
        for mark in sorted(decisions, key=lambda m: (decisions[m].time, decisions[m].who, decisions[m].cast)):
            before = in_force
            if at <= decisions[mark].time:
                in_force, at = mark, decisions[mark].time
            base = bases.get(mark)
            if base is None:
                continue
            if base == before:
                self._conflicts.pop(key, None)
            elif before and not self._descends(item_id, before, mark):
                self._note_conflict(
                    item_id, base, mark if in_force == mark else before, before if in_force == mark else mark
                )

    def _note_conflict(self, item_id: str, base: str, current_mark: str, other_mark: str) -> None:
        """Record the item's adjudication conflict between two decisions, unless both chose one text."""
        decisions = self._decisions[item_id]
        current, other = decisions[current_mark], decisions[other_mark]
        if chosen_text(current) == chosen_text(other):
            return
        self._conflicts[(item_id, ADJUDICATION)] = FieldConflict(
            item_id,
            ADJUDICATION,
            chosen_text(decisions.get(base)),
            chosen_text(current),
            chosen_text(other),
            current.who,
            current.time,
            other.who,
            other.time,
            current.reason,
            other.reason,
        )

    def _descends(self, item_id: str, mark: str, ancestor: str) -> bool:
        """Whether the adjudication ``mark`` was made on ``ancestor``, or on one made on it, and so on: then it
        replaced it, whichever of the two the log holds first (events brought in files come in any order)."""
        bases, seen = self._bases[item_id], set()
        while mark in bases and mark not in seen:
            seen.add(mark)
            mark = bases[mark]
            if mark == ancestor:
                return True
        return False
