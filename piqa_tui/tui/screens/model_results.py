"""How the model does on the set: acc, acc_norm and acc_bytes overall and by a categorical column, and the items by margin.

With two or more models (or templates) scored for the project, a table puts
every one side by side: runs as columns (one accuracy at a time, ``m``
switches it; ``n`` beside each), overall and per value of the chosen column
(``c``), then the country-specific split when the items carry ArabCulture's
relevance flags (``render.comparison.metric_table``).

Reads ``ModelScores`` (what this session scored or found in the workspace);
the items edited since their scoring are left out until scored again. In
blind mode an item's gold label, ✓/✗ and the model's choices stay hidden until
the annotator voted on it, as on the main screen, and the accuracies are taken
over the items voted on only (``Ballots.visible_items``).
"""

from __future__ import annotations

from typing import Any, cast

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.report.comparison import SPECIFICITY
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.text.bidi import layout, needs_layout
from piqa_tui.core.text.graphemes import truncate
from piqa_tui.render.comparison import METRICS, metric_table
from piqa_tui.render.safe_text import rich_text
from piqa_tui.tui.keymap import MODEL_RESULTS_ACTIONS, bindings
from piqa_tui.tui.messages import ScoresChanged, ShowItem
from piqa_tui.tui.state.model_scores import ModelScores
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction
from piqa_tui.tui.widgets.plain_table import PlainDataTable

PROMPT_CELLS = 60


def _fmt(value: object) -> str:
    return "—" if value is None else f"{value:.3f}"


