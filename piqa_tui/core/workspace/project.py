"""A dataset opened for curation: the file's items with the workspace log applied.

``Project`` is what the CLI and the TUI both talk to. It replays the event log
over the items read from the file (edits, undo/redo markers, votes, flags,
notes), records new actions in the workspace before changing anything in
memory, and exports the current state atomically.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import threading
from collections import defaultdict
from collections.abc import Collection
from dataclasses import astuple, dataclass, field, replace
from pathlib import Path

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import Dataset, file_digest, parse_dataset, read_source, reassign_ids, source_files
from piqa_tui.core.dataset.writing import output_files, write_dataset
from piqa_tui.core.errors import EditConflict, PiqaError, UndoRefused, VotesArrived, WorkspaceError, changed_by
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.workspace.current_votes import CurrentVotes, Prefetch
from piqa_tui.core.workspace.log import Change, Event, Part, Workspace, default_location
from piqa_tui.core.workspace.outputs import check_outputs, check_workspace_path, dataset_protected_files
from piqa_tui.core.workspace.preferences import stored_mapping
from piqa_tui.core.workspace.undo import Compensation, action_events, compensation, standing_on
from piqa_tui.core.workspace.undo import stacks as undo_stacks
from piqa_tui.core.workspace.vote_targets import (
    Adjudication,
    SolutionHistory,
    adjudicated_choice,
    is_solution_field,
    resolve_choice,
    solution_key,
)

MARKER_KINDS = ("undo", "redo")
# Kinds this replay does nothing with but name their items as changed (a screen redraws them): read where they
# are used (core/round: the orders shuffled votes were cast in, the answers to a round's questions), and left out
# of the first read of a log, where they can be as many as the votes.
UNREPLAYED_KINDS = ("answer", "order")
NEW_ITEM_KIND = "new-item"  # an item written in the workspace: ``new`` its fields' JSON, "" when withdrawn (undo)
RESOLVED_NOTE = "resolved conflict"  # the note of the edit that settles a conflict
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


def default_annotator() -> str:
    """The login name, the annotator of last resort (after --annotator and the config file)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER") or "annotator"


def content_key(prompt: str, solutions: tuple[str, ...]) -> str:
    """A short fingerprint of an item's text, to recognise it after the file is re-sorted."""
    return hashlib.sha1("\x1f".join((prompt, *solutions)).encode("utf-8")).hexdigest()[:16]


def field_value(item: Item, name: str) -> str:
    """The stored text of one field: prompt, solutionN, label (0-based index) or meta:COLUMN."""
    if name == "prompt":
        return item.prompt
    if name.startswith("solution"):
        return item.solutions[int(name[len("solution") :])]
    if name == "label":
        return "" if item.label is None else str(item.label)
    if name.startswith("meta:"):
        return item.meta.get(name[5:], "")
    raise PiqaError(f"unknown field '{name}'; use prompt, solution0-3, label or meta:COLUMN")


def with_field(item: Item, name: str, value: str | None) -> Item:
    """``item`` with one field set to ``value`` (the inverse of ``field_value``)."""
    value = value or ""
    if name == "prompt":
        return item.with_changes(prompt=value)
    if name.startswith("solution"):
        index = int(name[len("solution") :])
        solutions = list(item.solutions)
        solutions[index] = value
        return item.with_changes(solutions=tuple(solutions))
    if name == "label":
        return item.with_changes(label=int(value) if value != "" else None)
    if name.startswith("meta:"):
        return item.with_changes(meta={**item.meta, name[5:]: value})
    raise PiqaError(f"unknown field '{name}'")


@dataclass(slots=True)
class Vote:
    """An annotator's current vote on an item.

    ``choice`` is the solution it names now (a 0-based index as text, moved with a swap),
    "skip" for unsure, "" for withdrawn, or ``STALE`` when the text voted for was edited since;
    ``cast`` is the choice as recorded and ``key`` the recorded solution key ("" when none).
    """

    annotator: str
    choice: str
    time: str
    cast: str = ""
    key: str = ""


def apply_vote(
    votes: dict[str, dict[str, Vote]],
    item_id: str,
    annotator: str,
    choice: str | None,
    time: str,
    key: str | None = None,
) -> None:
    """One vote event: it becomes the annotator's current vote unless they have a later one (a tie: this one).

    Its ``choice`` is the recorded one until ``Project`` resolves it against the item's current text.
    """
    current = votes[item_id].get(annotator)
    if current is None or current.time <= time:
        votes[item_id][annotator] = Vote(annotator, choice or "", time, choice or "", key or "")


