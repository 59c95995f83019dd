"""Undo and redo of every action an annotator records: edits, votes (withdrawals too), flags, notes,
adjudications and duplicate-cluster decisions (with the flags and notes they set: one action, one step).

The log is append-only, so undoing records; it never deletes. An undo (or
redo) is a marker event that names the action; an edit is then replayed
backwards (or forwards) from its own old and new values. A vote, flag or note
takes effect by being the latest of its kind, so undoing one records, with the
marker and in the same transaction, the events that bring back what stood
before it (the annotator's previous vote on the item, the flag's previous
state, the note's previous text, the item's previous adjudication or none, the cluster's previous decision or
none); redoing records the action's values again.
Those compensating events carry the marker's sequence number as their action,
so they never appear on an undo stack themselves. The stacks are derived from
the log, so undo works across restarts.

Undoing an item's creation takes the item away, so it is refused while anyone else's work on it stands
(``standing_on``); their actions they undid themselves no longer count.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, replace

from piqa_tui.core.errors import UndoRefused, changed_by
from piqa_tui.core.workspace.conflicts import chosen_text
from piqa_tui.core.workspace.event_rules import SUGGEST_REVIEW_KIND
from piqa_tui.core.workspace.log import CANONICAL, EVENT_COLUMNS, Event, Workspace
from piqa_tui.core.workspace.replay import Replay

UNDOABLE = (
    "edit",
    "vote",
    "flag",
    "note",
    "adjudicate",
    "dedup",
    "round",
    "assign",
    "answer",
    "new-item",
    "stage",
    "ask",
    "reply",
    SUGGEST_REVIEW_KIND,
)
MARKERS = ("undo", "redo")


@dataclass(frozen=True, slots=True)
class Compensation:
    """One event to record with an undo or redo marker."""

    kind: str
    item_id: str | None  # None: a cluster's decision (the cluster is the field)
    field: str
    old: str | None
    new: str | None
    note: str | None


def stacks(ws: Workspace, annotator: str) -> tuple[list[int], list[int]]:
    """The annotator's undo and redo stacks (action ids), derived from the log."""
    undo: list[int] = []
    redo: list[int] = []
    kinds = ", ".join(f"'{k}'" for k in (*UNDOABLE, *MARKERS))
    rows = ws.conn.execute(
        f"SELECT kind, action FROM events WHERE annotator = ? AND kind IN ({kinds})"
        f" AND (kind IN ('undo', 'redo') OR seq = action) ORDER BY {CANONICAL}",
        (annotator,),
    )
    for kind, action in rows:
        if kind in UNDOABLE:
            undo.append(action)
            redo.clear()
        elif kind == "undo" and undo and undo[-1] == action:
            redo.append(undo.pop())
        elif kind == "redo" and redo and redo[-1] == action:
            undo.append(redo.pop())
    return undo, redo


def action_events(ws: Workspace, action: int) -> list[Event]:
    """The events of one action, in canonical order (they follow its first event; undo and redo markers pointing
    at it carry its id too)."""
    sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE seq >= ? AND action = ? ORDER BY {CANONICAL}"
    return [Event(*row) for row in ws.conn.execute(sql, (action, action))]


def compensation(ws: Workspace, events: list[Event], undoing: bool) -> list[Compensation]:
    """What to record with the marker so that the action's votes, flags and notes are undone (or redone)."""
    found = []
    for event in events:
        if event.kind in ("edit", "order") or event.kind in MARKERS:
            # An edit is replayed from the marker itself; earlier markers of this action are no part of it; the
            # order a vote was cast in stays a fact when the vote is undone (it was shown).
            continue
        field = event.field or ""
        if not undoing:
            found.append(Compensation(event.kind, event.item_id, field, event.old, event.new, event.note))
        elif event.kind == "note":
            found.append(Compensation("note", event.item_id, field, event.new, event.old, None))
        else:
            old, new, note = _before(ws, event)
            found.append(Compensation(event.kind, event.item_id, field, old, new, note))
    return found


