"""The top line: dataset, annotator, where you are, progress, and warnings that must not be missed."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from piqa_tui.core.text.bidi import layout
from piqa_tui.render.safe_text import shown


@dataclass
class HeaderInfo:
    dataset: str
    annotator: str
    index: int = 0  # 1-based row in the shown list (0 when empty)
    shown: int = 0
    total: int = 0
    edited: int = 0
    voted: int = 0
    flagged: int = 0
    filters: str = ""
    bidi: str = ""
    reviewer: bool = False
    warning: str = ""
    busy: str = ""
    unsaved: bool = False
    synced: str = ""  # the last sync with the team: when, and what waits to be pushed (empty: never synced)
    loading: str = ""  # a preview of the first rows: what is still being read (the total is not known yet)
    assigned: int = 0  # the items the round assigns the annotator (0: none); ✓ then counts those voted of them
    assigned_voted: int = 0


class StatusHeader(Static):
    """One line, cut from the right when the terminal is narrow; warnings win the space."""

    DEFAULT_CSS = """
    StatusHeader {
        dock: top;
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    StatusHeader.-warning {
        background: $error 60%;
    }
    """

    def show_info(self, info: HeaderInfo) -> None:
        self.set_class(bool(info.warning), "-warning")
        text = Text(no_wrap=True, overflow="ellipsis")
        if info.warning:
            text.append("⚠ " + shown(info.warning, one_line=True) + "  ", "bold")
        # The file name and the annotator (from the config or --annotator) are data: escaped, and laid out by the
        # bidi display (``shown``) like every line that holds data.
        text.append(shown(info.dataset, one_line=True) + ("*" if info.unsaved else ""), "bold")
        text.append("  ")
        text.append(("reviewer " if info.reviewer else "") + shown(info.annotator, one_line=True), "italic")
        text.append("  ")
        if info.loading:
            text.append(f"{info.index}/…", "bold")
            text.append(f"  {shown(info.loading, one_line=True)}…", "italic")
        else:
            position = (
                f"{info.index}/{info.shown}"
                if info.shown == info.total
                else f"{info.index}/{info.shown} of {info.total}"
            )
            text.append(position, "bold")
            if info.assigned and not info.reviewer:  # a validator's progress is over her assignment
                done = info.assigned_voted / info.assigned
                text.append(f"  ✓{info.assigned_voted}/{info.assigned} assigned ({done:.0%})")
            else:
                done = info.voted / info.total if info.total else 0
                text.append(f"  ✓{info.voted} ({done:.0%})")
            text.append(f"  ✎{info.edited}  ⚑{info.flagged}")
        if info.filters:
            # A search may be Arabic: drawn through the bidi adapter like every other text.
            search = layout(info.filters, 200, info.bidi or "app", max_lines=1)[0].text
            text.append(f"  [{search}]", "bold")
        if info.busy:
            text.append(f"  {info.busy}…", "italic")
        if info.synced:
            text.append(f"  {info.synced}", "dim")
        if info.bidi:
            text.append(f"  bidi:{info.bidi}", "dim")
        self.update(text, layout=False)
