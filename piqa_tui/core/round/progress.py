"""How far a round is: per annotator, per item and per group of items, from the assignment and the votes.

An annotator has *done* an assigned item when they hold a current vote on it — a solution or a skip
(they looked and passed) — as the TUI's assigned queue counts it; a vote on a solution text edited since
does not count. An item is *validated* by each assigned validator whose current vote names a solution
(a skip is no validation), so a skipped item still needs one. The pace comes from the times of an
annotator's votes in force: the gaps between consecutive ones, leaving out gaps over 30 minutes (breaks).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from piqa_tui.core.round.declaration import Round
from piqa_tui.core.round.recorded import Assignment
from piqa_tui.core.votes.blind import current_vote, has_voted
from piqa_tui.core.workspace.project import Project

BREAK_SECONDS = 30 * 60  # a longer gap between two votes is a break, not time spent on an item


@dataclass(frozen=True, slots=True)
class Pace:
    """Seconds spent per item, from the gaps between votes (None: fewer than two votes close together)."""

    gaps: tuple[float, ...]

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.gaps) if self.gaps else None

    @property
    def items_per_hour(self) -> float | None:
        total = sum(self.gaps)
        return 3600 * len(self.gaps) / total if total > 0 else None

    def seconds_for(self, items: int) -> float | None:
        """How long ``items`` more take at this pace (0 for none left; None when the pace is unknown)."""
        if items == 0:
            return 0.0
        per_hour = self.items_per_hour
        return None if per_hour is None else items * 3600 / per_hour


@dataclass(frozen=True, slots=True)
class AnnotatorProgress:
    name: str
    active: bool
    assigned: int
    done: int
    pace: Pace

    @property
    def remaining(self) -> int:
        return self.assigned - self.done

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.name,
            "active": self.active,
            "assigned": self.assigned,
            "done": self.done,
            "remaining": self.remaining,
            "items_per_hour": _rounded(self.pace.items_per_hour),
            "median_seconds_per_item": _rounded(self.pace.median_seconds),
            "seconds_to_finish": _rounded(self.pace.seconds_for(self.remaining)),
        }


@dataclass(frozen=True, slots=True)
class GroupProgress:
    """Coverage of the items with one value of a column: validations done out of those the round asks for."""

    column: str
    value: str
    items: int
    wanted: int  # items × validators per item
    assigned: int
    validated: int

    @property
    def coverage(self) -> float | None:
        return self.validated / self.wanted if self.wanted else None

    def to_json(self) -> dict[str, object]:
        return {
            "value": self.value,
            "items": self.items,
            "validations_wanted": self.wanted,
            "assigned": self.assigned,
            "validated": self.validated,
            "coverage": _rounded(self.coverage, 4),
        }


@dataclass(frozen=True, slots=True)
class Progress:
    annotators: tuple[AnnotatorProgress, ...]
    still_needed: dict[str, int]  # item id -> validations it still needs (items needing none left out)
    groups: dict[str, tuple[GroupProgress, ...]]
    validators_per_item: int
    items: int

    def need_counts(self) -> dict[int, int]:
        """How many items still need 0, 1, 2 … validations (every count from 0 to the most)."""
        counts = Counter(self.still_needed.values())
        counts[0] = self.items - len(self.still_needed)
        return {n: counts.get(n, 0) for n in range(max(counts) + 1)}

    def to_json(self) -> dict[str, object]:
        return {
            "validators_per_item": self.validators_per_item,
            "items": self.items,
            "annotators": [a.to_json() for a in self.annotators],
            "items_still_needing": {str(n): count for n, count in self.need_counts().items()},
            "still_needed": self.still_needed,
            "by": {column: [g.to_json() for g in groups] for column, groups in self.groups.items()},
        }


def round_progress(project: Project, declared: Round, assignment: Assignment, by: Iterable[str] = ()) -> Progress:
    """Progress of the round over the project's items (see the module docstring)."""
    people = [a.name for a in declared.annotators if "validator" in a.roles]
    people += sorted({n for names in assignment.items.values() for n in names} - set(people))
    mine = {name: assignment.of(name) for name in people}
    annotators = tuple(
        AnnotatorProgress(
            name,
            (found.active if (found := declared.annotator(name)) else False),
            len(mine[name]),
            sum(has_voted(project, item_id, name) for item_id in mine[name] if item_id in project.index),
            vote_pace(project, name),
        )
        for name in people
    )
    validated = {item.id: _validations(project, item.id, assignment.items.get(item.id, ())) for item in project.items}
    k = declared.validators_per_item
    still = {item_id: k - done for item_id, done in validated.items() if done < k}
    groups = {column: _groups(project, column, assignment, validated, k) for column in by}
    return Progress(annotators, still, groups, k, len(validated))


def vote_pace(project: Project, annotator: str) -> Pace:
    """The gaps between the annotator's votes in force (one per item), breaks over ``BREAK_SECONDS`` left out."""
    times = sorted(
        when
        for votes in project.state.votes.values()
        if (vote := votes.get(annotator)) is not None and vote.choice and (when := _seconds(vote.time)) is not None
    )
    gaps = (later - earlier for earlier, later in zip(times, times[1:], strict=False))
    return Pace(tuple(gap for gap in gaps if gap <= BREAK_SECONDS))


def _validations(project: Project, item_id: str, names: Iterable[str]) -> int:
    """How many of the item's assigned validators hold a vote for a solution on its current text."""
    return sum((current_vote(project, item_id, name) or "").isdigit() for name in names)


def _groups(
    project: Project, column: str, assignment: Assignment, validated: dict[str, int], k: int
) -> tuple[GroupProgress, ...]:
    items: Counter[str] = Counter()
    assigned: Counter[str] = Counter()
    done: Counter[str] = Counter()
    for item in project.items:
        value = item.meta.get(column, "")
        items[value] += 1
        assigned[value] += min(len(assignment.items.get(item.id, ())), k)
        done[value] += min(validated[item.id], k)
    return tuple(
        GroupProgress(column, value, count, count * k, assigned[value], done[value])
        for value, count in sorted(items.items())
    )


def _seconds(time: str) -> float | None:
    try:
        return datetime.fromisoformat(time).timestamp()
    except (ValueError, TypeError):
        return None


def _rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)
