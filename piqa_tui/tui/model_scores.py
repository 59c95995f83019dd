"""What the model said about the items, as the TUI shows it: scores, queues and marks.

``ModelScores`` keeps, for the session's project, the latest :class:`ItemScore` of
each item for the chosen template (and of the solution-only baseline), each
with the item it was computed for: after an edit a score no longer counts
until the item is scored again, and a changed gold label is judged afresh.
Like ``listing.py`` it imports no Textual, so the queue rules are tested
without a screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.results import ItemScore, summarise, with_label
from piqa_tui.core.scoring.templates import DEFAULT_TEMPLATE, Template, get_template

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
