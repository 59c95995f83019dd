"""Inter-annotator agreement on gold-label votes: Fleiss' κ, Cohen's κ, Krippendorff's α.

Input is the latest vote per item and annotator as ``(item_id, annotator, choice)``
triples, with "unsure/skip" votes already left out by the caller. Choices are
0-based category codes. Everything is computed with numpy from integer-coded
count matrices, so 100,000 items cost well under a second.

The values equal statsmodels' ``fleiss_kappa``, scikit-learn's
``cohen_kappa_score`` and the ``krippendorff`` package (nominal) on the same
votes. A value that is mathematically undefined is ``None`` with a reason; it is
never shown as 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

Vote = tuple[str, str, int]
Weights = Literal["linear", "quadratic"] | None

ALL_ONE_CATEGORY = "every vote is in one category: expected agreement is 1, {} undefined"
NO_MULTI_VOTE_ITEMS = "no item has 2 or more votes"


# --------------------------------------------------------------------------- votes


@dataclass(frozen=True, eq=False)
class VoteTable:
    """Votes encoded as parallel integer arrays, so every measure is a few numpy calls.

    Annotator codes follow the sorted annotator names; item codes follow first
    appearance. Build one with :meth:`from_votes` and pass it to any function
    here instead of the triples to skip re-encoding.
    """

    item: np.ndarray
    annotator: np.ndarray
    choice: np.ndarray
    items: tuple[str, ...]
    annotators: tuple[str, ...]
    n_categories: int

    @classmethod
    def from_votes(cls, votes: Iterable[Vote], n_categories: int | None = None) -> VoteTable:
        """Encode ``(item_id, annotator, choice)`` triples; raise ValueError on bad or repeated votes."""
        triples = list(votes)
        item_ids = [t[0] for t in triples]
        names = [t[1] for t in triples]
        item_codes: dict[str, int] = {}
        item = np.fromiter((item_codes.setdefault(i, len(item_codes)) for i in item_ids), np.int64, len(triples))
        annotators = tuple(sorted(set(names)))
        ann_codes = {a: k for k, a in enumerate(annotators)}
        annotator = np.fromiter((ann_codes[a] for a in names), np.int64, len(triples))
        choice = np.fromiter((t[2] for t in triples), np.int64, len(triples))
        k = _category_count(choice, n_categories)
        table = cls(item, annotator, choice, tuple(item_codes), annotators, k)
        table._check_unique()
        return table

    def _check_unique(self) -> None:
        """Reject a second vote by one annotator on one item: the caller must pass the latest only."""
        key = self.item * max(len(self.annotators), 1) + self.annotator
        uniq, counts = np.unique(key, return_counts=True)
        if len(uniq) < len(key):
            dup = int(uniq[np.argmax(counts > 1)])
            item, ann = divmod(dup, len(self.annotators))
            raise ValueError(
                f"annotator {self.annotators[ann]!r} voted more than once on item "
                f"{self.items[item]!r}; pass only the latest vote"
            )

    def subset(self, mask: np.ndarray) -> VoteTable:
        """The votes where ``mask`` is true, re-coded compactly (annotators keep their names)."""
        item_idx, item = np.unique(self.item[mask], return_inverse=True)
        ann_idx, annotator = np.unique(self.annotator[mask], return_inverse=True)
        return VoteTable(
            item.astype(np.int64),
            annotator.astype(np.int64),
            self.choice[mask],
            tuple(self.items[i] for i in item_idx),
            tuple(self.annotators[a] for a in ann_idx),
            self.n_categories,
        )

    @property
    def n_votes(self) -> int:
        return len(self.choice)

    @cached_property
    def counts(self) -> np.ndarray:
        """Items × categories matrix of vote counts: the input of Fleiss' κ and Krippendorff's α."""
        k = self.n_categories
        flat = np.bincount(self.item * k + self.choice, minlength=len(self.items) * k)
        return flat.reshape(len(self.items), k)


def _category_count(choice: np.ndarray, n_categories: int | None) -> int:
    """Check the codes are in ``0..n_categories-1`` (or infer the count as max + 1)."""
    if len(choice) and choice.min() < 0:
        raise ValueError(f"choice {int(choice.min())} is negative; choices are 0-based category codes")
    top = int(choice.max()) + 1 if len(choice) else 0
    if n_categories is None:
        return max(top, 1)
    if top > n_categories:
        raise ValueError(f"choice {top - 1} is out of range for {n_categories} categories")
    return n_categories


def _table(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> VoteTable:
    """Accept triples or an already encoded table."""
    if isinstance(votes, VoteTable):
        return votes
    return VoteTable.from_votes(votes, n_categories)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Measure:
    """One agreement value, or ``None`` with the reason it is undefined; ``n`` is what it rests on."""

    value: float | None
    reason: str | None = None
    n: int = 0

    @classmethod
    def undefined(cls, reason: str, n: int = 0) -> Measure:
        return cls(None, reason, n)

    @property
    def defined(self) -> bool:
        return self.value is not None


@dataclass(frozen=True, slots=True)
class FleissKappa:
    """Fleiss' κ over the items that have the modal number of raters; the rest are left out."""

    value: float | None
    reason: str | None
    raters_per_item: int
    items_used: int
    items_left_out: int

    @property
    def measure(self) -> Measure:
        return Measure(self.value, self.reason, self.items_used)


