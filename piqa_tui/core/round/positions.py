"""Position preference: how often each annotator voted each solution position they were shown, against chance.

A vote's shown position comes from the log alone: the solution index its ``vote`` event recorded (the
position in the file when it was cast), mapped through the annotator's latest ``order`` event on the item
before it (``core/round/order.py``), or the index itself when there is none (file order, votes imported
from a file). Each annotator's vote in force per item counts once; unsure votes and withdrawals have no
position. Items are grouped by their number of solutions k (chance is 1/k); every (k, position) is an exact
two-sided binomial test of its count against 1/k, Holm-adjusted over the annotator's tests, and the
strongest is reported. Without shuffling a preference goes straight into the votes; with it, it cancels out,
and this says whether anyone has one.

While the round in force shuffles, a vote by someone it shuffles for that has no order recorded before it was
shown in an order this log does not know: it came in a votes file (which carries no orders) or before the round
shuffled. Such votes are counted apart (``PositionReport.unordered``), never as file order: counting them so
would call file positions the positions an annotator saw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from piqa_tui.core.quality.artifacts import binomial_two_sided, holm
from piqa_tui.core.round.order import ORDER_KIND, parse_order
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.workspace.current_votes import CurrentVotes
from piqa_tui.core.workspace.project import Project

ALPHA = 0.05


@dataclass(frozen=True, slots=True)
class PositionPreference:
    """One annotator's votes per shown position, and the position furthest from chance.

    ``counts`` maps a number of solutions k to the votes per shown position (0-based) on items with k
    solutions; ``position`` / ``solutions`` name the strongest test, ``share`` its share of the votes,
    ``p_value`` its Holm-adjusted two-sided binomial p-value against 1/k."""

    annotator: str
    votes: int
    counts: dict[int, tuple[int, ...]]
    position: int
    solutions: int
    share: float
    p_value: float

    @property
    def chance(self) -> float:
        return 1 / self.solutions

    @property
    def preferred(self) -> bool:
        """Whether the annotator's choices depart from chance beyond ``ALPHA``."""
        return self.p_value < ALPHA

    def describe(self) -> str:
        """One line: the strongest position against chance, and whether that is a preference."""
        verdict = "a position preference" if self.preferred else "no preference shown"
        return (
            f"{self.annotator}: position {self.position + 1} of {self.solutions} in {self.share:.0%} of "
            f"{sum(self.counts[self.solutions])} votes (chance {self.chance:.0%}, p = {self.p_value:.3g}) — {verdict}"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.annotator,
            "votes": self.votes,
            "counts": {str(k): list(v) for k, v in sorted(self.counts.items())},
            "position": self.position + 1,
            "solutions": self.solutions,
            "share": self.share,
            "chance": self.chance,
            "p_value": self.p_value,
            "preferred": self.preferred,
        }


@dataclass(frozen=True, slots=True)
class PositionReport:
    """Position preference per annotator (``position_preference``), and per annotator the votes in force left
    out because the order they were shown in is unknown here (a shuffled round, no order recorded)."""

    preferences: list[PositionPreference]
    unordered: dict[str, int]

    def to_json(self) -> dict[str, object]:
        return {"votes": sum(self.unordered.values()), "by_annotator": dict(sorted(self.unordered.items()))}


Shuffles = Callable[[str], bool]


def _shuffles(project: Project) -> Shuffles | None:
    """Whom the round in force shows solutions in an order of their own (None: it does not shuffle)."""
    declared = round_in_force(project.workspace)
    return declared.shuffles_for if declared is not None and declared.shuffle else None


def shown_positions(project: Project) -> dict[tuple[str, str], tuple[int, int]]:
    """(annotator, item id) → (shown position, number of solutions) of each vote in force for a solution whose
    shown position is known (see ``unordered_votes`` for the others); ``_positions`` says how."""
    return _positions(project)[0]


def unordered_votes(project: Project) -> dict[str, int]:
    """Per annotator, the votes in force for a solution cast while the round in force shuffles for them, with no
    order recorded before them: the position they were shown at is unknown here."""
    return _positions(project)[1]


