"""Validate's rules: the minimal-pair and schema checks run on every item.

Each rule has a name a user can filter on (``--rule``/``--skip``) and a level:
an ``error`` makes ``validate`` exit 1, a ``warning`` is reported only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from piqa_tui.core.dataset.frames import text_frame
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import (
    BIDI_CONTROLS,
    JOINERS,
    ZERO_WIDTH,
    has_stray_controls,
    is_nfc,
    nfc,
    stray_controls,
    words,
)
from piqa_tui.core.text.word_diff import word_diff


@dataclass(frozen=True)
class Rule:
    name: str
    level: str  # "error" | "warning"
    summary: str


RULES: dict[str, Rule] = {
    r.name: r
    for r in [
        Rule("empty-text", "error", "the prompt or a solution is empty"),
        Rule("identical-solutions", "error", "two solutions are the same text"),
        Rule("too-many-differences", "warning", "solutions differ by more than N words (default 2)"),
        Rule("label-missing", "error", "the item has no gold label"),
        Rule("label-out-of-range", "error", "the label names a solution the item does not have"),
        Rule("duplicate-id", "error", "two items share an id"),
        Rule("not-nfc", "warning", "text is not in Unicode NFC"),
        Rule("control-characters", "warning", "stray bidi, zero-width or terminal control characters (ESC, C0, C1)"),
        Rule("whitespace", "warning", "leading or trailing whitespace, or doubled spaces"),
        Rule("too-short", "warning", "prompt and solutions together have fewer than N words (off by default)"),
    ]
}


@dataclass(frozen=True, slots=True)
class Problem:
    item_id: str
    rule: str
    detail: str
    row: int

    @property
    def level(self) -> str:
        return RULES[self.rule].level

    def to_json(self) -> dict[str, object]:
        return {
            "item_id": self.item_id,
            "row": self.row + 1,
            "rule": self.rule,
            "level": self.level,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class CheckConfig:
    max_differences: int = 2
    min_words: int = 0  # 0 = the length policy is off
    rules: frozenset[str] | None = None  # only these (None = all)
    skip: frozenset[str] = frozenset()

    def wants(self, rule: str) -> bool:
        return (self.rules is None or rule in self.rules) and rule not in self.skip


def _fields(item: Item) -> list[tuple[str, str]]:
    """The item's texts with the names people use: solutions are numbered from 1, as in the TUI."""
    return [("prompt", item.prompt), *((f"solution {i + 1}", s) for i, s in enumerate(item.solutions))]


def check_item(item: Item, config: CheckConfig = CheckConfig(), labels_look_one_based: bool = False) -> list[Problem]:
    """Every problem of one item (duplicate ids need the whole set: see ``check_items``)."""
    found: list[Problem] = []

    def add(rule: str, detail: str) -> None:
        if config.wants(rule):
            found.append(Problem(item.id, rule, detail, item.row))

    fields = _fields(item)
    joined = item.text
    suspicious = not is_nfc(joined) or has_stray_controls(joined)  # one pass over the item, not one per field
    for name, text in fields:
        if not text.strip():
            add("empty-text", f"{name} is empty")
            continue
        if text != text.strip():
            add("whitespace", f"{name} has leading or trailing whitespace")
        elif "  " in text:
            add("whitespace", f"{name} has doubled spaces")
        if not suspicious:
            continue
        if not is_nfc(text):
            add(
                "not-nfc",
                f"{name} is not NFC ({len(text)} code points, {len(nfc(text))} after NFC); save it normalised",
            )
        controls = stray_controls(text)
        if controls:
            add("control-characters", f"{name} has {', '.join(sorted(set(controls)))}")
    sols = item.solutions
    for i in range(len(sols)):
        for j in range(i + 1, len(sols)):
            if sols[i].strip() and sols[i].strip() == sols[j].strip():
                add("identical-solutions", f"solution {i + 1} and solution {j + 1} are identical")
            elif config.wants("too-many-differences") and sols[i].strip() and sols[j].strip():
                diff = word_diff(sols[i], sols[j])
                if diff.size > config.max_differences:
                    shown = f"{' '.join(diff.a_text) or '∅'} / {' '.join(diff.b_text) or '∅'}"
                    add(
                        "too-many-differences",
                        f"solution {i + 1} and solution {j + 1} differ by {diff.size} words (max {config.max_differences}): {shown}",
                    )
    if item.label is None:
        add("label-missing", "no gold label")
    elif not 0 <= item.label < len(sols):
        hint = (
            " (labels look 1-based: map them with --map label_base=1, or in the TUI)" if labels_look_one_based else ""
        )
        target = f"points to solution {item.label + 1}" if item.label >= 0 else f"is {item.label}"
        add("label-out-of-range", f"the gold label {target}, but the item has {len(sols)} solutions{hint}")
    if config.min_words and config.wants("too-short"):
        total = sum(len(words(text)) for _, text in fields)
        if total < config.min_words:
            add("too-short", f"{total} words in prompt and solutions; the policy asks for at least {config.min_words}")
    return found


