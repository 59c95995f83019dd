"""The current item: prompt, solutions with their differing words lit, label, problems, note, metadata.

The blocks are made once per dataset and refilled on every move, so moving
through a large set costs a repaint, not a rebuild of widgets. In shuffled
validation (an ``order`` given) each solution block stands for the solution
shown in its place: numbers, titles, the gold mark and the label line follow
the order shown, and nothing on screen names a solution's column or file index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from piqa_tui.core.dataset.checks import RULES, Problem
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import Dataset
from piqa_tui.core.text.bidi import BidiText
from piqa_tui.core.text.direction import Direction
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.safe_text import shown_block
from piqa_tui.tui.state.fields import label_text, solution_spans, translation_columns
from piqa_tui.tui.widgets.drawing import app_bidi_mode
from piqa_tui.tui.widgets.item.field_block import FieldBlock
from piqa_tui.tui.widgets.item.flags_line import FlagsLine
from piqa_tui.tui.widgets.item.label_line import LabelLine
from piqa_tui.tui.widgets.item.metadata import MetadataTable
from piqa_tui.tui.widgets.item.score_panel import ScorePanel
from piqa_tui.tui.widgets.item.solution_block import SolutionBlock
from piqa_tui.tui.widgets.item.vote_panel import VotePanel


class ProblemsLine(Static):
    """Validate's findings for the item, updated live while a field is edited."""

    DEFAULT_CSS = """
    ProblemsLine {
        height: auto;
        padding: 0 2;
    }
    """

    def show_problems(self, problems: list[Problem]) -> None:
        shown = tuple((p.rule, p.detail) for p in problems)
        layout = shown != getattr(self, "_shown", None)  # most items have none: no relayout
        self._shown = shown
        if not problems:
            self.update(Text("✓ no problems", style="green"), layout=layout)
            return
        self.update(Group(*(self._line(problem) for problem in problems)), layout=layout)

    def _line(self, problem: Problem) -> BidiText:
        """One finding, drawn by the bidi adapter: its detail quotes the item's words (Arabic shaped and in
        reading order, any control character escaped), on the app's left-to-right line."""
        error = RULES[problem.rule].level == "error"
        mark = "✗ " if error else "⚠ "
        detail = terminal_safe(problem.detail, one_line=True)
        line = f"{mark}{detail}  [{problem.rule}]"
        spans = [(0, len(mark), "bold red" if error else "bold yellow"), (len(mark) + len(detail), len(line), "dim")]
        return BidiText(line, app_bidi_mode(self), highlights=spans, direction=Direction.LTR)


def _captions(count: int) -> list[str]:
    """Translation captions that name no column: a column's name would say which solution of the file it is."""
    return ["translation"] if count == 1 else [f"translation {n + 1}" for n in range(count)]


