"""The ``yes/no`` question: answered y or n (also yes/no, true/false, 1/0), stored "yes" or "no".

Its own policies: ``any-yes`` (one yes decides yes) and ``all-yes``; agreement is nominal.
"""

from __future__ import annotations

from collections.abc import Mapping

from piqa_tui.core.round.question_kinds.kind import Parameters, Question

YES, NO = ("yes", "y", "true", "1"), ("no", "n", "false", "0")


class YesNo:
    """A yes or no (see the module docstring); the TUI answers it with ``y`` and ``n``."""

    name = "yes/no"
    aliases = ("yes-no", "yesno")
    keys: tuple[str, ...] = ()
    policies = ("any-yes", "all-yes", "majority", "unanimous", "none")
    default_policy = "majority"
    level = "nominal"

    def parameters(self, entry: Mapping[str, object], qid: str, place: str) -> Parameters:
        return Parameters()

    def categories(self, question: Question) -> tuple[str, ...]:
        return ("no", "yes")

    def hint(self, question: Question) -> str:
        return "yes or no"

    def answer(self, question: Question, value: str) -> str | None:
        if value.lower() in (*YES, *NO):
            return "yes" if value.lower() in YES else "no"
        return None

    def to_json(self, question: Question) -> dict[str, object]:
        return {}

    def keyed(self, question: Question) -> tuple[tuple[str, str], ...]:
        return (("y", "yes"), ("n", "no"))  # yes first