def _before(ws: Workspace, event: Event) -> tuple[str | None, str | None, str | None]:
    """(old, new, note) of what stood before ``event``: the annotator's previous vote on the item (the latest by
    time, as votes count; none: withdrawn), or the previous state of the flag (in canonical order; none: off), or
    the item's previous adjudication by anyone (with the text it chose), or the cluster's previous decision by
    anyone (in canonical order, as both count; none: withdrawn)."""
    before = "(clock, uid) < (SELECT clock, uid FROM events WHERE seq = ?)"
    if event.kind == "vote":
        row = ws.conn.execute(
            f"SELECT old, new, NULL FROM events WHERE kind = 'vote' AND item_id = ? AND annotator = ? AND {before}"
            " ORDER BY time DESC, clock DESC, uid DESC LIMIT 1",
            (event.item_id, event.annotator, event.seq),
        ).fetchone()
        return tuple(row) if row else (None, "", None)
    mine = " AND annotator = ?" if event.kind == "answer" else ""  # an answer is one annotator's own
    # An adjudication's field also names the one it was made on (see project.made_on): any field of the item.
    same = "field LIKE 'label%'" if event.kind == "adjudicate" else "field = ?"
    row = ws.conn.execute(
        f"SELECT old, new, note FROM events WHERE kind = ? AND item_id IS ? AND {same}{mine} AND {before}"
        " ORDER BY clock DESC, uid DESC LIMIT 1",
        (
            event.kind,
            event.item_id,
            *([] if event.kind == "adjudicate" else [event.field]),
            *([event.annotator] if mine else []),
            event.seq,
        ),
    ).fetchone()
    if row:
        return tuple(row)
    # Nothing before: a flag was off; an item had no adjudication, a cluster no decision ("" withdraws one).
    return (None, "0", None) if event.kind == "flag" else (None, "", None)


def origins(ws: Workspace, item_ids: set[str]) -> list[tuple[Event, int | None]]:
    """Every event naming these items, in canonical order, with the action it belongs to at heart: its own, or for
    what an undo or redo recorded, the action undone or redone (None: recorded outside any action, an imported
    vote)."""
    columns = ", ".join(f"e.{name.strip()}" for name in EVENT_COLUMNS.split(","))
    order = ", ".join(f"e.{name.strip()}" for name in CANONICAL.split(","))
    sql = (
        f"SELECT {columns}, CASE WHEN m.kind IN ('undo', 'redo') THEN m.action ELSE e.action END"
        f" FROM events e LEFT JOIN events m ON m.seq = e.action WHERE e.item_id IN (SELECT value FROM json_each(?))"
        f" ORDER BY {order}"  # the ids as one JSON array: an import of thousands of drafts is one parameter
    )
    return [(Event(*row[:-1]), row[-1]) for row in ws.conn.execute(sql, (json.dumps(sorted(item_ids)),))]


def withdrawn(ws: Workspace, annotator: str) -> set[int]:
    """The annotator's actions undone and not redone (off their undo stack)."""
    kinds = ", ".join(f"'{k}'" for k in UNDOABLE)
    rows = ws.conn.execute(
        f"SELECT action FROM events WHERE annotator = ? AND kind IN ({kinds}) AND seq = action", (annotator,)
    )
    return {action for (action,) in rows} - set(stacks(ws, annotator)[0])


def standing_on(
    ws: Workspace, item_ids: set[str], action: int, author: str | None, kinds: Collection[str] = ()
) -> Event | None:
    """The latest event (of ``kinds``; empty: any) someone other than ``author`` (None: anyone) recorded on these
    items outside ``action`` that still stands, not part of an action they have undone since; None: there is none."""
    found, undone = None, {}
    for event, origin in origins(ws, item_ids):
        if event.annotator == author or origin == action or (kinds and event.kind not in kinds):
            continue
        if event.annotator not in undone:
            undone[event.annotator] = withdrawn(ws, event.annotator)
        if origin not in undone[event.annotator]:
            found = event
    return found


