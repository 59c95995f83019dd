"""Model scoring: prompt templates, the model backend protocol, per-item scores.

Scoring follows lm-evaluation-harness's multiple-choice log-likelihood: each
solution becomes a continuation of one shared context, the backend returns the
summed log-probability of the continuation's tokens, ``acc`` picks the highest
sum and ``acc_norm`` the highest sum divided by the solution's length in
characters. Backends see only text (:class:`ScoreRequest`), so a served model
(an OpenAI-compatible endpoint) can replace the local llama.cpp one without the
callers noticing.

This module is pure Python; the llama.cpp backend lives in ``llama_backend``
and is imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from piqa_tui.core.errors import ModelError
from piqa_tui.core.item import Item

LETTERS = "ABCDEFGHIJ"

# Placeholders a template may use; anything else is a typo the user should hear about.
CONTEXT_FIELDS = frozenset({"goal", "prompt", "question", "options"})
CONTINUATION_FIELDS = frozenset({"solution", "letter", "index"})


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True, slots=True)
class Template:
    """How an item becomes one context and one continuation per solution.

    ``context`` may use ``{goal}`` (= ``{prompt}``), ``{question}`` (COPA's
    cause/effect, empty elsewhere) and ``{options}`` (the solutions as lettered
    lines ``A. ...``); ``continuation`` may use ``{solution}``, ``{letter}``
    and ``{index}``. The whitespace that opens ``continuation`` is the target
    delimiter: it is scored but, as in lm-evaluation-harness, not counted in
    the length that ``acc_norm`` divides by.
    """

    name: str
    context: str
    continuation: str

    def __post_init__(self) -> None:
        _check_fields(self.name, "context", self.context, CONTEXT_FIELDS)
        _check_fields(self.name, "continuation", self.continuation, CONTINUATION_FIELDS)

    @property
    def key(self) -> str:
        """Identifies the template's text for the score cache: name plus a hash of both parts."""
        digest = hashlib.sha256(f"{self.context}\x00{self.continuation}".encode()).hexdigest()
        return f"{self.name}:{digest[:16]}"

    @property
    def delimiter(self) -> str:
        return self.continuation[: len(self.continuation) - len(self.continuation.lstrip())]

    @property
    def lettered(self) -> bool:
        return "{letter}" in self.continuation or "{index}" in self.continuation

    def render_context(self, item: Item) -> str:
        options = "\n".join(f"{LETTERS[i]}. {s}" for i, s in enumerate(item.solutions))
        return self.context.format(
            goal=item.prompt, prompt=item.prompt, question=item.question or "", options=options
        )

    def render_continuations(self, item: Item) -> tuple[str, ...]:
        return tuple(
            self.continuation.format(solution=s, letter=LETTERS[i], index=i)
            for i, s in enumerate(item.solutions)
        )

    def request(self, item: Item) -> "ScoreRequest":
        if not 2 <= len(item.solutions) <= len(LETTERS):
            raise ModelError(
                f"item {item.id} has {len(item.solutions)} solutions: "
                f"scoring needs between 2 and {len(LETTERS)}; fix the item"
            )
        return ScoreRequest(self.render_context(item), self.render_continuations(item))

    def norm_lengths(self, item: Item) -> tuple[int, ...]:
        """Characters ``acc_norm`` divides by: the continuation without its delimiter."""
        cut = len(self.delimiter)
        return tuple(max(1, len(c) - cut) for c in self.render_continuations(item))

    def solution_only(self) -> "Template":
        """The same scoring with no prompt: what a model picks from the solutions alone.

        A lettered template has nothing to score without its options, so its
        baseline scores the solution texts instead.
        """
        continuation = " {solution}" if self.lettered else self.continuation
        return Template(f"{self.name}+solution-only", "", continuation)


def _check_fields(name: str, part: str, text: str, allowed: frozenset[str]) -> None:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as exc:
        raise ModelError(f"template {name!r}: its {part} is not a valid format string ({exc}); "
                         "double literal braces as {{ }}") from None
    unknown = sorted(fields - allowed)
    if unknown:
        raise ModelError(
            f"template {name!r}: unknown placeholder {{{unknown[0]}}} in its {part}; "
            f"use {', '.join('{' + f + '}' for f in sorted(allowed))}"
        )


BUILTIN_TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (
        # lm-evaluation-harness's piqa task.
        Template("piqa", "Question: {goal}\nAnswer:", " {solution}"),
        # Global PIQA: the prompt as it is.
        Template("bare", "{goal}", " {solution}"),
        # Lettered multiple choice (ArabCulture-style 3-4 option sets): score the letters.
        Template("mcq", "Question: {goal}\n{options}\nAnswer:", " {letter}"),
    )
}
DEFAULT_TEMPLATE = "piqa"


def get_template(
    name: str, user_templates: Mapping[str, Mapping[str, str]] | None = None
) -> Template:
    """The built-in or user-defined template called ``name``.

    ``user_templates`` maps names to ``{"context": ..., "continuation": ...}``
    (from the config file); ``continuation`` defaults to ``" {solution}"``.
    """
    user_templates = user_templates or {}
    if name in user_templates:
        spec = user_templates[name]
        if "context" not in spec:
            raise ModelError(f"template {name!r} in config has no 'context'; add one, "
                             "e.g. context = \"Question: {goal}\\nAnswer:\"")
        return Template(name, spec["context"], spec.get("continuation", " {solution}"))
    if name in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[name]
    known = ", ".join(sorted({*BUILTIN_TEMPLATES, *user_templates}))
    raise ModelError(f"unknown template {name!r}: choose one of {known}, or define it in config")


