"""Dataset statistics as Rich tables and as JSON: what ``piqa-tui stats`` prints."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

from piqa_tui.core.report.stats import LONG_ITEM_WORDS, DatasetStats
from piqa_tui.render.safe_text import rich_text

SHOWN_BREAKDOWNS = 20  # per-column tables printed before the rest is summarised in one line (100,000 columns happen)


def more_columns_line(hidden: int) -> str:
    """The one line that stands for the per-column tables left out, and how to get them."""
    return f"{hidden} more column{'s' if hidden != 1 else ''}: use --json or --by COLUMN"


def stats_json(stats: DatasetStats) -> dict[str, object]:
    """The statistics as plain values, the means and shares rounded."""
    return {
        "items": stats.items,
        "labels": stats.labels,
        "solutions_per_item": stats.solutions_per_item,
        "mean_prompt_words": round(stats.mean_prompt_words, 3),
        "mean_solution_words": round(stats.mean_solution_words, 3),
        "share_over_25_words": round(stats.share_over_25_words, 4),
        "scripts": stats.scripts,
        "categories": stats.categories,
    }


class StatsTables:
    """The overview table, then one table per categorical column: the first ``limit``, then a line for the rest."""

    def __init__(self, stats: DatasetStats, limit: int | None = SHOWN_BREAKDOWNS) -> None:
        self.stats = stats
        self.limit = limit

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        stats = self.stats
        overview = Table(title="Dataset", show_header=False, box=None, pad_edge=False)
        overview.add_column(style="bold")
        overview.add_column()
        overview.add_row("items", str(stats.items))
        overview.add_row("gold labels", _counts(stats.gold_counts(), stats.items))
        overview.add_row(
            "solutions per item", rich_text(", ".join(f"{k}: {v}" for k, v in stats.solutions_per_item.items()))
        )
        overview.add_row("mean words (prompt)", f"{stats.mean_prompt_words:.1f}")
        overview.add_row("mean words (solution)", f"{stats.mean_solution_words:.1f}")
        overview.add_row(f"items over {LONG_ITEM_WORDS:d} words", f"{stats.share_over_25_words:.1%}")
        overview.add_row("scripts", _counts(stats.scripts, stats.items))
        yield overview
        columns = list(stats.categories.items())
        shown = columns if self.limit is None else columns[: self.limit]
        for column, counts in shown:
            # Column names and values are the dataset's: shown as text, never parsed as markup.
            table = Table(title=rich_text(column, "table.title", one_line=True), title_justify="left")
            table.add_column("value")
            table.add_column("items", justify="right")
            table.add_column("share", justify="right")
            for value, count in counts.items():
                table.add_row(
                    rich_text(value or "(empty)", highlight=True), str(count), f"{count / max(stats.items, 1):.1%}"
                )
            yield table
        if len(shown) < len(columns):
            yield rich_text(more_columns_line(len(columns) - len(shown)), "dim")


def _counts(counts: dict[str, int], total: int) -> str:
    return ", ".join(f"{k}: {v} ({v / max(total, 1):.0%})" for k, v in counts.items()) or "—"
