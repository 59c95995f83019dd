"""How far a round is: per annotator, per item and per group of items, from the assignment and the votes.

An annotator has *done* an assigned item when they hold a current vote on it — a solution or a skip
(they looked and passed) — as the TUI's assigned queue counts it; a vote on a solution text edited since
does not count, nor does a vote on an item sent back to review or draft (it is being rewritten). An assigned
item in review or draft, voted on or not, or closed at done without their vote, is *held back*: neither pending
nor done; an item at done that they voted on stays done. Without recorded stages every item is at validation, so
nothing is held. An item is *validated* by each assigned validator whose current vote names a solution, whatever
its stage (a skip is no validation), so a skipped item still needs one. The pace comes from the times of an
annotator's votes in force: the gaps between consecutive ones, leaving out gaps over 30 minutes (breaks) and
gaps under a second — votes from a file without times, stamped with the import time one microsecond apart,
carry no time spent on them, so they give no pace (nobody reads an item and votes in under a second).

What became of the items, per annotator (of their assigned items) and per group: *decided* (agreed or
adjudicated under the policy in force) and *to adjudicate* — stuck: the votes they have and can still get can
never decide them — counted per reason. Both come from the one answer: ``decisions`` and ``to_adjudicate``
(``core.round.adjudication_queue``), never counted again here.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from piqa_tui.core.round.adjudication_queue import Stuck, reason_counts, to_adjudicate
from piqa_tui.core.round.declaration import Round
from piqa_tui.core.round.recorded import Assignment
from piqa_tui.core.round.stages import BEFORE_VALIDATION, DONE, STAGES, VALIDATION, recorded_stages, stage_of
from piqa_tui.core.votes.blind import current_vote, has_voted
from piqa_tui.core.votes.decisions import decisions, project_policy
from piqa_tui.core.votes.policy import Policy, Status
from piqa_tui.core.workspace.project import Project

BREAK_SECONDS = 30 * 60  # a longer gap between two votes is a break, not time spent on an item
STAMPED_SECONDS = 1.0  # a shorter gap is votes stamped together (a file imported without times), not work


@dataclass(frozen=True, slots=True)
class Pace:
    """Seconds spent per item, from the gaps between votes (None: fewer than two votes close together)."""

    gaps: tuple[float, ...]

    @classmethod
    def of(cls, times: list[float]) -> Pace:
        """The pace of votes cast at ``times`` (seconds, any order): the gaps from ``STAMPED_SECONDS`` up to
        ``BREAK_SECONDS``."""
        ordered = sorted(times)
        gaps = (later - earlier for earlier, later in zip(ordered, ordered[1:], strict=False))
        return cls(tuple(gap for gap in gaps if STAMPED_SECONDS <= gap <= BREAK_SECONDS))

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
class Outcome:
    """What became of a set of items: how many are decided, and which need the lead, with why."""

    decided: int = 0
    stuck: tuple[Stuck, ...] = ()

    @property
    def to_adjudicate(self) -> int:
        return len(self.stuck)

    def by_reason(self) -> dict[str, int]:
        """Items to adjudicate per reason, in the order of ``Why`` (reasons without items left out)."""
        return reason_counts({stuck.item_id: stuck for stuck in self.stuck})

    def stuck_text(self) -> str:
        """``2 split, 1 under-staffed`` ("" when nothing is to adjudicate)."""
        return ", ".join(f"{count} {why}" for why, count in self.by_reason().items())

    def to_json(self) -> dict[str, object]:
        return {
            "decided": self.decided,
            "to_adjudicate": self.to_adjudicate,
            "to_adjudicate_by_reason": self.by_reason(),
        }


class _Outcomes:
    """Each item's decision and the items to adjudicate, read once and counted for any set of items."""

    def __init__(self, project: Project, policy: Policy) -> None:
        found = decisions(project, policy)
        self.decided = {
            item_id for item_id, made in found.items() if made.status in (Status.AGREED, Status.ADJUDICATED)
        }
        self.stuck = to_adjudicate(project, policy)

    def of(self, item_ids: Iterable[str]) -> Outcome:
        ids = list(item_ids)
        return Outcome(
            sum(1 for item_id in ids if item_id in self.decided),
            tuple(self.stuck[item_id] for item_id in ids if item_id in self.stuck),
        )