# --------------------------------------------------------------------------- backends


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """One item as a backend sees it: a context and 2+ continuations to score after it."""

    context: str
    continuations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContinuationScore:
    """Summed log-probability of a continuation's tokens given the context."""

    loglik: float
    n_tokens: int


@runtime_checkable
class ModelBackend(Protocol):
    """A model that scores continuations. Implementations: ``LlamaBackend``.

    ``load`` may be slow and raises :class:`ModelError` for a model that cannot
    be used; ``score`` is called from a worker thread, never concurrently;
    ``describe`` must be cheap and its ``"identity"`` stable for the same model
    file (it keys the score cache).
    """

    def load(self) -> None:
        """Make the model ready; calling it again is a no-op."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        """Score every continuation of every request, in order."""

    def describe(self) -> dict[str, object]:
        """At least ``identity`` (str) and ``backend`` (str); anything else is for display."""

    def close(self) -> None:
        """Free the model."""


# --------------------------------------------------------------------------- results


def item_content_hash(item: Item) -> str:
    """Hash of what scoring reads from an item: prompt, question and solutions."""
    payload = json.dumps([item.prompt, item.question, list(item.solutions)], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _argmax(values: Sequence[float]) -> int:
    # First maximum wins, as numpy.argmax does in lm-evaluation-harness.
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


@dataclass(frozen=True, slots=True)
class ItemScore:
    """A model's verdict on one item: every solution's log-likelihood and what follows."""

    item_id: str
    logliks: tuple[float, ...]
    n_tokens: tuple[int, ...]
    norm_lengths: tuple[int, ...]
    label: int | None = None
    template: str = DEFAULT_TEMPLATE
    cached: bool = field(default=False, compare=False)

    @classmethod
    def build(
        cls, item: Item, template: Template, scores: Sequence[ContinuationScore], cached: bool = False
    ) -> "ItemScore":
        return cls(
            item_id=item.id,
            logliks=tuple(float(s.loglik) for s in scores),
            n_tokens=tuple(int(s.n_tokens) for s in scores),
            norm_lengths=template.norm_lengths(item),
            label=item.label,
            template=template.name,
            cached=cached,
        )

    @property
    def normalised(self) -> tuple[float, ...]:
        """Log-likelihood per character of solution (lm-evaluation-harness ``acc_norm``)."""
        return tuple(ll / n for ll, n in zip(self.logliks, self.norm_lengths))

    @property
    def prediction(self) -> int:
        return _argmax(self.logliks)

    @property
    def prediction_norm(self) -> int:
        return _argmax(self.normalised)

    @property
    def margin(self) -> float:
        """Best minus second-best log-likelihood: how sure the model is (0 = a tie)."""
        best, second = sorted(self.logliks, reverse=True)[:2]
        return best - second

    @property
    def correct(self) -> bool | None:
        return None if self.label is None else self.prediction == self.label

    @property
    def correct_norm(self) -> bool | None:
        return None if self.label is None else self.prediction_norm == self.label

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record for per-item results files."""
        return {
            "id": self.item_id,
            "template": self.template,
            "label": self.label,
            "logliks": list(self.logliks),
            "n_tokens": list(self.n_tokens),
            "normalised": list(self.normalised),
            "prediction": self.prediction,
            "prediction_norm": self.prediction_norm,
            "margin": self.margin,
            "correct": self.correct,
            "correct_norm": self.correct_norm,
        }


def _accuracy(scores: Sequence[ItemScore]) -> dict[str, object]:
    labelled = [s for s in scores if s.label is not None]
    n = len(labelled)
    return {
        "n": n,
        "n_unlabelled": len(scores) - n,
        # Undefined without labelled items: None, never 0.
        "acc": sum(bool(s.correct) for s in labelled) / n if n else None,
        "acc_norm": sum(bool(s.correct_norm) for s in labelled) / n if n else None,
        "mean_margin": sum(s.margin for s in scores) / len(scores) if scores else None,
    }


def summarise(
    scores: Iterable[ItemScore], groups: Mapping[str, str | None] | None = None
) -> dict[str, object]:
    """``acc``, ``acc_norm``, ``n`` (labelled items), ``n_unlabelled``, ``mean_margin``.

    With ``groups`` (item id -> group value, see :func:`groups_by_column`) the
    result also has ``"groups": {value: {same keys}}``, values sorted; items
    without a value fall in ``"(none)"``.
    """
    scores = list(scores)
    summary = _accuracy(scores)
    if groups is not None:
        buckets: dict[str, list[ItemScore]] = {}
        for s in scores:
            value = groups.get(s.item_id)
            buckets.setdefault(value if value not in (None, "") else "(none)", []).append(s)
        summary["groups"] = {k: _accuracy(buckets[k]) for k in sorted(buckets)}
    return summary


def groups_by_column(items: Iterable[Item], column: str) -> dict[str, str | None]:
    """Item id -> the value of metadata ``column`` (dialect, category, language...)."""
    return {item.id: item.meta.get(column) for item in items}


def with_label(score: ItemScore, label: int | None) -> ItemScore:
    """The same score judged against another label (e.g. the votes' majority)."""
    return replace(score, label=label)