class ItemView(VerticalScroll, can_focus=False):
    """Everything about the current item; ``selected`` names the field the edit keys act on."""

    DEFAULT_CSS = """
    ItemView {
        height: 1fr;
        width: 1fr;
        padding: 0 1 0 0;
        scrollbar-size-vertical: 1;
    }
    ItemView > #item-title {
        height: auto;
        max-height: 3;  /* the id, the order and the status marks wrap on a narrow screen, never cut */
        padding: 0 1;
        text-style: bold;
        color: $primary;
    }
    """

    def __init__(self, dataset: Dataset, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dataset = dataset
        self.translations = translation_columns(dataset)
        shown = {c for cols in self.translations.values() for c in cols}
        self.meta_columns = [c for c in dataset.meta_columns if c not in shown]
        self.item: Item | None = None
        self.selected = "prompt"
        self.order: Sequence[int] | None = None  # the order shown (shown place → file index); None: file order
        self.sources: Mapping[str, str] = {}  # a machine translation's source text per field, shown beneath it

    def compose(self) -> ComposeResult:
        yield Static(id="item-title", markup=False)
        yield FieldBlock("prompt", self.dataset.layout.prompt, self.translations.get("prompt", []))
        for i, column in enumerate(self.dataset.layout.solutions):
            yield SolutionBlock(i, column, self.translations.get(f"solution{i}", []))
        yield LabelLine(id="label-line")
        yield VotePanel(id="vote-panel")
        yield ScorePanel(id="score-panel")
        yield ProblemsLine(id="problems")
        yield FlagsLine(id="flags")
        yield FieldBlock("note", "note", placeholder="no note — c writes one")
        yield MetadataTable(id="metadata")

    def on_mount(self) -> None:
        # Kept, not queried: show_item runs on every move.
        self.blocks = {block.field: block for block in self.query(FieldBlock)}
        self.solution_blocks = list(self.query(SolutionBlock))
        self.title_line = self.query_one("#item-title", Static)
        self.label_line = self.query_one(LabelLine)
        self.problems_line = self.query_one(ProblemsLine)
        self.flags_line = self.query_one(FlagsLine)
        self.metadata = self.query_one(MetadataTable)

    # ---------------------------------------------------------------- showing

    def block(self, field: str) -> FieldBlock:
        return self.blocks[field]

    def show_item(
        self,
        item: Item,
        problems: list[Problem],
        *,
        note: str = "",
        status: str = "",
        gold_hidden: bool = False,
        flags: dict[str, str] | None = None,
        order: Sequence[int] | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> None:
        """Fill every block from ``item``; ``status`` is a short line of marks for the title; ``order``: the
        solutions' order shown (shown place → file index), None for file order; ``sources``: the text each field
        was machine-translated from (``prompt``, ``solution0`` …), shown beneath it as ``source``."""
        self.item = item
        self.order = order
        self.sources = sources or {}
        meta = item.meta
        title = f"{item.id}   row {item.row + 1}"
        if item.question:
            title += f"   asks for the {item.question}"
        if order is not None:
            title += "   ⇄ solutions in your own order"
        if status:
            title += f"   {status}"
        self.title_line.update(shown_block((title, ""), one_line=True), layout=False)  # the id and question are data
        self.block("prompt").show(item.prompt, (), self._translations("prompt", meta))
        place = next((b.slot for b in self.solution_blocks if b.field == self.selected), None)
        self._place_solutions(order)
        if place is not None:  # the selection keeps its place on screen: following the text would tell its index
            self.selected = self.solution_blocks[place].field
        self._show_solutions(item, gold_hidden)
        self.label_line.show_label(self._label_text(item), hidden=gold_hidden)
        self.problems_line.show_problems(problems)
        self.flags_line.show_flags(flags or {})
        self.block("note").show(note)
        self.metadata.show_meta([(c, meta.get(c, "")) for c in self.meta_columns])
        self.select(self.selected if self._has_field(self.selected, item) else "prompt")

    def _translations(self, field: str, meta: dict[str, str]) -> dict[str, str]:
        source = {"source": self.sources[field]} if field in self.sources else {}
        if self.order is not None and field.startswith("solution"):  # captions that name no column
            captions = _captions(len(self.translations.get(field, [])))
            return source | dict(zip(captions, self._values(field, meta), strict=True))
        return source | {c: meta.get(c, "") for c in self.translations.get(field, [])}

    def _values(self, field: str, meta: dict[str, str]) -> list[str]:
        return [meta.get(c, "") for c in self.translations.get(field, [])]

    def _place_solutions(self, order: Sequence[int] | None) -> None:
        """Let each solution block stand for the solution shown in its place (its own in file order)."""
        columns = self.dataset.layout.solutions
        for block in self.solution_blocks:
            slot = block.slot
            index = order[slot] if order is not None and slot < len(order) else slot
            own = self.translations.get(f"solution{index}", [])
            if order is None:
                block.stand_for(index, f"{slot + 1} · {columns[slot]}", own)
            else:
                block.stand_for(index, f"{slot + 1} · shown to you", _captions(len(own)))
            self.blocks[block.field] = block

    def _label_text(self, item: Item) -> str:
        """The gold label line: in shuffled validation the number of the gold solution as shown, no column."""
        if self.order is None or item.label is None or not 0 <= item.label < len(self.order):
            return label_text(self.dataset, item)
        return str(list(self.order).index(item.label) + 1)

    def shown_name(self, field: str, default: str) -> str:
        """What a message calls ``field``: ``default``, except a solution shown in a place of its own
        (shuffled validation), which is named by that place, never by its column or file index."""
        if self.order is None or not field.startswith("solution"):
            return default
        block = next((b for b in self.solution_blocks if b.field == field), None)
        return default if block is None else f"solution shown as {block.slot + 1}"

    def in_screen_order(self, fields: list[str]) -> list[str]:
        """``fields`` in the order they stand on screen (tab goes down the screen, whatever the order shown)."""
        screen = ["prompt", *(block.field for block in self.solution_blocks), "label", "note"]
        screen += [f"meta:{column}" for column in self.meta_columns]  # the table's rows
        screen += [f"meta:{column}" for column in self._translation_owners()]  # then the translations beside
        return sorted((f for f in fields if f in screen), key=screen.index)

    def _translation_owners(self) -> dict[str, str]:
        """Each translation column shown beside a field, with that field: tab reaches them after the table. In
        shuffled validation only the prompt's: a solution's column name would tell where it stands in the file."""
        return {
            column: field
            for field, columns in self.translations.items()
            if self.order is None or not field.startswith("solution")
            for column in columns
        }

    def _show_solutions(self, item: Item, gold_hidden: bool) -> None:
        for block in self.solution_blocks:
            present = block.slot < len(item.solutions)
            if block.display != present:
                block.display = present
            if present:
                gold = None if gold_hidden else item.label == block.index
                block.show_solution(
                    item.solutions[block.index],
                    solution_spans(item.solutions, block.index),
                    gold,
                    self._translations(block.field, item.meta),
                )

    def preview(self, candidate: Item, problems: list[Problem]) -> None:
        """Redraw highlights and problems for an item being edited (not yet recorded)."""
        for block in self.solution_blocks:
            if block.index < len(candidate.solutions) and block.editor is None:
                block.set_highlights(candidate.solutions[block.index], solution_spans(candidate.solutions, block.index))
        self.problems_line.show_problems(problems)

    # -------------------------------------------------------------- selection

    @staticmethod
    def _has_field(field: str, item: Item) -> bool:
        if field.startswith("solution"):
            return int(field[8:]) < len(item.solutions)
        return True

    def select(self, field: str) -> None:
        """Mark ``field`` as the one the edit keys act on, and scroll it into view."""
        changed = field != self.selected
        self.selected = field
        owner = self._translation_owners().get(field.removeprefix("meta:")) if field.startswith("meta:") else None
        for block in self.blocks.values():
            block.set_class(block.field in (field, owner), "-selected")
        self.label_line.set_class(field == "label", "-selected")
        self.metadata.select(field.removeprefix("meta:") if field.startswith("meta:") else None)
        if changed:
            target = self._widget_of(field)
            self.call_after_refresh(self.scroll_to_widget, target, animate=False)

    def _widget_of(self, field: str) -> Widget:
        """What shows ``field``: its block, the label line or the metadata table."""
        if field == "label":
            return self.label_line
        if not field.startswith("meta:"):
            return self.block(field)
        owner = self._translation_owners().get(field.removeprefix("meta:"))
        return self.metadata if owner is None else self.block(owner)
