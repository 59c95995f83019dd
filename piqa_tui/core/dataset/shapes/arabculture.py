"""ArabCulture's published JSONL shape: options and answer key nested in objects.

A row of MBZUAI/ArabCulture holds ``options: {text: [...], arabic_keys: [...],
english_keys: [...]}`` and ``answer_key: {arabic_answer_key, english_answer_key}``
beside flat columns (``first_statement``, ``country``, ``region``, ``sub_topic``,
the relevance flags). Read, it becomes flat columns the layout detector knows
(``option_a..``, ``answer`` = the English key, the other keys as metadata
columns, in the same place); written, it is nested back exactly as it was. Registered as the shape
``arabculture`` of JSON lines files (``shapes/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

SOLUTION_COLUMNS = ("option_a", "option_b", "option_c", "option_d")
LABEL_COLUMN = "answer"
OPTIONS, ANSWER = "options", "answer_key"
OPTION_KEYS = ("text", "arabic_keys", "english_keys")
ANSWER_KEYS = ("arabic_answer_key", "english_answer_key")
_FLAT_NAMES = {*SOLUTION_COLUMNS, LABEL_COLUMN, *OPTION_KEYS[1:], ANSWER_KEYS[0]}


class ArabCulture:
    """ArabCulture's nested rows (see the module docstring), a ``DatasetShape``."""

    name = "arabculture"
    formats = ("jsonl",)

    def recognises(self, rows: Sequence[dict[str, object]]) -> bool:
        return is_nested_culture(rows)

    def flatten(self, row: dict[str, object]) -> dict[str, object]:
        return flatten(row)

    def nest(self, flat: dict[str, object]) -> dict[str, object]:
        return nest(flat)


def is_nested_culture(rows: Sequence[dict[str, object]]) -> bool:
    """Whether every row has ArabCulture's nested options and answer key (and nothing its flat names would hide)."""
    return bool(rows) and all(_nested_row(row) for row in rows)


def _nested_row(row: dict[str, object]) -> bool:
    options, answer = row.get(OPTIONS), row.get(ANSWER)
    return (
        isinstance(options, dict)
        and isinstance(answer, dict)
        and set(options) <= set(OPTION_KEYS)
        and set(answer) <= set(ANSWER_KEYS)
        and isinstance(options.get("text"), list)
        and 2 <= len(options["text"]) <= len(SOLUTION_COLUMNS)
        and "english_answer_key" in answer
        and not _FLAT_NAMES & set(row)
    )


def flatten(row: dict[str, object]) -> dict[str, object]:
    """One nested row as flat columns, each in the place of the object it came from."""
    flat: dict[str, object] = {}
    for key, value in row.items():
        if key == OPTIONS and isinstance(value, dict):  # a dict in every row ``is_nested_culture`` accepts
            for sub, inner in value.items():
                if sub == "text":
                    flat.update(zip(SOLUTION_COLUMNS, inner))
                else:
                    flat[sub] = inner
        elif key == ANSWER and isinstance(value, dict):
            for sub, inner in value.items():
                flat[LABEL_COLUMN if sub == "english_answer_key" else sub] = inner
        else:
            flat[key] = value
    return flat


def nest(flat: dict[str, object]) -> dict[str, object]:
    """A flat row (``flatten``'s shape, values maybe edited) nested back as ArabCulture writes it."""
    row: dict[str, object] = {}
    options: dict[str, object] = {}
    texts: list[object] = []
    answer: dict[str, object] = {}
    for key, value in flat.items():
        if key in SOLUTION_COLUMNS or key in OPTION_KEYS:
            row.setdefault(OPTIONS, options)  # in the place of the first of its columns
            if key in SOLUTION_COLUMNS:
                options.setdefault("text", texts)
                texts.append(value)
            else:
                options[key] = value
        elif key == LABEL_COLUMN or key in ANSWER_KEYS:
            row.setdefault(ANSWER, answer)
            answer[ANSWER_KEYS[1] if key == LABEL_COLUMN else key] = value
        else:
            row[key] = value
    return row
