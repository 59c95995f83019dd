"""Setting metadata columns (region, topic, country, ...) on many items at once, as one undoable action.

A metadata value is an item field like any other (``meta:COLUMN``): the edit is recorded as ``edit`` events,
so it travels with a merge, conflicts with an edit of the same item's column made on another copy, and undoes
as one action. Only the dataset's own columns can be set (a new column would have nowhere to go in the file),
and typed values are stored in NFC, the product's rule for stored text."""

from __future__ import annotations

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.characters import is_typeable, nfc
from piqa_tui.core.workspace.log import Change, Part
from piqa_tui.core.workspace.project import Project, field_value

META_PREFIX = "meta:"  # the field name of a metadata column in the log


class MetadataError(PiqaError):
    """A metadata edit that cannot be recorded: one line saying what to do."""


def meta_field(column: str) -> str:
    """The log's field name of metadata ``column``."""
    return META_PREFIX + column


def column_values(project: Project, column: str) -> list[str]:
    """The distinct non-empty values ``column`` holds now, most used first (ties in file order): what an
    editor offers for it."""
    counts: dict[str, int] = {}
    for item in project.items:
        value = item.meta.get(column, "")
        if value.strip():
            counts[value] = counts.get(value, 0) + 1
    return sorted(counts, key=lambda value: -counts[value])


def parse_settings(project: Project, settings: list[str]) -> dict[str, str]:
    """``{column: value}`` of ``COLUMN=VALUE`` texts (values in NFC); one line naming the first that is not
    of the file's columns or whose value holds a control character (a tab or line break no TSV can keep)."""
    columns = project.dataset.meta_columns
    values: dict[str, str] = {}
    for setting in settings:
        column, sep, value = setting.partition("=")
        if not sep or column not in columns:
            have = ", ".join(columns[:10]) or "none"
            raise MetadataError(f"--set {setting}: give COLUMN=VALUE with one of the file's columns (have: {have})")
        if value and not is_typeable(value):
            raise MetadataError(
                f"--set {column}=…: a metadata value is text on one line; leave out tabs, line breaks and other control characters"
            )
        values[column] = nfc(value)
    return values


def metadata_part(project: Project, item_ids: list[str], values: dict[str, str]) -> Part | None:
    """The ``edit`` changes setting ``values`` on ``item_ids`` (None: every item holds them already)."""
    changes = []
    for item_id in dict.fromkeys(item_ids):
        item = project.item(item_id)  # an unknown id is one line, before anything is recorded
        for column, value in values.items():
            old = field_value(item, meta_field(column))
            if old != value:
                changes.append(Change(item.id, meta_field(column), old, value))
    return Part("edit", tuple(changes)) if changes else None