def _positions(project: Project) -> tuple[dict[tuple[str, str], tuple[int, int]], dict[str, int]]:
    """(annotator, item id) → (shown position, number of solutions) of each vote in force for a solution.

    The vote in force is the project's (the latest by time: ``Project.votes``), never the last vote event in
    the log's order: a vote that came in a votes file carries a clock of the machine that imported it, so the
    log's order of two votes can differ between machines while their times do not. Its shown position maps its
    recorded index through the order recorded last before it by time (``_order_at``)."""
    if project.workspace is None:
        return {}, {}
    in_force = {
        (vote.annotator, item_id): (vote.time, vote.cast)
        for item_id, by_annotator in project.state.votes.items()
        for vote in by_annotator.values()
        if vote.cast
    }
    shuffles = _shuffles(project)
    unordered: dict[str, int] = {}
    if not project.workspace.event_fields([ORDER_KIND], "seq").fetchone() and shuffles is None:  # file order
        count = {item.id: len(item.solutions) for item in project.items}
        found = {
            key: (int(cast), count[key[1]])
            for key, (_, cast) in in_force.items()
            if key[1] in count and cast.isdecimal() and int(cast) < count[key[1]]
        }
        return found, unordered
    orders: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (annotator, item) -> (time, order) in log order
    for _, annotator, item_id, new, time in _fields(project, [ORDER_KIND]):
        orders.setdefault((annotator, item_id), []).append((time, new or ""))
    shown: dict[tuple[str, str], tuple[int, int]] = {}
    for key, (time, cast) in in_force.items():
        if key[1] not in project.index:
            continue
        order = _order_at(orders.get(key), time)
        position = _shown(project, key[1], cast, order)
        if position is not None and order is None and shuffles is not None and shuffles(key[0]) and position[1] > 1:
            unordered[key[0]] = unordered.get(key[0], 0) + 1  # shown in an order this log does not hold
        elif position is not None:
            shown[key] = position
    return shown, unordered


def _order_at(recorded: list[tuple[str, str]] | None, time: str) -> str | None:
    """The order recorded last by ``time`` (a tie: the later in the log), as the vote cast then was shown in: by
    time, as the order and the vote may have reached this log in either order (a vote file carries no order)."""
    found: tuple[str, str] | None = None
    for when, order in recorded or ():
        if when <= time and (found is None or found[0] <= when):
            found = (when, order)
    return found[1] if found is not None else None


def _fields(project: Project, kinds: list[str]) -> Iterator[tuple[str, str, str, str | None, str]]:
    """(kind, annotator, item id, new, time) of the events of ``kinds`` on items of the project, in canonical order."""
    assert project.workspace is not None
    index = project.index
    return (row for row in project.workspace.event_fields(kinds, "annotator, item_id, new, time") if row[2] in index)


def _shown(project: Project, item_id: str, new: str | None, order_text: str | None) -> tuple[int, int] | None:
    """(shown position, number of solutions) of a vote for solution ``new``; None for an unsure vote or a withdrawal."""
    count = len(project.items[project.index[item_id]].solutions)
    if not (new or "").isdecimal() or int(new or "") >= count:
        return None
    index = int(new or "")
    order = parse_order(order_text, count)
    return (order.index(index) if order else index, count)


def position_preference(project: Project) -> list[PositionPreference]:
    """Every annotator with a vote for a solution whose shown position is known, in name order (see the module
    docstring)."""
    return position_report(project).preferences


def position_report(project: Project) -> PositionReport:
    """Position preference, and the votes left out of it because the order they were shown in is unknown."""
    found = _single_vote_counts(project)
    if found is None:
        counts: dict[str, dict[int, list[int]]] = {}
        shown, unordered = _positions(project)
        for (annotator, _), (position, k) in shown.items():
            counts.setdefault(annotator, {}).setdefault(k, [0] * k)[position] += 1
    else:
        counts, unordered = found
    preferences = [_preference(name, {k: tuple(v) for k, v in by_k.items()}) for name, by_k in sorted(counts.items())]
    return PositionReport(preferences, unordered)


