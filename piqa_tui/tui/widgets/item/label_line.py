"""The gold label line of the current item, and its in-place chooser."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from piqa_tui.tui.keymap import LABEL_ACTIONS, bindings
from piqa_tui.tui.widgets.item.field_block import FieldClicked


class LabelLine(Static):
    """``gold  2 (sol2)``; ``-selected`` when the edit keys act on it."""

    DEFAULT_CSS = """
    LabelLine {
        height: 1;
        padding: 0 2;
        color: $text-muted;
    }
    LabelLine.-selected {
        color: $accent;
        text-style: bold;
    }
    """

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(FieldClicked("label", event.chain >= 2))

    def show_label(self, text: str, hidden: bool = False) -> None:
        shown = "hidden until you vote" if hidden else text
        self.update(Text.assemble(("gold  ", "bold"), shown), layout=False)


class LabelChooser(Widget, can_focus=True):
    """Pick the gold label: a digit chooses at once, ←/→ then enter, 0 or backspace for none.

    ``order`` (shuffled validation: shown place → file index) makes the digits name solutions as shown;
    ``Done`` always carries the file's index."""

    DEFAULT_CSS = """
    LabelChooser {
        height: 1;
        padding: 0 2;
        background: $boost;
    }
    """

    BINDINGS = bindings(LABEL_ACTIONS)

    choice: reactive[int | None] = reactive(None)

    class Done(Message):
        """``value`` is the 0-based label as text ('' for none); ``how`` is commit or cancel."""

        def __init__(self, chooser: LabelChooser, value: str, how: str) -> None:
            super().__init__()
            self.chooser = chooser
            self.value = value
            self.how = how

    def __init__(
        self, count: int, current: int | None, *, order: Sequence[int] | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.count = count
        self.order = list(order) if order is not None and len(order) == count else None
        if self.order is not None and current in self.order:
            current = self.order.index(current)
        self.set_reactive(LabelChooser.choice, current)

    def render(self) -> Text:
        text = Text("gold  ", style="bold")
        for i in range(self.count):
            style = "reverse bold" if self.choice == i else ""
            text.append(f" {i + 1} ", style)
            text.append(" ")
        text.append(" none ", "reverse" if self.choice is None else "dim")
        text.append("   digit = choose, enter = keep, esc = cancel", "dim")
        return text

    def on_key(self, event) -> None:  # noqa: ANN001 - textual.events.Key
        if event.character and event.character.isdecimal() and 1 <= int(event.character) <= self.count:
            event.stop()
            event.prevent_default()
            self.choice = int(event.character) - 1
            self.action_commit()

    def action_move(self, step: int) -> None:
        order: list[int | None] = [*range(self.count), None]
        self.choice = order[(order.index(self.choice) + step) % len(order)]

    def action_none(self) -> None:
        self.choice = None

    def action_commit(self) -> None:
        chosen = self.choice if self.order is None or self.choice is None else self.order[self.choice]
        self.post_message(self.Done(self, "" if chosen is None else str(chosen), "commit"))

    def action_cancel(self) -> None:
        self.post_message(self.Done(self, "", "cancel"))
