"""Write a new item: the goal, two to four solutions and the gold one, with validate's checks shown live.

The dialog only gathers text and shows what the checks say of it; the item is recorded by whoever opened it
(a ``new-item`` event, at the draft stage). Problems do not stop saving: a draft may still be wrong, and the
invalid queue and validate find it later; only what an item cannot be (no goal, fewer than two solutions, a
gold solution that does not exist, more solutions than the dataset has columns for: ``stages.check_draft``)
keeps the dialog open. The checks sit below the fields, always in view: on a short terminal (80x24) the fields
scroll (to the one being typed, or a screen at a time with PgDn / PgUp) and the checks stay where they are.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from piqa_tui.core.dataset.checks import Problem
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.stages import Draft, StageError, draft
from piqa_tui.render.safe_text import shown_block
from piqa_tui.tui.dialogs.prompts import DIALOG_CSS
from piqa_tui.tui.keymap import DIALOG_ACTIONS, NEW_ITEM_ACTIONS, bindings
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

FIELDS = ("goal", "solution 1", "solution 2", "solution 3", "solution 4", "gold")
PLACEHOLDERS = {
    "goal": "what someone wants to do",
    "solution 1": "one way to do it",
    "solution 2": "another, minimally different",
    "solution 3": "optional",
    "solution 4": "optional",
    "gold": "the number of the right solution (empty: none yet)",
}


def typed_draft(values: dict[str, str]) -> Draft:
    """The draft the fields describe, or ``StageError`` saying what is missing."""
    if not values.get("goal", "").strip():
        raise StageError("write the goal first")
    solutions = [values.get(f"solution {n}", "") for n in range(1, 5)]
    if sum(bool(s.strip()) for s in solutions[:2]) < 2:
        raise StageError("write at least solutions 1 and 2")
    gold = values.get("gold", "").strip()
    if gold and not gold.isdecimal():
        raise StageError("the gold solution is a number: 1, 2, 3 or 4 (or empty)")
    return draft(values["goal"], solutions, int(gold) - 1 if gold else None)


class NewItemDialog(ModalScreen[Draft | None]):
    """The new-item form. ``check`` gives the problems of an item as typed (the main screen's live validation)."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="NewItemDialog")
        + """
    NewItemDialog > Vertical {
        height: 90%;
    }
    NewItemDialog #new-item-fields {
        height: 1fr;  /* a short terminal scrolls the fields to the one being typed; the checks stay in view */
        scrollbar-size-vertical: 1;
    }
    NewItemDialog FieldEditor {
        margin-bottom: 1;
    }
    NewItemDialog #new-item-checks {
        color: $warning;
        height: auto;
        max-height: 6;
        border-top: hkey $accent;
    }
    """
    )

    ACTIONS = NEW_ITEM_ACTIONS + DIALOG_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, check: Callable[[Item], list[Problem]], admit: Callable[[Draft], None], room: int = 4) -> None:
        super().__init__()
        self.check = check
        self.admit = admit  # core's refusal of an item the dataset cannot hold (StageError), as ``add_items`` asks
        # only the solutions the dataset has columns for (``capacity.room``): no field for a text it cannot hold
        self.fields = [f for f in FIELDS if not f.startswith("solution ") or int(f.split()[1]) <= max(2, room)]
        self.values = dict.fromkeys(self.fields, "")

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "New item (a draft)"
            yield Static(
                "tab / shift+tab: next / previous field · enter saves · esc cancels",
                classes="dialog-help",
                markup=False,
            )
            with VerticalScroll(id="new-item-fields"):
                for name in self.fields:
                    yield Static(name, classes="dialog-help", markup=False)
                    yield FieldEditor(field=name, placeholder=PLACEHOLDERS[name], id=f"new-{name.replace(' ', '-')}")
            yield Static("", id="new-item-checks", markup=False)

    def on_mount(self) -> None:
        self.query(FieldEditor).first().focus()
        self._show_checks()

    @property
    def editors(self) -> list[FieldEditor]:
        return list(self.query(FieldEditor))

    @on(FieldEditor.Changed)
    def _changed(self, event: FieldEditor.Changed) -> None:
        event.stop()
        self.values[event.editor.field] = event.value
        self._show_checks()

    def _show_checks(self) -> None:
        """The checks of the item as typed so far, or what it still lacks."""
        try:
            written = typed_draft(self.values)
            self.admit(written)
            found = self.check(written.item("new"))
        except StageError as exc:
            text = f"not an item yet: {exc}"
        else:
            text = "\n".join(f"{p.level}: {p.rule}: {p.detail}" for p in found) or "the checks find no problem"
        self.query_one("#new-item-checks", Static).update(shown_block((text, "")))  # details quote the typed text

    @on(FieldEditor.Done)
    def _done(self, event: FieldEditor.Done) -> None:
        event.stop()
        self.values[event.editor.field] = event.value
        if event.how == "cancel":
            self.dismiss(None)
        elif event.how == "commit":
            self.action_save()
        elif event.how in ("next", "prev"):
            editors = self.editors
            step = 1 if event.how == "next" else -1
            editors[(editors.index(event.editor) + step) % len(editors)].focus()

    def action_save(self) -> None:
        try:
            written = typed_draft(self.values)
            self.admit(written)
            self.dismiss(written)
        except StageError as exc:
            self.query_one("#new-item-checks", Static).update(shown_block((f"cannot save yet: {exc}", "")))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_page(self, step: int) -> None:
        """Scroll the fields one screen (PgDn / PgUp): every field is reachable on a short terminal."""
        fields = self.query_one("#new-item-fields", VerticalScroll)
        if step > 0:
            fields.scroll_page_down(animate=False)
        else:
            fields.scroll_page_up(animate=False)