@dataclass(frozen=True, slots=True)
class AnnotatorProgress:
    name: str
    active: bool
    assigned: int
    done: int
    pace: Pace
    held_by_stage: dict[str, int] = field(default_factory=dict)  # stage -> assigned items held back there
    outcome: Outcome = field(default_factory=Outcome)  # of the assigned items: decided, to adjudicate and why

    @property
    def held(self) -> int:
        """Assigned items held back: not at validation, and not done (see the module docstring)."""
        return sum(self.held_by_stage.values())

    @property
    def remaining(self) -> int:
        return self.assigned - self.done - self.held

    def held_text(self) -> str:
        """Where their held-back items are, e.g. ``1 in review, 2 in draft`` ("" when none is)."""
        return ", ".join(
            f"{count} {'closed at' if stage == DONE else 'in'} {stage}" for stage, count in self.held_by_stage.items()
        )

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.name,
            "active": self.active,
            "assigned": self.assigned,
            "done": self.done,
            "held": self.held,
            "held_by_stage": dict(self.held_by_stage),
            "remaining": self.remaining,
            **self.outcome.to_json(),
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
    wanted: int  # the validators per item (or an item's own panel) summed over the items
    assigned: int
    validated: int
    outcome: Outcome = field(default_factory=Outcome)  # of the group's items: decided, to adjudicate and why

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
            **self.outcome.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Progress:
    annotators: tuple[AnnotatorProgress, ...]
    still_needed: dict[str, int]  # item id -> validations it still needs (items needing none left out)
    groups: dict[str, tuple[GroupProgress, ...]]
    validators_per_item: int
    items: int
    held_items: dict[str, int] = field(default_factory=dict)  # stage -> items at draft or review
    panels: dict[str, int] = field(default_factory=dict)  # item id -> its own panel size, set by hand

    def need_counts(self) -> dict[int, int]:
        """How many items still need 0, 1, 2 … validations (every count from 0 to the most)."""
        counts = Counter(self.still_needed.values())
        counts[0] = self.items - len(self.still_needed)
        return {n: counts.get(n, 0) for n in range(max(counts) + 1)}

    def held_line(self, name: Callable[[str], str] = str) -> str:
        """One line naming each annotator with items held back, and where ("" when nobody has any). ``name``
        writes a name: ``terminal_safe.isolated`` where the line is drawn with bidi (a right-to-left name
        would otherwise pull the counts after it into its own run)."""
        held = [f"{name(row.name)} {row.held_text()}" for row in self.annotators if row.held]
        return f"held back (assigned, not at validation; not pending, not done): {'; '.join(held)}" if held else ""

    def stuck_line(self, name: Callable[[str], str] = str) -> str:
        """One line naming each annotator with assigned items to adjudicate, and why ("" when nobody has any);
        ``name`` as in ``held_line``."""
        stuck = [f"{name(row.name)} {row.outcome.stuck_text()}" for row in self.annotators if row.outcome.to_adjudicate]
        return f"stuck (assigned, to adjudicate by the lead): {'; '.join(stuck)}" if stuck else ""

    def held_items_line(self) -> str:
        """One line counting the items at draft or review ("" when there are none)."""
        if not self.held_items:
            return ""
        counts = ", ".join(f"{count} in {stage}" for stage, count in self.held_items.items())
        return f"items held back before validation — {counts} (their validators wait until they are back)"

    def panels_line(self, shown: int = 20) -> str:
        """One line naming the items whose panel size the lead set by hand (``assign --item ID --panel N``) and
        their sizes, the first ``shown`` then how many more ("" when none is set)."""
        if not self.panels:
            return ""
        named = sorted(self.panels.items())
        listed = ", ".join(f"{item_id} {size}" for item_id, size in named[:shown])
        more = f" and {len(named) - shown} more" if len(named) > shown else ""
        k = self.validators_per_item
        return f"panel sizes set by hand (validators per item; the round's {k} elsewhere): {listed}{more}"

    def to_json(self) -> dict[str, object]:
        return {
            "validators_per_item": self.validators_per_item,
            "items": self.items,
            "annotators": [a.to_json() for a in self.annotators],
            "items_still_needing": {str(n): count for n, count in self.need_counts().items()},
            "still_needed": self.still_needed,
            "items_held_back": dict(self.held_items),
            "panels": dict(self.panels),
            "by": {column: [g.to_json() for g in groups] for column, groups in self.groups.items()},
        }


