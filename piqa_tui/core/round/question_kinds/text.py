"""The ``text`` question: a short free text (up to ``MAX_TEXT`` characters, one line); a longer one is a note.

No policy decides a value from free text (``none``) and no agreement statistic fits it; the answer is typed.
"""

from __future__ import annotations

from collections.abc import Mapping

from piqa_tui.core.round.question_kinds.kind import CONTROL, Parameters, Question

MAX_TEXT = 500  # a short text answer; a longer one is a note


class Text:
    """A short free text (see the module docstring)."""

    name = "text"
    aliases: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    policies = ("majority", "unanimous", "none")
    default_policy = "none"
    level = "none"

    def parameters(self, entry: Mapping[str, object], qid: str, place: str) -> Parameters:
        return Parameters()

    def categories(self, question: Question) -> tuple[str, ...]:
        return ()

    def hint(self, question: Question) -> str:
        return f"short text (up to {MAX_TEXT} characters)"

    def answer(self, question: Question, value: str) -> str | None:
        return value if len(value) <= MAX_TEXT and not CONTROL.search(value) else None

    def to_json(self, question: Question) -> dict[str, object]:
        return {}

    def keyed(self, question: Question) -> tuple[tuple[str, str], ...]:
        return ()
