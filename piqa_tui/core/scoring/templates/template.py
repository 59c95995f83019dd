"""One prompt template: how an item becomes one context and a continuation per solution.

A template is checked when it is made (only its known placeholders), so a bad
user template fails at load with its name, never halfway through a run. The
templates themselves are data (TOML files, read by ``files``).
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.backend import ScoreRequest

LETTERS = "ABCDEFGHIJ"
# No model context holds this many characters (128k tokens are about 500,000 characters of English):
# an item beyond it is refused before tokenizing, which alone would take a minute at 10 MB.
MAX_REQUEST_CHARS = 1_000_000
DEFAULT_TEMPLATE = "piqa"
DEFAULT_OPTION_LINE = "{letter}. {solution}"
DEFAULT_OPTION_SEPARATOR = "\n"

# Placeholders a template may use; anything else is a typo the user should hear about.
# ``{meta:COLUMN}`` (any metadata column of the item) is allowed in every part but the option line.
CONTEXT_FIELDS = frozenset({"goal", "prompt", "question", "options"})
CONTINUATION_FIELDS = frozenset({"solution", "letter", "index"})
OPTION_FIELDS = frozenset({"solution", "letter", "index"})
META = "meta"


@dataclass(frozen=True, slots=True)
class MetaRule:
    """How one metadata column appears in a prompt: translated values, and what stands in for a missing one.

    ``values`` maps the column's values (aliases included) to the text shown;
    a value it lacks is an error unless ``keep_unknown``, so an English word
    never slips silently into an Arabic prompt. ``default`` (None: none) is
    shown when the item has no value in the column.
    """

    column: str
    values: tuple[tuple[str, str], ...] = ()
    default: str | None = None
    keep_unknown: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "column": self.column,
            "values": dict(self.values),
            "default": self.default,
            "keep_unknown": self.keep_unknown,
        }


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True, slots=True)
class Template:
    """How an item becomes one context and one continuation per solution.

    ``context`` may use ``{goal}`` (= ``{prompt}``), ``{question}`` (COPA's
    cause/effect, empty elsewhere), ``{options}`` (the solutions, one
    ``option_line`` each, joined by ``option_separator``) and ``{meta:COLUMN}``;
    ``continuation`` may use ``{solution}``, ``{letter}``, ``{index}`` and
    ``{meta:COLUMN}``. The whitespace that opens ``continuation`` is the target
    delimiter: it is scored but, as in lm-evaluation-harness, not counted in
    the length that ``acc_norm`` divides by. ``strip`` strips the prompt and the
    option texts where they appear in the context (lm-eval's arab_culture does;
    continuations are never stripped).
    """

    name: str
    context: str
    continuation: str
    letters: tuple[str, ...] = tuple(LETTERS)
    option_line: str = DEFAULT_OPTION_LINE
    option_separator: str = DEFAULT_OPTION_SEPARATOR
    strip: bool = False
    meta: tuple[MetaRule, ...] = ()
    language: str = field(default="", compare=False)
    description: str = field(default="", compare=False)
    source: str = field(default="", compare=False)  # the file (or config table) it came from

    def __post_init__(self) -> None:
        check_placeholders(self.name, "context", self.context, CONTEXT_FIELDS, meta=True)
        check_placeholders(self.name, "continuation", self.continuation, CONTINUATION_FIELDS, meta=True)
        check_placeholders(self.name, "option_line", self.option_line, OPTION_FIELDS)
        if not self.letters or any(not isinstance(x, str) or not x for x in self.letters):
            raise TemplateError(f"template {self.name!r}: letters must be a list of non-empty texts")

    @property
    def key(self) -> str:
        """Identifies the template's text for the score cache: name plus a hash of everything that renders.

        A template with only a context and a continuation hashes exactly as before
        templates had more parts, so the scores cached for it stay valid.
        """
        text = f"{self.context}\x00{self.continuation}"
        extra = self._extra_parts()
        if extra:
            text += "\x00" + json.dumps(extra, ensure_ascii=False, sort_keys=True)
        return f"{self.name}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"

    def _extra_parts(self) -> dict[str, object]:
        extra: dict[str, object] = {}
        if self.letters != tuple(LETTERS):
            extra["letters"] = list(self.letters)
        if self.option_line != DEFAULT_OPTION_LINE:
            extra["option_line"] = self.option_line
        if self.option_separator != DEFAULT_OPTION_SEPARATOR:
            extra["option_separator"] = self.option_separator
        if self.strip:
            extra["strip"] = True
        if self.meta:
            extra["meta"] = [rule.to_json() for rule in self.meta]
        return extra

    @property
    def delimiter(self) -> str:
        return self.continuation[: len(self.continuation) - len(self.continuation.lstrip())]

    @property
    def lettered(self) -> bool:
        return "{letter}" in self.continuation or "{index}" in self.continuation

    def meta_columns(self) -> list[str]:
        """The metadata columns the template shows, in order of first use."""
        found: dict[str, None] = {}
        for text in (self.context, self.continuation):
            found.update((spec, None) for _, f, spec, _ in string.Formatter().parse(text) if f == META and spec)
        return list(found)

    def render_context(self, item: Item) -> str:
        self._check_letters(item)
        clean = str.strip if self.strip else str
        options = self.option_separator.join(
            render_placeholders(
                self.option_line, {"solution": clean(s), "letter": self.letters[i], "index": str(i)}, None
            )
            for i, s in enumerate(item.solutions)
        )
        prompt = clean(item.prompt)
        values = {"goal": prompt, "prompt": prompt, "question": item.question or "", "options": options}
        return render_placeholders(self.context, values, lambda column: self._meta_value(item, column))

    def render_continuations(self, item: Item) -> tuple[str, ...]:
        self._check_letters(item)
        meta = lambda column: self._meta_value(item, column)
        return tuple(
            render_placeholders(self.continuation, {"solution": s, "letter": self.letters[i], "index": str(i)}, meta)
            for i, s in enumerate(item.solutions)
        )

    def _check_letters(self, item: Item) -> None:
        if len(item.solutions) > len(self.letters):
            raise TemplateError(
                f"item {item.id} has {len(item.solutions)} solutions but template {self.name!r} declares "
                f"{len(self.letters)} letters ({' '.join(self.letters)}); add letters to the template"
            )

    def _meta_value(self, item: Item, column: str) -> str:
        """The item's value in ``column`` as the template shows it; TemplateError when there is none to show."""
        rule = next((r for r in self.meta if r.column == column), None)
        value = item.meta.get(column)
        if value is None or not value.strip():
            if rule is not None and rule.default is not None:
                return rule.default
            where = "has no column" if value is None else "has an empty value in column"
            raise TemplateError(
                f"item {item.id} {where} {column!r}, which template {self.name!r} shows as {{meta:{column}}}; "
                f'fill it, or give the template a default ([meta.{column}] default = "...")'
            )
        if rule is None or not rule.values:
            return value
        table = dict(rule.values)
        if value in table:
            return table[value]
        if value.strip() in table:
            return table[value.strip()]
        if rule.keep_unknown:
            return value
        raise TemplateError(
            f"item {item.id}: template {self.name!r} cannot translate {value!r} in column {column!r} "
            f"(it knows {', '.join(table)}); add it to the template's [meta.{column}.values] or fix the item"
        )

    def request(self, item: Item) -> ScoreRequest:
        if not 2 <= len(item.solutions) <= len(LETTERS):
            raise TemplateError(
                f"item {item.id} has {len(item.solutions)} solutions: "
                f"scoring needs between 2 and {len(LETTERS)}; fix the item"
            )
        request = ScoreRequest(self.render_context(item), self.render_continuations(item))
        size = len(request.context) + sum(map(len, request.continuations))
        if size > MAX_REQUEST_CHARS:  # refused before the tokenizer spends a minute on 10 MB
            raise TemplateError(
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

    def solution_only(self) -> Template:
        """The same scoring with no prompt: what a model picks from the solutions alone.

        A lettered template has nothing to score without its options, so its
        baseline scores the solution texts instead.
        """
        continuation = " {solution}" if self.lettered else self.continuation
        return Template(
            f"{self.name}+solution-only", "", continuation, meta=self.meta, language=self.language, source=self.source
        )


def render_placeholders(text: str, values: Mapping[str, str], meta: Callable[[str], str] | None) -> str:
    """``text`` with its (already checked) placeholders filled: plain names from ``values``, ``{meta:C}`` by ``meta``."""
    parts: list[str] = []
    for literal, name, spec, _ in string.Formatter().parse(text):
        parts.append(literal)
        if name is None:
            continue
        parts.append(meta(spec or "") if name == META and meta is not None else values[name])
    return "".join(parts)


def check_placeholders(name: str, part: str, text: object, allowed: frozenset[str], meta: bool = False) -> None:
    """TemplateError unless every placeholder in ``text`` is exactly ``{name}`` for an allowed name.

    A format spec or conversion is refused, not only an unknown name: ``{goal:{goal.__class__}}``
    hides attribute access in a nested spec, and ``{goal:>99999999}`` builds 100 MB per item.
    The one spec allowed is ``{meta:COLUMN}``'s column name (no braces, no conversion).
    """
    if not isinstance(text, str):
        raise TemplateError(f"template {name!r}: its {part} must be text, not {type(text).__name__}")
    try:
        parsed = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        raise TemplateError(
            f"template {name!r}: its {part} is not a valid format string ({exc}); double literal braces as {{{{ }}}}"
        ) from None
    names = sorted(allowed) + (["meta:COLUMN"] if meta else [])
    use = f"use only {', '.join('{' + f + '}' for f in names)}"
    for field_name, spec, conversion in parsed:
        if meta and field_name == META:
            if not spec or conversion or "{" in spec or "}" in spec:
                raise TemplateError(
                    f"template {name!r}: {{meta:...}} in its {part} must name a column, e.g. {{meta:country}}; {use}"
                )
            continue
        if field_name not in allowed:
            raise TemplateError(f"template {name!r}: unknown placeholder {{{field_name}}} in its {part}; {use}")
        if spec or conversion:
            raise TemplateError(
                f"template {name!r}: placeholder {{{field_name}}} in its {part} has a format spec or conversion "
                f"('{(':' + spec) if spec else ''}{('!' + conversion) if conversion else ''}'), which templates do not allow; {use}"
            )
