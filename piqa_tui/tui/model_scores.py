"""What the model said about the items, as the TUI shows it: scores, queues and marks.

``ModelScores`` keeps, per opened project, the latest :class:`ItemScore` of
each item for the chosen template (and of the solution-only baseline), each
with the item it was computed for: after an edit a score no longer counts
until the item is scored again, and a changed gold label is judged afresh.
Like ``listing.py`` it imports no Textual, so the queue rules are tested
without a screen.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from weakref import WeakKeyDictionary

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.engine import ScoringEngine
from piqa_tui.core.scoring.results import ItemScore, summarise, with_label
from piqa_tui.core.scoring.templates import DEFAULT_TEMPLATE, Template, get_template
from piqa_tui.core.workspace.project import Project
from piqa_tui.settings.model_choice import choose_model

# Below this margin (nats between the best and second-best solution) the model barely prefers one:
# by default, the best is less than e ≈ 2.7 times as likely as the runner-up. ``low_margin`` in
# the config file changes it (``set_low_margin``), e.g. for templates whose margins run small.
LOW_MARGIN = 1.0
_threshold = LOW_MARGIN


def set_low_margin(nats: float) -> None:
    """The low-margin queue's threshold for this process, in nats (positive)."""
    global _threshold
    _threshold = float(nats)


def low_margin_threshold() -> float:
    return _threshold


def _same_content(a: Item, b: Item) -> bool:
    return a is b or (a.prompt == b.prompt and a.question == b.question and a.solutions == b.solutions)


class ModelScores:
    """The scores this session knows, by item id, for one template at a time."""

    def __init__(self, template: Template | None = None) -> None:
        self.template = template or get_template(DEFAULT_TEMPLATE)
        self.model = ""  # the model's file name, for display
        self.identity = ""  # the cache's model key
        self.active = False  # scoring was used on this dataset: the item view shows the panel
        self.generation = 0  # moves whenever scores are added or dropped
        self._scores: dict[str, tuple[Item, ItemScore]] = {}
        self._baseline: dict[str, tuple[Item, ItemScore]] = {}

    # ---------------------------------------------------------------- filling

    def use(self, template: Template, identity: str, model: str) -> None:
        """Score with ``template`` and this model from now on; scores of others are dropped."""
        if template.key != self.template.key or identity != self.identity:
            self._scores.clear()
            self._baseline.clear()
            self.generation += 1
        self.template, self.identity, self.model = template, identity, model

    def put(self, items: Sequence[Item], scores: Iterable[ItemScore], baseline: bool = False) -> None:
        """Keep ``scores`` (matched to ``items`` by id) as the latest for those items."""
        by_id = {item.id: item for item in items}
        target = self._baseline if baseline else self._scores
        for score in scores:
            item = by_id.get(score.item_id)
            if item is not None:
                target[score.item_id] = (item, score)
        self.generation += 1

    def clear(self) -> None:
        self._scores.clear()
        self._baseline.clear()
        self.generation += 1

    # ---------------------------------------------------------------- reading

    @staticmethod
    def _current(found: tuple[Item, ItemScore] | None, item: Item) -> ItemScore | None:
        if found is None or not _same_content(found[0], item):
            return None
        score = found[1]
        return score if score.label == item.label else with_label(score, item.label)

    def get(self, item: Item) -> ItemScore | None:
        """The item's score, judged against its gold label now; None if never scored or edited since."""
        return self._current(self._scores.get(item.id), item)

    def baseline(self, item: Item) -> ItemScore | None:
        """The solution-only score of the item (the solutions without the prompt)."""
        return self._current(self._baseline.get(item.id), item)

    def disagrees(self, item: Item) -> bool:
        """The model's choice (acc) is not the gold label."""
        score = self.get(item)
        return score is not None and score.correct is False

    def low_margin(self, item: Item) -> bool:
        score = self.get(item)
        return score is not None and score.margin < _threshold

    def shortcut(self, item: Item) -> bool:
        """Without reading the prompt, the model still picks the gold solution."""
        score = self.baseline(item)
        return score is not None and score.correct is True

    def margin(self, item: Item) -> float:
        score = self.get(item)
        return score.margin if score is not None else float("inf")

    def scored(self, items: Sequence[Item]) -> list[tuple[int, Item, ItemScore]]:
        """(position, item, score) of every item with a current score, in file order."""
        out = []
        for position, item in enumerate(items):
            score = self.get(item)
            if score is not None:
                out.append((position, item, score))
        return out

    def summary(self, items: Sequence[Item], column: str | None = None, baseline: bool = False) -> dict[str, object]:
        """``summarise`` over the items with a current score, by ``column``'s values when given."""
        lookup = self.baseline if baseline else self.get
        scores = [s for s in (lookup(item) for item in items) if s is not None]
        groups = {item.id: item.meta.get(column) for item in items} if column else None
        return summarise(scores, groups)

    def count(self, items: Sequence[Item], baseline: bool = False) -> int:
        lookup = self.baseline if baseline else self.get
        return sum(1 for item in items if lookup(item) is not None)

    def disagreeing_ids(self, items: Iterable[Item]) -> set[str]:
        """Ids of the items the model gets wrong (the list's ✗ mark)."""
        return {item.id for item in items if self.disagrees(item)}


_SCORES: "WeakKeyDictionary[Project, ModelScores]" = WeakKeyDictionary()


def scores_for(project: Project) -> ModelScores:
    """The ``ModelScores`` of a project (one per opened project)."""
    found = _SCORES.get(project)
    if found is None:
        found = _SCORES[project] = ModelScores()
    return found


def refresh_marks(project: Project, marks: set[str], item_ids: Iterable[str] | None = None) -> None:
    """Bring the ✗ marks of ``item_ids`` (all items when None) in step with the scores and the items."""
    model = _SCORES.get(project)
    if item_ids is None:
        marks.clear()
        if model is not None:
            marks.update(model.disagreeing_ids(project.items))
        return
    for item_id in item_ids:
        position = project.index.get(item_id)
        if model is not None and position is not None and model.disagrees(project.items[position]):
            marks.add(item_id)
        else:
            marks.discard(item_id)


_engines_lock = threading.Lock()
_ENGINES: "WeakKeyDictionary[Project, ScoringEngine]" = WeakKeyDictionary()


def engine_for(project: Project) -> ScoringEngine:
    """The project's engine, made on first use with the model ``choose_model`` finds; ModelError when none."""
    with _engines_lock:
        engine = _ENGINES.get(project)
        if engine is None:
            engine = _ENGINES[project] = ScoringEngine(project, choose_model())
        return engine


def close_engine(project: Project) -> None:
    """Free the project's model (waits for the chunk in flight)."""
    with _engines_lock:
        engine = _ENGINES.pop(project, None)
    if engine is not None:
        engine.close()
