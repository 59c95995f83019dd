"""Every key, what it does and its action id (the name to remap it by in the config file)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from piqa_tui.render.safe_text import rich_text
from piqa_tui.settings.locations import config_path
from piqa_tui.tui.keymap import HELP_ACTIONS, SECTIONS, Action, bindings
from piqa_tui.tui.state.listing import MARK_LEGEND


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 70%;
    }
    HelpScreen > VerticalScroll {
        width: 96;
        max-width: 100%;
        height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS = bindings(HELP_ACTIONS)

    def __init__(
        self, title: str = "piqa-tui keys", sections: list[tuple[str, tuple[Action, ...]]] | None = None
    ) -> None:
        """Every key of the program, or only ``sections`` (a screen's own keys) when given."""
        super().__init__()
        self.title_text = title
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = self.title_text
            yield Static(self._table(), markup=False)
        yield Footer()

    def _table(self) -> Table:
        keys_for = getattr(self.app, "keys_for", lambda action: action.keys)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        table.add_column(style="dim", no_wrap=True)

        for title, actions in self.sections if self.sections is not None else SECTIONS:
            table.add_row(Text(title, style="bold underline"), "", "")
            for action in actions:
                keys = keys_for(action)
                shown = "  ".join(format_key(k.strip()) for k in keys.split(",")) if keys else "(palette)"
                table.add_row(shown, action.help, action.id)
            table.add_row("", "", "")
        if self.sections is not None:  # one screen's keys only
            return table
        table.add_row(Text("Marks in the list", style="bold underline"), "", "")
        for mark, name, meaning in MARK_LEGEND:
            table.add_row(mark, meaning, name)
        table.add_row("", "", "")
        table.add_row(
            "",
            rich_text(f'Remap keys by action id in {config_path()}, e.g.\n[keys]\nnext_item = "j,down,ctrl+n"'),
            "",
        )
        return table

    def action_close(self) -> None:
        self.dismiss(None)
