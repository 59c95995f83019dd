"""The project's state derived from the log: the file's items with every event applied, in canonical order.

``Replay`` is the one owner of derived state. It follows the log forward (events any process recorded
since it last looked) and derives everything again when events arrive that sort before those applied
(a merge brought them). Its ``version`` moves whenever what it derives may have changed, so views
derived from the project (``memo.LogMemo``) know when to work themselves out again, and the item ids
each catch-up changed are kept until someone asks (``take_changed``): a write's own catch-up never
swallows the items another process changed.
"""

from __future__ import annotations

import json

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import Dataset
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.workspace.conflicts import ConflictBook, FieldConflict, FieldKey
from piqa_tui.core.workspace.current_votes import Prefetch
from piqa_tui.core.workspace.event_rules import SUGGEST_KIND, SUGGEST_REVIEW_KIND
from piqa_tui.core.workspace.log import Event, Workspace
from piqa_tui.core.workspace.state import ProjectState, apply_vote, field_value, with_field
from piqa_tui.core.workspace.vote_targets import (
    SolutionHistory,
    adjudicated_choice,
    is_solution_field,
    solution_key,
)

MARKER_KINDS = ("undo", "redo")
# Kinds this replay does nothing with but name their items as changed (a screen redraws them): read where they
# are used (core/round: the orders shuffled votes were cast in, the answers to a round's questions), and left out
# of the first read of a log, where they can be as many as the votes; a model's suggestions and the decisions on
# them (``core/workspace/suggestions``: an accepted one is an ordinary edit, replayed as such).
UNREPLAYED_KINDS = ("answer", "order", SUGGEST_KIND, SUGGEST_REVIEW_KIND)
NEW_ITEM_KIND = "new-item"  # an item written in the workspace: ``new`` its fields' JSON, "" when withdrawn (undo)


