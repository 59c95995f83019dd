"""The current vote of every (item, annotator), kept column-wise instead of one Python object per vote.

A workspace of 100,000 items × 3 annotators holds 300,000 vote events.
Replaying each into a ``Vote`` object costs about a second, and the batch
commands (``agree``, ``export --decided``) only need the current votes as
integer codes. :meth:`CurrentVotes.load` reads the vote events of the log in
one query, column by column, and reduces them with numpy by the rule the
replay uses: the latest vote per annotator and item counts, by its time, then
by log order.

:meth:`CurrentVotes.to_dict` gives the replay's dict (item → annotator →
vote, both in order of their first vote event) when something asks for it —
the TUI does at once, a batch command never does.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, count
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.workspace.log import PAIR_SEP, Workspace, read_vote_columns
from piqa_tui.core.workspace.vote_targets import SolutionHistory, resolve_choice

if TYPE_CHECKING:
    import numpy as np
else:
    from piqa_tui.core.numeric import np  # imported on its first use: core/numeric.py

SEP = "\x1f"  # joins the values of one column in the query's answer; a value holding it takes the slow path


def _repeated(codes: np.ndarray, size: int) -> np.ndarray:
    """Whether each code occurs more than once (codes in ``0..size-1``)."""
    if size <= 4 * len(codes) + 65536:
        return np.bincount(codes, minlength=size)[codes] > 1
    inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)[1:]
    return counts[inverse.ravel()] > 1


def _codes(values: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct values in order of first appearance, and each value's index among them."""
    seen: dict[str, int] = {}
    first = np.fromiter(map(seen.setdefault, values, count()), np.int64, len(values))  # where each value first occurs
    used = np.zeros(len(values), bool)
    used[first] = True
    return list(compress(values, used.tolist())), (np.cumsum(used) - 1)[first]


LOADED = ("item_id", "annotator_choice")  # the columns ``CurrentVotes.load`` reads (times only when needed)


class Prefetch:
    """The vote columns of a workspace, read in a thread on a connection of its own while the dataset loads.

    SQLite runs without the GIL, so on two cores the query (a fifth of a second for 300,000 votes)
    costs no wall time next to parsing the dataset. Any failure leaves the reading to the workspace's
    own connection.
    """

    def __init__(self, path: Path) -> None:
        self._result: tuple[int, tuple] | None = None
        self._thread = threading.Thread(target=self._read, args=(path,), name="piqa-tui votes", daemon=True)
        self._thread.start()

    def _read(self, path: Path) -> None:
        try:
            self._result = read_vote_columns(path, LOADED, SEP)
        except Exception:  # noqa: BLE001 - an unusable file is reported by the main connection
            self._result = None

    def result(self) -> tuple[int, tuple] | None:
        """(the last sequence number then, ``Workspace.vote_columns`` up to it), or None."""
        self._thread.join()
        return self._result


def _columns(
    ws: Workspace, upto: int, names: tuple[str, ...], raw: tuple | None = None
) -> tuple[list[list[str]], np.ndarray, int] | None:
    """The vote events up to ``upto``: one list of strings per named column, their sequence numbers, in log order,
    and how many carry a solution key (from ``raw``, the answer of ``ws.vote_columns`` for them, when given).

    None when a value is NULL or holds the separator, or the rows did not come in
    log order: the caller then replays the events one by one.
    """
    n, seq_text, *joined, keyed = raw if raw is not None else ws.vote_columns(upto, names, SEP)
    seqs = np.fromstring(seq_text, dtype=np.int64, sep=",") if n else np.zeros(0, np.int64)
    if len(seqs) != n or (n > 1 and not bool((seqs[1:] > seqs[:-1]).all())):
        return None
    columns = []
    for non_null, text in zip(joined[::2], joined[1::2]):
        values = text.split(SEP) if text is not None else []
        if non_null != n or len(values) != n:
            return None
        columns.append(values)
    return columns, seqs, int(keyed)


class _LazyColumn:
    """One more column of the vote events read before (``time``, ``solution``), read on first use; None when
    the rows read back differ (the log is append-only, so they should not)."""

    def __init__(self, ws: Workspace, upto: int, name: str, seqs: np.ndarray, keyed: int = 0) -> None:
        self._args = (ws, upto, name, seqs)
        self._keyed = keyed  # how many of the votes carry a solution key, read with the first columns
        self._value: list[list[str] | None] = []

    def __call__(self) -> list[str] | None:
        if not self._value:
            ws, upto, name, seqs = self._args
            again = _columns(ws, upto, (name,))
            self._value.append(again[0][0] if again is not None and np.array_equal(again[1], seqs) else None)
        return self._value[0]

    def any_set(self) -> bool:
        """Whether some value is not empty; for the solution keys known without reading the column, until it is read."""
        if self._value:
            return self._value[0] is None or any(self._value[0])
        return self._args[2] != "solution" or self._keyed > 0


