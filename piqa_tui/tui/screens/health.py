"""Dataset health: the reports a lead reads before release, one after the other, as plain lines.

Each report is an object with ``lines()`` (``core.quality``); ``REPORTS``
names them in the order the screen shows them, so another report joins with
one entry. They are measured in a worker thread when the screen opens (a
second or two on 100,000 items), with a line saying so meanwhile, and again
on ``r`` or when votes arrive from another process. In blind mode they are
measured over the items this annotator voted on, as every total that judges
against gold is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rich.console import Group, RenderableType
from rich.padding import Padding
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from piqa_tui.core.errors import PiqaError
from piqa_tui.render.safe_text import rich_text, shown
from piqa_tui.tui.keymap import HEALTH_ACTIONS, bindings
from piqa_tui.tui.messages import OthersChanged
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.terminal.clipboard import copy_text

RETRIES = 3  # a refresh on the UI thread may add votes while the worker reads them


class Report(Protocol):
    """What the screen shows of a report: its lines of plain text."""

    def lines(self) -> list[str]: ...


@dataclass(frozen=True)
class HealthReport:
    """One report of the screen: its title and how it is measured for a session."""

    title: str
    measure: Callable[[Session], Report]


def annotation_artifacts(session: Session) -> Report:
    """The annotation artifacts (``core.quality.artifacts``), shared with the list's queue "shortcut"."""
    return session.marks.artifacts.report(session)


class _Lines:
    """Lines already made: what a report that is more than one section shows."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines

    def lines(self) -> list[str]:
        return self._lines


def annotators_and_doubt(session: Session) -> Report:
    """Annotator reliability and the labels in doubt (``core.quality``): a reviewer's view, since it judges every
    annotator's votes; in blind mode one line says so."""
    if not session.reviewer:
        return _Lines(["Shown to reviewers (start with --reviewer): it judges every annotator's votes."])
    from piqa_tui.core.quality.audit import audit_labels
    from piqa_tui.core.quality.sections import audit_sections

    audit = audit_labels(session.project, session.ballots.policy)
    found = [line for section in audit_sections(audit) for line in section.lines()]
    return _Lines([shown(line, one_line=True) for line in found])


REPORTS: tuple[HealthReport, ...] = (
    HealthReport("Annotation artifacts", annotation_artifacts),
    HealthReport("Annotators and labels in doubt", annotators_and_doubt),
)


def scope_line(session: Session) -> str:
    """Which items the reports are measured over."""
    items = session.project.items
    if session.reviewer:
        return f"Measured over all {len(items)} items."
    seen = len(session.ballots.visible_items(items))
    return f"Blind mode: measured over the {seen} of {len(items)} items you voted on (reviewer mode sees all)."


def report_text(session: Session, reports: tuple[HealthReport, ...] = REPORTS) -> str:
    """Every report's title and lines, one after the other (a report that cannot be measured says why)."""
    parts = [scope_line(session)]
    for report in reports:
        try:
            lines = report.measure(session).lines()
        except PiqaError as exc:
            lines = [f"not measured: {exc}"]
        parts += ["", f"━━ {report.title} ━━", *lines]
    return "\n".join(parts)


def report_view(text: str) -> RenderableType:
    """The reports' lines, each wrapped under its own indentation; a line that heads indented ones in bold."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        heads = indent == 0 and k + 1 < len(lines) and lines[k + 1].startswith(" ")
        style = "bold" if heads or body.startswith("━━") else ""
        out.append(Padding(rich_text(body, style), (0, 0, 0, indent)))
    return Group(*out)


class HealthScreen(Screen[None]):
    """Before release: which shortcuts the data offers, and (as reports join) which labels to distrust."""

    DEFAULT_CSS = """
    HealthScreen #health-title {
        dock: top;
        height: 1;
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    HealthScreen VerticalScroll {
        padding: 0 1;
    }
    """

    ACTIONS = HEALTH_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.text: str | None = None  # the reports once measured
        self.measured = 0  # how many times they were measured

    def compose(self) -> ComposeResult:
        title = f"Dataset health — {self.session.project.dataset.name}"
        yield Static(rich_text(title, one_line=True), id="health-title")
        with VerticalScroll():
            yield Static("measuring… (length, label position, cue words, the solution-only baseline)", id="health-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.measure()

    @work(thread=True, exclusive=True, group="health", description="measure_health")
    def measure(self) -> None:
        worker = get_current_worker()
        for attempt in range(RETRIES):
            try:
                text = report_text(self.session)
                break
            except RuntimeError:  # the votes changed size under us (another process's, applied meanwhile)
                if attempt == RETRIES - 1:
                    raise
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, text)

    def _show(self, text: str) -> None:
        self.text = text
        self.measured += 1
        self.query_one("#health-body", Static).update(report_view(text))

    def on_others_changed(self, message: OthersChanged) -> None:
        """Votes arrived from another process: the reports follow."""
        message.stop()
        self.measure()

    # -------------------------------------------------------------- actions

    def action_recompute(self) -> None:
        self.session.marks.artifacts.forget()
        self.text = None
        self.query_one("#health-body", Static).update("measuring…")
        self.measure()

    def action_copy_text(self) -> None:
        if self.text is not None:
            copy_text(self.app, self.text, "the health reports")

    def action_close(self) -> None:
        self.dismiss()
