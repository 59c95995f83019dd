"""Which items the list shows, in which order, and what marks each row carries.

A ``Listing`` turns the project's items and the user's filters (a status
queue, one column's value, a search) into the positions the item list draws.
It reads the project, never changes it, and imports no Textual, so the rules
of the queues are tested without a screen.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from piqa_tui.core.dataset.checks import CheckConfig, Problem, check_item, suspects
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.guidelines import items_asked_about
from piqa_tui.core.round.origin import origin_of
from piqa_tui.core.round.stages import STAGES, stage_of, to_validate
from piqa_tui.core.votes.blind import has_voted
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import pending_by_item
from piqa_tui.tui.state.ballots import STATUS_MARKS, Ballots
from piqa_tui.tui.state.doubt import labels_in_doubt
from piqa_tui.tui.state.model_scores import ModelScores

if TYPE_CHECKING:  # the artifacts report is imported when the health screen or its queue asks, not at start-up
    from piqa_tui.core.quality.artifacts import ArtifactReport


class Validation:
    """Validate's problems per item, computed on demand and kept until the item changes."""

    def __init__(self, project: Project, config: CheckConfig = CheckConfig()) -> None:
        self.project = project
        self.config = config
        self._cache: dict[int, tuple[Item, list[Problem]]] = {}
        raw = project.dataset.raw_ids or []
        self.duplicate_ids: dict[str, int] = {}
        if len(set(raw)) != len(raw):  # the common case (unique ids) costs one set, not a Counter
            counts = Counter(raw)
            self.duplicate_ids = {project.items[pos].id: counts[r] for pos, r in enumerate(raw) if counts[r] > 1}
        self.complete = False  # every item checked (the background pass finished)

    def problems(self, position: int, item: Item | None = None) -> list[Problem]:
        item = item or self.project.items[position]
        cached = self._cache.get(position)
        if cached is not None and cached[0] is item:
            return cached[1]
        problems = check_item(item, self.config)
        if item.id in self.duplicate_ids and self.config.wants("duplicate-id"):
            problems.append(
                Problem(item.id, "duplicate-id", f"id is used by {self.duplicate_ids[item.id]} items", item.row)
            )
        self._cache[position] = (item, problems)
        return problems

    def candidate(self, item: Item) -> list[Problem]:
        """Problems of an item being edited (not yet recorded): live validation."""
        return check_item(item, self.config)

    def is_invalid(self, position: int) -> bool:
        return bool(self.problems(position))

    def check_all(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """Check every item (slow on big sets: run in a worker); False when ``stop`` interrupted it."""
        items = list(self.project.items)
        if stop():
            return False
        # One vectorised pass clears the clean items; the per-item rules run on the rest.
        maybe = set(suspects(items, self.config))
        for position, item in enumerate(items):
            if position % 500 == 0 and stop():
                return False
            if position in maybe or item.id in self.duplicate_ids:
                self.problems(position, item)
            elif position not in self._cache or self._cache[position][0] is not item:
                self._cache[position] = (item, [])
        self.complete = True
        return True


class Artifacts:
    """The annotation artifacts of the items this user may see (all of them in reviewer mode), measured once
    per state of the workspace log and policy: the health screen shows the report, the queue its items."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: object = None
        self._report: ArtifactReport | None = None

    @staticmethod
    def _stamp_of(s: Sources) -> object:
        project = s.project
        return (project.version, id(project.items), len(project.items), s.ballots.policy)

    def report(self, s: Sources) -> ArtifactReport:
        """The report (a second or two on 100,000 items the first time: the health screen asks from a worker)."""
        from piqa_tui.core.quality.artifacts import artifact_report

        with self._lock:
            stamp = self._stamp_of(s)
            if self._report is None or stamp != self._stamp:
                items = s.ballots.visible_items(s.project.items)
                self._report, self._stamp = artifact_report(s.project, items), stamp
            return self._report

    def forget(self) -> None:
        """Measure again on the next ask (new scores may be stored, which the log does not show)."""
        with self._lock:
            self._report = None

    def answers(self, s: Sources, item: Item) -> bool:
        """Whether a shortcut answers ``item``."""
        return item.id in self.report(s).shortcut_ids


@dataclass
class Marks:
    """Marks from other features (dedup, model scoring) by item id; the list shows them."""

    duplicates: set[str] = field(default_factory=set)
    model_disagrees: set[str] = field(default_factory=set)
    artifacts: Artifacts = field(default_factory=Artifacts)


class Sources(Protocol):
    """What the queues and the marks read: the session has all of it (tests may build one)."""

    project: Project
    validation: Validation
    ballots: Ballots
    scores: ModelScores
    marks: Marks


@dataclass(frozen=True)
class Queue:
    name: str
    help: str
    test: Callable[[Sources, int, Item], bool]
    order: Callable[[Sources, Item], float] | None = None  # sort key of the queue's items; None keeps file order


def _annotators_agreed(s: Sources, item: Item) -> int | None:
    """The label the votes agreed on (agreed under the policy, or agreed against gold), None otherwise."""
    decision = s.ballots.decision(item.id)
    return decision.label if decision.status in (Status.AGREED, Status.AGAINST_GOLD) else None


def _wrong_where_agreed(s: Sources, item: Item) -> int:
    """How many models pick another solution than the annotators agreed on (0: none, or no agreement)."""
    if not s.ballots.visible(item.id) or not s.scores.run_labels:
        return 0
    return s.scores.wrong_against(item, _annotators_agreed(s, item))


def _asked(s: Sources, pos: int, it: Item) -> bool:
    """An open guideline question on the item: the lead's queue of questions to answer (outside reviewer mode,
    only your own questions: another annotator's may say what they think of the item)."""
    return it.id in items_asked_about(s.project, None if s.ballots.reviewer else s.project.annotator)


def _status_is(status: Status) -> Callable[[Sources, int, Item], bool]:
    """A status queue holds only items whose status the user may see (blind mode: the ones voted on),
    so neither its rows nor its count in the filter dialog give away how others voted."""

    def test(s: Sources, pos: int, it: Item) -> bool:
        return s.ballots.visible(it.id) and s.ballots.status(it.id) is status

    return test


# Status queues, and the decision statuses of the votes.
QUEUES: dict[str, Queue] = {
    q.name: q
    for q in (
        Queue("all", "every item", lambda s, pos, it: True),
        Queue("unvoted", "items you have not voted on", lambda s, pos, it: not has_voted(s.project, it.id)),
        Queue(
            "assigned",
            "items assigned to you, not yet voted on",
            lambda s, pos, it: to_validate(s.project, it.id) and not has_voted(s.project, it.id),
        ),
        Queue("asked", "items with an unanswered guideline question", _asked),
        Queue("flagged", "items with a flag", lambda s, pos, it: bool(s.project.state.flags.get(it.id))),
        Queue("edited", "items changed in this workspace", lambda s, pos, it: it.id in s.project.state.edited),
        Queue("invalid", "items with a problem validate reports", lambda s, pos, it: s.validation.is_invalid(pos)),
        Queue(
            "conflicts",
            "items with a field two people changed at once (merged copies): to resolve",
            lambda s, pos, it: s.project.in_conflict(it.id),
        ),
        Queue("needs-votes", "items without enough votes to decide", _status_is(Status.NEEDS_VOTES)),
        Queue("agreed", "items whose votes agree under the policy", _status_is(Status.AGREED)),
        Queue("disagreement", "items whose votes disagree: to adjudicate", _status_is(Status.DISAGREEMENT)),
        Queue("adjudicated", "items a reviewer decided", _status_is(Status.ADJUDICATED)),
        Queue(
            "votes-against-gold",
            "items whose votes agree on another solution than the gold label: to adjudicate",
            _status_is(Status.AGAINST_GOLD),
        ),
        # Model scoring: the ones that judge against gold show only items whose gold you may see.
        Queue(
            "model-wrong",
            "the model's choice is not gold, surest first",
            lambda s, pos, it: s.scores.disagrees(it) and s.ballots.visible(it.id),
            order=lambda s, it: -s.scores.margin(it),
        ),
        Queue(
            "low-margin",
            "the model barely prefers one (margin < low_margin, default 1 nat), lowest first",
            lambda s, pos, it: s.scores.low_margin(it),
            order=lambda s, it: s.scores.margin(it),
        ),
        Queue(
            "solution-only",
            "the model picks gold without the prompt (M baseline)",
            lambda s, pos, it: s.scores.shortcut(it) and s.ballots.visible(it.id),
        ),
        Queue(
            "shortcut",
            "a shortcut answers it: a cue word only in the gold solution, or length and the M baseline",
            lambda s, pos, it: s.ballots.visible(it.id) and s.marks.artifacts.answers(s, it),
        ),
        # Several models (every model and template scored for the project, from the workspace).
        Queue(
            "every-model-wrong",
            "every model (two or more) misses gold: too hard, or gold is wrong",
            lambda s, pos, it: s.scores.every_model_wrong(it) and s.ballots.visible(it.id),
        ),
        Queue(
            "models-disagree",
            "the models pick different solutions",
            lambda s, pos, it: s.scores.models_disagree(it),
        ),
        Queue(
            "doubt",
            "labels most likely wrong (votes, annotator reliability, models), lowest score first",
            lambda s, pos, it: it.id in labels_in_doubt(s.project, s.ballots.policy) and s.ballots.visible(it.id),
            order=lambda s, it: labels_in_doubt(s.project, s.ballots.policy)[it.id].score,
        ),
        Queue(
            "model-wrong-agreed",
            "a model misses what the annotators agreed on, most models first",
            lambda s, pos, it: _wrong_where_agreed(s, it) > 0,
            order=lambda s, it: -_wrong_where_agreed(s, it),
        ),
    )
}


def _at_stage(stage: str) -> Callable[[Sources, int, Item], bool]:
    def test(s: Sources, pos: int, it: Item) -> bool:
        return stage_of(s.project, it.id) == stage

    return test


def _stage_queues() -> dict[str, Queue]:
    """One queue per authoring stage ("stage-draft", ...): the items at that stage."""
    return {
        f"stage-{stage}": Queue(f"stage-{stage}", f"items at the {stage} stage (T moves one on)", _at_stage(stage))
        for stage in STAGES
    }


QUEUES.update(_stage_queues())
QUEUES["machine-made"] = Queue(
    "machine-made",
    "items a model drafted or translated (docs/generation.md), whatever people changed since",
    lambda s, pos, it: origin_of(s.project, it.id).machine,
)
QUEUES["suggestions-pending"] = Queue(
    "suggestions-pending",
    "items with a model suggestion nobody has decided yet (S reviews text, K/Z a metadata value)",
    lambda s, pos, it: it.id in pending_by_item(s.project),
)

# The filter dialog's sections, in the order a round reads: your work and the round's stages first, then the
# votes' decisions, then the model queues (twenty of them would otherwise push the stages below the fold).
_VOTES = ("needs-votes", "agreed", "disagreement", "adjudicated", "votes-against-gold", "doubt")
_WORK = ("all", "unvoted", "assigned", "asked", *(f"stage-{stage}" for stage in STAGES))
_WORK += ("flagged", "edited", "invalid", "conflicts")
QUEUE_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Queues", _WORK),
    ("Votes", _VOTES),
    ("Models", tuple(name for name in QUEUES if name not in _WORK + _VOTES)),
)