class Replay:
    """The file's items and the state the log derives over them, kept in step with the log."""

    def __init__(self, dataset: Dataset, workspace: Workspace | None, prefetch: Prefetch | None = None) -> None:
        self.dataset = dataset
        self.workspace = workspace
        self.version = 0  # moves whenever what is derived may have changed
        self._prefetch = prefetch  # the votes, read while the dataset loaded (see Project.open)
        self._unreported: dict[str, None] = {}  # items changed since ``take_changed`` last asked, in order
        self._start()

    def _start(self) -> None:
        """Everything derived back to the file's items, nothing of the log applied."""
        self.items: list[Item] = list(self.dataset.items)
        self.index = {item.id: pos for pos, item in enumerate(self.items)}  # items the log added are gone again
        self.state = ProjectState()
        self.history = SolutionHistory()  # the solution texts of the log, for votes without a key
        self.book = ConflictBook()
        self._solution_keys: dict[str, tuple[str, ...]] = {}
        self._actions: dict[int, list[Event]] = {}  # action -> its edit events (for undo and redo markers)
        self._adjudged: set[str] = set()  # items whose adjudication the refresh under way replayed
        self._applied = 0  # the last event sequence applied
        self._vote_seq = 0  # the vote events up to here are in state.current_votes
        self._clock = 0  # the highest clock applied: events below it arrived by a merge (see catch_up)

    # ---------------------------------------------------------------- questions

    @property
    def applied(self) -> int:
        """The sequence number of the last event applied (0: none)."""
        return self._applied

    def item(self, item_id: str) -> Item:
        try:
            return self.items[self.index[item_id]]
        except KeyError:
            raise PiqaError(f"no item with id '{item_id}'") from None

    def solution_keys(self, item_id: str) -> tuple[str, ...]:
        """The keys of an item's current solution texts (``vote_targets.solution_key``)."""
        keys = self._solution_keys.get(item_id)
        if keys is None:
            keys = self._solution_keys[item_id] = tuple(map(solution_key, self.item(item_id).solutions))
        return keys

    def solutions(self, item_id: str) -> tuple[str, ...] | None:
        """An item's current solutions (None: no such item)."""
        pos = self.index.get(item_id)
        return None if pos is None else self.items[pos].solutions

    def value_in_force(self, key: FieldKey) -> str | None:
        """What a field (or ``"note"``) of an item holds now; None: no such item or field."""
        item_id, name = key
        if name == "note":
            return self.state.notes.get(item_id, "")
        pos = self.index.get(item_id)
        try:
            return None if pos is None else field_value(self.items[pos], name)
        except (PiqaError, IndexError, ValueError):
            return None

    def conflicts(self) -> list[FieldConflict]:
        """The fields (and notes) in conflict, in file order then by field name."""
        return sorted(self.book.conflicts(), key=lambda c: (self.index.get(c.item_id, -1), c.field))

    def take_changed(self) -> list[str]:
        """The items changed by every catch-up since the last call (a write's own catch-up included), once each."""
        changed, self._unreported = list(self._unreported), {}
        return changed

    # ---------------------------------------------------------------- following the log

    def catch_up(self) -> list[str]:
        """Apply events recorded since the last catch-up (by any process), in canonical order; returns changed item
        ids (also kept for ``take_changed``). Events that sort before one already applied (a merge brought them)
        derive everything again."""
        if self.workspace is None:
            return []
        upto = self.workspace.last_seq()
        if upto <= self._applied:
            return []
        low, high = self.workspace.clocks(self._applied, upto)
        if self._applied and low <= self._clock:
            changed = self._rebuild()
        else:
            self._clock = max(self._clock, high)
            changed = self._apply(upto)
        self.version += 1
        changed = [item_id for item_id in changed if item_id]  # an item-less event (a release, guidelines) names none
        self._unreported.update(dict.fromkeys(changed))
        return changed

    def _rebuild(self) -> list[str]:
        """Derive everything again from the file's items and the whole log, in canonical order (events came in
        below the applied ones: a merge); returns every item id."""
        self._start()
        upto = self.workspace.last_seq() if self.workspace is not None else 0
        self._clock = self.workspace.clocks(0, upto)[1] if self.workspace is not None and upto else 0
        self._apply(upto)
        return [item.id for item in self.items]

    def _apply(self, upto: int) -> list[str]:
        """Apply the events after the applied ones up to ``upto``; returns the items they changed."""
        assert self.workspace is not None
        changed: list[str] = []
        retexted: set[str] = set()  # items whose solution texts changed: their votes may point elsewhere now
        votes = self.state.votes_by_item  # None while the current votes are kept column-wise
        skip = UNREPLAYED_KINDS if not self._applied else ()  # on opening nobody needs their items named
        for row in self.workspace.event_rows(after=self._applied, upto=upto, votes=votes is not None, skip=skip):
            seq, time, annotator, kind, item_id, name, old, new, action, note = row
            if kind == "vote":  # the bulk of a large log: handled inline, without an Event object
                apply_vote(votes, item_id, annotator, new, time, old)  # type: ignore[arg-type]
                changed.append(item_id)
            elif kind == "edit":
                event = Event(*row)
                self._actions.setdefault(action or seq, []).append(event)
                self._note_change((item_id or "", name or ""), old, new, annotator, time)
                self._set(item_id or "", name, new, changed, time, old, retexted)
            elif kind in MARKER_KINDS:
                self._replay_marker(kind, action or 0, annotator, time, changed, retexted)
            else:
                self._apply_other(Event(*row), changed)
        resolve: set[str] | None = set(retexted)
        if votes is not None:
            resolve = retexted | set(changed)
        else:  # on opening, read whatever is there; later, only when votes came
            new_votes = self.workspace.count_votes(self._vote_seq, upto) if self._vote_seq else None
            if new_votes != 0:
                resolve = self._read_votes(upto, new_votes, changed, retexted)
        self._applied = upto
        self.state.resolve_votes(resolve, self.solutions, self.solution_keys, self.history)
        self._resolve_adjudications(retexted | self._adjudged)
        self._adjudged = set()
        self.book.settle()
        return changed

    def _read_votes(self, upto: int, new_votes: int | None, changed: list[str], resolve: set[str]) -> set[str] | None:
        """The vote events up to ``upto`` into the state (``ProjectState.read_votes``); returns the items whose
        votes to resolve (None: all of them)."""
        assert self.workspace is not None
        prefetched, self._prefetch = (self._prefetch.result() if self._prefetch else None), None
        seen, self._vote_seq = self._vote_seq, upto
        found, to_resolve = self.state.read_votes(self.workspace, upto, seen, new_votes, prefetched)
        changed += found
        if to_resolve is None:
            return None  # every vote read column-wise again: all of them are resolved, the texts' changes too
        return resolve | to_resolve

    def _replay_marker(
        self, kind: str, action: int, annotator: str, time: str, changed: list[str], retexted: set[str]
    ) -> None:
        """An undo or redo of an edit action: its fields back to their old (or again to their new) values."""
        for change in self._actions.get(action, []):
            value = change.old if kind == "undo" else change.new
            made_on = change.new if kind == "undo" else change.old
            self._note_change((change.item_id or "", change.field or ""), made_on, value, annotator, time)
            self._set(change.item_id or "", change.field, value, changed, time, change.old, retexted)

    def _note_change(self, key: FieldKey, made_on: str | None, value: str | None, annotator: str, time: str) -> None:
        """Before a field (or note) is set: the conflict book notes who set it, on what, over the value in force."""
        self.book.change(key, made_on, value, self.value_in_force(key), annotator, time)

    def _set(
        self,
        item_id: str,
        name: str | None,
        value: str | None,
        changed: list[str],
        time: str,
        old: str | None,
        retexted: set[str],
    ) -> None:
        pos = self.index.get(item_id)
        if pos is None or name is None:
            return
        if is_solution_field(name) and item_id:
            self.history.add(item_id, name, time, old, value)
            self._solution_keys.pop(item_id, None)
            retexted.add(item_id)
        try:
            self.items[pos] = with_field(self.items[pos], name, value)
        except (PiqaError, IndexError, ValueError):
            return  # an edit of a field this file no longer has; `changes()` still lists it
        original = self.dataset.items[pos] if pos < len(self.dataset.items) else None  # None: the log added it
        if original is not None and self.items[pos] == original and self.items[pos].meta == original.meta:
            self.state.edited.discard(item_id)
        else:
            self.state.edited.add(item_id)
        changed.append(item_id)

    def _apply_other(self, event: Event, changed: list[str]) -> None:
        item_id = event.item_id or ""
        if event.kind == "flag":
            if event.new == "1":
                self.state.flags[item_id][event.field or "flag"] = event.note or ""
            else:
                self.state.flags[item_id].pop(event.field or "flag", None)
        elif event.kind == "note":
            self._note_change((item_id, "note"), event.old, event.new, event.annotator, event.time)
            self.state.notes[item_id] = event.new or ""
        elif event.kind == "dedup":
            if event.new:
                self.state.dedup[event.field or ""] = event.new
            else:  # an undone decision: the cluster is open again
                self.state.dedup.pop(event.field or "", None)
            return
        elif event.kind == "adjudicate":
            self._replay_adjudication(event)
        elif event.kind == NEW_ITEM_KIND:
            self._replay_new_item(item_id, event.new)
        if item_id:  # a round, guidelines, a question's reply or a release names no item
            changed.append(item_id)

    def _replay_adjudication(self, event: Event) -> None:
        """An adjudication event: the item's decision, unless a later one is in force (``ConflictBook.decide``)."""
        item_id = event.item_id or ""
        in_force, decision = self.book.decide(event)
        if not in_force:
            return
        if not event.new:  # an undone adjudication: the votes decide again
            self.state.adjudications.pop(item_id, None)
        else:
            self.state.adjudications[item_id] = decision
            self._adjudged.add(item_id)

    def _resolve_adjudications(self, item_ids: set[str]) -> None:
        """Point the adjudications on these items at the solution text they chose (``STALE``: set aside).

        One recorded before adjudications kept their text chose the text at its position at its time,
        which the log's solution history gives (as for a vote without a key).
        """
        for item_id in item_ids:
            found = self.state.adjudications.get(item_id)
            pos = self.index.get(item_id)
            if found is None or pos is None:
                continue
            solutions = self.items[pos].solutions
            if found.text is None and found.cast.isdecimal() and int(found.cast) < len(solutions):
                name = f"solution{found.cast}"
                found = found._replace(text=self.history.text_at(item_id, name, found.time, solutions[int(found.cast)]))
            label = adjudicated_choice(self.solution_keys(item_id), found.text, found.cast)
            self.state.adjudications[item_id] = found._replace(label=label)

    def _replay_new_item(self, item_id: str, fields: str | None) -> None:
        """An item written in the workspace joins the items after the file's (an id already there: a saved file
        holds it, nothing to add); its withdrawal (an undo) takes away an item only the log added."""
        pos = self.index.get(item_id)
        if fields:
            if pos is None:
                data = json.loads(fields)
                meta = {column: "" for column in self.dataset.meta_columns} | dict(data.get("meta", {}))
                item = Item(item_id, data["prompt"], tuple(data["solutions"]), data.get("label"), len(self.items), meta)
                self.index[item_id] = len(self.items)
                self.items.append(item)
                self.state.edited.add(item_id)
            return
        if pos is None or pos < len(self.dataset.items):
            return
        del self.items[pos]
        del self.index[item_id]
        self.state.edited.discard(item_id)
        for later in range(pos, len(self.items)):
            self.items[later] = self.items[later].with_changes(row=later)
            self.index[self.items[later].id] = later
