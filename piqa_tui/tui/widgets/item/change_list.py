"""A model's suggestion as word-level changes, each marked taken, left or undecided, the selected one lit.

For every field the suggestion changes: the field's text now, its changed words highlighted (the selected
change reversed), one row per change (old words → new words, with its mark), and the text as it would be with
the changes taken so far. Every data string goes through the bidi display adapter (``BidiText``) in the app's
bidi mode and the field's direction, so an Arabic correction reads right to left, shaped, in ``--bidi app``;
the highlights are logical spans, so they land on the right words after reordering.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from piqa_tui.core.authoring.suggesting import Proposal
from piqa_tui.core.text.bidi import BidiText
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction

TAKEN, LEFT, OPEN = "✓", "✗", "·"
CHANGED_STYLE = "underline"
SELECTED_STYLE = "reverse"


class ChangeList(Static):
    """The proposals and the person's marks; ``marks[p][c]`` is True (taken), False (left) or None (undecided)."""

    def __init__(self, proposals: Sequence[Proposal], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.proposals = list(proposals)
        self.marks: list[list[bool | None]] = [[None] * len(p.changes) for p in self.proposals]
        self.order = [(p, c) for p, proposal in enumerate(self.proposals) for c in range(len(proposal.changes))]
        self.selected = 0

    def taken(self) -> list[set[int]]:
        """Per proposal, the changes taken."""
        return [{c for c, mark in enumerate(marks) if mark} for marks in self.marks]

    def mark(self, value: bool) -> None:
        """Mark the selected change, and select the next undecided one."""
        if not self.order:
            return
        p, c = self.order[self.selected]
        self.marks[p][c] = value
        self.move(1)

    def mark_all(self, value: bool) -> None:
        self.marks = [[value] * len(marks) for marks in self.marks]
        self.refresh()

    def move(self, step: int) -> None:
        if self.order:
            self.selected = (self.selected + step) % len(self.order)
        self.refresh()

    def render(self) -> RenderableType:
        return Group(*(part for p in range(len(self.proposals)) for part in self._proposal(p)))

    def _proposal(self, p: int) -> list[RenderableType]:
        proposal = self.proposals[p]
        mode, direction = app_bidi_mode(self), field_direction(self, proposal.field.removeprefix("meta:"))
        current = self.order[self.selected] if self.order else (-1, -1)
        spans = [
            (change.start, change.end, SELECTED_STYLE if (p, c) == current else CHANGED_STYLE)
            for c, change in enumerate(proposal.changes)
        ]
        rows = Table.grid(padding=(0, 1))
        rows.add_column(width=1)
        rows.add_column(ratio=1)
        rows.add_column(width=1)
        rows.add_column(ratio=1)
        for c, change in enumerate(proposal.changes):
            mark = {True: TAKEN, False: LEFT, None: OPEN}[self.marks[p][c]]
            style = SELECTED_STYLE if (p, c) == current else ""
            rows.add_row(
                Text(mark, style=style),
                BidiText(terminal_safe(change.old) or "(nothing)", mode, direction=direction),
                Text("→"),
                BidiText(terminal_safe(change.new) or "(nothing)", mode, direction=direction),
            )
        after = proposal.result(self.taken()[p])
        shown = terminal_safe(proposal.old)
        spans = spans if shown == proposal.old else []  # a control shown as a picture moves the offsets
        return [  # a metadata column's name is data
            Text(terminal_safe(proposal.field, one_line=True) + " now:", style="bold"),
            BidiText(shown or "(empty)", mode, highlights=spans, direction=direction),
            rows,
            Text(terminal_safe(proposal.field, one_line=True) + " with the changes taken:", style="bold"),
            BidiText(terminal_safe(after) or "(empty)", mode, direction=direction),
            Text(""),
        ]
