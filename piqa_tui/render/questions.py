"""Agreement on a round's extra questions as rows, Markdown and Rich tables: what ``agree``, the TUI's agreement
screen and the card show.

The numbers are core's :class:`~piqa_tui.core.round.questions.QuestionAgreement`, one per question; an
undefined value is written "undefined" with its reason, never as 0 or 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table

from piqa_tui.core.round.questions import (
    Answers,
    Question,
    QuestionAgreement,
    project_answers,
    question_columns,
    questions_agreement,
)
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.text.bidi import BidiMode, BidiText
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.markdown import markdown_table, one_line
from piqa_tui.render.safe_text import rich_text
from piqa_tui.render.values import format_value

MEASURE_NAMES = {
    "fleiss_kappa": "Fleiss' κ",
    "krippendorff_alpha": "Krippendorff's α (nominal)",
    "krippendorff_alpha_ordinal": "Krippendorff's α (ordinal)",
    "gwet_ac1": "Gwet's AC1",
    "gwet_ac2_ordinal": "Gwet's AC2 (ordinal weights)",
    "percent_unanimous": "% unanimous",
}
PERCENTAGES = frozenset({"percent_unanimous"})  # shown as the label table shows its share unanimous: "20.0%"
QUESTION_HEADER = ["measure", "value", "items", "note"]
QUESTIONS_TITLE = "Extra questions"
FREE_TEXT = "free text: no agreement statistic"


def round_question_agreements(project: Project) -> list[QuestionAgreement]:
    """Agreement on each extra question of the round in force (none without a round or questions)."""
    declared = round_in_force(project.workspace)
    if declared is None:
        return []
    return questions_agreement(declared.questions, project_answers(project))


def question_heading(found: QuestionAgreement) -> str:
    """One line naming the question: its id, text, kind, policy and how many answers it has."""
    q = found.question
    return (
        f"{q.id} — {q.text} ({q.kind}, policy {q.policy}): {found.answers} answers, {found.items} items with 2+ answers"
    )


def question_rows(found: QuestionAgreement) -> list[tuple[str, str, str, str]]:
    """A row per measure; free text has none (agreement on free text is not a number we can give)."""
    return [
        (
            MEASURE_NAMES.get(name, name),
            format_value(m.value, "%" if name in PERCENTAGES else ""),
            str(m.n),
            m.reason or "",
        )
        for name, m in found.measures.items()
    ]


def questions_markdown(found: Iterable[QuestionAgreement]) -> str:
    """A section per question: its heading and its measures (free text: a line saying there are none)."""
    out: list[str] = []
    for each in found:
        out += [f"**{one_line(question_heading(each))}**", ""]
        rows = question_rows(each)
        out += [*markdown_table(QUESTION_HEADER, rows), ""] if rows else [FREE_TEXT, ""]
    return "\n".join(out)


def questions_section(found: Sequence[QuestionAgreement]) -> str:
    """The section ``agree --markdown`` prints after the label agreement ("" when the round asks no questions)."""
    return f"\n### {QUESTIONS_TITLE}\n\n{questions_markdown(found)}" if found else ""


def with_questions_markdown(report: str, found: Sequence[QuestionAgreement]) -> str:
    """The agreement report followed by the questions section, joined as ``agree --markdown`` prints them
    (one print each: a newline between), so the TUI copies and writes the very text the command prints."""
    return f"{report}\n{questions_section(found)}" if found else report


class QuestionTables:
    """Agreement on each extra question as a Rich table (question text is data: shown as text, never markup).

    With a ``bidi`` mode each question's heading is its own line drawn by the bidi display, as the TUI draws
    data text (an Arabic question reads right to left, shaped); without one it is the table's title.
    """

    def __init__(self, found: Iterable[QuestionAgreement], bidi: BidiMode | None = None) -> None:
        self.found = list(found)
        self.bidi = bidi

    def heading(self, text: str, style: str = "") -> RenderableType:
        """A line of data text above a table: through the bidi display when a mode was given."""
        if self.bidi is None:
            return rich_text(text, style, one_line=True)
        return BidiText(terminal_safe(text, one_line=True), self.bidi, style or None)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for each in self.found:
            rows = question_rows(each)
            if not rows:
                yield self.heading(f"{question_heading(each)} — {FREE_TEXT}")
                continue
            if self.bidi is None:
                table = Table(title=rich_text(question_heading(each), "table.title", one_line=True))
            else:  # a heading line of its own: a table title cannot be laid out by the bidi display
                yield self.heading(question_heading(each), "bold")
                table = Table()
            for j, col in enumerate(QUESTION_HEADER):
                table.add_column(rich_text(col), justify="right" if j in (1, 2) else "left")
            for row in rows:
                table.add_row(*row[:-1], rich_text(row[-1], "dim"))
            yield table


def card_questions_lines(
    questions: Sequence[Question], answers: Answers, items: Sequence[str], found: Iterable[QuestionAgreement]
) -> list[str]:
    """The card's summary of the extra questions: per question its text, kind and policy, how its decided values
    fall over the released ``items``, and the agreement on it (no annotator is named)."""
    lines = [
        "Besides the label, each item was asked these questions; the release has a column `<id>_votes` with the "
        "answers and a column `<id>` with the value the question's policy decides.",
        "",
    ]
    columns = question_columns(questions, answers, items)
    for question in questions:
        decided = Counter(columns.get(question.id, []))
        counts = ", ".join(f"{one_line(value or 'undecided')}: {n}" for value, n in sorted(decided.items()))
        lines += [
            f"* `{question.id}` — {one_line(question.text)} ({question.kind}; {question.hint}; policy {question.policy})"
            + (f"; decided over the {len(items)} items: {counts}" if counts else ""),
        ]
    return [*lines, "", questions_markdown(found)]