@dataclass(eq=False)
class CurrentVotes:
    """The latest vote of each (item, annotator) among the vote events up to sequence number ``upto``.

    ``item_ids``, ``annotators`` and ``choices`` are the distinct values in
    order of their first vote event (choices as recorded: an index as text,
    ``"skip"``, ``""`` for withdrawn). ``item``, ``annotator`` and ``choice``
    hold one code per current vote into them, and ``row`` the vote's position
    among the events read (log order); votes are in log order.
    """

    upto: int
    events: int
    item_ids: list[str]
    annotators: list[str]
    choices: list[str]
    item: np.ndarray
    annotator: np.ndarray
    choice: np.ndarray
    row: np.ndarray
    key: np.ndarray  # per vote event read: its (item, annotator) as one code
    _times: Callable[[], list[str] | None] = field(repr=False, default=lambda: [])
    _keys: Callable[[], list[str] | None] = field(repr=False, default=lambda: [])
    cast: np.ndarray | None = None  # per current vote, its choice as recorded (``choice`` is where it points now)
    _any_key: Callable[[], bool] = field(repr=False, default=lambda: True)  # whether a vote carries a solution key
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def empty(cls) -> CurrentVotes:
        none = np.zeros(0, np.int64)
        return cls(0, 0, [], [], [], none, none, none, none, none)

    @classmethod
    def load(
        cls,
        ws: Workspace,
        upto: int,
        after: int = 0,
        prefetched: tuple[int, tuple] | None = None,
    ) -> tuple[CurrentVotes, list[str]] | None:
        """Read and reduce every vote event up to ``upto``; also the item ids of those after ``after`` (log order).

        ``prefetched`` (from :class:`Prefetch`) is used when no vote came after it was read.
        None when the log needs the one-by-one replay (see ``_columns``).
        """
        raw = None
        if (
            prefetched is not None
            and not ws.bad_events
            and (prefetched[0] == upto or (prefetched[0] < upto and not ws.count_votes(prefetched[0], upto)))
        ):
            raw = prefetched[1]
        got = _columns(ws, upto, LOADED, raw)
        if got is None:
            return None
        (items, pairs), seqs, keyed = got
        changed = items[int(np.searchsorted(seqs, after, side="right")) :] if after else items
        item_ids, item = _codes(items)
        pair_names, pair = _codes(pairs)  # (annotator, choice) pairs: a few distinct ones, coded once each
        split = [name.split(PAIR_SEP) for name in pair_names]
        if any(len(parts) != 2 for parts in split):
            return None
        annotators, annotator_of = _codes([a for a, _ in split])
        choice_names, choice_of = _codes([c for _, c in split])
        annotator, choice = annotator_of[pair], choice_of[pair]
        key = item * max(len(annotators), 1) + annotator
        times, keys = _LazyColumn(ws, upto, "time", seqs), _LazyColumn(ws, upto, "solution", seqs, keyed)

        repeated = _repeated(key, len(item_ids) * max(len(annotators), 1))
        if repeated.any():
            clock = times()
            if clock is None:
                return None
            latest: dict[int, int] = {}
            rows = np.flatnonzero(repeated)
            for r, k in zip(rows.tolist(), key[rows].tolist()):
                best = latest.get(k)
                if best is None or clock[best] <= clock[r]:  # later in the log wins a tie, as in the replay
                    latest[k] = r
            keep = ~repeated
            keep[list(latest.values())] = True
            row = np.flatnonzero(keep)
        else:
            row = np.arange(len(seqs), dtype=np.int64)
        current = cls(
            upto,
            len(seqs),
            item_ids,
            annotators,
            choice_names,
            item[row],
            annotator[row],
            choice[row],
            row,
            key,
            times,
            keys,
            _any_key=keys.any_set,
        )
        return current, changed

    def resolve(
        self,
        solutions: Callable[[str], tuple[str, ...] | None],
        keys: Callable[[str], tuple[str, ...]],
        history: SolutionHistory,
    ) -> None:
        """Point each vote at the solution it names now (``vote_targets``): moved with a swap, STALE after an edit.

        ``solutions(item_id)`` gives an item's current solutions (None: not in the dataset), ``keys(item_id)``
        their keys (asked only for items with votes that carry a key, or whose texts the log changed).
        """
        if self.cast is None:
            self.cast = self.choice.copy()
        self.choice = self.cast.copy()
        self._memo.clear()
        stored = (self.solution_keys() if self._any_key() else None) or [""] * len(self)
        texts = [solutions(item_id) for item_id in self.item_ids]
        count = np.array([len(t) if t is not None else 1 << 30 for t in texts], np.int64)
        numeric = self.numeric()
        suspect = (numeric >= 0) & (numeric >= count[self.item]) if len(self) else np.zeros(0, bool)
        keyed = np.flatnonzero(np.array([bool(k) for k in stored], bool)) if any(stored) else np.zeros(0, np.int64)
        retexted = [k for k, item_id in enumerate(self.item_ids) if item_id in history.items and texts[k] is not None]
        for k in keyed.tolist():  # a vote that carries a key: is it still at its recorded position?
            c, item_id = int(numeric[k]), self.item_ids[self.item[k]]
            if 0 <= c < count[self.item[k]] and texts[self.item[k]] is not None and keys(item_id)[c] != stored[k]:
                suspect[k] = True
        if retexted:
            suspect |= np.isin(self.item, retexted) & (numeric >= 0)
        self._move(np.flatnonzero(suspect & (count[self.item] < 1 << 30)).tolist(), stored, texts, keys, history)

    def _move(
        self,
        rows: list[int],
        stored: list[str],
        texts: list[tuple[str, ...] | None],
        keys: Callable[[str], tuple[str, ...]],
        history: SolutionHistory,
    ) -> None:
        """Re-point the votes at ``rows`` (indices of current votes) by ``vote_targets.resolve_choice``."""
        if not rows:
            return
        clock = self._times() if any(not stored[k] for k in rows) else []
        names = {name: code for code, name in enumerate(self.choices)}
        assert self.cast is not None
        for k in rows:
            item_id = self.item_ids[self.item[k]]
            now = resolve_choice(
                texts[self.item[k]] or (),
                keys(item_id),
                item_id,
                self.choices[self.cast[k]],
                stored[k],
                clock[self.row[k]] if clock else "",
                history,
            )
            if now not in names:
                names[now] = len(self.choices)
                self.choices.append(now)
            self.choice[k] = names[now]

    def solution_keys(self) -> list[str] | None:
        """Per current vote, the solution key it was recorded with ("" when none); None when unreadable."""
        stored = self._keys()
        return None if stored is None else [stored[r] for r in self.row.tolist()]

    def __len__(self) -> int:
        return len(self.row)

    def numeric(self) -> np.ndarray:
        """Per current vote, its choice as a solution index, or -1 (skip, withdrawn): ``str.isdecimal`` then ``int``."""
        values = np.array([int(c) if c.isdecimal() else -1 for c in self.choices], dtype=np.int64)
        return values[self.choice] if len(self.choices) else np.zeros(len(self), np.int64)

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """A value derived from these votes, computed once (e.g. item positions in one dataset)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def vote_times(self) -> list[str] | None:
        """Per current vote, in their order, the time of its event; None when the times cannot be read back."""
        clock = self._times() if len(self) else []
        return None if clock is None else list(map(clock.__getitem__, self.row.tolist()))

    def times(self) -> dict[tuple[str, str], str] | None:
        """(item id, annotator) → the time of the current vote's latest event (as ``to_dict``'s votes carry it),
        without building a vote object each; None when the times cannot be read back."""
        clock = self._times() if len(self) else []
        if clock is None:
            return None
        items, names = self.item_ids, self.annotators
        keys = zip(map(items.__getitem__, self.item.tolist()), map(names.__getitem__, self.annotator.tolist()))
        return dict(zip(keys, map(clock.__getitem__, self.row.tolist())))

    def to_dict(self, make_vote: Callable[[str, str, str, str, str], Any]) -> dict[str, dict[str, Any]] | None:
        """item → annotator → ``make_vote(annotator, choice, time, cast, key)``, ordered like the one-by-one replay's dict
        (``choice`` where the vote points now, ``cast`` as recorded, ``key`` its solution key).

        None when the times could not be read back consistently (the caller replays instead).
        """
        votes: dict[str, dict[str, Any]] = defaultdict(dict)
        if not len(self):
            return votes
        clock, keys = self._times(), self._keys()
        if clock is None or keys is None:
            return None
        cast = self.choice if self.cast is None else self.cast
        first_of_key, inverse = np.unique(self.key, return_index=True, return_inverse=True)[1:]
        first_row = first_of_key[inverse.ravel()[self.row]]  # where each (item, annotator) first voted
        order = np.lexsort((first_row, self.item))
        items, names, choices = self.item_ids, self.annotators, self.choices
        with gc_paused():  # 300,000 small objects without cycles
            for i, a, c, r, k in zip(
                self.item[order].tolist(),
                self.annotator[order].tolist(),
                self.choice[order].tolist(),
                self.row[order].tolist(),
                cast[order].tolist(),
            ):
                name = names[a]
                votes[items[i]][name] = make_vote(name, choices[c], clock[r], choices[k], keys[r])
        return votes
