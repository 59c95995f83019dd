"""The ``choice`` question: one of its ``options`` (two or more texts), answered by the option or its number.

Agreement is nominal; the TUI answers it with the option's number (``1``–``9``).
"""

from __future__ import annotations

from collections.abc import Mapping

from piqa_tui.core.round.question_kinds.kind import Parameters, Question, QuestionError, is_text
from piqa_tui.core.text.characters import nfc


class Choice:
    """One option of several (see the module docstring)."""

    name = "choice"
    aliases: tuple[str, ...] = ()
    keys = ("options",)
    policies = ("majority", "unanimous", "none")
    default_policy = "majority"
    level = "nominal"

    def parameters(self, entry: Mapping[str, object], qid: str, place: str) -> Parameters:
        options = entry.get("options")
        if not isinstance(options, list) or len(options) < 2 or not all(is_text(o) for o in options):
            raise QuestionError(f'{place}: choice question {qid!r} needs options = ["…", "…"] (two or more texts)')
        if len({nfc(o.strip()) for o in options}) < len(options):
            raise QuestionError(f"{place}: choice question {qid!r} names an option twice; give each once")
        return Parameters(options=tuple(nfc(o.strip()) for o in options))

    def categories(self, question: Question) -> tuple[str, ...]:
        return question.options

    def hint(self, question: Question) -> str:
        return " / ".join(f"{n} {o}" for n, o in enumerate(question.options, 1))

    def answer(self, question: Question, value: str) -> str | None:
        if value in question.options:
            return value
        if value.isdecimal() and 1 <= int(value) <= len(question.options):
            return question.options[int(value) - 1]
        return None

    def to_json(self, question: Question) -> dict[str, object]:
        return {"options": list(question.options)}

    def keyed(self, question: Question) -> tuple[tuple[str, str], ...]:
        return tuple((f"{n}" if n <= 9 else " ", o) for n, o in enumerate(question.options, 1))
