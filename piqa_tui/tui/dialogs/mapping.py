"""The column-mapping dialog: which columns hold the prompt, the solutions and the label, and how labels count.

Opened when a file's layout is unknown, or when its labels look 1-based
(no label points to the first solution, some point one past the last). It
previews the first items under the mapping being chosen, with the gold
solution numbered as people number it, and returns the mapping; the app
keeps it in the workspace, so the next open needs no ``--map``.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select, SelectionList, Static

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.layout import Layout
from piqa_tui.core.dataset.reading import preview_items
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.graphemes import truncate
from piqa_tui.render.safe_text import rich_text
from piqa_tui.tui.dialogs.prompts import DIALOG_CSS
from piqa_tui.tui.keymap import MAPPING_ACTIONS, bindings

PREVIEW_ITEMS = 3
PREVIEW_CELLS = 60
NO_COLUMN = ""
LABEL_BASES = [("0-based (0 = solution 1)", "0"), ("1-based (1 = solution 1)", "1")]


class MappingDialog(ModalScreen[dict[str, str] | None]):
    """Choose the roles of the columns; ``ctrl+s`` (or Save) returns the mapping, ``esc`` None."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="MappingDialog")
        + """
    MappingDialog > Vertical {
        width: 90;
    }
    MappingDialog Horizontal {
        height: auto;
    }
    MappingDialog Label {
        width: 12;
        padding: 1 1 0 0;
    }
    MappingDialog Select {
        width: 1fr;
    }
    MappingDialog SelectionList {
        height: auto;
        max-height: 8;
        width: 1fr;
    }
    MappingDialog #preview {
        height: auto;
        border-top: solid $panel-lighten-2;
    }
    """
    )
    BINDINGS = bindings(MAPPING_ACTIONS)

    def __init__(
        self, columns: list[str], rows: list[dict[str, object]], reason: str, layout: Layout | None = None
    ) -> None:
        super().__init__()
        self.columns = columns
        self.rows = rows
        self.reason = reason
        self.current = layout  # the layout in force (None when unknown): the starting point
        self.mapping: dict[str, str] | None = None  # the mapping the preview last read without error

    def compose(self) -> ComposeResult:
        layout = self.current
        options = [(rich_text(c, one_line=True), c) for c in self.columns]  # column names are data
        with Vertical() as box:
            box.border_title = "Map the columns"
            yield Static(rich_text(self.reason), classes="dialog-help", markup=False)
            with Horizontal():
                yield Label("prompt")
                yield Select(
                    options, value=layout.prompt if layout else Select.NULL, id="prompt", prompt="choose a column"
                )
            with Horizontal():
                yield Label("solutions")
                chosen = set(layout.solutions) if layout else set()
                yield SelectionList[str](
                    *((rich_text(c, one_line=True), c, c in chosen) for c in self.columns), id="solutions"
                )
            with Horizontal():
                yield Label("label")
                label = layout.label if layout and layout.label else NO_COLUMN
                yield Select([("(no label column)", NO_COLUMN), *options], value=label, id="label", allow_blank=False)
            with Horizontal():
                yield Label("label base")
                yield Select(
                    LABEL_BASES,
                    value="1" if layout is None or layout.label_base == 1 else "0",
                    id="base",
                    allow_blank=False,
                )
            yield Static("", id="preview", markup=False)
            with Horizontal():
                yield Button("Save (ctrl+s)", id="save", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#prompt", Select).focus()
        self.update_preview()

    def chosen_mapping(self) -> dict[str, str]:
        """The mapping the widgets say now, in ``--map`` keys (solutions in file order)."""
        prompt = self.query_one("#prompt", Select).value
        selected = set(self.query_one("#solutions", SelectionList).selected)
        mapping = {
            "prompt": prompt if isinstance(prompt, str) else "",
            "solutions": "|".join(c for c in self.columns if c in selected),
            "label": str(self.query_one("#label", Select).value),
            "label_base": str(self.query_one("#base", Select).value),
        }
        if self.current is not None and self.current.id:
            mapping["id"] = self.current.id
        return mapping

    @on(Select.Changed)
    @on(SelectionList.SelectedChanged)
    def update_preview(self) -> None:
        mapping = self.chosen_mapping()
        try:
            if not mapping["prompt"] or mapping["solutions"].count("|") < 1:
                raise PiqaError("choose the prompt column and at least two solution columns")
            items = preview_items(self.columns, self.rows, mapping)
        except PiqaError as exc:
            self.mapping = None
            self.query_one("#preview", Static).update(rich_text(f"✗ {exc}"))
            return
        self.mapping = mapping
        self.query_one("#preview", Static).update(rich_text("\n".join(preview_lines(items[:PREVIEW_ITEMS]))))

    def action_save(self) -> None:
        if self.mapping is not None:
            self.dismiss(self.mapping)
        else:
            self.notify("the mapping cannot read the first rows yet: see the preview", severity="warning", timeout=3)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()


def preview_lines(items: list[Item]) -> list[str]:
    """A few lines per item: its prompt, its solutions numbered from 1, and the gold one."""
    lines: list[str] = []
    for item in items:
        lines.append(f"{item.id}: {truncate(item.prompt, PREVIEW_CELLS)}")
        lines.extend(f"  {n}. {truncate(text, PREVIEW_CELLS)}" for n, text in enumerate(item.solutions, 1))
        if item.label is None:
            lines.append("  gold: none")
        elif 0 <= item.label < len(item.solutions):
            lines.append(f"  gold: solution {item.label + 1}")
        else:
            lines.append(f"  gold: ✗ points to solution {item.label + 1}, but there are {len(item.solutions)}")
    return lines
