"""How far the round is (P): a bar per annotator and per group, from ``core.round.progress``.

The figures are ``piqa-tui progress``'s: per annotator assigned / done / remaining, decided, stuck (to
adjudicate, with why), items per hour, median seconds per item and the time to finish at that pace; per group
(the columns of the round's ``same`` rules) the validations done out of those the round asks for, decided and
stuck; the items whose panel size the lead set by hand, with their sizes; assigned items that left validation (sent back to review or draft) are counted apart as held back. A
reviewer (``--reviewer``) sees everyone, the groups and how many items still need validations; an annotator
sees their own line alone, as nothing else of other people's work is theirs to watch. Counted when the screen opens, again on ``r`` and when another
process records something (votes, a stage move), in a worker thread.

A reviewer also sees what people did with the model's words, when a model wrote any: per job and model the
suggestions made, reviewed, kept, changed, turned down and still open, and the kept rate (``core.authoring.kept``,
the figures of ``piqa-tui progress``).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from piqa_tui.core.authoring.kept import KeptRow, kept_rows
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.adjudication_queue import counts_line, to_adjudicate
from piqa_tui.core.round.progress import AnnotatorProgress, GroupProgress, Outcome, Progress, round_progress
from piqa_tui.core.round.recorded import assignment_in_force, round_in_force
from piqa_tui.core.text.terminal_safe import isolated
from piqa_tui.render.progress import duration, figure
from piqa_tui.render.safe_text import kept_apart, rich_text
from piqa_tui.tui.keymap import PROGRESS_ACTIONS, bindings
from piqa_tui.tui.messages import OthersChanged
from piqa_tui.tui.state.session import Session

BAR_WIDTH = 24
RETRIES = 3  # a refresh on the UI thread may add votes while the worker counts them


def bar(done: int, total: int) -> ProgressBar:
    """A bar of ``done`` out of ``total`` (an empty bar when there is nothing to do)."""
    return ProgressBar(total=max(total, 1), completed=min(done, total), width=BAR_WIDTH)


def measured(session: Session) -> tuple[str, Progress | None]:
    """The round's title line and its progress over the session's project (None and why when there is none)."""
    project = session.project
    try:
        declared = round_in_force(project.workspace)
    except PiqaError as exc:
        return f"The recorded round cannot be read: {exc}", None
    if declared is None:
        return "No round is declared for this dataset: piqa-tui round PATH import ROUND.toml, then assign", None
    by = [c for c in declared.routing.same if c in project.dataset.meta_columns]
    found = round_progress(project, declared, assignment_in_force(project.workspace), by, session.ballots.policy)
    k = found.validators_per_item
    name = isolated(declared.name) if declared.name else "(unnamed)"  # its own direction: "24 items" stays after it
    title = f"Round {name}: {found.items} items, {k} validation{'s' * (k != 1)} each"
    return title, found


def annotator_table(rows: tuple[AnnotatorProgress, ...]) -> Table:
    """One row per annotator; a ``held back`` column only when an assigned item left validation."""
    held = any(row.held for row in rows)
    table = Table(box=None, pad_edge=False, show_edge=False)
    headings = ("annotator", "", "done / assigned", *(["held back"] if held else []), "remaining")
    for name in (*headings, "decided", "stuck", "items/h", "median s/item", "to finish"):
        table.add_column(rich_text(name), justify="left" if name in ("annotator", "") else "right", no_wrap=True)
    for row in rows:
        table.add_row(
            rich_text(row.name + ("" if row.active else " (left)"), one_line=True),
            bar(row.done, row.assigned),
            f"{row.done:d} / {row.assigned:d}",
            *([f"{row.held:d}"] if held else []),
            f"{row.remaining:d}",
            f"{row.outcome.decided:d}",
            f"{row.outcome.to_adjudicate:d}",
            figure(row.pace.items_per_hour),
            figure(row.pace.median_seconds, 0),
            duration(row.pace.seconds_for(row.remaining)),
        )
    return table


def group_table(column: str, groups: tuple[GroupProgress, ...]) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, title_justify="left")
    table.add_column(rich_text(column, one_line=True), no_wrap=True)
    for name in ("", "validated / wanted", "coverage", "items", "decided", "stuck"):
        table.add_column(rich_text(name), justify="left" if not name else "right", no_wrap=True)
    for group in groups:
        share = "—" if group.coverage is None else f"{group.coverage:.0%}"
        table.add_row(
            rich_text(group.value or "(empty)", one_line=True),
            bar(group.validated, group.wanted),
            f"{group.validated:d} / {group.wanted:d}",
            share,
            f"{group.items:d}",
            f"{group.outcome.decided:d}",
            rich_text(_stuck(group.outcome), one_line=True),
        )
    return table


def _stuck(outcome: Outcome) -> str:
    """``3 (2 split, 1 under-staffed)``: how many items need the lead, and why."""
    return f"{outcome.to_adjudicate:d}" + (f" ({outcome.stuck_text()})" if outcome.to_adjudicate else "")


def kept_table(rows: list[KeptRow]) -> Table:
    """One row per job and model: the model's suggestions and what people did with them."""
    table = Table(box=None, pad_edge=False, show_edge=False)
    for name in ("job", "model", "made", "reviewed", "kept", "changed", "turned down", "open", "kept rate"):
        table.add_column(rich_text(name), justify="left" if name in ("job", "model") else "right", no_wrap=True)
    for row in rows:
        table.add_row(
            rich_text(row.job, one_line=True),
            rich_text(row.model, one_line=True),
            *(f"{n:d}" for n in (row.made, row.reviewed, row.kept, row.changed, row.turned_down, row.open)),
            row.rate_text(),
        )
    return table


