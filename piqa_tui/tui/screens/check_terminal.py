"""The calibration screen: does this terminal draw Indic and Arabic text at the widths we compute?

Shows the reference strings of ``core.reference_strings`` for one width mode
at a time, each padded to one column with a bar after it. The user flips
through the modes (1-4 or ←/→) until the bars stand in a straight line,
applies that mode (enter) and may keep it in the config file (w).
"""

from __future__ import annotations

import re
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from piqa_tui.core.text.graphemes import WIDTH_MODES, WidthPolicy, get_width_policy
from piqa_tui.core.text.reference_strings import calibration_lines
from piqa_tui.render.safe_text import rich_text
from piqa_tui.settings.locations import config_path
from piqa_tui.tui.keymap import CHECK_TERMINAL_ACTIONS, bindings
from piqa_tui.tui.terminal import cell_widths
from piqa_tui.tui.widgets.drawing import app_bidi_mode

_SETTING = re.compile(r"^\s*width_policy\s*=.*$", re.MULTILINE)


def write_width_policy(mode: str, path: Path | None = None) -> Path:
    """Set ``width_policy`` in the user's config file, keeping everything else in it."""
    path = path or config_path()
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    line = f'width_policy = "{mode}"'
    if _SETTING.search(text):
        text = _SETTING.sub(line, text, count=1)
    else:
        first_table = re.search(r"^\s*\[", text, re.MULTILINE)
        cut = first_table.start() if first_table else len(text)
        head = text[:cut]
        if head and not head.endswith("\n"):
            head += "\n"
        text = head + line + "\n" + text[cut:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class CheckTerminalScreen(Screen[None]):
    DEFAULT_CSS = """
    CheckTerminalScreen {
        padding: 0 1;
    }
    CheckTerminalScreen #ct-intro {
        height: auto;
        color: $text-muted;
    }
    CheckTerminalScreen #ct-block {
        height: auto;
        margin-top: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    CheckTerminalScreen #ct-status {
        height: auto;
        margin-top: 1;
        color: $accent;
    }
    """
    ACTIONS = CHECK_TERMINAL_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, standalone: bool = False) -> None:
        super().__init__()
        self.standalone = standalone
        self.index = WIDTH_MODES.index(get_width_policy().mode)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(
                "Each sample below is padded to one column using the widths piqa-tui computes, then a '|'.\n"
                "Flip through the width modes (1-4, ←/→) until the bars form one straight column, then press enter.",
                id="ct-intro",
                markup=False,
            )
            yield Static(id="ct-block", markup=False)
            yield Static(id="ct-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        mode = WIDTH_MODES[self.index]
        lines = calibration_lines(WidthPolicy(mode), app_bidi_mode(self))
        active = get_width_policy().mode
        title = f"mode {self.index + 1}/{len(WIDTH_MODES)}: {mode}" + ("   (in use)" if mode == active else "")
        self.query_one("#ct-block", Static).update(Text("\n".join([title, *lines[1:]]), no_wrap=True, overflow="crop"))

    def action_show(self, index: int) -> None:
        self.index = index
        self._draw()

    def action_step(self, step: int) -> None:
        self.index = (self.index + step) % len(WIDTH_MODES)
        self._draw()

    def action_apply(self) -> None:
        mode = WIDTH_MODES[self.index]
        cell_widths.set_policy(WidthPolicy(mode))
        self.app.refresh(layout=True)
        for screen in self.app.screen_stack:
            screen.refresh(layout=True)
        self.query_one("#ct-status", Static).update(
            rich_text(f"Using width mode {mode!r} for this session; press w to keep it.")
        )
        self._draw()

    def action_write(self) -> None:
        mode = WIDTH_MODES[self.index]
        try:
            path = write_width_policy(mode)
        except OSError as exc:
            self.query_one("#ct-status", Static).update(rich_text(f"Could not write the config file: {exc}"))
            return
        self.action_apply()
        self.query_one("#ct-status", Static).update(rich_text(f'Saved width_policy = "{mode}" in {path}.'))

    def action_close(self) -> None:
        if self.standalone:
            self.app.exit(0)
        else:
            self.dismiss(None)
