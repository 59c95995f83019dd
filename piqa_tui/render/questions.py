"""Agreement on a round's extra questions as rows, Markdown and Rich tables: what ``agree`` and the card show.

The numbers are core's :class:`~piqa_tui.core.round.questions.QuestionAgreement`, one per question; an
undefined value is written "undefined" with its reason, never as 0 or 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

from piqa_tui.core.round.questions import Answers, Question, QuestionAgreement, question_columns
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
QUESTION_HEADER = ["measure", "value", "items", "note"]


def question_heading(found: QuestionAgreement) -> str:
    """One line naming the question: its id, text, kind, policy and how many answers it has."""
    q = found.question
    return (
        f"{q.id} — {q.text} ({q.kind}, policy {q.policy}): {found.answers} answers, {found.items} items with 2+ answers"
    )


def question_rows(found: QuestionAgreement) -> list[tuple[str, str, str, str]]:
    """A row per measure; free text has none (agreement on free text is not a number we can give)."""
    return [
        (MEASURE_NAMES.get(name, name), format_value(m.value), str(m.n), m.reason or "")
        for name, m in found.measures.items()
    ]


def questions_markdown(found: Iterable[QuestionAgreement]) -> str:
    """A section per question: its heading and its measures (free text: a line saying there are none)."""
    out: list[str] = []
    for each in found:
        out += [f"**{one_line(question_heading(each))}**", ""]
        rows = question_rows(each)
        out += [*markdown_table(QUESTION_HEADER, rows), ""] if rows else ["free text: no agreement statistic", ""]
    return "\n".join(out)


class QuestionTables:
    """Agreement on each extra question as a Rich table (question text is data: shown as text, never markup)."""

    def __init__(self, found: Iterable[QuestionAgreement]) -> None:
        self.found = list(found)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for each in self.found:
            rows = question_rows(each)
            if not rows:
                yield rich_text(question_heading(each) + " — free text: no agreement statistic", one_line=True)
                continue
            table = Table(title=rich_text(question_heading(each), "table.title", one_line=True))
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