def kept_view(rows: list[KeptRow]) -> list[RenderableType]:
    """The model's suggestions under a heading, with how the rate is counted (nothing when a model wrote none)."""
    if not rows:
        return []
    return [
        Text(""),
        Text("Model suggestions", style="bold"),
        kept_table(rows),
        Text("kept rate: kept as the model wrote it / reviewed; changed: partly taken or edited before keeping"),
    ]


def progress_view(session: Session, found: Progress, kept: list[KeptRow] | None = None) -> RenderableType:
    """Everyone's bars, the groups and the model's suggestions for a reviewer; the annotator's own bar otherwise."""
    if not session.reviewer:
        mine = tuple(row for row in found.annotators if row.name == session.project.annotator)
        if not mine:
            return rich_text(f"{session.project.annotator} has no items assigned in this round.")
        return Group(
            annotator_table(mine),
            *_own_held(mine[0]),
            *(
                [rich_text(f"Stuck, to adjudicate by the lead: {mine[0].outcome.stuck_text()}")]
                if mine[0].outcome.to_adjudicate
                else []
            ),
            Text(""),
            Text("Reviewers (--reviewer) see everyone's progress."),
        )
    needs = ", ".join(f"{n}: {count}" for n, count in found.need_counts().items())
    parts: list[RenderableType] = [Text("Annotators", style="bold"), annotator_table(found.annotators)]
    parts += [rich_text(line) for line in (found.held_line(kept_apart), found.stuck_line(kept_apart)) if line]
    parts += [Text(""), rich_text(f"Items by validations still needed — {needs}")]
    parts += [rich_text(line) for line in (found.held_items_line(), found.panels_line()) if line]
    if stuck := to_adjudicate(session.project, session.ballots.policy):  # core's answer, as A lists them
        parts += [rich_text(f"{counts_line(stuck)} by the lead: A lists them, with why")]
    for column, groups in found.groups.items():
        parts += [Text(""), Text.assemble(("By ", "bold"), rich_text(column, "bold")), group_table(column, groups)]
    return Group(*parts, *kept_view(kept or []))


def _own_held(row: AnnotatorProgress) -> list[RenderableType]:
    """Where the annotator's held-back items are, and that they come back (nothing when none is held)."""
    if not row.held:
        return []
    return [
        rich_text(
            f"Held back: {row.held_text()}; an item comes back to your assigned queue when it returns to validation."
        )
    ]


class ProgressScreen(Screen[None]):
    """Per annotator and per group: how much is done and how long the rest takes at the current pace; for a
    reviewer, how often people kept the model's suggestions."""

    DEFAULT_CSS = """
    ProgressScreen #progress-title {
        dock: top;
        height: 1;
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    ProgressScreen VerticalScroll {
        padding: 1 1 0 1;
    }
    """

    ACTIONS = PROGRESS_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.progress: Progress | None = None  # the figures shown
        self.counted = 0  # how many times they were counted

    def compose(self) -> ComposeResult:
        yield Static(id="progress-title")
        with VerticalScroll():
            yield Static(id="progress-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#progress-title", Static).update("counting…")
        self.count()

    @work(thread=True, exclusive=True, group="progress", description="count_progress")
    def count(self) -> None:
        """Count in a worker (a second or so on 100,000 items), then show the figures."""
        worker = get_current_worker()
        for attempt in range(RETRIES):
            try:
                title, found = measured(self.session)
                kept = kept_rows(self.session.project) if found is not None and self.session.reviewer else []
                break
            except RuntimeError:  # the votes changed size under us (another process's, applied meanwhile)
                if attempt == RETRIES - 1:
                    raise
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, title, found, kept)

    def _show(self, title: str, found: Progress | None, kept: list[KeptRow]) -> None:
        self.progress = found
        self.counted += 1
        self.query_one("#progress-title", Static).update(rich_text(title, one_line=True))
        body = progress_view(self.session, found, kept) if found is not None else Text("")
        self.query_one("#progress-body", Static).update(body)

    def on_others_changed(self, message: OthersChanged) -> None:
        """Votes arrived from another process: the bars follow."""
        message.stop()
        self.count()

    def action_recompute(self) -> None:
        self.count()

    def action_close(self) -> None:
        self.dismiss()
