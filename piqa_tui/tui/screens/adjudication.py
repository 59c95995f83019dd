"""Adjudication: the reviewer settles each item that needs her with a final label and a reason.

The table lists the items core says need the lead (``core/round/adjudication_queue.py``: disagreements, votes
against gold, and items the votes left can never decide — a split with nobody left to vote, too few
validators, unsure votes, a decision set aside — each with why) with every vote, the flags and the note
side by side (one column per solution, naming who chose it); below it, the
highlighted item as the main screen shows it, gold label included. A digit
sets the final label, after asking why: the adjudication controller
(``tui/controllers/adjudication.py``) submits it, ``Project.adjudicate`` logs it
with the reviewer's name (a busy workspace is retried, and the label shows once
committed), and the item leaves the queue.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from piqa_tui.core.dataset.capacity import shown_solutions
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.adjudication_queue import Stuck, reason_counts, to_adjudicate
from piqa_tui.core.round.order import orders_in_force
from piqa_tui.core.text.bidi import layout
from piqa_tui.core.text.terminal_safe import show_invisible
from piqa_tui.core.votes.blind import cast_votes
from piqa_tui.core.votes.policy import SKIP, Status
from piqa_tui.render.safe_text import rich_text
from piqa_tui.tui.controllers.adjudication import AdjudicationController
from piqa_tui.tui.keymap import ADJUDICATION_ACTIONS, bindings
from piqa_tui.tui.messages import ItemsChanged, OthersChanged
from piqa_tui.tui.screens.help import HelpScreen
from piqa_tui.tui.screens.host import ScreenHost
from piqa_tui.tui.state.ballots import choice_text
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.drawing import app_bidi_mode
from piqa_tui.tui.widgets.item.item_view import ItemView
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from piqa_tui.tui.widgets.plain_table import PlainDataTable

NOTE_CELLS = 28


class AdjudicationHost(ScreenHost["AdjudicationScreen"]):
    """What the adjudication controller asks of the screen."""

    def adjudicated(self, item_id: str) -> None:
        self.post_to_app(ItemsChanged([item_id]))  # the main screen's list and item follow
        self.screen.decided(item_id)


class AdjudicationScreen(Screen[None]):
    """Disagreements (and, on request, the items already adjudicated) with their votes and the item itself."""

    DEFAULT_CSS = """
    AdjudicationScreen #adjudication-title {
        dock: top;
        height: auto;
        max-height: 3;  /* the counts, the policy and who decides wrap on a narrow screen, never cut */
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    AdjudicationScreen DataTable {
        height: 40%;
        min-height: 5;
        border-bottom: hkey $panel-lighten-2;
    }
    AdjudicationScreen #adjudication-empty {
        display: none;
        height: auto;
        padding: 1 2;
        color: $text-muted;
    }
    AdjudicationScreen.-empty #adjudication-empty {
        display: block;
    }
    AdjudicationScreen.-empty ItemView {
        display: none;
    }
    """

    ACTIONS = ADJUDICATION_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.project = session.project
        self.ballots = session.ballots
        self.show_done = False
        self.ids: list[str] = []
        self.stuck: dict[str, Stuck] = {}  # the items core says need the lead, with why
        self.adjudication = AdjudicationController(session, AdjudicationHost(self, session))

    def compose(self) -> ComposeResult:
        yield Static(id="adjudication-title", markup=False)
        yield PlainDataTable(cursor_type="row", zebra_stripes=True, id="adjudication-table")
        yield Static("", id="adjudication-empty", markup=False)
        yield ItemView(self.project.dataset, id="adjudication-item")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.fill()
        self.query_one(DataTable).focus()

    # ---------------------------------------------------------------- table

    @property
    def width(self) -> int:
        """Solutions per item, at most (one vote column each)."""
        return max((len(item.solutions) for item in self.project.items), default=2)

    def fill(self, keep: str | None = None) -> None:
        """Rebuild the table from the project (after a decision, or votes from elsewhere)."""
        self.stuck = to_adjudicate(self.project, self.ballots.policy)  # core's one answer, with why
        done = (Status.ADJUDICATED,) if self.show_done else ()
        self.ids = [i.id for i in self.project.items if i.id in self.stuck or self.ballots.status(i.id) in done]
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_column("id", key="id")
        table.add_column("gold", key="gold")
        for n in range(self.width):
            table.add_column(f"voted {n + 1:d}", key=f"choice{n}")
        table.add_column("unsure", key="unsure")
        table.add_column("why", key="why")
        if self.show_done:
            table.add_column("final", key="final")
            table.add_column("reason", key="reason")
        table.add_column("flags", key="flags")
        table.add_column("note", key="note")
        for item_id in self.ids:
            table.add_row(*self._cells(self.project.item(item_id)), key=item_id)
        open_count = sum(1 for i in self.ids if self.ballots.status(i) is Status.DISAGREEMENT)
        against = sum(1 for i in self.ids if self.ballots.status(i) is Status.AGAINST_GOLD)
        undecided = {i: s for i, s in self.stuck.items() if self.ballots.status(i) is Status.NEEDS_VOTES}
        reasons = ", ".join(f"{why} {n}" for why, n in reason_counts(undecided).items())
        stuck = f", {len(undecided)} the votes left cannot decide ({reasons})" if undecided else ""
        self.query_one("#adjudication-title", Static).update(
            rich_text(
                f"Adjudication — {open_count} disagreement{'s' if open_count != 1 else ''}, {against} votes against gold"
                + stuck
                + f" · policy {self.ballots.policy_text} · you decide as {show_invisible(self.project.annotator)}"
                + self._order_note()
            )
        )
        self.set_class(not self.ids, "-empty")
        self.query_one("#adjudication-empty", Static).update(
            "No disagreements to adjudicate. "
            + ("" if self.show_done else "d shows the items already adjudicated. ")
            + "esc goes back."
        )
        if self.ids:
            row = self.ids.index(keep) if keep in self.ids else 0
            table.move_cursor(row=min(row, len(self.ids) - 1))
            self.show_item(self.ids[table.cursor_row])

    def _cells(self, item: Item) -> list[Text | str]:
        by_choice: dict[str, list[str]] = {}
        for annotator, choice in cast_votes(self.project, item.id).items():
            by_choice.setdefault(choice, []).append(annotator)
        cells: list[Text | str] = [item.id, "—" if item.label is None else str(item.label + 1)]
        for n in range(self.width):
            names = by_choice.get(str(n), [])
            cells.append(
                rich_text(", ".join(map(show_invisible, names)), "bold")
                if names
                else ("" if n < len(item.solutions) else "·")
            )
        cells.append(", ".join(map(show_invisible, by_choice.get(SKIP, []))))
        why = self.stuck.get(item.id)
        cells.append(why.why.value if why is not None else "")  # the item's status line below says the rest
        if self.show_done:
            adjudicated = self.project.state.adjudications.get(item.id)
            cells.append(f"{choice_text(adjudicated[0])} by {show_invisible(adjudicated[2])}" if adjudicated else "")
            reason = adjudicated[1] if adjudicated else ""
            cells.append(layout(reason, NOTE_CELLS, app_bidi_mode(self), max_lines=1)[0].text if reason else "")
        cells.append(", ".join(sorted(self.project.state.flags.get(item.id, {}))))
        note = self.project.state.notes.get(item.id, "")
        cells.append(layout(note, NOTE_CELLS, app_bidi_mode(self), max_lines=1)[0].text if note else "")
        return [
            c if isinstance(c, Text) else rich_text(c, one_line=True) for c in cells
        ]  # DataTable parses str as markup

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.show_item(event.row_key.value)

    def _order_note(self) -> str:
        """Validators of a shuffling round voted in orders of their own; the reviewer sees the file's."""
        declared = orders_in_force(self.project).declared
        return " · solutions shown in file order" if declared is not None and declared.shuffle else ""

    def show_item(self, item_id: str) -> None:
        item = self.project.item(item_id)
        position = self.project.index[item_id]
        view = self.query_one(ItemView)
        view.show_item(
            item,
            self.session.validation.problems(position, item),
            note=self.project.state.notes.get(item_id, ""),
            status=self._flag_text(item_id),
            gold_hidden=False,
        )
        view.query_one(VotePanel).show_summary(self.ballots.summary(item))

    def _flag_text(self, item_id: str) -> str:
        flags = self.project.state.flags.get(item_id, {})
        return "  ".join(f"⚑ {reason}" + (f" ({note})" if note else "") for reason, note in sorted(flags.items()))

    @property
    def current_id(self) -> str | None:
        table = self.query_one(DataTable)
        return self.ids[table.cursor_row] if self.ids and 0 <= table.cursor_row < len(self.ids) else None

    # -------------------------------------------------------------- actions

    def action_move(self, step: int) -> None:
        table = self.query_one(DataTable)
        if self.ids:
            table.move_cursor(row=max(0, min(table.cursor_row + step, len(self.ids) - 1)))

    def action_edge(self, end: int) -> None:
        """The first (``end`` 0) or the last (``end`` -1) item of the table."""
        if self.ids:
            self.query_one(DataTable).move_cursor(row=0 if end == 0 else len(self.ids) - 1)

    def action_screen_help(self) -> None:
        self.app.push_screen(HelpScreen("Adjudication keys", [("Adjudication screen (A)", ADJUDICATION_ACTIONS)]))

    def action_toggle_done(self) -> None:
        self.show_done = not self.show_done
        self.fill(keep=self.current_id)

    def action_decide(self, choice: int) -> None:
        item_id = self.current_id
        if item_id is None:
            return
        shown = shown_solutions(self.project.dataset.layout, self.project.item(item_id))  # the solutions on screen
        if choice >= shown:
            self.notify(f"{item_id} has {shown} solutions", severity="warning", timeout=3)
            return
        self.adjudication.decide(item_id, choice)

    def decided(self, item_id: str) -> None:
        """``item_id``'s final label is committed: the table moves on to the item after it."""
        if self.is_attached:  # the reviewer may have left while a busy workspace kept the label waiting
            self.fill(keep=item_id if self.show_done else self._following(item_id))

    def _following(self, item_id: str) -> str | None:
        """The item listed after ``item_id`` (None: it was the last, or is not listed)."""
        if item_id not in self.ids:
            return None
        following = self.ids[self.ids.index(item_id) + 1 :]
        return following[0] if following else None

    def on_others_changed(self, message: OthersChanged) -> None:
        """Votes or decisions arrived from another process: the queue follows."""
        message.stop()
        self.fill(keep=self.current_id)

    def action_close(self) -> None:
        self.dismiss()