@dataclass(frozen=True)
class Filters:
    """What the user asked to see."""

    queue: str = "all"
    column: str | None = None
    value: str | None = None
    search: str = ""

    @property
    def active(self) -> bool:
        return self.queue != "all" or self.column is not None or bool(self.search)

    def describe(self) -> str:
        parts = []
        if self.queue != "all":
            parts.append(f"queue {self.queue}")
        if self.column is not None:
            parts.append(f"{self.column} = {self.value or '(empty)'}")
        if self.search:
            parts.append(f"search “{self.search}”")
        return ", ".join(parts) or "all items"


def filtered_positions(sources: Sources, filters: Filters, ranked: list[int] | None = None) -> list[int]:
    """Positions of the items that pass ``filters``: in ``ranked`` order when searching, else the queue's order (file order)."""
    queue = QUEUES[filters.queue]
    items = sources.project.items
    candidates = ranked if ranked is not None else range(len(items))
    out = []
    for pos in candidates:
        item = items[pos]
        if filters.column is not None and item.meta.get(filters.column, "") != (filters.value or ""):
            continue
        if filters.queue != "all" and not queue.test(sources, pos, item):
            continue
        out.append(pos)
    if queue.order is not None and ranked is None:
        out.sort(key=lambda pos: queue.order(sources, items[pos]))  # type: ignore[misc]
    return out


