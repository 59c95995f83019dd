"""The splits of a release folder: which items go in which split, and under which name.

By default the values of the dataset's ``split`` column (any case) name the splits; ``--split-by COLUMN``
takes another column's values; ``--splits NAME=COLUMN:VALUE[|VALUE…]`` (repeated) names each split and the
values that put an item in it. A dataset with no split column is one split, the one its file name says
(``train``, ``validation`` for valid/dev, ``test``), else ``test`` (PIQA-style sets are evaluation sets):
the caller passes it, as ``card --split`` finds it. Every item goes in exactly one split: an item no filter
takes, or two filters take, is refused, never dropped or copied.

A split's name names its files (``data/NAME.parquet``) and is what ``datasets.load_dataset`` calls it, so it
must be what the ``datasets`` library accepts as a split name: letters, digits and ``_``, parts joined by
``.`` (its ``_split_re``); anything else is refused with the value and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import ExportError

DEFAULT_SPLIT = "test"
# The ``datasets`` library's split names (datasets.naming._split_re); a file can carry every such name.
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
SHOWN = 40  # characters of a bad value a message shows


class SplitError(ExportError):
    """The items cannot be put in named splits: one line naming the value and the fix."""


@dataclass(frozen=True)
class SplitRule:
    """A split's name and the values of ``column`` that put an item in it (no column: every item)."""

    name: str
    column: str | None = None
    values: frozenset[str] = field(default_factory=frozenset)

    def takes(self, item: Item) -> bool:
        return self.column is None or item.meta.get(self.column, "") in self.values


def split_column(meta_columns: Sequence[str]) -> str | None:
    """The metadata column that names each item's split (``split``, any case), if the file has one."""
    return next((c for c in meta_columns if c.strip().lower() == "split"), None)


def check_split_name(name: str, where: str, column: str | None = None) -> str:
    """``name`` when ``datasets`` accepts it as a split name (and a file can carry it); SplitError if not,
    saying how to name it (``column``: the column whose value it is)."""
    if SPLIT_NAME.match(name) and name not in (".", ".."):
        return name
    shown = name if len(name) <= SHOWN else name[:SHOWN] + "…"
    slug = re.sub(r"\W+", "_", name).strip("_").lower() or "split_1"
    fix = (
        f"name the splits with --splits, e.g. --splits '{slug}={column}:{shown}'"
        if column is not None
        else f"give it a name of letters, digits and _, e.g. {slug}"
    )
    raise SplitError(f"{where} {shown!r}, which cannot name a split (letters, digits and _ only); {fix}")


def parse_rule(text: str, meta_columns: Sequence[str]) -> SplitRule:
    """One ``--splits NAME=COLUMN:VALUE[|VALUE…]``, checked against the dataset's columns."""
    name, sep, condition = text.partition("=")
    column, colon, values = condition.partition(":")
    if not sep or not colon:  # an empty VALUE takes the items whose column is empty
        raise SplitError(f"--splits {text}: give NAME=COLUMN:VALUE (values joined by |), e.g. test=split:test")
    if column not in meta_columns:
        raise SplitError(f"--splits {text}: the dataset has no column {column!r}; use one of its metadata columns")
    return SplitRule(check_split_name(name.strip(), "--splits names the split"), column, frozenset(values.split("|")))


def split_rules(
    items: Sequence[Item],
    meta_columns: Sequence[str],
    split_by: str | None,
    splits: Sequence[str],
    default: str = DEFAULT_SPLIT,
) -> list[SplitRule]:
    """The rules the options give (see the module docstring), in the order the splits are written."""
    if splits:
        rules = [parse_rule(text, meta_columns) for text in splits]
        names = [rule.name for rule in rules]
        twice = next((name for name in names if names.count(name) > 1), None)
        if twice is not None:
            raise SplitError(f"--splits names the split {twice!r} twice; give each split one NAME=COLUMN:VALUE")
        return rules
    column = split_by if split_by is not None else split_column(meta_columns)
    if split_by is not None and split_by not in meta_columns:
        raise SplitError(f"--split-by {split_by}: the dataset has no such column; use one of its metadata columns")
    if column is None:
        return [SplitRule(default)]
    values = list(dict.fromkeys(item.meta.get(column, "") for item in items))
    where = f"column {column!r} holds the value"
    return [SplitRule(check_split_name(value, where, column), column, frozenset([value])) for value in values]


def assign_splits(items: Sequence[Item], rules: Sequence[SplitRule]) -> dict[str, list[Item]]:
    """Split name → its items in file order; SplitError for an item in no split or in two."""
    found: dict[str, list[Item]] = {rule.name: [] for rule in rules}
    for item in items:
        taking = [rule.name for rule in rules if rule.takes(item)]
        if len(taking) != 1:
            what = "no split takes" if not taking else f"the splits {', '.join(taking)} all take"
            raise SplitError(
                f"{what} item {item.id}; make the --splits filters name every item once (values joined by |)"
            )
        found[taking[0]].append(item)
    empty = next((name for name, taken in found.items() if not taken), None)
    if empty is not None:
        raise SplitError(f"the split {empty!r} takes no item; drop its --splits filter or fix its values")
    return found