_DONE_TO_AN_ITEM = {
    "vote": "it was voted on",
    "note": "note was changed",
    "flag": "its flags were changed",
    "stage": "its stage was moved",
    "adjudicate": "it was adjudicated",
    "new-item": "an item with this id was added",
    "assign": "it was assigned",
    "answer": "it was answered",
    "ask": "a question was asked on it",
    "reply": "a question on it was replied to",
}


def _what_was_done(event: Event) -> str:
    """What an event did to an item, for the line refusing an undo of the item's creation."""
    if event.kind == "edit":
        return f"{event.field} was changed"
    return _DONE_TO_AN_ITEM.get(event.kind, "it was changed")


class UndoGuard:
    """The checks an undo or redo passes under the write lock, against the state the replay derives: nobody
    else's later work is reverted by it, and an adjudication it records is made on the one in force."""

    def __init__(self, replay: Replay, workspace: Workspace, annotator: str) -> None:
        self.replay, self.workspace, self.annotator = replay, workspace, annotator

    def made_on_now(self, event: Compensation) -> Compensation:
        """An adjudication an undo or redo records is made on the one in force, as any new one."""
        if event.kind != "adjudicate" or event.item_id is None:
            return event
        return replace(event, field=self.replay.book.adjudication_field(event.item_id))

    def check_untouched(self, which: str, events: list[Event], action: int) -> None:
        """Refuse (``UndoRefused``) an undo or redo of an action whose field someone has changed since: the
        field must hold what the action left (undo) or what its undo left (redo). Run under the write lock."""
        self.replay.catch_up()
        self._check_creation(which, events, action)
        last = max((e.time for e in events), default="")  # the action, or its latest undo or redo
        for event in events:
            if event.kind == "adjudicate":
                left = (event.old or "") if event.new else ""  # the text the action chose ("" a withdrawal)
                self._check_decision_untouched(which, event.item_id or "", left if which == "undo" else None, last)
                continue
            expected = event.new if which == "undo" else event.old
            current = self._current_value(event)
            if current is None or current == (expected or ""):
                continue
            key = (event.item_id or "", "note" if event.kind == "note" else event.field or "")
            by, when = self.replay.book.changed_by.get(key, ("", ""))
            raise UndoRefused(
                f"cannot {which} on {event.item_id}: {key[1]} was changed by {changed_by(by, when)} since; "
                f"nothing was {'undone' if which == 'undo' else 'redone'}"
            )

    def _check_creation(self, which: str, events: list[Event], action: int) -> None:
        """Refuse an undo of an item's creation while anyone else's work on the item stands (it would go with the
        item), and a redo of one when another item with its id was added since (a later undo would take that one)."""
        created = {e.item_id for e in events if e.kind == "new-item" and e.item_id}
        if not created:
            return
        if which == "undo":
            found = standing_on(self.workspace, created, action, self.annotator)
        else:
            found = standing_on(self.workspace, created, action, None, kinds=("new-item",))
        if found is None or (which == "redo" and not found.new):
            return
        raise UndoRefused(
            f"cannot {which} on {found.item_id}: {_what_was_done(found)} by {changed_by(found.annotator, found.time)}"
            f" since; nothing was {'undone' if which == 'undo' else 'redone'}"
        )

    def _check_decision_untouched(self, which: str, item_id: str, left: str | None, last: str) -> None:
        """Refuse an undo or redo of an adjudication when someone else recorded the item's adjudication in force
        after it (or after its latest undo or redo), unless that one chose what the action left (``left``; None:
        unknown, a redo): reverting it would replace their decision."""
        found = self.replay.book.decision_in_force(item_id)
        if found is None or found.time <= last or found.who == self.annotator or chosen_text(found) == left:
            return
        raise UndoRefused(
            f"cannot {which} on {item_id}: its adjudication was changed by {changed_by(found.who, found.time)} "
            f"since; nothing was {'undone' if which == 'undo' else 'redone'}"
        )

    def _current_value(self, event: Event) -> str | None:
        """What the field of an edit or note event holds now (None: another kind, or a field this file lacks)."""
        if event.kind not in ("edit", "note"):
            return None
        return self.replay.value_in_force((event.item_id or "", "note" if event.kind == "note" else event.field or ""))