@dataclass
class ProjectState:
    """Everything derived from the log besides the items themselves.

    ``votes`` (item → annotator → current vote) is built on first use: until
    then the current votes are kept column-wise (``current_votes``), which is
    all the batch commands need.
    """

    flags: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # item -> reason -> note
    notes: dict[str, str] = field(default_factory=dict)
    adjudications: dict[str, Adjudication] = field(default_factory=dict)  # item -> the adjudication in force
    edited: set[str] = field(default_factory=set)
    dedup: dict[str, str] = field(default_factory=dict)  # cluster key -> keep:ID | distinct | merge:ID
    _votes: dict[str, dict[str, Vote]] | None = field(default=None, repr=False)
    _columns: CurrentVotes | None = field(default=None, repr=False)  # None: no vote read yet (see ``_current``)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def _current(self) -> CurrentVotes:
        """The current votes column-wise as last read (none read: an empty set, made when asked for, as its
        arrays import numpy: a project without votes, such as the TUI's first screen, never does)."""
        return self._columns if self._columns is not None else CurrentVotes.empty()

    @_current.setter
    def _current(self, value: CurrentVotes) -> None:
        self._columns = value

    @property
    def votes(self) -> dict[str, dict[str, Vote]]:
        """Each item's current vote per annotator, in order of first vote (both levels)."""
        if self._votes is None:
            with self._lock:
                if self._votes is None:
                    self._votes = self._current.to_dict(Vote) if self._columns is not None else defaultdict(dict)
        if self._votes is None:  # the vote times read back do not match the votes read before
            raise WorkspaceError(
                "the workspace's vote events changed under this program (was the file replaced?); reopen it"
            )
        return self._votes

    @property
    def current_votes(self) -> CurrentVotes | None:
        """The current votes column-wise, while nothing has asked for ``votes`` (None after)."""
        return self._current if self._votes is None else None