# The status marks, in column order: (mark, name, meaning). Each takes one cell.
MARK_LEGEND: tuple[tuple[str, str, str], ...] = (
    ("✎", "edited", "changed in this workspace"),
    ("✓", "voted", "you voted on it"),
    ("⚑", "flagged", "someone flagged it"),
    ("≈", "duplicate", "a near-duplicate of another item"),
    ("✗", "model", "the model disagrees with the gold label"),
    ("!", "invalid", "validate reports a problem"),
    (STATUS_MARKS[Status.AGREED], "agreed", "the votes agree (status marks show once you voted on the item)"),
    (STATUS_MARKS[Status.DISAGREEMENT], "disagreement", "the votes disagree: a reviewer adjudicates"),
    (STATUS_MARKS[Status.ADJUDICATED], "adjudicated", "a reviewer set the final label"),
    (
        STATUS_MARKS[Status.AGAINST_GOLD],
        "votes against gold",
        "the votes agree on another solution than the gold label",
    ),
)


def row_marks(sources: Sources, position: int, item: Item) -> str:
    """The mark column of one list row: one cell per mark, a space where it does not apply."""
    project, marks, ballots = sources.project, sources.marks, sources.ballots
    item_id = item.id
    flags = project.state.flags.get(item_id)
    return "".join(
        (
            "✎" if item_id in project.state.edited else " ",
            "✓" if has_voted(project, item_id) else " ",
            "⚑" if flags else " ",
            "≈" if item_id in marks.duplicates or (flags and "duplicate" in flags) else " ",
            "✗" if item_id in marks.model_disagrees and ballots.visible(item_id) else " ",
            "!" if sources.validation.is_invalid(position) else " ",
            ballots.status_mark(item),
        )
    )


def categorical_values(items: list[Item], column: str) -> list[tuple[str, int]]:
    """The values of a categorical column with their counts, most common first."""
    return Counter(item.meta.get(column, "") for item in items).most_common()
