"""What the model said about the items, as the TUI shows it: scores, queues and marks.

``ModelScores`` keeps, for the session's project, the latest :class:`ItemScore` of
each item for the chosen template (and of the solution-only baseline), each
with the item it was computed for: after an edit a score no longer counts
until the item is scored again, and a changed gold label is judged afresh.
It also keeps every other model and template scored for the project (the
workspace's stored runs), for the side-by-side table and the queues that
compare models: every model wrong, models disagree, a model wrong where the
annotators agreed.
Like ``listing.py`` it imports no Textual, so the queue rules are tested
without a screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.results import ItemScore, summarise, with_label
from piqa_tui.core.scoring.stored import StoredRun
from piqa_tui.core.scoring.templates import DEFAULT_TEMPLATE, Template, get_template

if TYPE_CHECKING:
    from piqa_tui.core.report.comparison import Comparison

# Below this margin (nats between the best and second-best solution) the model barely prefers one:
# by default, the best is less than e ≈ 2.7 times as likely as the runner-up. ``low_margin`` in
# the config file changes it (through ``AppSettings`` and the session), e.g. for templates whose
# margins run small.
LOW_MARGIN = 1.0


def _same_content(a: Item, b: Item) -> bool:
    return a is b or (a.prompt == b.prompt and a.question == b.question and a.solutions == b.solutions)


class ModelScores:
    """The scores this session knows, by item id, for one template at a time."""

    def __init__(self, template: Template | None = None, low_margin: float = LOW_MARGIN) -> None:
        self.template = template or get_template(DEFAULT_TEMPLATE)
        self.low_margin_threshold = float(low_margin)  # nats: the low-margin queue holds items below it
        self.model = ""  # the model's file name, for display
        self.identity = ""  # the cache's model key
        self.active = False  # scoring was used on this dataset: the item view shows the panel
        self._scores: dict[str, tuple[Item, ItemScore]] = {}
        self._baseline: dict[str, tuple[Item, ItemScore]] = {}
        # Every (model, template) the workspace holds scores for, with those scores by item id.
        self._stored: list[tuple[StoredRun, dict[str, tuple[Item, ItemScore]]]] = []

    # ---------------------------------------------------------------- filling

    def use(self, template: Template, identity: str, model: str) -> None:
        """Score with ``template`` and this model from now on; scores of others are dropped."""
        if template.key != self.template.key or identity != self.identity:
            self._scores.clear()
            self._baseline.clear()
        self.template, self.identity, self.model = template, identity, model

    def put(self, items: Sequence[Item], scores: Iterable[ItemScore], baseline: bool = False) -> None:
        """Keep ``scores`` (matched to ``items`` by id) as the latest for those items."""
        by_id = {item.id: item for item in items}
        target = self._baseline if baseline else self._scores
        for score in scores:
            item = by_id.get(score.item_id)
            if item is not None:
                target[score.item_id] = (item, score)

    def holds_scores(self) -> bool:
        """Whether the session's model has scores here (of any item, the template's or the baseline)."""
        return bool(self._scores or self._baseline)

    def clear(self) -> None:
        self._scores.clear()
        self._baseline.clear()

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
        return score is not None and score.margin < self.low_margin_threshold

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

    # ------------------------------------------------------- several models

    def put_stored(self, items: Sequence[Item], found: Iterable[tuple[StoredRun, Sequence[ItemScore]]]) -> None:
        """Keep every stored run's scores (``stored.model_results``), matched to ``items`` by id."""
        by_id = {item.id: item for item in items}
        self._stored = [
            (run, {s.item_id: (by_id[s.item_id], s) for s in scores if s.item_id in by_id}) for run, scores in found
        ]

    def _is_current(self, run: StoredRun) -> bool:
        return run.model == self.identity and run.template_key == self.template.key

    @property
    def run_labels(self) -> list[str]:
        """``model · template`` of every run known: the stored ones, and this session's if not stored yet."""
        labels = [run.label for run, _ in self._stored]
        if self.identity and self._scores and not any(self._is_current(run) for run, _ in self._stored):
            labels.append(f"{self.model} · {self.template.name}")
        return labels

    def run_scores(self, item: Item) -> list[tuple[str, ItemScore]]:
        """(run label, score) of every run that scored the item as it is now; this session's run is live."""
        out: list[tuple[str, ItemScore]] = []
        live = False
        for run, scores in self._stored:
            if self._is_current(run):
                live, score = True, self.get(item)
            else:
                score = self._current(scores.get(item.id), item)
            if score is not None:
                out.append((run.label, score))
        current = None if live or not self.identity else self.get(item)
        if current is not None:
            out.append((f"{self.model} · {self.template.name}", current))
        return out

    def every_model_wrong(self, item: Item) -> bool:
        """At least two runs scored the item and none picks the gold label."""
        scores = [s for _, s in self.run_scores(item)]
        return len(scores) >= 2 and all(s.correct is False for s in scores)

    def models_disagree(self, item: Item) -> bool:
        """The runs that scored the item do not all pick the same solution."""
        return len({s.prediction for _, s in self.run_scores(item)}) > 1

    def wrong_against(self, item: Item, agreed: int | None) -> int:
        """How many runs pick another solution than ``agreed`` (the annotators' label); 0 without one."""
        if agreed is None:
            return 0
        return sum(1 for _, s in self.run_scores(item) if s.prediction != agreed)

    def comparison(self, items: Sequence[Item], columns: Sequence[str]) -> Comparison:
        """Every run side by side over ``items`` (``core.report.comparison``); InputError on a bad relevance flag."""
        runs: dict[str, list[ItemScore]] = {label: [] for label in self.run_labels}
        for item in items:
            for label, score in self.run_scores(item):
                runs[label].append(score)
        from piqa_tui.core.report.comparison import RunScores, compare  # the results screen's: not at start-up

        return compare([RunScores(label, scores) for label, scores in runs.items()], items, columns)
