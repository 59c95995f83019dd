"""The comparison of several runs as Rich tables, for the CLI's ``score`` and the TUI's results screen.

Two shapes:

* ``comparison_tables``: runs as **rows** (n, acc, acc_norm, acc_bytes as the
  columns), one table overall and one per grouping column with each value
  heading a block of rows. The width never depends on how many runs there
  are (two models, or two models × two protocols × three contexts), so it
  reads in 100 columns however wide the evaluation grid grows; the CLI
  prints this.
* ``metric_table``: runs as **columns**, one metric at a time, the values of
  one grouping column as rows: models side by side, for the TUI's screen,
  where a key switches the metric and the column.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from piqa_tui.core.report.comparison import Comparison, Figures
from piqa_tui.render.safe_text import rich_text

METRICS = ("acc", "acc_norm", "acc_bytes")
_NONE = "—"  # a run with no labelled item in that cell: undefined, never 0


def _value(figures: Figures | None, metric: str) -> str:
    value = None if figures is None else figures.get(metric)
    return _NONE if value is None else f"{value:.3f}"


def _n(figures: Figures | None) -> str:
    return _NONE if figures is None else f"{figures['n']:,}"


def _figures_row(figures: Figures | None) -> list[str]:
    return [_n(figures), *(_value(figures, m) for m in METRICS)]


def _table(title: str, first: str | None) -> Table:
    table = Table(title=rich_text(title, "bold", one_line=True), title_justify="left", box=None, padding=(0, 2, 0, 0))
    if first is not None:  # a column name is the dataset's: a header given as str would be parsed as markup
        table.add_column(rich_text(first, one_line=True), overflow="fold", max_width=28)
    table.add_column("run", overflow="fold", max_width=40)
    for name in ("n", *METRICS):
        table.add_column(rich_text(name), justify="right", no_wrap=True)
    return table


def overall_table(comparison: Comparison) -> Table:
    """Each run's figures over every item kept."""
    table = _table("overall", None)
    for label in comparison.runs:
        table.add_row(rich_text(label, one_line=True), *_figures_row(comparison.overall[label]))
    return table


def group_table(comparison: Comparison, column: str) -> Table:
    """Each value of ``column`` heading one row per run."""
    table = _table(f"by {column}", column)
    for n, (value, by_run) in enumerate(comparison.groups[column].items()):
        if n and len(comparison.runs) > 1:
            table.add_row()  # a blank line between the blocks of rows of two values
        for i, label in enumerate(comparison.runs):
            head = rich_text(value, one_line=True, highlight=True) if i == 0 else Text("")
            table.add_row(head, rich_text(label, one_line=True), *_figures_row(by_run.get(label)))
    return table


def discarded_note(comparison: Comparison) -> Text | None:
    if not comparison.discarded:
        return None
    return Text(
        f"{len(comparison.discarded):,} item(s) flagged should_discard left out of every figure "
        f"({comparison.n_items:,} kept)",
        style="dim",
    )


def comparison_tables(comparison: Comparison) -> list[Table | Text]:
    """The overall table, the discarded count when any, and one table per grouping column."""
    out: list[Table | Text] = [overall_table(comparison)]
    note = discarded_note(comparison)
    if note is not None:
        out.append(note)
    out.extend(group_table(comparison, column) for column in comparison.groups)
    return out


def metric_table(comparison: Comparison, column: str | None, metric: str = "acc") -> Table:
    """Runs as columns, ``metric`` in each cell (``n`` beside the value): overall, then ``column``'s values."""
    title = f"{metric} by {column}" if column else f"{metric} overall"
    table = Table(title=rich_text(title, "bold", one_line=True), title_justify="left", box=None, padding=(0, 2, 0, 0))
    table.add_column(rich_text(column or "", one_line=True), overflow="fold", max_width=28)
    for label in comparison.runs:
        table.add_column(rich_text(label, one_line=True), justify="right", overflow="fold", max_width=24)

    def cells(by_run: dict[str, Figures]) -> list[str]:
        return [f"{_value(by_run.get(label), metric)} ({_n(by_run.get(label))})" for label in comparison.runs]

    table.add_row(Text("overall", style="bold"), *cells(comparison.overall), end_section=bool(column))
    for value, by_run in (comparison.groups.get(column, {}) if column else {}).items():
        table.add_row(rich_text(value, one_line=True, highlight=True), *cells(by_run))
    return table
