"""The editable fields of an item, the columns that translate them, and the words to highlight.

Pure functions over core objects (no Textual), shared by the item view and
its tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import Dataset
from piqa_tui.core.text.word_diff import differing_spans

# Words in a column name that mark it as another rendering of some text.
_TRANSLATION_WORDS = re.compile(
    r"translat|correct|msa|english|^en$|^eng$|gloss|original|romani[sz]|transliter|fr$|french|arabic|^ar$|normali[sz]ed|fixed|revised"
)
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Field:
    """One editable part of an item: ``name`` is what ``Project.edit`` takes."""

    name: str  # prompt | solution0..3 | label | note | meta:COLUMN
    title: str  # shown on the block

    @property
    def solution(self) -> int | None:
        return int(self.name[8:]) if self.name.startswith("solution") else None


def item_fields(dataset: Dataset, item: Item) -> list[Field]:
    """The fields of ``item`` in screen order: prompt, each solution, label, note, each metadata column."""
    layout = dataset.layout
    fields = [Field("prompt", layout.prompt)]
    fields += [
        Field(f"solution{i}", f"{i + 1} · {col}") for i, col in enumerate(layout.solutions[: len(item.solutions)])
    ]
    fields += [Field("label", layout.label or "label"), Field("note", "note")]
    fields += [Field(f"meta:{column}", column) for column in dataset.meta_columns]
    return fields


def _tokens(name: str) -> list[str]:
    return _TOKEN.findall(name.lower())


def translation_columns(dataset: Dataset) -> dict[str, list[str]]:
    """Metadata columns that translate or correct a field, by field name.

    ``Translated Goal`` → prompt, ``corrected_sol1`` → solution0. A translation
    column that names no field (``msa_translation``, ``english_translation``)
    goes with the prompt: in the datasets we know, that is what it translates.
    """
    layout = dataset.layout
    owners: dict[str, str] = {layout.prompt.lower(): "prompt"}
    for i, col in enumerate(layout.solutions):
        owners[col.lower()] = f"solution{i}"
        owners.setdefault(f"sol{i + 1}", f"solution{i}")
    for alias in ("goal", "prompt", "premise"):
        owners.setdefault(alias, "prompt")
    found: dict[str, list[str]] = {}
    for column in dataset.meta_columns:
        tokens = _tokens(column)
        is_translation = any(_TRANSLATION_WORDS.search(t) for t in tokens)
        if not is_translation:
            continue
        joined = "_".join(tokens)
        owner = next((f for name, f in owners.items() if name in tokens or name == joined), None)
        if owner is None:
            owner = next((f for name, f in owners.items() if len(name) > 3 and name in joined), "prompt")
        found.setdefault(owner, []).append(column)
    return found


def text_suggestion_field(dataset: Dataset, field: str) -> bool:
    """Whether a suggestion for ``field`` is text to review change by change (S): the goal, a solution, a
    translation column; a classified metadata value is kept or turned down whole (K, Z)."""
    if not field.startswith("meta:"):
        return True
    return any(field[5:] in owned for owned in translation_columns(dataset).values())


def solution_spans(solutions: tuple[str, ...], index: int) -> list[tuple[int, int]]:
    """Character spans of the words of solution ``index`` that differ from any other (blank) solution."""
    text = solutions[index]
    if not text.strip():
        return []
    return differing_spans(text, (other for k, other in enumerate(solutions) if k != index and other.strip()))


def label_text(dataset: Dataset, item: Item) -> str:
    """The gold label as a curator reads it: the 1-based solution number and its column."""
    if item.label is None:
        return "none"
    cols = dataset.layout.solutions
    name = cols[item.label] if 0 <= item.label < len(cols) else "?"
    return f"{item.label + 1} ({name})"
