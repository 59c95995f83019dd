"""Agreement, live: Fleiss' κ, Gwet's AC1, Cohen's κ, Krippendorff's α, % unanimous, per annotator and per column,
then the agreement on each extra question of the round in force.

The numbers are core's ``AgreementSummary`` and ``QuestionAgreement`` (the ones ``piqa-tui agree``
prints, with its default bootstrap intervals: 1,000 resamples, seed 0), computed in a worker thread when
the screen opens and again whenever votes or answers arrive, and drawn by the tables of
``piqa_tui.render.agreement`` and ``piqa_tui.render.questions``.
``y`` copies them as Markdown tables, ready for a paper or a dataset card: the text ``agree --markdown`` prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from piqa_tui.core.dataset.atomic import atomic_write
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.questions import QuestionAgreement
from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.text.terminal_safe import invisible_twins, twins_line
from piqa_tui.core.votes.decisions import AgreementSummary, agreement_summary
from piqa_tui.core.votes.policy import Policy
from piqa_tui.render.agreement import BreakdownTable, ReportTables, summary_heading, summary_markdown
from piqa_tui.render.questions import (
    QUESTIONS_TITLE,
    QuestionTables,
    round_question_agreements,
    with_questions_markdown,
)
from piqa_tui.render.safe_text import rich_text
from piqa_tui.tui.controllers.policy import PolicyController
from piqa_tui.tui.dialogs.asker import Asker
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.dialogs.replace import ask_before_replacing
from piqa_tui.tui.keymap import AGREEMENT_ACTIONS, bindings
from piqa_tui.tui.messages import ItemsChanged, OthersChanged
from piqa_tui.tui.screens.host import ScreenHost
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.terminal.clipboard import copy_text

RETRIES = 3  # a refresh on the UI thread may add votes while the worker reads them


def summary_view(
    summary: AgreementSummary, questions: list[QuestionAgreement] | None = None, bidi: BidiMode = BidiMode.APP
) -> RenderableType:
    """The screen's body: the heading, then the tables ``piqa-tui agree`` prints, the round's questions last
    (their texts drawn by the bidi display in ``bidi`` mode)."""
    tables: list[RenderableType] = [BreakdownTable(breakdown) for breakdown in summary.breakdowns.values()]
    if questions:
        tables += [Text(""), rich_text(QUESTIONS_TITLE, "bold"), QuestionTables(questions, bidi)]
    heading = rich_text(summary_heading(summary), "bold")
    if twins := invisible_twins(summary.report.annotators):  # two people who would print as one
        heading.append_text(rich_text("\n" + twins_line(twins), "yellow"))
    return Group(heading, Text(""), ReportTables(summary.report), *tables)


class AgreementHost(ScreenHost["AgreementScreen"]):
    """What the policy controller asks of the agreement screen."""

    def after_change(self, item_ids: list[str]) -> None:
        self.screen.action_recompute()
        self.post_to_app(ItemsChanged(item_ids))  # the main screen's decisions follow


class AgreementScreen(Screen[None]):
    """The agreement of the recorded votes, overall and by every categorical column."""

    DEFAULT_CSS = """
    AgreementScreen #agreement-title {
        dock: top;
        height: 1;
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    AgreementScreen VerticalScroll {
        padding: 0 1;
    }
    AgreementScreen #agreement-body {
        width: auto;
    }
    """

    ACTIONS = AGREEMENT_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.project = session.project
        self.snapshot: AgreementSummary | None = None
        self.questions: list[QuestionAgreement] = []  # the round's extra questions, computed with the snapshot
        self.policy = PolicyController(session, AgreementHost(self, session))

    def compose(self) -> ComposeResult:
        yield Static(rich_text(f"Agreement — {self.project.dataset.name}", one_line=True), id="agreement-title")
        with VerticalScroll():
            yield Static("computing…", id="agreement-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.action_recompute()

    # ------------------------------------------------------------ computing

    def action_recompute(self) -> None:
        self.session.ballots.reload_policy()
        self.compute(self.session.ballots.policy)

    def on_others_changed(self, message: OthersChanged) -> None:
        """Votes or answers arrived from another process: the numbers follow."""
        message.stop()
        self.action_recompute()

    @work(thread=True, exclusive=True, group="agreement", description="compute")
    def compute(self, policy: Policy) -> None:
        worker = get_current_worker()
        columns = list(self.session.categorical_columns())
        for attempt in range(RETRIES):
            try:
                summary = agreement_summary(self.project, columns, policy)
                break
            except RuntimeError:  # the votes changed size under us: read them again
                if attempt == RETRIES - 1:
                    raise
        questions = round_question_agreements(self.project)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, summary, questions)

    def _show(self, summary: AgreementSummary, questions: list[QuestionAgreement]) -> None:
        self.snapshot, self.questions = summary, questions
        self.query_one("#agreement-body", Static).update(summary_view(summary, questions, self.session.bidi_mode))

    def markdown(self, summary: AgreementSummary) -> str:
        """What ``y`` copies and ``w`` writes: the text ``agree --markdown`` prints, the questions included."""
        return with_questions_markdown(summary_markdown(summary, self.project.dataset.name), self.questions)

    # -------------------------------------------------------------- actions

    def action_close(self) -> None:
        self.dismiss()

    def action_policy(self) -> None:
        self.policy.choose()

    def action_copy_markdown(self) -> None:
        if self.snapshot is None:
            return
        copy_text(self.app, self.markdown(self.snapshot), "the agreement tables as Markdown")

    def action_write_markdown(self) -> None:
        if self.snapshot is None:
            return
        text = self.markdown(self.snapshot)
        source = self.project.dataset.path
        suggestion = str(source.with_name(f"{source.stem}.agreement.md"))

        def write(path: Path) -> None:
            try:
                atomic_write(path, text)
            except (OSError, PiqaError) as exc:
                self.notify(f"not written: {exc}", severity="error")
                return
            self.notify(f"wrote {path}", timeout=4)

        def check(value: str) -> str | None:
            try:  # never over the dataset or the workspace; an existing file is asked about next
                self.project.check_outputs([Path(value).expanduser()], replace=True)
            except PiqaError as exc:
                return str(exc)
            return None if value else "give a file name"

        def chosen(value: str | None) -> None:
            if value:
                path = Path(value).expanduser()
                ask_before_replacing(cast(Asker, self.app), [path], lambda: write(path))

        self.app.push_screen(
            TextPrompt("Write agreement", "Markdown file to write the tables to.", suggestion, check), chosen
        )