class Project:
    """A dataset and its workspace; ``items`` is the current state, in file order."""

    def __init__(
        self, dataset: Dataset, workspace: Workspace | None, annotator: str, prefetch: Prefetch | None = None
    ) -> None:
        self.dataset = dataset
        self.workspace = workspace
        self.annotator = annotator
        self.items: list[Item] = list(dataset.items)
        self.index = {item.id: pos for pos, item in enumerate(self.items)}
        self.state = ProjectState()
        self.file_changed: str | None = None
        self.workspace_path = workspace.path if workspace is not None else default_location(dataset.path)
        self._applied = 0
        self._vote_seq = 0  # the vote events up to here are in state.current_votes
        self._prefetch = prefetch  # the votes, read while the dataset loaded (see Project.open)
        self._actions: dict[int, list[Event]] = {}
        self.history = SolutionHistory()  # the solution texts of the log, for votes without a key
        self._solution_keys: dict[str, tuple[str, ...]] = {}
        self._adjudicated_at: dict[str, str] = {}  # item -> the time of its latest adjudication event (withdrawals too)
        self._adjudged: set[str] = set()  # items whose adjudication the refresh under way replayed
        self._decided: set[str] = set()  # items with an adjudication event in the refresh under way (conflicts)
        self._decisions: dict[str, dict[str, Adjudication]] = defaultdict(dict)  # item -> mark -> decision
        self._decision_in_force: dict[str, str] = {}  # item -> the mark of its adjudication event in force
        self._bases: dict[str, dict[str, str]] = defaultdict(dict)  # item -> mark -> the mark it was made on
        self.changed_by: dict[tuple[str, str], tuple[str, str]] = {}  # (item, field or "note") -> (annotator, time)
        self._conflicts: dict[tuple[str, str], FieldConflict] = {}  # (item, field or "note") -> its open conflict
        self._clock = 0  # the highest clock applied: events below it arrived by a merge (see refresh)
        if workspace is not None:
            self._check_binding()
            self.refresh()
        self._prefetch = None

    # ---------------------------------------------------------------- opening

    @classmethod
    @gc_paused()
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        mapping: dict[str, str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        annotator: str | None = None,
        create: bool = True,
        busy_timeout: float | None = None,
    ) -> Project:
        """Open a dataset; with ``create=False`` the workspace is only read (read-only commands): a missing
        one is not made, and one on a read-only disk or locked by another process can still be read."""
        path = Path(path)
        # Checked and read once, here: a FIFO, a folder or a symlink loop is one line before anything resolves
        # the path, and the workspace's fingerprint is the hash of these bytes.
        source = read_source(path)
        ws_path = Path(workspace) if workspace else default_location(path)
        check_workspace_path(path, ws_path, source.identity)  # --workspace data.tsv: never SQLite pages in the dataset
        prefetch = Prefetch(ws_path) if ws_path.is_file() else None  # the votes are read while the dataset loads
        if mapping is None and ws_path.is_file():
            mapping = stored_mapping(ws_path)  # chosen in the TUI's mapping dialog: no --map needed again
        dataset = parse_dataset(source, mapping)
        del source  # its bytes are not needed again
        ws = None
        if create:
            ws = Workspace(ws_path, busy_timeout=busy_timeout)
        elif ws_path.exists():
            ws = Workspace(ws_path, read_only=True)
        if ws is not None and dataset.layout.id is None:
            ids = _derived_ids(ws, dataset)
            if ids != dataset.raw_ids:
                reassign_ids(dataset, ids)
        project = cls(dataset, ws, annotator or default_annotator(), prefetch)
        project.workspace_path = ws_path  # the one named with --workspace, even when it does not exist yet
        return project

    def _check_binding(self) -> None:
        assert self.workspace is not None
        bound = self.workspace.binding()
        if bound is None and not self.workspace.read_only:
            self.workspace.bind(self.dataset.path, self.dataset.size, self.dataset.sha256)
        elif bound is not None and bound[2] != self.dataset.sha256:  # none yet: a read-only look binds nothing
            self.file_changed = (
                f"{self.dataset.path} changed since this workspace last saw it "
                f"({bound[1]} bytes then, {self.dataset.size} now): recorded edits are replayed over the new content; "
                "review them before saving"
            )

    def disk_changed(self) -> bool:
        """Whether the dataset file on disk differs from the one loaded (someone else wrote it)."""
        try:
            sha, _ = file_digest(self.dataset.path)
        except OSError:
            return True
        return sha != self.dataset.sha256

    # --------------------------------------------------------------- replaying

    def refresh(self) -> list[str]:
        """Apply events recorded since the last refresh (by any process), in canonical order; returns changed
        item ids. Events that sort before one already applied (a merge brought them) rebuild everything."""
        if self.workspace is None:
            return []
        upto = self.workspace.last_seq()
        if upto <= self._applied:
            return []
        low, high = self.workspace.clocks(self._applied, upto)
        if self._applied and low <= self._clock:
            return self._rebuild()
        self._clock = max(self._clock, high)
        changed: list[str] = []
        retexted: set[str] = set()  # items whose solution texts changed: their votes may point elsewhere now
        votes = self.state._votes  # None while the current votes are kept column-wise
        skip = UNREPLAYED_KINDS if not self._applied else ()  # on opening nobody needs their items named
        for row in self.workspace.event_rows(after=self._applied, upto=upto, votes=votes is not None, skip=skip):
            seq, time, annotator, kind, item_id, name, old, new, action, note = row
            if kind == "vote":  # the bulk of a large log: handled inline, without an Event object
                apply_vote(votes, item_id, annotator, new, time, old)  # type: ignore[arg-type]
                changed.append(item_id)
            elif kind == "edit":
                event = Event(*row)
                self._actions.setdefault(action or seq, []).append(event)
                self._note_concurrent((item_id or "", name or ""), old, new, annotator, time)
                self._set(item_id, name, new, changed, time, old, retexted)
                self.changed_by[(item_id or "", name or "")] = (annotator, time)
            elif kind in MARKER_KINDS:
                self._replay_marker(kind, action or 0, annotator, time, changed, retexted)
            else:
                self._apply_other(Event(*row), changed)
        resolve = set(retexted)
        if votes is None:  # on opening, read whatever is there; later, only when votes came
            new_votes = self.workspace.count_votes(self._vote_seq, upto) if self._vote_seq else None
            if new_votes != 0:
                changed += self._load_votes(upto, new_votes)
                if self.state._votes is None:
                    resolve.clear()  # the column-wise read resolved every vote against the items as they are now
        else:
            resolve.update(changed)
        self._applied = upto
        self._resolve_votes(resolve)
        self._resolve_adjudications(retexted | self._adjudged)
        self._adjudged = set()
        for item_id in self._decided:  # once per item, all its decisions read
            self._recheck_decisions(item_id)
        self._decided = set()
        return changed

    def _rebuild(self) -> list[str]:
        """Derive everything again from the file's items and the whole log, in canonical order (events came in
        below the applied ones: a merge); returns every item id."""
        self.items = list(self.dataset.items)
        self.index = {item.id: pos for pos, item in enumerate(self.items)}  # items the log added are gone again
        self.state = ProjectState()
        self.history = SolutionHistory()
        self._solution_keys = {}
        self._adjudicated_at = {}
        self._adjudged, self._decided = set(), set()
        self._decisions = defaultdict(dict)
        self._decision_in_force = {}
        self._bases = defaultdict(dict)
        self._actions = {}
        self.changed_by = {}
        self._conflicts = {}
        self._applied = self._vote_seq = self._clock = 0
        self.refresh()
        return [item.id for item in self.items]

    def _replay_marker(
        self, kind: str, action: int, annotator: str, time: str, changed: list[str], retexted: set[str]
    ) -> None:
        """An undo or redo of an edit action: its fields back to their old (or again to their new) values."""
        for change in self._actions.get(action, []):
            value = change.old if kind == "undo" else change.new
            made_on = change.new if kind == "undo" else change.old
            self._note_concurrent((change.item_id or "", change.field or ""), made_on, value, annotator, time)
            self._set(change.item_id, change.field, value, changed, time, change.old, retexted)
            self.changed_by[(change.item_id or "", change.field or "")] = (annotator, time)

    # -------------------------------------------------------------- conflicts

    def _note_concurrent(self, key: tuple[str, str], made_on: str | None, new: str | None, by: str, time: str) -> None:
        """Before a change of ``key`` is applied: made on the value in force, it settles any conflict there; made
        on another value while the one in force came from an earlier event, it is a conflict (unless both sides
        wrote the same text)."""
        value = self._value_in_force(key)
        earlier = self.changed_by.get(key)
        if value is None or (made_on or "") == value:
            self._conflicts.pop(key, None)
        elif earlier is not None and (new or "") != value:
            self._conflicts[key] = FieldConflict(*key, made_on or "", new or "", value, by, time, *earlier)

    def _value_in_force(self, key: tuple[str, str]) -> str | None:
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
        return sorted(self._conflicts.values(), key=lambda c: (self.index.get(c.item_id, -1), c.field))

    def in_conflict(self, item_id: str) -> bool:
        """Whether a field or the note of the item is in conflict (the conflicts queue)."""
        return any(key[0] == item_id for key in self._conflicts)

    def resolve_conflict(self, item_id: str, field: str, value: str) -> None:
        """Settle a conflict on ``field`` (``"note"``: the note) with ``value``: an edit made on the value in force,
        recorded even when it keeps that value, so the decision travels and clears the conflict everywhere."""
        if field == ADJUDICATION:
            self._resolve_decision(item_id, value)
            return
        ws = self._require_workspace()
        if field != "note":
            with_field(self.item(item_id), field, value)  # validates the field name before recording

        def build() -> list[Part]:
            self.refresh()  # under the write lock: the value in force is what the resolution is made on
            current = self._value_in_force((item_id, field))
            if current is None:
                raise PiqaError(f"no item with id '{item_id}' or no field '{field}'")
            kind = "note" if field == "note" else "edit"
            return [Part(kind, (Change(item_id, field, current, nfc(value)),), RESOLVED_NOTE)]

        ws.record_checked(self.annotator, build)
        self.refresh()

    def _resolve_decision(self, item_id: str, text: str) -> None:
        """Settle an adjudication conflict with the decision that chose ``text`` ("" none): recorded as a new
        adjudication (or withdrawal) made on the one in force, with the reason of the decision kept."""
        conflict = self._conflicts.get((item_id, ADJUDICATION))
        if conflict is None:
            raise PiqaError(f"no adjudication conflict on {item_id}; piqa-tui workspace conflicts lists them")
        if text not in (conflict.current, conflict.other):
            raise PiqaError(f"{item_id}: keep one of the two adjudications in conflict, the one in force or the other")
        reason = conflict.current_reason if text == conflict.current else conflict.other_reason
        solutions = self.item(item_id).solutions
        if text and text not in solutions:
            raise PiqaError(
                f"{item_id}: the solution that adjudication chose was edited since; adjudicate the item again (A)"
            )
        label = str(solutions.index(text)) if text else ""

        def build() -> list[Part]:
            self.refresh()
            change = Change(item_id, self._adjudication_field(item_id), text or None, label)
            return [Part("adjudicate", (change,), reason)]

        self._require_workspace().record_checked(self.annotator, build)
        self.refresh()

    # -------------------------------------------------------- votes and texts

    def solution_keys(self, item_id: str) -> tuple[str, ...]:
        """The keys of an item's current solution texts (``vote_targets.solution_key``)."""
        keys = self._solution_keys.get(item_id)
        if keys is None:
            keys = self._solution_keys[item_id] = tuple(map(solution_key, self.item(item_id).solutions))
        return keys

    def _current_item(self, item_id: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        pos = self.index.get(item_id)
        return None if pos is None else (self.items[pos].solutions, self.solution_keys(item_id))

    def _solutions(self, item_id: str) -> tuple[str, ...] | None:
        pos = self.index.get(item_id)
        return None if pos is None else self.items[pos].solutions

    def _resolve_votes(self, item_ids: set[str]) -> None:
        """Point the current votes on these items at the solutions they name now (see ``vote_targets``)."""
        if not item_ids:
            return
        if self.state._votes is None:
            self.state._current.resolve(self._solutions, self.solution_keys, self.history)
            return
        for item_id in item_ids:
            found = self._current_item(item_id)
            if found is None:
                continue
            solutions, keys = found
            for vote in self.state._votes.get(item_id, {}).values():
                vote.choice = resolve_choice(solutions, keys, item_id, vote.cast, vote.key, vote.time, self.history)

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
            if found.text is None and found.cast.isdigit() and int(found.cast) < len(solutions):
                name = f"solution{found.cast}"
                found = found._replace(text=self.history.text_at(item_id, name, found.time, solutions[int(found.cast)]))
            label = adjudicated_choice(self.solution_keys(item_id), found.text, found.cast)
            self.state.adjudications[item_id] = found._replace(label=label)

    def _replay_adjudication(self, event: Event) -> None:
        """An adjudication event: it stands unless the item has a later one (by time; a tie: this one). One made
        on another adjudication than the one in force (on another machine, before a merge) is a conflict
        (``_recheck_decisions``, once the refresh has read all of the item's)."""
        item_id = event.item_id or ""
        decision = Adjudication(
            event.new or "", event.note or "", event.annotator, event.time, event.old, event.new or ""
        )
        mark = adjudication_mark(event.time, event.annotator, event.new or "")
        self._decisions[item_id][mark] = decision  # a withdrawal too (label ""), for the conflicts it is part of
        if self._adjudicated_at.get(item_id, "") <= event.time:  # else a later decision was brought in first
            self._adjudicated_at[item_id] = event.time
            self._decision_in_force[item_id] = mark
            if not event.new:  # an undone adjudication: the votes decide again
                self.state.adjudications.pop(item_id, None)
            else:
                self.state.adjudications[item_id] = decision
                self._adjudged.add(item_id)
        base = made_on(event.field)
        if base is not None:
            self._bases[item_id].setdefault(mark, base)
        self._decided.add(item_id)

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

    def _adjudication_field(self, item_id: str) -> str:
        """The field a new adjudication event of the item records: made on the adjudication in force."""
        return decision_field(self._decision_in_force.get(item_id, ""))

    def votes_invalidated(self, item_id: str, changes: dict[str, str]) -> list[str]:
        """The annotators whose current vote on the item an edit would leave STALE (its text changed).

        A swap or reorder invalidates nothing: the texts voted for are still there.
        """
        item = self.item(item_id)
        for name, value in changes.items():
            if is_solution_field(name):
                item = with_field(item, name, nfc(value))
        after = set(map(solution_key, item.solutions))
        keys = self.solution_keys(item_id)
        votes = self.state.votes.get(item_id, {})
        return [a for a, v in votes.items() if v.choice.isdigit() and keys[int(v.choice)] not in after]

    def vote_key(self, item_id: str, choice: str) -> str | None:
        """The solution key a new vote records: that of the text at the chosen position (None: skip, withdraw)."""
        keys = self.solution_keys(item_id)
        return keys[int(choice)] if choice.isdigit() and int(choice) < len(keys) else None

    def _load_votes(self, upto: int, new_votes: int | None) -> list[str]:
        """Bring the current votes up to ``upto``; returns the item ids of the vote events not seen before.

        Many new votes (``new_votes``; None: unknown, on opening), as when opening or importing: read
        them all again column-wise. A few on top of many (a script voting): build the dict once and
        add them to it, as the TUI does — so one vote at a time never re-reads a growing log.
        """
        assert self.workspace is not None
        state, seen = self.state, self._vote_seq
        prefetched, self._prefetch = (self._prefetch.result() if self._prefetch else None), None
        with state._lock:
            self._vote_seq = upto
            start = seen
            if state._votes is None and (new_votes is None or new_votes * 4 >= state._current.events):
                loaded = CurrentVotes.load(self.workspace, upto, after=seen, prefetched=prefetched)
                if loaded is not None:
                    state._current, changed = loaded
                    state._current.resolve(self._solutions, self.solution_keys, self.history)
                    return changed
            elif state._votes is None:
                state._votes = state._current.to_dict(Vote)
            if state._votes is None:  # the column-wise read failed (a NULL item id, a U+001F): replay every vote
                state._votes, start = defaultdict(dict), 0
            changed = []
            for seq, time, annotator, kind, item_id, _, old, new, _, _ in self.workspace.event_rows(
                after=start, upto=upto
            ):
                if kind == "vote":
                    apply_vote(state._votes, item_id, annotator, new, time, old)
                    if seq > seen:
                        changed.append(item_id)
        self._resolve_votes(set(changed) if start else set(state._votes))
        return changed

    def _set(
        self,
        item_id: str | None,
        name: str | None,
        value: str | None,
        changed: list[str],
        time: str = "",
        old: str | None = None,
        retexted: set[str] | None = None,
    ) -> None:
        pos = self.index.get(item_id or "")
        if pos is None or name is None:
            return
        if is_solution_field(name) and item_id:
            self.history.add(item_id, name, time, old, value)
            self._solution_keys.pop(item_id, None)
            if retexted is not None:
                retexted.add(item_id)
        try:
            self.items[pos] = with_field(self.items[pos], name, value)
        except (PiqaError, IndexError, ValueError):
            return  # an edit of a field this file no longer has; `changes()` still lists it
        original = self.dataset.items[pos] if pos < len(self.dataset.items) else None  # None: the log added it
        if original is not None and self.items[pos] == original and self.items[pos].meta == original.meta:
            self.state.edited.discard(item_id or "")
        else:
            self.state.edited.add(item_id or "")
        changed.append(item_id or "")

    def _apply_other(self, event: Event, changed: list[str]) -> None:
        item_id = event.item_id or ""
        if event.kind == "flag":
            if event.new == "1":
                self.state.flags[item_id][event.field or "flag"] = event.note or ""
            else:
                self.state.flags[item_id].pop(event.field or "flag", None)
        elif event.kind == "note":
            self._note_concurrent((item_id, "note"), event.old, event.new, event.annotator, event.time)
            self.state.notes[item_id] = event.new or ""
            self.changed_by[(item_id, "note")] = (event.annotator, event.time)
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
        changed.append(item_id)

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

    # ----------------------------------------------------------------- actions

    def item(self, item_id: str) -> Item:
        try:
            return self.items[self.index[item_id]]
        except KeyError:
            raise PiqaError(f"no item with id '{item_id}'") from None

    def _require_workspace(self) -> Workspace:
        if self.workspace is None:
            raise WorkspaceError(
                "this dataset was opened read-only (no workspace); open it with a workspace to record work"
            )
        return self.workspace

    def edit(
        self,
        item_id: str,
        changes: dict[str, str],
        base: dict[str, str] | None = None,
        stale_ok: Collection[str] | None = None,
    ) -> Item:
        """Set fields of one item as one undoable action; returns the new item.

        ``base`` holds, per field, the value the edit was made on (what the editor opened with): a field
        someone else has changed since raises ``EditConflict`` and nothing is recorded. A field without
        a base is set whatever it holds now. ``stale_ok`` names the annotators whose votes the one editing
        agreed to set aside (None: no such question was asked): a vote of anyone else that the edit would set
        aside, cast since, raises ``VotesArrived`` and nothing is recorded.
        """
        ws = self._require_workspace()
        item = self.item(item_id)
        for name, value in changes.items():
            with_field(item, name, value)  # validates the field name before recording
        if all(field_value(item, name) == nfc(value) for name, value in changes.items()):
            return item  # nothing to record: no write lock taken

        def build() -> list[Part]:
            self.refresh()  # under the write lock: what other processes recorded until now counts
            current = self.item(item_id)
            # Typed text is stored in NFC (the product's rule for stored text); nothing else about it is changed.
            recorded = [
                Change(item_id, name, field_value(current, name), nfc(value)) for name, value in changes.items()
            ]
            recorded = [c for c in recorded if c.old != c.new]
            for change in recorded:
                self._check_base(change, (base or {}).get(change.field))
            if stale_ok is not None and recorded:
                unasked = [a for a in self.votes_invalidated(item_id, changes) if a not in stale_ok]
                if unasked:
                    raise VotesArrived(item_id, unasked)
            return [Part("edit", tuple(recorded))] if recorded else []

        if ws.record_checked(self.annotator, build) is not None:
            self.refresh()
        return self.item(item_id)

    def _check_base(self, change: Change, base: str | None) -> None:
        """Raise ``EditConflict`` when ``change``'s field no longer holds ``base`` (None: no base, no check)."""
        if base is None or nfc(base) == change.old:
            return
        by, when = self.changed_by.get((change.item_id or "", change.field), ("", ""))
        raise EditConflict(change.item_id or "", change.field, change.old or "", change.new or "", base, by, when)

    def swap_solutions(self, item_id: str, a: int, b: int) -> Item:
        """Swap two solutions and move the label with them, as one action."""
        item = self.item(item_id)
        changes = {f"solution{a}": item.solutions[b], f"solution{b}": item.solutions[a]}
        if item.label in (a, b):
            changes["label"] = str(b if item.label == a else a)
        return self.edit(item_id, changes)

    def record(self, parts: list[Part]) -> int:
        """Record ``parts`` as one action — one transaction, one undo step — and apply it; returns its id.

        For compound actions (a duplicate cluster resolved: its members flagged and its decision): a busy
        or failing workspace leaves all of it unrecorded, never half. Every item named must exist, or be added by
        a ``new-item`` part of the same action.
        """
        added = {c.item_id for part in parts if part.kind == NEW_ITEM_KIND for c in part.changes}
        for part in parts:
            for change in part.changes:
                if change.item_id is not None and change.item_id not in added:
                    self.item(change.item_id)
        action = self._require_workspace().record_action(self.annotator, parts)
        self.refresh()
        return action

    def undo(self) -> str | None:
        """Undo this annotator's last action (an edit, vote, withdrawal, flag, note, adjudication or duplicate
        decision; even one made before a restart); returns the first item id it touched ("" when it touched
        none: a cluster marked distinct), None when there was nothing to undo."""
        return self._undo_redo("undo")

    def redo(self) -> str | None:
        return self._undo_redo("redo")

    def _undo_redo(self, which: str) -> str | None:
        ws = self._require_workspace()
        undo, redo = undo_stacks(ws, self.annotator)
        stack = undo if which == "undo" else redo
        if not stack:
            return None
        events = action_events(ws, stack[-1])
        ws.record_marker(
            self.annotator,
            which,
            stack[-1],
            [astuple(self._made_on_now(c)) for c in compensation(ws, events, undoing=which == "undo")],
            check=lambda: self._check_untouched(which, events, stack[-1]),
        )
        self.refresh()
        return next((e.item_id for e in events if e.item_id is not None), "")

    def _made_on_now(self, event: Compensation) -> Compensation:
        """An adjudication an undo or redo records is made on the one in force, as any new one."""
        if event.kind != "adjudicate" or event.item_id is None:
            return event
        return replace(event, field=self._adjudication_field(event.item_id))

    def _check_untouched(self, which: str, events: list[Event], action: int) -> None:
        """Refuse (``UndoRefused``) an undo or redo of an action whose field someone has changed since: the
        field must hold what the action left (undo) or what its undo left (redo). Run under the write lock."""
        self.refresh()
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
            by, when = self.changed_by.get(key, ("", ""))
            raise UndoRefused(
                f"cannot {which} on {event.item_id}: {key[1]} was changed by {changed_by(by, when)} since; "
                f"nothing was {'undone' if which == 'undo' else 'redone'}"
            )

    def _check_creation(self, which: str, events: list[Event], action: int) -> None:
        """Refuse an undo of an item's creation while anyone else's work on the item stands (it would go with the
        item), and a redo of one when another item with its id was added since (a later undo would take that one)."""
        created = {e.item_id for e in events if e.kind == NEW_ITEM_KIND and e.item_id}
        if not created:
            return
        ws = self._require_workspace()
        if which == "undo":
            found = standing_on(ws, created, action, self.annotator)
        else:
            found = standing_on(ws, created, action, None, kinds=(NEW_ITEM_KIND,))
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
        found = self._decisions[item_id].get(self._decision_in_force.get(item_id, ""))
        if found is None or found.time <= last or found.who == self.annotator or chosen_text(found) == left:
            return
        raise UndoRefused(
            f"cannot {which} on {item_id}: its adjudication was changed by {changed_by(found.who, found.time)} "
            f"since; nothing was {'undone' if which == 'undo' else 'redone'}"
        )

    def _current_value(self, event: Event) -> str | None:
        """What the field of an edit or note event holds now (None: another kind, or a field this file lacks)."""
        item_id = event.item_id or ""
        if event.kind == "note":
            return self.state.notes.get(item_id, "")
        if event.kind != "edit" or item_id not in self.index:
            return None
        try:
            return field_value(self.item(item_id), event.field or "")
        except (PiqaError, IndexError):
            return None

    def vote(self, item_id: str, choice: str) -> None:
        """Record this annotator's vote: a solution index, 'skip' (unsure) or '' (withdraw).

        A vote for a solution records the key of its text, so that it follows the text (``vote_targets``).
        """
        self.item(item_id)
        change = Change(item_id, "choice", self.vote_key(item_id, choice), choice)
        self._require_workspace().record(self.annotator, "vote", [change])
        self.refresh()

    def set_flag(self, item_id: str, reason: str, on: bool = True, note: str = "") -> None:
        self.set_flags(item_id, {reason: on}, note)

    def set_flags(self, item_id: str, reasons: dict[str, bool], note: str = "") -> None:
        """Set or clear flags on an item as one action (one undo), with one note for those set."""
        self.item(item_id)
        if reasons:
            changes = [Change(item_id, reason, None, "1" if on else "0") for reason, on in reasons.items()]
            self._require_workspace().record(self.annotator, "flag", changes, note or None)
            self.refresh()

    def set_note(self, item_id: str, text: str, base: str | None = None) -> None:
        """Record the item's note; with ``base`` (the note the editor opened with), one someone else has
        changed since raises ``EditConflict`` and nothing is recorded."""
        self.item(item_id)
        if base is None:
            old = self.state.notes.get(item_id)
            self._require_workspace().record(self.annotator, "note", [Change(item_id, "note", old, nfc(text))])
            self.refresh()
            return

        def build() -> list[Part]:
            self.refresh()  # under the write lock, as for an edit
            change = Change(item_id, "note", self.state.notes.get(item_id, ""), nfc(text))
            if change.old == change.new:
                return []
            self._check_base(change, base)
            return [Part("note", (change,))]

        if self._require_workspace().record_checked(self.annotator, build) is not None:
            self.refresh()

    def adjudicate(self, item_id: str, label: int, reason: str) -> None:
        """Set the final label of a disagreement, with a reason; logged like every action.

        The event keeps the text of the solution chosen (in ``old``), so the decision follows that text, and
        the adjudication in force it was made on (in ``field``), so one made concurrently on another machine
        shows as a conflict after a merge.
        """
        solutions = self.item(item_id).solutions
        if not 0 <= label < len(solutions):
            raise PiqaError(f"item '{item_id}' has no solution {label + 1}")
        text = solutions[label]

        def build() -> list[Part]:
            self.refresh()  # under the write lock: the adjudication in force is the one this one is made on
            return [Part("adjudicate", (Change(item_id, self._adjudication_field(item_id), text, str(label)),), reason)]

        self._require_workspace().record_checked(self.annotator, build)
        self.refresh()

    # ------------------------------------------------------------------- output

    def protected_files(self) -> dict[Path, str]:
        """Files no export may write over: the source dataset, and its workspaces (this one and its default)
        with their WAL/SHM (see ``outputs``)."""
        return dataset_protected_files(source_files(self.dataset), self.workspace_path)

    def check_outputs(self, outputs: list[Path], replace: bool = False) -> None:
        """Refuse outputs over the dataset or the workspace, and existing files unless ``replace`` (see ``outputs``)."""
        check_outputs(outputs, self.protected_files(), replace)

    def export(
        self,
        out: str | os.PathLike[str],
        fmt: str | None = None,
        items: list[Item] | None = None,
        extra_columns: dict[str, list[object]] | None = None,
        replace: bool = False,
        escape_formulas: bool = False,
    ) -> list[Path]:
        """Write the current state (or ``items``) to ``out``; the workspace is untouched.

        Never over the source or the workspace; over another existing file only with ``replace``.
        """
        self.check_outputs(output_files(self.dataset, Path(out), fmt), replace)
        return write_dataset(
            self.dataset, self.items if items is None else items, out, fmt, extra_columns, escape_formulas
        )

    def save(self) -> list[Path]:
        """Write the current state over the source file and rebind the workspace to it."""
        if self.disk_changed():
            raise WorkspaceError(
                f"{self.dataset.path} was changed on disk by someone else since it was opened; "
                "export to another file instead, or reopen it"
            )
        written = write_dataset(
            self.dataset, self.items, self.dataset.path, self.dataset.format
        )  # the one write over the source
        sha, size = file_digest(self.dataset.path)
        self.dataset.sha256, self.dataset.size = sha, size
        if self.workspace is not None:
            self.workspace.bind(self.dataset.path, size, sha)
            self._keep_added_ids()
        return written

    def _keep_added_ids(self) -> None:
        """A file without an id column keeps the ids of the items the log added, now rows of the saved file, so
        reopening it finds them there (and their ``new-item`` events add nothing)."""
        assert self.workspace is not None
        stored, first = self.workspace.row_ids(), len(self.dataset.items)
        if self.dataset.layout.id is not None or len(self.items) == first or len(stored) != first:
            return
        added = [
            (pos, self.items[pos].id, content_key(self.items[pos].prompt, self.items[pos].solutions))
            for pos in range(first, len(self.items))
        ]
        self.workspace.set_row_ids([*stored, *added])


_DONE_TO_AN_ITEM = {
    "vote": "it was voted on",
    "note": "note was changed",
    "flag": "its flags were changed",
    "stage": "its stage was moved",
    "adjudicate": "it was adjudicated",
    NEW_ITEM_KIND: "an item with this id was added",
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


def _derived_ids(ws: Workspace, dataset: Dataset) -> list[str]:
    """Ids for a dataset without an id column: made once, kept in the workspace, re-found after re-sorting."""
    keys = [content_key(item.prompt, item.solutions) for item in dataset.items]
    stored = ws.row_ids()
    bound = ws.binding()
    if stored and bound and bound[2] == dataset.sha256 and len(stored) == len(keys):
        return [row_id for _, row_id, _ in stored]
    if not stored:
        ids = [f"r{row + 1}" for row in range(len(keys))]
    else:
        free: dict[str, list[str]] = defaultdict(list)
        for _, row_id, key in stored:
            free[key].append(row_id)
        for queue in free.values():
            queue.reverse()
        taken = {row_id for _, row_id, _ in stored}
        ids = []
        next_number = len(stored) + 1
        for key in keys:
            if free.get(key):
                ids.append(free[key].pop())
                continue
            while f"r{next_number}" in taken:
                next_number += 1
            ids.append(f"r{next_number}")
            taken.add(f"r{next_number}")
    if not ws.read_only:  # a read-only reader derives the same ids the next writer will store
        ws.set_row_ids(zip(range(len(keys)), ids, keys))
    return ids
