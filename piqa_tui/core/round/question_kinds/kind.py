"""What a kind of extra question is (``QuestionKind``), the ``Question`` a round declares, and the kinds' registry.

A kind says how a ``[[question]]`` table of its kind is checked (its own keys: ``options`` for a choice,
``min``/``max`` for a number), which answers it takes and how it spells them, what agreement fits it, and how
the TUI asks it (keys straight to options, or a typed line). ``Question`` keeps the kind's name and hands every
such question to the kind registered under it, so the round file, answers, decisions, agreement, the card and the
TUI's dialog all go through the kind object. A new kind is one module with one object, passed to
``register_question_kind`` (the built-in ones are registered by this package's ``__init__``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeGuard

from piqa_tui.core.errors import InputError
from piqa_tui.core.registry import Registry
from piqa_tui.core.text.characters import nfc

POLICY_NAMES = ("any-yes", "all-yes", "majority", "unanimous", "median", "none")  # the rules ``decide`` knows
LEVELS = ("nominal", "ordinal", "none")  # agreement: nominal κ, α, AC1; ordinal α and AC2; none for free text
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class QuestionError(InputError):
    """A question that cannot be declared or an answer it cannot take: one line saying what to do."""


class Parameters(NamedTuple):
    """What a kind's own keys hold once checked: the options of a choice, the bounds of a number scale."""

    options: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None


class QuestionKind(Protocol):
    """One kind of extra question (``yes/no``, ``choice``, ``number``, ``text``, or one a project registers).

    ``name`` is how a round file writes it, ``aliases`` other spellings it accepts; ``keys`` the table keys of
    its own; ``policies`` the decision policies that fit it (of ``POLICY_NAMES``) and ``default_policy`` the one a
    question without ``policy`` gets; ``level`` the agreement that fits its answers (of ``LEVELS``: nominal and
    ordinal codes answers by ``categories``, so an ordinal kind lists them in scale order).
    """

    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def policies(self) -> tuple[str, ...]: ...
    @property
    def default_policy(self) -> str: ...
    @property
    def level(self) -> str: ...

    def parameters(self, entry: Mapping[str, object], qid: str, place: str) -> Parameters:
        """Its own keys of ``entry`` checked (``QuestionError`` naming ``place`` and ``qid`` when one is wrong)."""
        ...

    def categories(self, question: Question) -> tuple[str, ...]:
        """The answers it can take, in order (none for free text)."""
        ...

    def hint(self, question: Question) -> str:
        """What an answer looks like, for a prompt: "yes or no", "a whole number 1–5", the options."""
        ...

    def answer(self, question: Question, value: str) -> str | None:
        """``value`` (stripped, NFC, not empty) as the question stores it; None when it is no answer."""
        ...

    def to_json(self, question: Question) -> dict[str, object]:
        """Its own keys as the recorded round writes them (read back by ``parameters``)."""
        ...

    def keyed(self, question: Question) -> tuple[tuple[str, str], ...]:
        """How the TUI asks it: (key, answer) pairs in the order shown, a key " " shown without one; () to have
        the answer typed on a line instead."""
        ...


QUESTION_KINDS: Registry[QuestionKind] = Registry("question kind")


def register_question_kind(kind: QuestionKind) -> QuestionKind:
    """Make ``kind`` a kind round files may declare; its policies and level are checked (``ValueError``)."""
    unknown = [p for p in (*kind.policies, kind.default_policy) if p not in POLICY_NAMES]
    if unknown or kind.default_policy not in kind.policies or kind.level not in LEVELS:
        raise ValueError(f"question kind {kind.name!r}: policies of {POLICY_NAMES}, a level of {LEVELS}")
    return QUESTION_KINDS.register(kind)


def question_kind(name: str) -> QuestionKind | None:
    """The kind a round file names (by its name or an alias), None when no kind is registered under it."""
    found = QUESTION_KINDS.get(name)
    return found or next((k for k in QUESTION_KINDS if name in k.aliases), None)


@dataclass(frozen=True, slots=True)
class Question:
    """One extra question of a round; ``kind`` names its registered ``QuestionKind``, which answers for it.
    ``options`` and the bounds are what the kind's own keys held (a choice's options, a number's scale)."""

    id: str
    text: str
    kind: str
    policy: str
    options: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    @property
    def form(self) -> QuestionKind:
        """The registered kind (``QuestionError`` when none is registered under ``kind`` any more)."""
        found = question_kind(self.kind)
        if found is None:
            raise QuestionError(f"{self.id}: no question kind {self.kind!r} is registered")
        return found

    @property
    def categories(self) -> tuple[str, ...]:
        """The answers it can take, in order (none for text)."""
        return self.form.categories(self)

    @property
    def hint(self) -> str:
        """What an answer looks like, for a prompt: "yes or no", "1–5", the options."""
        return self.form.hint(self)

    def answer(self, raw: str) -> str:
        """``raw`` as this question stores it ("y" → "yes", "2" → the second option); "" withdraws.

        ``QuestionError`` says what answers it takes."""
        value = nfc(raw.strip())  # typed text is stored in NFC, as every edit is
        if not value:
            return ""
        stored = self.form.answer(self, value)
        if stored is None:
            raise QuestionError(f"{self.id}: {value[:40]!r} is no answer; answer {self.hint}")
        return stored

    def takes(self, stored: str) -> bool:
        """Whether ``stored`` is an answer this question takes as it is (an answer recorded under an earlier
        declaration of the same id may not be: it is then left out of decisions and agreement)."""
        try:
            return bool(stored) and self.answer(stored) == stored
        except QuestionError:
            return False

    def to_json(self) -> dict[str, object]:
        table: dict[str, object] = {"id": self.id, "text": self.text, "kind": self.kind, "policy": self.policy}
        return {**table, **self.form.to_json(self)}


def is_text(value: object) -> TypeGuard[str]:
    """A one-line text a question or an option may be: not blank, no control characters."""
    return isinstance(value, str) and bool(value.strip()) and not CONTROL.search(value)
