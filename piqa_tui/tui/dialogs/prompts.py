"""Small modal questions: a line of text (go to id, export path) and a choice between actions."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from piqa_tui.tui.keymap import DIALOG_ACTIONS, bindings
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

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


class TextPrompt(ModalScreen[str | None]):
    """Ask for one line of text; ``check`` returns an error to show instead of closing."""

    DEFAULT_CSS = DIALOG_CSS.format(name="TextPrompt")

    def __init__(
        self, title: str, help: str = "", value: str = "", check: Callable[[str], str | None] | None = None
    ) -> None:
        super().__init__()
        self.title_text = title
        self.help_text = help
        self.value = value
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            if self.help_text:
                yield Static(self.help_text, classes="dialog-help", markup=False)
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
    """Pick one of several actions (or a filter): ``choices`` are (key, label, help) rows."""

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

    def __init__(self, title: str, message: str, choices: list[tuple[str | None, str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            if self.message:
                yield Static(self.message, classes="dialog-help", markup=False)
            options: list[Option | None] = []
            for key, label, help in self.choices:
                if key is None:
                    options.append(Option(Text(label, style="bold underline"), disabled=True))
                    continue
                prompt = Text(label)
                if help:
                    prompt.append(f"  {help}", "dim")
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