def round_progress(
    project: Project, declared: Round, assignment: Assignment, by: Iterable[str] = (), policy: Policy | None = None
) -> Progress:
    """Progress of the round over the project's items, decided under ``policy`` (default: the project's; see the
    module docstring)."""
    outcomes = _Outcomes(project, policy or project_policy(project))
    people = [a.name for a in declared.annotators if "validator" in a.roles]
    mine = assignment.by_annotator()  # one pass each over the assignment and the votes, not one per annotator
    people += sorted(set(mine) - set(people))
    times = _vote_times(project)
    annotators = tuple(
        _annotator(project, declared, name, mine.get(name, []), Pace.of(times.get(name, [])), outcomes)
        for name in people
    )
    validated = {item.id: _validations(project, item.id, assignment.items.get(item.id, ())) for item in project.items}
    k = declared.validators_per_item
    wanted = {item_id: assignment.panel(item_id, k) for item_id in validated}  # an item's own panel, else the round's
    still = {item_id: wanted[item_id] - done for item_id, done in validated.items() if done < wanted[item_id]}
    groups = {column: _groups(project, column, assignment, validated, wanted, outcomes) for column in by}
    return Progress(annotators, still, groups, k, len(validated), _held_items(project), dict(assignment.panels))


def _annotator(
    project: Project, declared: Round, name: str, mine: list[str], pace: Pace, outcomes: _Outcomes
) -> AnnotatorProgress:
    """One annotator's figures: their assigned items sorted into done, held back (by stage) and the rest."""
    done = 0
    held: Counter[str] = Counter()
    for item_id in mine:
        if item_id not in project.index:
            continue
        stage = stage_of(project, item_id)
        voted = has_voted(project, item_id, name)
        if voted and stage in (VALIDATION, DONE):
            done += 1
        elif stage != VALIDATION:
            held[stage] += 1
    active = found.active if (found := declared.annotator(name)) else False
    by_stage = dict(sorted(held.items(), key=lambda pair: STAGES.index(pair[0]) if pair[0] in STAGES else 9))
    outcome = outcomes.of(item_id for item_id in mine if item_id in project.index)
    return AnnotatorProgress(name, active, len(mine), done, pace, by_stage, outcome)


def _held_items(project: Project) -> dict[str, int]:
    """How many of the project's items wait at draft or review, by stage (they stay in ``items`` and the need
    counts: an item being rewritten still needs its validations once it is back)."""
    staged = Counter(stage for item_id, stage in recorded_stages(project).items() if item_id in project.index)
    return {stage: staged[stage] for stage in BEFORE_VALIDATION if staged[stage]}


def vote_pace(project: Project, annotator: str) -> Pace:
    """The gaps between the annotator's votes in force (one per item), breaks over ``BREAK_SECONDS`` left out."""
    return Pace.of(_vote_times(project, annotator).get(annotator, []))


def _vote_times(project: Project, annotator: str | None = None) -> dict[str, list[float]]:
    """Per annotator (or only ``annotator``), the times of their votes in force, in seconds: one pass over the votes."""
    times: dict[str, list[float]] = {}
    for votes in project.state.votes.values():
        for name, vote in votes.items() if annotator is None else [(annotator, votes.get(annotator))]:
            if vote is not None and vote.choice and (when := _seconds(vote.time)) is not None:
                times.setdefault(name, []).append(when)
    return times


def _validations(project: Project, item_id: str, names: Iterable[str]) -> int:
    """How many of the item's assigned validators hold a vote for a solution on its current text."""
    return sum((current_vote(project, item_id, name) or "").isdecimal() for name in names)


def _groups(
    project: Project,
    column: str,
    assignment: Assignment,
    validated: dict[str, int],
    wanted: dict[str, int],
    outcomes: _Outcomes,
) -> tuple[GroupProgress, ...]:
    members: dict[str, list[str]] = {}
    items: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    assigned: Counter[str] = Counter()
    done: Counter[str] = Counter()
    for item in project.items:
        value, k = item.meta.get(column, ""), wanted[item.id]
        items[value] += 1
        members.setdefault(value, []).append(item.id)
        asked[value] += k
        assigned[value] += min(len(assignment.items.get(item.id, ())), k)
        done[value] += min(validated[item.id], k)
    return tuple(
        GroupProgress(column, value, count, asked[value], assigned[value], done[value], outcomes.of(members[value]))
        for value, count in sorted(items.items())
    )


def _seconds(time: str) -> float | None:
    try:
        return datetime.fromisoformat(time).timestamp()
    except (ValueError, TypeError):
        return None


def _rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)
