"""Dataset statistics: counts, label balance, lengths, scripts and categorical breakdowns."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

from .item import Item
from .text import scripts_in

LONG_ITEM_WORDS = 25
_MAX_CATEGORIES = 50  # a column with more distinct values is free text, not a category


@dataclass
class DatasetStats:
    items: int
    labels: dict[str, int]
    solutions_per_item: dict[str, int]
    mean_prompt_words: float
    mean_solution_words: float
    share_over_25_words: float
    scripts: dict[str, int]
    categories: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "items": self.items,
            "labels": self.labels,
            "solutions_per_item": self.solutions_per_item,
            "mean_prompt_words": round(self.mean_prompt_words, 3),
            "mean_solution_words": round(self.mean_solution_words, 3),
            "share_over_25_words": round(self.share_over_25_words, 4),
            "scripts": self.scripts,
            "categories": self.categories,
        }

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        overview = Table(title="Dataset", show_header=False, box=None, pad_edge=False)
        overview.add_column(style="bold")
        overview.add_column()
        overview.add_row("items", str(self.items))
        overview.add_row("labels", _counts(self.labels, self.items))
        overview.add_row("solutions per item", ", ".join(f"{k}: {v}" for k, v in self.solutions_per_item.items()))
        overview.add_row("mean words (prompt)", f"{self.mean_prompt_words:.1f}")
        overview.add_row("mean words (solution)", f"{self.mean_solution_words:.1f}")
        overview.add_row(f"items over {LONG_ITEM_WORDS} words", f"{self.share_over_25_words:.1%}")
        overview.add_row("scripts", _counts(self.scripts, self.items))
        yield overview
        for column, counts in self.categories.items():
            table = Table(title=column, title_justify="left")
            table.add_column("value")
            table.add_column("items", justify="right")
            table.add_column("share", justify="right")
            for value, count in counts.items():
                table.add_row(value or "(empty)", str(count), f"{count / max(self.items, 1):.1%}")
            yield table


def _counts(counts: dict[str, int], total: int) -> str:
    return ", ".join(f"{k}: {v} ({v / max(total, 1):.0%})" for k, v in counts.items()) or "—"


def categorical_columns(items: list[Item], columns: list[str]) -> list[str]:
    """Metadata columns that behave like categories: few distinct, repeated values."""
    chosen = []
    for column in columns:
        values = Counter(item.meta.get(column, "") for item in items)
        if 1 < len(values) <= min(_MAX_CATEGORIES, max(2, len(items) // 2)) or (len(values) == 1 and len(items) > 1):
            chosen.append(column)
    return chosen


def compute_stats(items: list[Item], meta_columns: list[str]) -> DatasetStats:
    n = len(items)
    labels = Counter("missing" if i.label is None else str(i.label) for i in items)
    prompt_words = [len(i.prompt.split()) for i in items]
    solution_words = [len(s.split()) for i in items for s in i.solutions]
    total_words = [p + sum(len(s.split()) for s in i.solutions) for p, i in zip(prompt_words, items)]
    scripts: Counter[str] = Counter()
    for item in items:
        scripts.update(scripts_in(item.text))
    categories = {
        column: dict(Counter(item.meta.get(column, "") for item in items).most_common())
        for column in categorical_columns(items, meta_columns)
    }
    return DatasetStats(
        items=n,
        labels=dict(sorted(labels.items())),
        solutions_per_item=dict(sorted(Counter(str(len(i.solutions)) for i in items).items())),
        mean_prompt_words=sum(prompt_words) / n if n else 0.0,
        mean_solution_words=sum(solution_words) / len(solution_words) if solution_words else 0.0,
        share_over_25_words=sum(1 for t in total_words if t >= LONG_ITEM_WORDS) / n if n else 0.0,
        scripts=dict(scripts.most_common()),
        categories=categories,
    )
