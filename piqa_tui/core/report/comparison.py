"""Several runs side by side: accuracy per run, overall and per value of each grouping column.

A run is one model scored with one template (later, one protocol and
context): a label and its per-item scores. ``compare`` gives, for each run,
``acc``, ``acc_norm``, ``acc_bytes`` and ``n`` (the figures of
``scoring.results.summarise``) over every item and per value of each grouping
column (country, region, topic, sub_topic...), and, where the items carry
ArabCulture's relevance flags, per "country-specific versus not":

* ``relevant_to_this_country`` no: "not relevant to its country";
* else ``relevant_to_other_countries`` yes: "shared with other countries";
* else (no): "country-specific".

Items flagged ``should_discard`` are left out of every figure and counted.
Flags read yes/no, true/false or 1/0 in any case; anything else (an empty
cell included) is an error naming the item, never a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import InputError
from piqa_tui.core.scoring.results import ItemScore, summarise

THIS_COUNTRY = "relevant_to_this_country"
OTHER_COUNTRIES = "relevant_to_other_countries"
DISCARD = "should_discard"
FLAG_COLUMNS = (THIS_COUNTRY, OTHER_COUNTRIES, DISCARD)

SPECIFICITY = "country-specific"  # the grouping made from the relevance flags
SPECIFIC, SHARED, NOT_RELEVANT = "country-specific", "shared with other countries", "not relevant to its country"

_TRUE = frozenset({"yes", "true", "1"})
_FALSE = frozenset({"no", "false", "0"})

Figures = dict[str, object]  # summarise's keys: n, n_unlabelled, acc, acc_norm, acc_bytes, mean_margin


@dataclass(frozen=True)
class RunScores:
    """One run: its label (``model · template``) and its per-item scores."""

    label: str
    scores: Sequence[ItemScore]


@dataclass(frozen=True)
class Comparison:
    """What ``compare`` found; figures are ``summarise`` dicts."""

    runs: tuple[str, ...]
    overall: dict[str, Figures]  # run label -> figures over every kept item
    groups: dict[str, dict[str, dict[str, Figures]]]  # column -> value -> run label -> figures
    n_items: int  # items kept (the discarded ones excluded)
    discarded: tuple[str, ...]  # ids of the items flagged should_discard


def read_flag(item: Item, column: str) -> bool:
    """The yes/no value of ``column`` on ``item``; InputError when it is neither."""
    value = item.meta.get(column, "")
    word = value.strip().casefold()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    shown = repr(value) if value.strip() else "empty"
    raise InputError(
        f"item {item.id} (row {item.row}): {column} is {shown}, which is neither yes nor no; "
        "write yes or no there (true/false and 1/0 are read too)"
    )


def relevance(item: Item, present: Iterable[str]) -> str | None:
    """The item's country-specific grouping value from the flag columns ``present``; None without them."""
    present = set(present)
    if THIS_COUNTRY in present and not read_flag(item, THIS_COUNTRY):
        return NOT_RELEVANT
    if OTHER_COUNTRIES not in present:
        return None
    return SHARED if read_flag(item, OTHER_COUNTRIES) else SPECIFIC


def _flag_columns(items: Sequence[Item]) -> list[str]:
    """The relevance flag columns the items carry."""
    return [c for c in FLAG_COLUMNS if any(c in item.meta for item in items)]


def check_flags(items: Sequence[Item]) -> None:
    """InputError on the first relevance flag that reads as neither yes nor no (before any model runs)."""
    flags = _flag_columns(items)
    for item in items:
        for column in flags:
            read_flag(item, column)


def compare(runs: Sequence[RunScores], items: Sequence[Item], columns: Sequence[str] = ()) -> Comparison:
    """Accuracy of each run overall and per value of each of ``columns`` (and of the relevance flags).

    Scores of items not in ``items`` are ignored; a run that did not score an
    item simply has it in none of its figures (its ``n`` says how many it has).
    """
    labels = [run.label for run in runs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"run labels must be unique, got {labels}")
    flags = _flag_columns(items)
    discarded = tuple(item.id for item in items if DISCARD in flags and read_flag(item, DISCARD))
    dropped = set(discarded)
    kept = [item for item in items if item.id not in dropped]
    kept_ids = {item.id for item in kept}
    by_run = {run.label: [s for s in run.scores if s.item_id in kept_ids] for run in runs}
    groupings = {c: {item.id: item.meta.get(c) for item in kept} for c in columns if c not in FLAG_COLUMNS}
    if {THIS_COUNTRY, OTHER_COUNTRIES} & set(flags):
        groupings[SPECIFICITY] = {item.id: relevance(item, flags) for item in kept}
    groups: dict[str, dict[str, dict[str, Figures]]] = {}
    for column, values in groupings.items():
        table: dict[str, dict[str, Figures]] = {}
        for label, scores in by_run.items():
            per_value = cast(dict[str, Figures], summarise(scores, values)["groups"])
            for value, figures in per_value.items():
                table.setdefault(value, {})[label] = figures
        groups[column] = {value: table[value] for value in sorted(table)}
    return Comparison(
        runs=tuple(by_run),
        overall={label: summarise(scores) for label, scores in by_run.items()},
        groups=groups,
        n_items=len(kept),
        discarded=discarded,
    )