# --------------------------------------------------------------------------- measures


def fleiss_kappa(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> FleissKappa:
    """Fleiss' κ (as statsmodels' ``fleiss_kappa``), on the items with the modal number of raters.

    Fleiss' κ needs the same number of raters on every item, so it uses the most
    common count among items with 2+ votes (ties go to the larger count) and
    reports how many items with votes were left out.
    """
    table = _table(votes, n_categories)
    counts = table.counts
    raters = counts.sum(axis=1)
    voted = int((raters > 0).sum())
    multi = raters[raters >= 2]
    if not len(multi):
        return FleissKappa(None, NO_MULTI_VOTE_ITEMS, 0, 0, voted)
    freq = np.bincount(multi)
    m = int(len(freq) - 1 - np.argmax(freq[::-1]))  # modal count, larger on ties
    used = counts[raters == m]
    left_out = voted - len(used)
    totals = used.sum(axis=0)
    if np.count_nonzero(totals) < 2:
        return FleissKappa(None, ALL_ONE_CATEGORY.format("κ"), m, len(used), left_out)
    p_item = ((used * used).sum(axis=1) - m) / (m * (m - 1))
    p_cat = totals / totals.sum()
    p_e = float(p_cat @ p_cat)
    kappa = (float(p_item.mean()) - p_e) / (1.0 - p_e)
    return FleissKappa(kappa, None, m, len(used), left_out)


def krippendorff_alpha(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> Measure:
    """Krippendorff's α, nominal: any number of raters per item, missing votes allowed.

    Built from the coincidence matrix; only items with 2+ votes are pairable, so
    ``n`` is the number of those items.
    """
    counts = _table(votes, n_categories).counts
    raters = counts.sum(axis=1)
    pairable = raters >= 2
    c, m = counts[pairable], raters[pairable]
    if not len(m):
        return Measure.undefined(NO_MULTI_VOTE_ITEMS)
    n = float(m.sum())
    within = float(((c * (c - 1)).sum(axis=1) / (m - 1)).sum())  # diagonal of coincidences
    n_c = c.sum(axis=0).astype(float)
    expected = n * n - float(n_c @ n_c)
    if expected == 0:
        return Measure.undefined(ALL_ONE_CATEGORY.format("α"), len(m))
    return Measure(1.0 - (n - 1.0) * (n - within) / expected, None, len(m))


def percent_unanimous(votes: Iterable[Vote] | VoteTable, n_categories: int | None = None) -> Measure:
    """Percentage (0-100) of items with 2+ votes on which every vote is the same."""
    counts = _table(votes, n_categories).counts
    raters = counts.sum(axis=1)
    multi = raters >= 2
    if not multi.any():
        return Measure.undefined(NO_MULTI_VOTE_ITEMS)
    unanimous = counts[multi].max(axis=1) == raters[multi]
    return Measure(100.0 * float(unanimous.mean()), None, int(multi.sum()))


def _vote_pairs(table: VoteTable) -> tuple[np.ndarray, ...]:
    """Every pair of votes on one item: (annotator lo, annotator hi, choice lo, choice hi)."""
    order = np.lexsort((table.annotator, table.item))
    item, ann, choice = table.item[order], table.annotator[order], table.choice[order]
    max_raters = int(np.bincount(item).max()) if len(item) else 0
    parts: list[tuple[np.ndarray, ...]] = []
    for d in range(1, max_raters):
        i = np.flatnonzero(item[:-d] == item[d:])
        parts.append((ann[i], ann[i + d], choice[i], choice[i + d]))
    if not parts:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty
    return tuple(np.concatenate(col) for col in zip(*parts))


def _pair_tables(table: VoteTable) -> dict[tuple[int, int], np.ndarray]:
    """Contingency table (K × K counts) per annotator pair (lo, hi) that shares an item."""
    a_lo, a_hi, c_lo, c_hi = _vote_pairs(table)
    n_ann, k = len(table.annotators), table.n_categories
    keys, inv = np.unique(a_lo * n_ann + a_hi, return_inverse=True)
    flat = np.bincount(inv.ravel() * k * k + c_lo * k + c_hi, minlength=len(keys) * k * k)
    tables = flat.reshape(len(keys), k, k)
    return {divmod(int(key), n_ann): tables[j] for j, key in enumerate(keys)}


def kappa_from_table(table: np.ndarray, weights: Weights = None) -> Measure:
    """Cohen's κ from a K × K contingency table (rows: first annotator), as scikit-learn computes it.

    Weighted κ treats categories as ordered and, like ``cohen_kappa_score`` and
    R's ``irr::kappa2``, spaces them by rank among the categories either
    annotator used.
    """
    n = int(table.sum())
    if n < 2:
        return Measure.undefined("fewer than 2 items rated by both", n)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    rank = np.cumsum((rows + cols) > 0) - 1
    dist = np.abs(rank[:, None] - rank[None, :]).astype(float)
    w = {None: (dist > 0).astype(float), "linear": dist, "quadratic": dist**2}[weights]
    expected = float((w * np.outer(rows, cols)).sum())
    if expected == 0:
        return Measure.undefined(ALL_ONE_CATEGORY.format("κ"), n)
    return Measure(1.0 - n * float((w * table).sum()) / expected, None, n)


def cohen_kappa(
    votes: Iterable[Vote] | VoteTable,
    a: str,
    b: str,
    weights: Weights = None,
    n_categories: int | None = None,
) -> Measure:
    """Cohen's κ between annotators ``a`` and ``b`` on the items both rated."""
    table = _table(votes, n_categories)
    if a == b:
        return Measure.undefined("an annotator compared with themself")
    names = {name: i for i, name in enumerate(table.annotators)}
    if a not in names or b not in names:
        missing = a if a not in names else b
        return Measure.undefined(f"annotator {missing!r} has no votes")
    pair = _pair_tables(table.subset(np.isin(table.annotator, [names[a], names[b]])))
    if not pair:
        return Measure.undefined("no items rated by both")
    contingency = next(iter(pair.values()))
    return kappa_from_table(contingency if a < b else contingency.T, weights)


def cohen_matrix(
    votes: Iterable[Vote] | VoteTable,
    weights: Weights = None,
    n_categories: int | None = None,
) -> dict[str, dict[str, Measure]]:
    """Cohen's κ for every pair of annotators, both ways round: ``matrix[a][b]`` (no diagonal)."""
    table = _table(votes, n_categories)
    pairs = _pair_tables(table)
    names = table.annotators
    matrix: dict[str, dict[str, Measure]] = {a: {} for a in names}
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            contingency = pairs.get((i, j))
            measure = (
                kappa_from_table(contingency, weights)
                if contingency is not None
                else Measure.undefined("no items rated by both")
            )
            matrix[a][names[j]] = matrix[names[j]][a] = measure
    return matrix


def agreement_with_majority(
    votes: Iterable[Vote] | VoteTable, n_categories: int | None = None
) -> dict[str, Measure]:
    """Per annotator, the percentage of their votes that match the majority of the *other* votes.

    The annotator's own vote is left out so it cannot vote for itself. An item
    counts only where the other votes have a single most common choice; with
    one other vote that vote is the majority, and a tie among the others skips
    the item.
    """
    table = _table(votes, n_categories)
    others = table.counts[table.item]
    others[np.arange(table.n_votes), table.choice] -= 1
    top = others.max(axis=1)
    has_majority = (top > 0) & ((others == top[:, None]).sum(axis=1) == 1)
    hit = has_majority & (others.argmax(axis=1) == table.choice)
    reason = "no item where the other annotators have a majority"
    return _rates(table, has_majority, hit, reason)


def agreement_with_gold(
    votes: Iterable[Vote] | VoteTable,
    gold: Mapping[str, int | None],
    n_categories: int | None = None,
) -> dict[str, Measure]:
    """Per annotator, the percentage of their votes on items with a gold label that equal it."""
    table = _table(votes, n_categories)
    labels = np.fromiter(
        (-1 if (g := gold.get(i)) is None else g for i in table.items), np.int64, len(table.items)
    )
    item_gold = labels[table.item]
    has_gold = item_gold >= 0
    return _rates(table, has_gold, has_gold & (item_gold == table.choice), "no votes on items with a gold label")


def _rates(table: VoteTable, counted: np.ndarray, hit: np.ndarray, reason: str) -> dict[str, Measure]:
    """Percent of ``counted`` votes that are ``hit``, per annotator."""
    n_ann = len(table.annotators)
    totals = np.bincount(table.annotator[counted], minlength=n_ann)
    hits = np.bincount(table.annotator[hit], minlength=n_ann)
    return {
        name: Measure(100.0 * float(hits[i]) / float(totals[i]), None, int(totals[i]))
        if totals[i]
        else Measure.undefined(reason)
        for i, name in enumerate(table.annotators)
    }


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class AgreementReport:
    """Every agreement measure on one set of votes, ready for JSON, Markdown or a Rich console."""

    n_items: int
    n_votes: int
    annotators: tuple[str, ...]
    fleiss: FleissKappa
    krippendorff: Measure
    unanimous: Measure
    cohen: dict[str, dict[str, Measure]]
    with_majority: dict[str, Measure]
    with_gold: dict[str, Measure] = field(default_factory=dict)
    votes_per_annotator: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain values (undefined → ``None``) plus ``reasons`` for each undefined one."""
        reasons: dict[str, Any] = {}
        for key, m in (("fleiss_kappa", self.fleiss.measure), ("krippendorff_alpha", self.krippendorff),
                       ("percent_unanimous", self.unanimous)):
            if m.reason:
                reasons[key] = m.reason
        for key, per in (("percent_with_majority", self.with_majority), ("percent_with_gold", self.with_gold)):
            if undefined := {a: m.reason for a, m in per.items() if m.reason}:
                reasons[key] = undefined
        cohen_reasons = {a: {b: m.reason for b, m in row.items() if m.reason} for a, row in self.cohen.items()}
        if any(cohen_reasons.values()):
            reasons["cohen_kappa"] = {a: row for a, row in cohen_reasons.items() if row}
        return {
            "n_items": self.n_items,
            "n_votes": self.n_votes,
            "annotators": list(self.annotators),
            "votes_per_annotator": dict(self.votes_per_annotator),
            "fleiss_kappa": self.fleiss.value,
            "fleiss_raters_per_item": self.fleiss.raters_per_item,
            "fleiss_items_used": self.fleiss.items_used,
            "fleiss_items_left_out": self.fleiss.items_left_out,
            "krippendorff_alpha": self.krippendorff.value,
            "krippendorff_items": self.krippendorff.n,
            "percent_unanimous": self.unanimous.value,
            "unanimous_items_counted": self.unanimous.n,
            "cohen_kappa": {a: {b: m.value for b, m in row.items()} for a, row in self.cohen.items()},
            "cohen_items": {a: {b: m.n for b, m in row.items()} for a, row in self.cohen.items()},
            "percent_with_majority": {a: m.value for a, m in self.with_majority.items()},
            "percent_with_gold": {a: m.value for a, m in self.with_gold.items()},
            "reasons": reasons,
        }

    def summary_rows(self) -> list[tuple[str, str, str, str]]:
        """(measure, value, based on, note) rows shared by the Rich and Markdown views."""
        f = self.fleiss
        fleiss_note = f"{f.raters_per_item} raters per item; left out: {f.items_left_out} items" if f.items_used else ""
        return [
            ("Fleiss' κ", _fmt(f.value), f"{f.items_used} items", f.reason or fleiss_note),
            ("Krippendorff's α (nominal)", _fmt(self.krippendorff.value), f"{self.krippendorff.n} items",
             self.krippendorff.reason or ""),
            ("Unanimous", _fmt(self.unanimous.value, "%"), f"{self.unanimous.n} items", self.unanimous.reason or ""),
        ]

    def annotator_rows(self) -> list[tuple[str, ...]]:
        """Per annotator: votes, % with the majority of the others, % with gold, κ with each other annotator."""
        rows = []
        for a in self.annotators:
            cells = [a, str(self.votes_per_annotator.get(a, 0)), _fmt(self.with_majority[a].value, "%")]
            cells.append(_fmt(self.with_gold[a].value, "%") if a in self.with_gold else "—")
            cells += ["—" if a == b else _fmt(self.cohen[a][b].value) for b in self.annotators]
            rows.append(tuple(cells))
        return rows

    def annotator_header(self) -> list[str]:
        return ["annotator", "votes", "% with majority", "% with gold", *(f"κ {b}" for b in self.annotators)]

    def notes(self) -> list[str]:
        """Why each undefined pairwise or per-annotator value is undefined (one line each)."""
        lines = []
        for i, a in enumerate(self.annotators):
            for b in self.annotators[i + 1:]:
                if reason := self.cohen[a][b].reason:
                    lines.append(f"κ {a}–{b}: {reason}")
        for label, per in (("majority", self.with_majority), ("gold", self.with_gold)):
            lines += [f"{a} vs {label}: {m.reason}" for a, m in per.items() if m.reason]
        return lines

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown tables, pasteable into a dataset card."""
        out = [f"{self.n_items} items, {self.n_votes} votes, {len(self.annotators)} annotators", ""]
        out += _md_table(["measure", "value", "based on", "note"], self.summary_rows())
        if self.annotators:
            out += [""] + _md_table(self.annotator_header(), self.annotator_rows())
        out += [""] + [f"* {line}" for line in self.notes()] if self.notes() else []
        return "\n".join(out) + "\n"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        summary = Table(title="Agreement", caption=f"{self.n_items} items · {self.n_votes} votes")
        for col in ("measure", "value", "based on", "note"):
            summary.add_column(col, justify="right" if col in ("value", "based on") else "left")
        for row in self.summary_rows():
            summary.add_row(*row[:3], Text(row[3], style="dim"))
        yield summary
        if self.annotators:
            per = Table(title="Annotators")
            for j, col in enumerate(self.annotator_header()):
                per.add_column(col, justify="left" if j == 0 else "right")
            for row in self.annotator_rows():
                per.add_row(*row)
            yield per
        if notes := self.notes():
            yield Group(*(Text(line, style="dim") for line in notes))


def _fmt(value: float | None, unit: str = "") -> str:
    """A value for display: 3 decimals for κ/α, 1 for percentages, 'undefined' for None."""
    if value is None:
        return "undefined"
    return f"{value:.1f}%" if unit == "%" else f"{value:.3f}"


def _md_table(header: list[str], rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Markdown table lines, with pipes in cells escaped."""
    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return [line(header), line("---" for _ in header), *(line(r) for r in rows)]


def agreement_report(
    votes: Iterable[Vote] | VoteTable,
    n_categories: int | None = None,
    gold: Mapping[str, int | None] | None = None,
) -> AgreementReport:
    """Compute every measure once over the same encoded votes."""
    table = _table(votes, n_categories)
    per_ann = np.bincount(table.annotator, minlength=len(table.annotators))
    return AgreementReport(
        n_items=len(table.items),
        n_votes=table.n_votes,
        annotators=table.annotators,
        fleiss=fleiss_kappa(table),
        krippendorff=krippendorff_alpha(table),
        unanimous=percent_unanimous(table),
        cohen=cohen_matrix(table),
        with_majority=agreement_with_majority(table),
        with_gold=agreement_with_gold(table, gold) if gold is not None else {},
        votes_per_annotator={a: int(per_ann[i]) for i, a in enumerate(table.annotators)},
    )


# --------------------------------------------------------------------------- breakdown


@dataclass(frozen=True)
class AgreementBreakdown:
    """One :class:`AgreementReport` per value of a categorical column (e.g. dialect, domain)."""

    column: str
    groups: dict[str, AgreementReport]

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "groups": {g: r.to_json() for g, r in self.groups.items()}}

    def rows(self) -> list[tuple[str, ...]]:
        """(group, items, Fleiss' κ, α, % unanimous) per group."""
        return [
            (g, str(r.n_items), _fmt(r.fleiss.value), _fmt(r.krippendorff.value), _fmt(r.unanimous.value, "%"))
            for g, r in self.groups.items()
        ]

    def header(self) -> list[str]:
        return [self.column, "items", "Fleiss' κ", "Krippendorff's α", "unanimous"]

    def to_markdown(self) -> str:
        return "\n".join(_md_table(self.header(), self.rows())) + "\n"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(title=f"Agreement by {self.column}")
        for j, col in enumerate(self.header()):
            table.add_column(col, justify="left" if j == 0 else "right")
        for row in self.rows():
            table.add_row(*row)
        yield table


def agreement_by(
    votes: Iterable[Vote] | VoteTable,
    group_of: Callable[[str], Hashable] | Mapping[str, Hashable],
    n_categories: int | None = None,
    gold: Mapping[str, int | None] | None = None,
    column: str = "group",
) -> AgreementBreakdown:
    """Split the votes by each item's group (``group_of(item_id)``) and report each group.

    Items whose group is ``None`` (or missing from a mapping) form the group
    ``"(none)"``; groups are ordered by name.
    """
    table = _table(votes, n_categories)
    lookup = group_of.get if isinstance(group_of, Mapping) else group_of
    names = ["(none)" if (g := lookup(i)) is None else str(g) for i in table.items]
    groups = sorted(set(names))
    code = {g: j for j, g in enumerate(groups)}
    item_group = np.fromiter((code[g] for g in names), np.int64, len(names))[table.item]
    reports = {g: agreement_report(table.subset(item_group == j), gold=gold) for j, g in enumerate(groups)}
    return AgreementBreakdown(column, reports)

