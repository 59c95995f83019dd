"""Flag an item: reason codes (ungrammatical, culturally wrong, ...) and an optional note."""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList, Static
from textual.widgets.selection_list import Selection

from piqa_tui.core.votes.flags import FLAG_REASONS
from piqa_tui.tui.dialogs.prompts import DIALOG_CSS, DIALOG_LIST_CSS
from piqa_tui.tui.keymap import FLAG_ACTIONS, bindings
from piqa_tui.tui.widgets.item.field_editor import FieldEditor


@dataclass(frozen=True)
class FlagChoice:
    """What the dialog returns: the reasons that should be on, and the note for them."""

    reasons: frozenset[str]
    note: str


ON_GLYPH, OFF_GLYPH = "✓", "·"  # colour alone does not tell on from off (colour-blind eyes, monochrome terminals)


class ReasonList(SelectionList[str]):
    """The reason codes; space or a digit toggles one, enter saves the dialog."""

    BINDINGS = bindings(tuple(a for a in FLAG_ACTIONS if a.id == "flag_list_save"))

    def render_line(self, y: int) -> Strip:
        """Textual's checkbox with a ✓ when on and a · when off, inside the coloured box."""
        strip = super().render_line(y)
        index = self.scroll_offset.y + y
        segments = list(strip)
        if index >= self.option_count or len(segments) < 2 or segments[1].text != Checkbox.BUTTON_INNER:
            return strip
        on = self.get_option_at_index(index).value in self.selected
        segments[1] = Segment(ON_GLYPH if on else OFF_GLYPH, segments[1].style)
        return Strip(segments, strip.cell_length)


class FlagDialog(ModalScreen[FlagChoice | None]):
    DEFAULT_CSS = (
        DIALOG_CSS.format(name="FlagDialog")
        + DIALOG_LIST_CSS.format(name="FlagDialog", list="ReasonList")
        + """
    FlagDialog FieldEditor {
        margin-bottom: 1;
    }
    """
    )

    ACTIONS = FLAG_ACTIONS
    BINDINGS = bindings(tuple(a for a in FLAG_ACTIONS if a.id != "flag_list_save"))

    def __init__(self, item_id: str, current: dict[str, str]) -> None:
        super().__init__()
        self.item_id = item_id
        self.current = current
        self.note = next((note for note in current.values() if note), "")

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Flag {self.item_id}"
            yield Static(
                "space or 1-7 toggles a reason · enter saves · tab goes to the note · esc cancels",
                classes="dialog-help",
                markup=False,
            )
            selections = []
            for n, (reason, meaning) in enumerate(FLAG_REASONS.items(), 1):
                prompt = Text.assemble((f"{n} ", "dim"), (reason, "bold"), (f"  {meaning}", "dim"))
                selections.append(Selection(prompt, reason, reason in self.current))
            yield ReasonList(*selections)
            yield Static("note (optional, kept with the reasons)", classes="dialog-help", markup=False)
            yield FieldEditor(self.note, field="flag-note", placeholder="why? (enter saves)")

    def on_mount(self) -> None:
        self.query_one(ReasonList).focus()

    def action_toggle_reason(self, index: int) -> None:
        reasons = self.query_one(ReasonList)
        if index < reasons.option_count:
            reasons.toggle(reasons.get_option_at_index(index).value)

    @on(FieldEditor.Done)
    def _note_done(self, event: FieldEditor.Done) -> None:
        event.stop()
        self.note = event.value
        if event.how == "cancel":
            self.dismiss(None)
        elif event.how == "commit":
            self.action_save()
        else:  # tab / shift+tab: back to the reasons, the note kept
            self.query_one(ReasonList).focus()

    def action_save(self) -> None:
        editor = self.query_one(FieldEditor)
        self.dismiss(FlagChoice(frozenset(self.query_one(ReasonList).selected), editor.value.strip()))

    def action_cancel(self) -> None:
        self.dismiss(None)
