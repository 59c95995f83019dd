"""What the replay derives from the log besides the items: current votes, flags, notes, adjudications, edits.

``ProjectState`` owns its fields and answers for them: the current votes are kept column-wise
(``CurrentVotes``, all a batch command needs) until something asks for them per item and annotator,
and only the state itself switches between the two forms, under its own lock.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError, WorkspaceError
from piqa_tui.core.workspace.current_votes import CurrentVotes
from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.vote_targets import Adjudication, SolutionHistory, resolve_choice


def field_value(item: Item, name: str) -> str:
    """The text of one editable field ("prompt", "solutionN", "label", "meta:COLUMN")."""
    if name == "prompt":
        return item.prompt
    if name.startswith("solution"):
        return item.solutions[int(name[8:])]
    if name == "label":
        return "" if item.label is None else str(item.label)
    if name.startswith("meta:"):
        return item.meta.get(name[5:], "")
    raise PiqaError(f"unknown field '{name}'")


def with_field(item: Item, name: str, value: str | None) -> Item:
    """The item with one field set (None: cleared)."""
    value = value or ""
    if name == "prompt":
        return item.with_changes(prompt=value)
    if name.startswith("solution"):
        index = int(name[8:])
        if not 0 <= index < len(item.solutions):
            raise IndexError(index)
        solutions = list(item.solutions)
        solutions[index] = value
        return item.with_changes(solutions=tuple(solutions))
    if name == "label":
        return item.with_changes(label=int(value) if value else None)
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


VoteDict = dict[str, dict[str, Vote]]  # item -> annotator -> current vote


def apply_vote(
    votes: VoteDict,
    item_id: str,
    annotator: str,
    choice: str | None,
    time: str,
    key: str | None = None,
) -> None:
    """One vote event: it becomes the annotator's current vote unless they have a later one (a tie: this one).

    Its ``choice`` is the recorded one until the replay resolves it against the item's current text.
    """
    current = votes[item_id].get(annotator)
    if current is None or current.time <= time:
        votes[item_id][annotator] = Vote(annotator, choice or "", time, choice or "", key or "")


Solutions = Callable[[str], "tuple[str, ...] | None"]  # an item's current solutions (None: no such item)
Keys = Callable[[str], "tuple[str, ...]"]  # the keys of an item's current solutions


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
    _votes: VoteDict | None = field(default=None, repr=False)
    _columns: CurrentVotes | None = field(default=None, repr=False)  # None: no vote read yet (see ``_current``)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def _current(self) -> CurrentVotes:
        """The current votes column-wise as last read (none read: an empty set, made when asked for, as its
        arrays import numpy: a project without votes, such as the TUI's first screen, never does)."""
        return self._columns if self._columns is not None else CurrentVotes.empty()

    @property
    def votes(self) -> VoteDict:
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

    @property
    def votes_by_item(self) -> VoteDict | None:
        """The per-item votes when something has built them (the replay then adds each vote event to them
        as it comes); None while they are kept column-wise."""
        return self._votes

    def read_votes(
        self, workspace: Workspace, upto: int, after: int, new_votes: int | None, prefetched: tuple[int, tuple] | None
    ) -> tuple[list[str], set[str] | None]:
        """Bring the current votes up to the log's ``upto`` from ``after``; returns the item ids of the vote events
        not seen before, and the items whose votes must be resolved against their texts (None: every vote, read
        column-wise again, still has to be: see ``resolve_votes``).

        Many new votes (``new_votes``; None: unknown, on opening), as when opening or importing: read
        them all again column-wise. A few on top of many (a script voting): build the dict once and
        add them to it, as the TUI does — so one vote at a time never re-reads a growing log.
        """
        with self._lock:
            if self._votes is None and (new_votes is None or new_votes * 4 >= self._current.events):
                loaded = CurrentVotes.load(workspace, upto, after=after, prefetched=prefetched)
                if loaded is not None:
                    self._columns, changed = loaded
                    return changed, None
            elif self._votes is None:
                self._votes = self._current.to_dict(Vote)
            start = after
            if self._votes is None:  # the column-wise read failed (a NULL item id, a U+001F): replay every vote
                self._votes, start = defaultdict(dict), 0
            changed = []
            for seq, time, annotator, kind, item_id, _, old, new, _, _ in workspace.event_rows(after=start, upto=upto):
                if kind == "vote":
                    apply_vote(self._votes, item_id, annotator, new, time, old)
                    if seq > after:
                        changed.append(item_id)
            return changed, (set(changed) if start else set(self._votes))

    def resolve_votes(
        self, item_ids: set[str] | None, solutions: Solutions, keys: Keys, history: SolutionHistory
    ) -> None:
        """Point the current votes on these items (None: all of them) at the solutions they name now
        (``vote_targets``): moved with a swap, STALE after an edit of the text voted for."""
        if self._votes is None:
            if item_ids is None or item_ids:
                self._current.resolve(solutions, keys, history)
            return
        for item_id in self._votes if item_ids is None else item_ids:
            texts = solutions(item_id)
            if texts is None:
                continue
            item_keys = keys(item_id)
            for vote in self._votes.get(item_id, {}).values():
                vote.choice = resolve_choice(texts, item_keys, item_id, vote.cast, vote.key, vote.time, history)
