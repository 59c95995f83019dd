"""The suggestion dialog: the model's tokens as they come, then its suggestion as changes taken one by one.

While the model writes, its raw answer grows in the dialog (drawn through the bidi adapter: an Arabic answer
reads right to left) and escape stops it. Then each word-level change is taken (a, y) or left (r, n); enter
closes with the changes taken, escape with nothing. A suggestion recorded earlier (``stored``) opens with its
changes at once, no model writing. The dialog writes nothing: the controller that opened it
records the decision (``tui/controllers/suggesting.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from piqa_tui.core.authoring.suggesting import Proposal
from piqa_tui.core.text.bidi import BidiText
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.safe_text import shown
from piqa_tui.tui.dialogs.prompts import DIALOG_CSS
from piqa_tui.tui.keymap import SUGGESTION_ACTIONS, bindings
from piqa_tui.tui.widgets.drawing import app_bidi_mode
from piqa_tui.tui.widgets.item.change_list import ChangeList

Taken = list[set[int]]  # per proposal, the changes taken


class SuggestionDialog(ModalScreen[Taken | None]):
    """Shows a suggestion being written, then asks which of its changes to take."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="SuggestionDialog")
        + """
    SuggestionDialog > Vertical { width: 100; height: 90%; }
    SuggestionDialog VerticalScroll { height: 1fr; }
    SuggestionDialog #stream { color: $text-muted; height: auto; }
    """
    )
    BINDINGS = bindings(SUGGESTION_ACTIONS)

    def __init__(
        self, title: str, cancel: Callable[[], None], stored: tuple[Sequence[Proposal], str] | None = None
    ) -> None:
        """``stored``: the proposals of suggestions recorded earlier and a note for the status line, shown at
        once (no model writes)."""
        super().__init__()
        self.title_text = title
        self.stop_model = cancel
        self.text = ""  # the model's answer so far
        self.changes: ChangeList | None = None
        self.writing = stored is None
        self.stored = stored

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = shown(self.title_text, one_line=True)
            yield Static("the model is writing… (esc stops it)", id="status", markup=False)
            with VerticalScroll():
                yield Static("", id="stream", markup=False)
            yield Footer()

    def on_mount(self) -> None:
        if self.stored is not None:
            self.show_proposals(*self.stored)

    def add_tokens(self, piece: str) -> None:
        """More of the model's answer, shown as it comes (none once the dialog is closed: pieces posted from the
        model's thread before an escape arrive after it)."""
        if not self.is_attached:
            return
        self.text += piece
        self.query_one("#stream", Static).update(BidiText(terminal_safe(self.text), app_bidi_mode(self)))

    def show_proposals(self, proposals: Sequence[Proposal], note: str = "") -> None:
        """The answer as changes to decide; none: say so (esc closes; a stored suggestion's enter keeps it).
        ``note``: a line more for the status (a stored suggestion's field changed since, older ones left)."""
        self.writing = False
        status = self.query_one("#status", Static)
        said = f" — {terminal_safe(note, one_line=True)}" if note else ""
        if not proposals:
            ends = "enter records that, esc leaves it pending" if self.stored is not None else "esc closes"
            status.update(f"the model suggests no change ({ends}){said}")
            return
        count = sum(len(p.changes) for p in proposals)
        status.update(
            f"{count} change{'s' * (count != 1)}: a takes, r leaves, enter writes those taken, esc none{said}"
        )
        self.changes = ChangeList(proposals, id="changes")
        scroll = self.query_one(VerticalScroll)
        scroll.remove_children()
        scroll.mount(self.changes)

    def show_error(self, line: str) -> None:
        """The model's answer could not be used: one line, nothing to decide."""
        if not self.is_attached:
            return
        self.writing = False
        self.query_one("#status", Static).update(
            f"{terminal_safe(line, one_line=True)} — nothing recorded (esc closes)"
        )

    def action_accept_change(self) -> None:
        if self.changes is not None:
            self.changes.mark(True)

    def action_reject_change(self) -> None:
        if self.changes is not None:
            self.changes.mark(False)

    def action_accept_all(self) -> None:
        if self.changes is not None:
            self.changes.mark_all(True)

    def action_move_change(self, step: int) -> None:
        if self.changes is not None:
            self.changes.move(step)

    def action_apply(self) -> None:
        if self.changes is not None:
            self.dismiss(self.changes.taken())
        elif self.stored is not None:  # stored suggestions the fields already hold: kept, nothing changes
            self.dismiss([])

    def action_cancel(self) -> None:
        if self.writing:
            self.stop_model()
        self.dismiss(None)
