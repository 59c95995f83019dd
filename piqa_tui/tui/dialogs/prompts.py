"""Small modal questions: a line of text (go to id, export path) and a choice between actions.

A dialog's title and message are the app's words, shown literally (never parsed as markup) and laid out by the
bidi display (``render.safe_text.shown``: a name or a file name from the data in them reads right). Text from the
data they quote (a question from the round, the versions of a field in a conflict) is given as ``DataText``:
it is drawn by the bidi display adapter in the app's bidi mode and the field's direction, as the item blocks
draw it, so Arabic reads right to left, shaped, and a control character in it is shown, never obeyed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from piqa_tui.core.text.bidi import BidiText, layout
from piqa_tui.core.text.direction import Direction
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.safe_text import shown, shown_block
from piqa_tui.tui.keymap import DIALOG_ACTIONS, bindings
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

TITLE_CELLS = 64  # a title drawn from data is cut to this: the dialog is 70 cells wide, with its border


@dataclass(frozen=True)
class DataText:
    """Text from the data inside a dialog; ``field`` (prompt, solution2, note) gives its direction, else detected."""

    text: str
    field: str | None = None


# The app's words, or blocks in reading order, each starting a line: the app's words and the data's.
Message = str | Sequence[str | DataText]


def message_text(message: Message) -> str:
    """A message as text, its blocks one per line and the data's terminal-safe (what tests read)."""
    if isinstance(message, str):
        return message
    return "\n".join(part if isinstance(part, str) else terminal_safe(part.text) for part in message)


def _direction(widget: Widget, part: DataText) -> Direction:
    return field_direction(widget, part.field) if part.field else Direction.AUTO


def drawn_message(widget: Widget, message: Message) -> RenderableType:
    """What a dialog's message draws: the app's words literally, the data's through the bidi adapter."""
    if isinstance(message, str):
        return shown_block((message, ""))
    mode = app_bidi_mode(widget)
    return Group(
        *(
            shown_block((part, ""))  # the app's words, naming data (who changed a field, a file's name) laid out
            if isinstance(part, str)
            else BidiText(terminal_safe(part.text), mode, direction=_direction(widget, part))
            for part in message
        )
    )


def drawn_title(widget: Widget, title: str | DataText) -> Text:
    """A dialog's title as one line: the app's words literally (never markup), data laid out by the adapter."""
    if isinstance(title, str):
        return Text(shown(title, one_line=True))
    line = layout(
        terminal_safe(title.text, one_line=True),
        TITLE_CELLS,
        app_bidi_mode(widget),
        max_lines=1,
        direction=_direction(widget, title),
    )
    return Text(line[0].text if line else "")


DIALOG_CSS = """
{name} {{
    align: center middle;
    background: $background 60%;
}}
{name} > Vertical {{
    width: 70;
    max-width: 95%;
    height: auto;
    max-height: 90%;
    border: round $accent;
    background: $surface;
    padding: 0 1;
}}
{name} .dialog-help {{
    color: $text-muted;
    height: auto;
}}
{name} .dialog-error {{
    color: $error;
    height: auto;
}}
"""

# A list of choices in a dialog (``DIALOG_LIST_CSS.format(name=..., list=...)``): as tall as its entries, up to
# 12 rows, drawn on the dialog's own surface without a box of its own.
DIALOG_LIST_CSS = """
{name} {list} {{
    height: auto;
    max-height: 12;
    border: none;
    padding: 0;
    background: $surface;
}}
"""


class TextPrompt(ModalScreen[str | None]):
    """Ask for one line of text; ``check`` returns an error to show instead of closing."""

    DEFAULT_CSS = DIALOG_CSS.format(name="TextPrompt")

    def __init__(
        self,
        title: str | DataText,
        help: Message = "",
        value: str = "",
        check: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.help_text = help
        self.value = value
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = drawn_title(self, self.title_text)
            if self.help_text:
                yield Static(drawn_message(self, self.help_text), classes="dialog-help", markup=False)
            yield FieldEditor(self.value, placeholder="type, then enter (esc cancels)")
            yield Static("", classes="dialog-error", markup=False)

    def on_mount(self) -> None:
        self.query_one(FieldEditor).focus()

    @on(FieldEditor.Done)
    def _done(self, event: FieldEditor.Done) -> None:
        event.stop()
        if event.how == "cancel":
            self.dismiss(None)
            return
        if event.how != "commit":
            return
        value = event.value.strip()
        problem = self.check(value) if self.check else None
        if problem:
            self.query_one(".dialog-error", Static).update(problem)
            return
        self.dismiss(value)


class ChoiceDialog(ModalScreen[str | None]):
    """Pick one of several actions (or a filter): ``choices`` are (key, label, help) rows. Typing a label's start
    moves to it (type-ahead: the letters typed so far, or the last one alone when they match no label)."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="ChoiceDialog")
        + """
    ChoiceDialog OptionList {
        height: auto;
        max-height: 20;
        border: none;
        padding: 0;
        background: $surface;
    }
    """
    )

    BINDINGS = bindings(DIALOG_ACTIONS)

    def __init__(self, title: str | DataText, message: Message, choices: list[tuple[str | None, str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.parts = message
        self.message = message_text(message)  # the whole message as text
        self.choices = choices
        self.typed = ""  # the type-ahead so far

    def on_key(self, event: events.Key) -> None:
        """Type-ahead: a printable key moves to the first choice whose label starts with what was typed."""
        char = event.character
        if not event.is_printable or not char or char.isspace():
            return
        typed = self.typed + char.casefold()
        found = self._starting(typed)
        if found is None:
            typed, found = char.casefold(), self._starting(char.casefold())
        self.typed = typed if found is not None else ""
        if found is not None:
            event.stop()
            self.query_one(OptionList).highlighted = found

    def _starting(self, typed: str) -> int | None:
        """The index of the first choice (not a heading) whose label starts with ``typed``."""
        return next(
            (
                n
                for n, (key, label, _) in enumerate(self.choices)
                if key is not None and label.casefold().startswith(typed)
            ),
            None,
        )

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = drawn_title(self, self.title_text)
            if self.message:
                yield Static(drawn_message(self, self.parts), classes="dialog-help", markup=False)
            options: list[Option | None] = []
            for key, label, help in self.choices:
                if key is None:
                    options.append(Option(shown_block((label, ""), style="bold underline"), disabled=True))
                    continue
                # A choice may name data (a column's value, a question): laid out at the cell's width.
                prompt = shown_block((label, ""), (f"  {help}", "dim")) if help else shown_block((label, ""))
                options.append(Option(prompt, id=key))
            yield OptionList(*options)

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        option_list.focus()
        for index, (key, _, _) in enumerate(self.choices):
            if key is not None:
                option_list.highlighted = index
                break

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
