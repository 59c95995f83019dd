"""The ``number`` question: a whole number from ``min`` to ``max`` (at most 100 apart), an ordinal scale.

Its own policy: ``median`` (the lower median, so the value stays on the scale); agreement is ordinal.
The answer is typed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeGuard

from piqa_tui.core.round.question_kinds.kind import Parameters, Question, QuestionError

_WHOLE = re.compile(r"[+-]?\d{1,12}")


class Number:
    """A whole number on a scale (see the module docstring)."""

    name = "number"
    aliases: tuple[str, ...] = ()
    keys = ("min", "max")
    policies = ("majority", "unanimous", "median", "none")
    default_policy = "median"
    level = "ordinal"

    def parameters(self, entry: Mapping[str, object], qid: str, place: str) -> Parameters:
        low, high = entry.get("min"), entry.get("max")
        if not _whole(low) or not _whole(high) or not low <= high <= low + 100:
            raise QuestionError(
                f"{place}: number question {qid!r} needs whole numbers min <= max, at most 100 apart "
                "(e.g. min = 1, max = 5)"
            )
        return Parameters(minimum=low, maximum=high)

    def categories(self, question: Question) -> tuple[str, ...]:
        if question.minimum is None or question.maximum is None:
            return ()
        return tuple(str(n) for n in range(question.minimum, question.maximum + 1))

    def hint(self, question: Question) -> str:
        return f"a whole number {question.minimum}–{question.maximum}"

    def answer(self, question: Question, value: str) -> str | None:
        if not _WHOLE.fullmatch(value) or question.minimum is None or question.maximum is None:
            return None
        number = int(value)
        return str(number) if question.minimum <= number <= question.maximum else None

    def to_json(self, question: Question) -> dict[str, object]:
        return {"min": question.minimum, "max": question.maximum}

    def keyed(self, question: Question) -> tuple[tuple[str, str], ...]:
        return ()


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