def _single_vote_counts(project: Project) -> tuple[dict[str, dict[int, list[int]]], dict[str, int]] | None:
    """Votes per annotator, number of solutions and position, counted column-wise from the project's current votes
    (the votes in force, as ``shown_positions`` takes them) when they were read up to the log's end: each recorded
    index, mapped through the order recorded before the vote by time where there is one. None otherwise."""
    current = project.state.current_votes
    ws = project.workspace
    if current is None or ws is None or current.upto != ws.last_seq():
        return None
    recorded = current.choice if current.cast is None else current.cast
    index = [int(c) if c.isdecimal() else -1 for c in current.choices]
    choice = np.array(index, np.int64)[recorded] if index else np.zeros(0, np.int64)
    sizes = [
        len(project.items[p].solutions) if (p := project.index.get(i)) is not None else 0 for i in current.item_ids
    ]
    k = np.array(sizes, np.int64)[current.item] if sizes else np.zeros(0, np.int64)
    valid = (choice >= 0) & (choice < k)
    mapped = _mapped_positions(project, current, choice, k, valid)
    if mapped is None:
        return None
    position, known = mapped
    lacking = np.bincount(current.annotator[valid & ~known], minlength=len(current.annotators))
    unordered = {current.annotators[a]: int(n) for a, n in enumerate(lacking.tolist()) if n}
    valid &= known
    counts: dict[str, dict[int, list[int]]] = {}
    width = int(k.max(initial=0)) + 1
    cells = (current.annotator[valid] * width + k[valid]) * width + position[valid]
    found = np.bincount(cells, minlength=len(current.annotators) * width * width).reshape(-1, width, width)
    for a, size, position in zip(*np.nonzero(found)):
        by_k = counts.setdefault(current.annotators[a], {})
        by_k.setdefault(int(size), [0] * int(size))[int(position)] = int(found[a, size, position])
    return counts, unordered


def _mapped_positions(
    project: Project, current: CurrentVotes, choice: np.ndarray, k: np.ndarray, valid: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Per current vote, the position it was shown at: its recorded index through the order recorded last before
    it by time (``_order_at``), the index itself without one; and whether that position is known (False: the
    round in force shuffles for its annotator and no order was recorded before it). None when the votes' times
    cannot be read back."""
    assert project.workspace is not None
    shuffles = _shuffles(project)
    known = np.ones(len(choice), dtype=bool)
    if shuffles is not None:  # until an order says otherwise, a shuffled annotator's positions are unknown
        shuffled = np.array([shuffles(name) for name in current.annotators] or [False], dtype=bool)
        known = ~shuffled[current.annotator] | (k < 2) if len(choice) else known
    if not project.workspace.event_fields([ORDER_KIND], "seq").fetchone():  # file order everywhere
        return choice, known
    times = current.vote_times()
    if times is None:
        return None
    recorded: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for _, annotator, item_id, new, time in _fields(project, [ORDER_KIND]):
        recorded.setdefault((item_id, annotator), []).append((time, new or ""))
    position = choice.copy()
    items, names = current.item_ids, current.annotators
    rows = np.flatnonzero(valid)
    columns = (rows.tolist(), current.item[rows].tolist(), current.annotator[rows].tolist(), choice[rows].tolist())
    shown_at: dict[tuple[str | None, int, int], int] = {}  # (order text, solutions, index) → position: a few each
    for n, i, a, c, size in zip(*columns, k[rows].tolist()):
        found = recorded.get((items[i], names[a]))
        if found is None:
            continue
        text = _order_at(found, times[n])
        if text is None:
            continue
        known[n] = True
        if (at := shown_at.get((text, size, c))) is None:
            order = parse_order(text, size)
            at = shown_at[(text, size, c)] = order.index(c) if order else c
        position[n] = at
    return position, known


def _preference(annotator: str, counts: dict[int, tuple[int, ...]]) -> PositionPreference:
    tests = [(k, position) for k in sorted(counts) for position in range(k)]
    raw = [binomial_two_sided(counts[k][p], sum(counts[k]), 1 / k) for k, p in tests]
    adjusted = holm(raw)
    n = min(range(len(tests)), key=lambda i: (adjusted[i], -abs(_share(counts, *tests[i]) - 1 / tests[i][0])))
    k, position = tests[n]
    return PositionPreference(
        annotator,
        sum(sum(c) for c in counts.values()),
        counts,
        position,
        k,
        _share(counts, k, position),
        float(adjusted[n]),
    )


def _share(counts: dict[int, tuple[int, ...]], k: int, position: int) -> float:
    return counts[k][position] / sum(counts[k])
