"""Prompt templates: how an item becomes one context and a continuation per solution.

A template is checked when it is made (only its known placeholders), so a bad
user template fails at load with its name, never halfway through a run.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ScoreRequest

LETTERS = "ABCDEFGHIJ"
# No model context holds this many characters (128k tokens are about 500,000 characters of English):
# an item beyond it is refused before tokenizing, which alone would take a minute at 10 MB.
MAX_REQUEST_CHARS = 1_000_000

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
        request = ScoreRequest(self.render_context(item), self.render_continuations(item))
        size = len(request.context) + sum(map(len, request.continuations))
        if size > MAX_REQUEST_CHARS:  # refused before the tokenizer spends a minute on 10 MB
            raise ModelError(
                f"item {item.id} is {size:,} characters with its template, far more than a model's context; "
                "shorten it or leave it out (--limit, or drop it)"
            )
        return request

    def norm_lengths(self, item: Item) -> tuple[int, ...]:
        """Characters ``acc_norm`` divides by: the continuation without its delimiter."""
        cut = len(self.delimiter)
        return tuple(max(1, len(c) - cut) for c in self.render_continuations(item))

    def byte_lengths(self, item: Item) -> tuple[int, ...]:
        """UTF-8 bytes ``acc_bytes`` divides by: the continuation without its delimiter.

        lm-evaluation-harness's newer metric: bytes, unlike characters, weigh
        Arabic, Tamil and Latin script text alike per unit of information.
        """
        cut = len(self.delimiter)
        return tuple(max(1, len(c[cut:].encode("utf-8"))) for c in self.render_continuations(item))

    def solution_only(self) -> "Template":
        """The same scoring with no prompt: what a model picks from the solutions alone.

        A lettered template has nothing to score without its options, so its
        baseline scores the solution texts instead.
        """
        continuation = " {solution}" if self.lettered else self.continuation
        return Template(f"{self.name}+solution-only", "", continuation)


def _check_fields(name: str, part: str, text: object, allowed: frozenset[str]) -> None:
    """ModelError unless every placeholder in ``text`` is exactly ``{name}`` for an allowed name.

    A format spec or conversion is refused, not only an unknown name: ``{goal:{goal.__class__}}``
    hides attribute access in a nested spec, and ``{goal:>99999999}`` builds 100 MB per item.
    """
    if not isinstance(text, str):
        raise ModelError(f"template {name!r}: its {part} must be text, not {type(text).__name__}")
    try:
        parsed = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        raise ModelError(f"template {name!r}: its {part} is not a valid format string ({exc}); "
                         "double literal braces as {{ }}") from None
    use = f"use only {', '.join('{' + f + '}' for f in sorted(allowed))}"
    for field, spec, conversion in parsed:
        if field not in allowed:
            raise ModelError(f"template {name!r}: unknown placeholder {{{field}}} in its {part}; {use}")
        if spec or conversion:
            raise ModelError(
                f"template {name!r}: placeholder {{{field}}} in its {part} has a format spec or conversion "
                f"('{(':' + spec) if spec else ''}{('!' + conversion) if conversion else ''}'), which templates do not allow; {use}"
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
        if not isinstance(spec, Mapping):
            raise ModelError(f"template {name!r} in config is not a table; write [templates.{name}] with a context")
        if "context" not in spec:
            raise ModelError(f"template {name!r} in config has no 'context'; add one, "
                             "e.g. context = \"Question: {goal}\\nAnswer:\"")
        return Template(name, spec["context"], spec.get("continuation", " {solution}"))
    if name in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[name]
    known = ", ".join(sorted({*BUILTIN_TEMPLATES, *user_templates}))
    raise ModelError(f"unknown template {name!r}: choose one of {known}, or define it in config")