def suspects(items: list[Item], config: CheckConfig = CheckConfig()) -> list[int]:
    """Positions of the items that may have a problem; every other item is certainly clean.

    A vectorised pass (polars, in Rust) over all the text answers the common
    case, a clean item, without per-item Python; ``check_item`` then runs only
    on these positions and decides. Every test here is a superset of the
    rule it stands for, so no problem is missed:

    * empty, whitespace, identical solutions: the same tests, on columns;
    * not NFC: polars' NFC form differs from the text;
    * control characters: any bidi, zero-width or joiner character at all
      (joiners inside words are fine, so ``check_item`` has the last word);
    * too many differences: solutions with a different number of
      whitespace-separated words, or more than min(N, 2) positions whose raw
      words differ. Up to two differing positions, ``word_diff`` compares in
      place, words without case and edge punctuation, so it finds at most the
      raw count; beyond two it aligns the words and may find more;
    * labels, and the too-short policy when it is on.
    """
    import polars as pl

    if not items:
        return []
    frame = text_frame(items)
    names = frame.columns
    width = len(names) - 1
    # Rust regex escapes for the C0/C1 ranges (ESC among them); \x1c-\x1f are also str.split() whitespace that \\s is not.
    controls = f"[{re.escape(BIDI_CONTROLS + ZERO_WIDTH + JOINERS)}\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f]"
    field_tests = []
    for name in names:
        col = pl.col(name)
        stripped = col.str.strip_chars()
        field_tests.append(
            (stripped == "")
            | (stripped != col)
            | col.str.contains("  ", literal=True)
            | (col.str.normalize("NFC") != col)
            | col.str.contains(controls)
        )
    pair_tests = []
    for a in range(width):
        for b in range(a + 1, width):
            sa, sb = pl.col(f"s{a}").str.strip_chars(), pl.col(f"s{b}").str.strip_chars()
            pair_tests.append(sa == sb)
    flagged = frame.select(pl.any_horizontal(*field_tests, *pair_tests).fill_null(False).alias("x"))["x"]
    suspect = set(flagged.arg_true().to_list())
    if config.wants("too-many-differences") and width > 1:
        suspect.update(_many_differences(frame, width, config.max_differences))
    for pos, item in enumerate(items):
        if item.label is None or not 0 <= item.label < len(item.solutions):
            suspect.add(pos)
    if config.min_words and config.wants("too-short"):
        counts = frame.select(pl.sum_horizontal(pl.all().str.count_matches(r"\S+").fill_null(0)).alias("w"))["w"]
        suspect.update((counts < config.min_words).arg_true().to_list())
    return sorted(suspect)


def _many_differences(frame, width: int, limit: int) -> list[int]:  # noqa: ANN001 (a polars DataFrame)
    """Rows where some pair of solutions may differ by more than ``limit`` words (see ``suspects``)."""
    import polars as pl

    words = frame.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"),
        *(pl.col(f"s{k}").str.extract_all(r"\S+").alias(f"s{k}") for k in range(width)),
    )
    found: set[int] = set()
    for a in range(width):
        for b in range(a + 1, width):
            pair = words.select("row", pl.col(f"s{a}").alias("a"), pl.col(f"s{b}").alias("b")).drop_nulls()
            same = pl.col("a").list.len() == pl.col("b").list.len()
            found.update(pair.filter(~same)["row"].to_list())
            aligned = pair.filter(same).explode(["a", "b"])
            differing = aligned.filter(pl.col("a") != pl.col("b")).group_by("row").len()
            found.update(differing.filter(pl.col("len") > min(limit, 2))["row"].to_list())
    return list(found)


def labels_look_one_based(items: list[Item]) -> bool:
    """True when no label points to the first solution and some point one past the last: 1-based labels read as 0-based."""
    labels = [i.label for i in items if i.label is not None]
    return bool(labels) and min(labels) >= 1 and max(labels) == max(len(i.solutions) for i in items)


def check_items(
    items: list[Item], raw_ids: list[str] | None = None, config: CheckConfig = CheckConfig()
) -> list[Problem]:
    """Problems of every item, in file order, including ids used more than once."""
    one_based = labels_look_one_based(items)
    problems: list[Problem] = []
    for pos in suspects(items, config):
        problems.extend(check_item(items[pos], config, one_based))
    if raw_ids is not None and config.wants("duplicate-id") and len(set(raw_ids)) != len(raw_ids):
        counts = Counter(raw_ids)
        for item, raw in zip(items, raw_ids):
            if counts[raw] > 1:
                known_as = f" (known here as '{item.id}')" if item.id != raw else ""
                detail = f"id '{raw}' is used by {counts[raw]} items{known_as}; give each row an id of its own"
                problems.append(Problem(item.id, "duplicate-id", detail, item.row))
        problems.sort(key=lambda p: p.row)
    return problems


def summary(problems: Iterable[Problem]) -> dict[str, int]:
    """Problem counts per rule."""
    return dict(Counter(p.rule for p in problems))
