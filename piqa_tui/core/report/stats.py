"""Dataset statistics: counts, label balance, lengths, scripts and categorical breakdowns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import methodcaller
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.frames import scripts_maybe_present, text_frame
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import SCRIPTS

if TYPE_CHECKING:
    import polars as pl

LONG_ITEM_WORDS = 25
_MAX_CATEGORIES = 50  # a column with more distinct values is free text, not a category


@dataclass
class DatasetStats:
    """A dataset's statistics (``piqa_tui.render.stats`` shows them)."""

    items: int
    labels: dict[str, int]
    solutions_per_item: dict[str, int]
    mean_prompt_words: float
    mean_solution_words: float
    share_over_25_words: float
    scripts: dict[str, int]
    categories: dict[str, dict[str, int]] = field(default_factory=dict)

    def gold_counts(self) -> dict[str, int]:
        """Items per gold solution as people number them ("solution 1" …); ``labels`` keeps 0-based keys for JSON."""
        return {("no label" if key == "missing" else f"solution {int(key) + 1}"): n for key, n in self.labels.items()}


def categorical_columns(items: list[Item], columns: list[str]) -> list[str]:
    """Metadata columns that behave like categories: few distinct, repeated values."""
    if not columns or not items:
        return []
    limit = min(_MAX_CATEGORIES, max(2, len(items) // 2))
    metas = [item.meta for item in items]
    distinct = [_distinct_up_to(metas, methodcaller("get", c, ""), limit) for c in columns]
    return [c for c, k in zip(columns, distinct) if 1 < k <= limit or (k == 1 and len(items) > 1)]


def _distinct_up_to(metas: list[dict[str, str]], value: Callable[[dict[str, str]], str], limit: int) -> int:
    """How many distinct values a column holds, counted a block at a time up to ``limit`` + 1 (free text stops
    after its first block)."""
    seen: set[str] = set()
    for start in range(0, len(metas), 4096):
        seen.update(map(value, metas[start : start + 4096]))
        if len(seen) > limit:
            break
    return len(seen)


def compute_stats(items: list[Item], meta_columns: list[str]) -> DatasetStats:
    """All statistics in a few vectorised passes (polars), so 100,000 items take well under a second."""
    import polars as pl

    n = len(items)
    frame = text_frame(items)
    solution_columns = frame.columns[1:]
    word = r"\S+"
    words = frame.select(pl.all().str.count_matches(word).fill_null(0))
    prompt_words = words["prompt"]
    solution_words = pl.concat([frame[c].drop_nulls().str.count_matches(word) for c in solution_columns])
    total_words = words.sum_horizontal()
    # Items per script: a numpy pass rules out the absent scripts, polars counts the others.
    text = pl.concat_str(pl.all(), separator="\n", ignore_nulls=True)
    candidates = scripts_maybe_present(t for item in items for t in (item.prompt, *item.solutions))
    scripts = (
        frame.select(text.str.contains(f"[{SCRIPTS[name]}]").sum().alias(name) for name in candidates).row(
            0, named=True
        )
        if candidates
        else {}
    )
    labels = Counter("missing" if i.label is None else str(i.label) for i in items)
    categories = {
        column: dict(Counter(item.meta.get(column, "") for item in items).most_common())
        for column in categorical_columns(items, meta_columns)
    }
    return DatasetStats(
        items=n,
        labels=dict(sorted(labels.items())),
        solutions_per_item=dict(sorted(Counter(str(len(i.solutions)) for i in items).items())),
        mean_prompt_words=_mean(prompt_words),
        mean_solution_words=_mean(solution_words),
        share_over_25_words=_mean(total_words >= LONG_ITEM_WORDS),
        scripts=dict(sorted(((k, v) for k, v in scripts.items() if v), key=lambda kv: -kv[1])),
        categories=categories,
    )


def _mean(series: pl.Series) -> float:
    """The mean of a column of numbers or booleans; 0.0 for an empty one (polars says None)."""
    value = series.mean()
    return float(value) if isinstance(value, int | float) else 0.0