class ModelResultsScreen(Screen[None]):
    DEFAULT_CSS = """
    ModelResultsScreen > #results-header {
        dock: top;
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    ModelResultsScreen > #results-summary {
        height: auto;
        max-height: 50%;
        padding: 0 1;
        border-bottom: hkey $panel-lighten-2;
    }
    ModelResultsScreen > #results-items {
        height: 1fr;
    }
    """

    ACTIONS = MODEL_RESULTS_ACTIONS
    BINDINGS = bindings(ACTIONS)
    AUTO_FOCUS = "#results-items"

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.project = session.project
        self.columns = list(session.categorical_columns())
        self.column = 0
        self.metric = 0  # which of METRICS the table of every model shows
        self.ascending = True
        self.positions: list[int] = []  # item positions of the table's rows
        self._excerpts: dict[str, tuple[Item, str]] = {}  # item id -> (item, its prompt as drawn)

    @property
    def model(self) -> ModelScores:
        return self.session.scores

    def compose(self) -> ComposeResult:
        yield Static(id="results-header", markup=False)
        with VerticalScroll(id="results-summary"):
            yield Static(id="results-text")
        table = PlainDataTable(id="results-items", cursor_type="row", zebra_stripes=True)
        yield table
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label in ("margin", "id", "acc", "norm", "gold", "", "no prompt", "prompt"):
            table.add_column(label, key=label or "mark")
        self.scores_changed()

    # -------------------------------------------------------------- drawing

    def scores_changed(self) -> None:
        """Redraw from the scores."""
        self._draw_summary()
        self._draw_items()

    def on_scores_changed(self, message: ScoresChanged) -> None:
        message.stop()  # the main screen says so as a run progresses
        self.scores_changed()

    def _gold_hidden(self, item: Item) -> bool:
        return not self.session.ballots.visible(item.id)

    def _draw_summary(self) -> None:
        model, every = self.model, self.project.items
        scored = model.count(every)
        header = (
            f"Model results · {model.model or 'no model yet'} · template {model.template.name} · "
            f"{scored:,}/{len(every):,} items scored"
        )
        self.query_one("#results-header", Static).update(rich_text(header, one_line=True))
        text = Text()
        items = self.session.ballots.visible_items(every)  # blind mode: only the items voted on
        if not scored or not model.count(items):
            others = (
                self._models(items, minimum=1) if items else []
            )  # other models may be in the workspace all the same
            nothing = "Nothing scored with this model yet" if others else "Nothing scored yet"
            text.append(
                f"{nothing}. On the item list, m scores the current item and M every item."
                if not scored
                else "Accuracies stay hidden until you vote (blind mode): they are taken over the items you voted on.",
                "italic",
            )
            self.query_one("#results-text", Static).update(Group(text, *others))
            return
        if len(items) < len(every):
            text.append(f"blind mode: over the {len(items):,} items you voted on\n", "dim")
        overall = model.summary(items)
        text.append("overall   ", "bold")
        text.append(
            f"acc {_fmt(overall['acc'])}  acc_norm {_fmt(overall['acc_norm'])}  "
            f"acc_bytes {_fmt(overall['acc_bytes'])}  n {overall['n']:,}"
        )
        if overall["n_unlabelled"]:
            text.append(f"  ({overall['n_unlabelled']:,} without a gold label)", "dim")
        mean = overall["mean_margin"]
        text.append(f"  mean margin {mean:.2f}" if mean is not None else "")
        low = sum(1 for item in items if model.low_margin(item))
        text.append(f"  · {low:,} with margin below {model.low_margin_threshold:g} (queue low-margin)", "dim")
        baseline_n = model.count(items, baseline=True)
        if baseline_n:
            base = model.summary(items, baseline=True)
            shortcuts = sum(1 for item in items if model.shortcut(item))
            text.append("\nno prompt ", "bold")
            text.append(f"acc {_fmt(base['acc'])}  acc_norm {_fmt(base['acc_norm'])}  n {base['n']:,}")
            text.append(f"  · {shortcuts:,} items answered without the prompt (queue solution-only)", "dim")
        text.append("\n")
        body: list[Text | Table] = [text]
        if self.columns:
            body.append(self._breakdown(self.columns[self.column % len(self.columns)]))
        else:
            body.append(Text("no categorical column to break the accuracy down by", "dim"))
        body.extend(self._models(items))
        self.query_one("#results-text", Static).update(Group(*body))

    def _breakdown(self, column: str) -> Table:
        items = self.session.ballots.visible_items(self.project.items)
        groups = cast("dict[str, dict[str, Any]]", self.model.summary(items, column=column)["groups"])
        more = "  (c: next column)" if len(self.columns) > 1 else ""
        table = Table(
            title=rich_text(f"by {column}{more}", "bold", one_line=True),
            title_justify="left",
            box=None,
            padding=(0, 2, 0, 0),
        )
        # The column's name is the dataset's: as a str it would be markup, and "[@click=…]" an action.
        table.add_column(rich_text(column, one_line=True))
        for name in ("n", "acc", "acc_norm", "acc_bytes", "mean margin"):
            table.add_column(name, justify="right")
        for value, s in groups.items():
            mean = s["mean_margin"]
            table.add_row(
                rich_text(value, one_line=True, highlight=True),
                f"{s['n']:,}",
                _fmt(s["acc"]),
                _fmt(s["acc_norm"]),
                _fmt(s["acc_bytes"]),
                "—" if mean is None else f"{mean:.2f}",
            )
        return table

    def _models(self, items: list[Item], minimum: int = 2) -> list[Text | Table]:
        """Every model and template scored for the project side by side (``minimum`` runs or more: one when
        this session's model has no scores to show above), by the chosen column."""
        labels = self.model.run_labels
        if len(labels) < minimum:
            return []
        column = self.columns[self.column % len(self.columns)] if self.columns else None
        metric = METRICS[self.metric % len(METRICS)]
        try:
            table = self.model.comparison(items, [column] if column else [])
        except PiqaError as exc:  # an unreadable relevance flag: say which, show no figures
            return [Text("\n"), rich_text(f"{len(labels)} models: {exc}", "red", one_line=True)]
        out: list[Text | Table] = [
            Text(f"\n{len(labels)} models side by side (m: next metric, c: next column)", "bold"),
            metric_table(table, column, metric),
        ]
        if SPECIFICITY in table.groups and column != SPECIFICITY:
            out.append(metric_table(table, SPECIFICITY, metric))
        if table.discarded:
            out.append(Text(f"{len(table.discarded):,} item(s) flagged should_discard left out", "dim"))
        return out

    def _row(self, item: Item, score: ItemScore) -> list[Text | str]:
        hidden = self._gold_hidden(item)
        baseline = self.model.baseline(item)
        if hidden or score.label is None:
            gold, mark = ("hidden" if hidden else "—"), Text("")
        else:
            gold = str(self.session.ballots.shown_index(item, score.label) + 1)  # as this annotator sees it
            mark = Text("✓", "green") if score.correct else Text("✗", "bold red")
        prompt = self._excerpt(item)

        def pick(choice: int) -> str:  # the model's choices point at the answer too: hidden with gold
            return "·" if hidden else str(self.session.ballots.shown_index(item, choice) + 1)

        return [
            Text(f"{score.margin:.2f}", justify="right"),
            rich_text(item.id, one_line=True),
            pick(score.prediction),
            pick(score.prediction_norm),
            gold,
            mark,
            pick(baseline.prediction) if baseline is not None else "",
            rich_text(prompt, one_line=True),  # DataTable parses str cells as markup
        ]

    def _excerpt(self, item: Item) -> str:
        """The prompt's first display line (reordered for right-to-left text), cut to fit; kept per item."""
        found = self._excerpts.get(item.id)
        if found is not None and found[0] is item:
            return found[1]
        text = item.prompt.replace("\n", " ")
        if needs_layout(text):
            shown = layout(
                text, PROMPT_CELLS, app_bidi_mode(self), max_lines=1, direction=field_direction(self, "prompt")
            )[0].text
        else:
            shown = truncate(text, PROMPT_CELLS)
        self._excerpts[item.id] = (item, shown)
        return shown

    def _draw_items(self) -> None:
        table = self.query_one(DataTable)
        keep = self.positions[table.cursor_row] if 0 <= table.cursor_row < len(self.positions) else None
        scored = self.model.scored(self.project.items)
        scored.sort(key=lambda row: (row[2].margin, row[0]), reverse=not self.ascending)
        table.clear()
        self.positions = [position for position, _, _ in scored]
        for _position, item, score in scored:
            table.add_row(*self._row(item, score))
        if keep is not None and keep in self.positions:
            table.move_cursor(row=self.positions.index(keep), animate=False)

    # -------------------------------------------------------------- actions

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()  # enter on a row: the table's own binding sends this
        self.action_open_item()

    def action_open_item(self) -> None:
        table = self.query_one(DataTable)
        if not 0 <= table.cursor_row < len(self.positions):
            return
        position = self.positions[table.cursor_row]
        self.dismiss(None)
        self.app.post_message(ShowItem(position))

    def action_toggle_order(self) -> None:
        self.ascending = not self.ascending
        self._draw_items()
        self.notify("lowest margin first" if self.ascending else "highest margin first", timeout=2)

    def action_next_column(self) -> None:
        if self.columns:
            self.column = (self.column + 1) % len(self.columns)
            self._draw_summary()

    def action_next_metric(self) -> None:
        self.metric = (self.metric + 1) % len(METRICS)
        self._draw_summary()
        self.notify(f"models compared by {METRICS[self.metric]}", timeout=2)

    def action_close(self) -> None:
        self.dismiss(None)
