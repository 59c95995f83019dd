"""Answering the round's extra questions on one item: pick a question, then answer it by key.

With one question the answer dialog opens at once. The question's kind says how it is asked
(``QuestionKind.keyed``): a yes/no question is answered with ``y`` or ``n``, a choice with the option's number
(``1``–``9``), and both with the arrows and enter too; ``backspace`` takes the answer back. A kind without keys
(a number, a short text) is typed. Every answer is recorded through the host's write queue as one
undoable action (``u`` undoes it). Others' answers are listed only where blind mode shows their votes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual import events

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.questions import Answers, Question, project_answers, record_answer
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.asker import Asker
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, DataText, TextPrompt

CLEAR = "\x00clear"  # the option that takes an answer back (no answer text can hold a NUL)


class Host(Asker, Protocol):
    """What answering needs of the screen: a dialog, the write queue, and a redraw (the main screen's host)."""

    def after_change(self, item_ids: list[str]) -> None: ...

    def submit(self, what: str, attempt: Callable[[], object], done: Callable[[object], None]) -> None: ...


class AnswerDialog(ChoiceDialog):
    """The options of one question; ``keys`` maps a key (y, n, 1–9, backspace) straight to an option."""

    def __init__(
        self, title: str | DataText, message: str, choices: list[tuple[str | None, str, str]], keys: dict[str, str]
    ):
        super().__init__(title, message, choices)
        self.keys = keys

    def on_key(self, event: events.Key) -> None:
        chosen = self.keys.get(event.key)
        if chosen is not None:
            event.stop()
            event.prevent_default()  # the key answers: no type-ahead (ChoiceDialog.on_key) after it
            self.dismiss(chosen)


def ask_questions(host: Host, project: Project, item: Item, see_others: bool) -> None:
    """Open the current round's questions on ``item`` (a line says so when the round asks none)."""
    declared = round_in_force(project.workspace)
    questions = declared.questions if declared is not None else ()
    if not questions:
        host.notify(
            "the round asks no extra questions: add [[question]] tables to the round file and import it "
            "(piqa-tui round PATH import ROUND.toml)",
            severity="warning",
            timeout=6,
        )
        return
    answers = project_answers(project)
    if len(questions) == 1:
        _ask(host, project, item, questions[0], answers)
        return
    by_id = {q.id: q for q in questions}
    choices: list[tuple[str | None, str, str]] = [
        (q.id, f"{n}. {terminal_safe(q.text, one_line=True)}", _answered(q, answers, item, project, see_others))
        for n, q in enumerate(questions, 1)
    ]
    keys = {str(n): q.id for n, q in enumerate(questions[:9], 1)}

    def chosen(question_id: str | None) -> None:
        if question_id in by_id:
            _ask(host, project, item, by_id[question_id], answers)

    host.push_screen(AnswerDialog(f"Questions on {item.id}", "Pick a question (1–9 or enter).", choices, keys), chosen)


def _answered(question: Question, answers: Answers, item: Item, project: Project, see_others: bool) -> str:
    """The help beside a question: your answer, and the others' where blind mode shows them."""
    mine = answers.mine(question.id, item.id, project.annotator)
    text = f"you: {terminal_safe(mine, one_line=True)}" if mine else "not answered"
    others = [a for name, a in answers.of(question.id, item.id).items() if name != project.annotator]
    if see_others and others:
        text += " · others: " + ", ".join(terminal_safe(a, one_line=True) for a in others)
    return text


def _ask(host: Host, project: Project, item: Item, question: Question, answers: Answers) -> None:
    """The dialog that answers ``question``: its kind's options by key (yes/no, choice), else a typed line."""
    mine = answers.mine(question.id, item.id, project.annotator)
    title = DataText(question.text)  # drawn by the bidi adapter: an Arabic question reads right to left, shaped
    save = _saver(host, project, item, question)
    keyed = question.form.keyed(question)
    if keyed:
        keys = {key: option for key, option in keyed if key.strip()}
        choices: list[tuple[str | None, str, str]] = [
            (option, f"{key} {terminal_safe(option, one_line=True)}", "← now" if option == mine else "")
            for key, option in keyed
        ]
        choices.append((CLEAR, "backspace: no answer", "take your answer back" if mine else ""))
        keys["backspace"] = CLEAR
        message = f"{question.id}: answer by key ({question.hint}); esc leaves it as it is."
        host.push_screen(AnswerDialog(title, message, choices, keys), save)
        return

    def check(value: str) -> str | None:
        try:
            question.answer(value)
        except PiqaError as exc:
            return str(exc)
        return None

    host.push_screen(TextPrompt(title, f"{question.id}: {question.hint}; empty takes it back", mine, check), save)


def _saver(host: Host, project: Project, item: Item, question: Question) -> Callable[[str | None], None]:
    """Record the answer a dialog gives back (None: cancelled, nothing recorded)."""

    def save(value: str | None) -> None:
        if value is None:
            return
        answer = "" if value == CLEAR else value

        def recorded(stored: object) -> None:
            host.after_change([item.id])
            said = terminal_safe(stored, one_line=True) if stored else "no answer"
            host.notify(f"{item.id}: {question.id} = {said}", timeout=3)

        host.submit(
            f"your answer to {question.id} on {item.id}",
            lambda: record_answer(project, item.id, question, answer),
            recorded,
        )

    return save


def answers_status(project: Project, item_id: str, see_others: bool) -> str:
    """The item's answers for its title line: ``? id: yours`` per question answered, with the others' answers
    where blind mode shows their votes ("" without a round that asks questions)."""
    declared = round_in_force(project.workspace)
    if declared is None or not declared.questions:
        return ""
    answers = project_answers(project)
    shown = []
    for question in declared.questions:
        given = answers.of(question.id, item_id)
        mine = given.pop(project.annotator, "")
        others = f" (others: {', '.join(given.values())})" if see_others and given else ""
        if mine or others:
            shown.append(f"? {question.id}: {mine or '—'}{others}")
    return "  ".join(shown)
