"""Agreement on gold-label votes: published kappas, cross-checks with the reference libraries, undefined cases."""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from piqa_tui.core.votes.agreement import (
    PAIRS_IN_FULL,
    PAIRS_LISTED,
    AgreementReport,
    VoteTable,
    agreement_by,
    agreement_report,
    agreement_with_gold,
    agreement_with_majority,
    cohen_kappa,
    cohen_matrix,
    fleiss_kappa,
    krippendorff_alpha,
    pair_summary,
    percent_unanimous,
)
from piqa_tui.core.votes.uncertainty import Bootstrap
from piqa_tui.render.agreement import BreakdownTable, ReportTables, breakdown_markdown, report_json, report_markdown

REFERENCE = Path(__file__).resolve().parent / "data" / "kappa-reference"


def rater_table_votes(name: str, offset: int = 1) -> list[tuple[str, str, int]]:
    """Votes from a subjects × raters CSV whose codes start at ``offset``, shifted to 0-based."""
    with open(REFERENCE / name, newline="") as f:
        rows = list(csv.DictReader(f))
    return [
        (row["subject"], rater, int(code) - offset) for row in rows for rater, code in row.items() if rater != "subject"
    ]


def count_table_votes(name: str) -> list[tuple[str, str, int]]:
    """Votes from a subjects × category-counts CSV: rater names are made up per subject."""
    votes = []
    with open(REFERENCE / name, newline="") as f:
        for row in csv.DictReader(f):
            cats = [k for k in row if k.startswith("cat")]
            raters = (f"r{j}" for j in range(100))
            for c, cat in enumerate(cats):
                votes += [(row["subject"], next(raters), c) for _ in range(int(row[cat]))]
    return votes


# --------------------------------------------------------------------------- published values


def test_fleiss_1971_diagnoses() -> None:
    result = fleiss_kappa(rater_table_votes("fleiss1971_diagnoses.csv"), 5)
    assert result.value == pytest.approx(0.4302445, abs=1e-7)
    assert (result.raters_per_item, result.items_used, result.items_left_out) == (6, 30, 0)


def test_fleiss_wikipedia_example_from_counts() -> None:
    votes = count_table_votes("wikipedia_fleiss_example_counts.csv")
    assert len(votes) == 10 * 14
    assert fleiss_kappa(votes, 5).value == pytest.approx(0.210, abs=5e-4)


@pytest.mark.parametrize(
    ("weights", "expected"),
    [(None, -0.006289308), ("linear", 0.1459075), ("quadratic", 0.2520325)],
)
def test_cohen_irr_anxiety_raters_2_and_3(weights: str | None, expected: float) -> None:
    votes = rater_table_votes("irr_anxiety.csv")
    assert cohen_kappa(votes, "rater2", "rater3", weights=weights).value == pytest.approx(expected, abs=1e-7)
    assert cohen_kappa(votes, "rater3", "rater2", weights=weights).value == pytest.approx(expected, abs=1e-7)


# --------------------------------------------------------------------------- random cross-checks


def random_votes(rng: np.random.Generator, missing: float) -> tuple[list[tuple[str, str, int]], int, int]:
    """A random vote table with some real agreement: each rater picks the item's 'true' label with p."""
    n_items, n_raters, k = int(rng.integers(2, 40)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    p = rng.uniform(0.0, 0.9)
    votes = []
    for i in range(n_items):
        truth = rng.integers(k)
        for r in range(n_raters):
            if rng.random() < missing:
                continue
            choice = truth if rng.random() < p else rng.integers(k)
            votes.append((f"item{i}", f"ann{r}", int(choice)))
    return votes, n_raters, k


def reference_or_none(fn, *args, **kwargs) -> float | None:
    """The reference library's value, with NaN or a refusal read as undefined."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = float(fn(*args, **kwargs))
        except (ValueError, ZeroDivisionError):
            return None
    return None if math.isnan(value) else value


def test_fleiss_matches_statsmodels_on_random_tables() -> None:
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(20240501)
    compared = 0
    for _ in range(300):
        votes, _, k = random_votes(rng, missing=0.0 if rng.random() < 0.5 else 0.15)
        result = fleiss_kappa(votes, k)
        table = VoteTable.from_votes(votes, k).counts
        raters = table.sum(axis=1)
        used = table[raters == result.raters_per_item]
        assert result.items_used == len(used)
        assert result.items_used + result.items_left_out == int((raters > 0).sum())
        expected = reference_or_none(inter_rater.fleiss_kappa, used, method="fleiss") if len(used) else None
        assert (result.value is None) == (expected is None)
        if expected is not None:
            assert result.value == pytest.approx(expected, abs=1e-10)
            compared += 1
    assert compared > 250


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_matches_sklearn_on_random_tables(weights: str | None) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7 + len(str(weights)))
    compared = 0
    for _ in range(120):
        votes, _, _ = random_votes(rng, missing=0.2)
        by_pair = {(i, a): c for i, a, c in votes}
        matrix = cohen_matrix(votes, weights=weights)
        for a, row in matrix.items():
            for b, got in row.items():
                assert matrix[b][a] == got
                if a > b:
                    continue
                both = sorted({i for i, x in by_pair if x == a} & {i for i, x in by_pair if x == b})
                y_a, y_b = [by_pair[i, a] for i in both], [by_pair[i, b] for i in both]
                expected = reference_or_none(metrics.cohen_kappa_score, y_a, y_b, weights=weights)
                assert got.n == len(both)
                assert (got.value is None) == (expected is None or len(both) < 2), (a, b, y_a, y_b)
                if got.value is not None:
                    assert got.value == pytest.approx(expected, abs=1e-10)
                    compared += 1
        if len(matrix) >= 2:
            a, b = sorted(matrix)[:2]
            assert cohen_kappa(votes, b, a, weights=weights) == matrix[a][b]
    assert compared > 300


def test_krippendorff_matches_package_with_missing_votes() -> None:
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(99)
    compared = 0
    for _ in range(300):
        votes, n_raters, k = random_votes(rng, missing=float(rng.uniform(0.0, 0.5)))
        table = VoteTable.from_votes(votes, k)
        data = np.full((len(table.annotators), len(table.items)), np.nan)
        data[table.annotator, table.item] = table.choice
        expected = reference_or_none(
            krippendorff.alpha, reliability_data=data, level_of_measurement="nominal", value_domain=list(range(k))
        )
        got = krippendorff_alpha(votes, k)
        pairable = int((table.counts.sum(axis=1) >= 2).sum())
        if pairable == 0 or np.count_nonzero(table.counts[table.counts.sum(axis=1) >= 2].sum(axis=0)) < 2:
            assert got.value is None and got.reason
            continue
        assert got.value == pytest.approx(expected, abs=1e-10)
        compared += 1
    assert compared > 250


# --------------------------------------------------------------------------- undefined values


def test_all_votes_in_one_category_is_undefined_not_one() -> None:
    votes = [(f"i{i}", a, 1) for i in range(5) for a in ("ann", "bo", "cy")]
    report = agreement_report(votes, 2)
    assert report.fleiss.value is None and "one category" in report.fleiss.reason
    assert report.krippendorff.value is None and "one category" in report.krippendorff.reason
    assert report.cohen["ann"]["bo"].value is None and "expected agreement is 1" in report.cohen["ann"]["bo"].reason
    assert report.unanimous.value == 100.0  # a percentage, well defined here
    data = report_json(report)
    assert data["fleiss_kappa"] is None and data["krippendorff_alpha"] is None
    assert data["cohen_kappa"]["ann"]["bo"] is None
    assert "κ undefined" in data["reasons"]["fleiss_kappa"]
    assert data["reasons"]["cohen_kappa"]["bo"]["cy"]


def test_one_annotator_only_is_undefined() -> None:
    votes = [(f"i{i}", "solo", i % 2) for i in range(6)]
    report = agreement_report(votes, 2)
    for measure in (report.fleiss.measure, report.krippendorff, report.unanimous):
        assert measure.value is None and measure.reason == "no item has 2 or more votes"
    assert report.cohen == {"solo": {}}
    assert report.with_majority["solo"].value is None
    assert cohen_kappa(votes, "solo", "nobody").reason == "annotator 'nobody' has no votes"
    assert cohen_kappa(votes, "solo", "solo").value is None


def test_no_overlap_and_single_shared_item_are_undefined() -> None:
    votes = [("i1", "a", 0), ("i2", "a", 1), ("i3", "b", 0), ("i4", "b", 1), ("i1", "c", 1), ("i2", "c", 0)]
    matrix = cohen_matrix(votes)
    assert matrix["a"]["b"] == matrix["b"]["a"]
    assert matrix["a"]["b"].value is None and matrix["a"]["b"].reason == "no items rated by both"
    assert cohen_kappa(votes, "a", "b").reason == "no items rated by both"
    one = votes + [("i3", "c", 0)]
    assert cohen_kappa(one, "b", "c").reason == "fewer than 2 items rated by both"
    assert cohen_kappa(one, "a", "c").value == pytest.approx(-1.0)


def test_undefined_is_rendered_as_undefined() -> None:
    report = agreement_report([(f"i{i}", a, 0) for i in range(3) for a in "xy"], 2)
    markdown = report_markdown(report)
    assert "| Fleiss' κ | undefined |" in markdown and "expected agreement is 1" in markdown
    console = Console(record=True, width=120)
    console.print(ReportTables(report))
    text = console.export_text()
    # AC1 is 1 here, and rightly (its chance agreement is 0): the one line allowed to say 1.000.
    kappa_lines = [line for line in text.splitlines() if "AC1" not in line]
    assert "undefined" in text and not any("0.000" in line or "1.000" in line for line in kappa_lines)
    assert report.ac1.value == 1.0


# --------------------------------------------------------------------------- the other measures


VOTES = [
    ("i1", "a", 0), ("i1", "b", 0), ("i1", "c", 1),
    ("i2", "a", 1), ("i2", "b", 1), ("i2", "c", 1),
    ("i3", "a", 0), ("i3", "b", 1),
    ("i4", "a", 2),
]  # fmt: skip


def test_percent_unanimous_counts_items_with_two_or_more_votes() -> None:
    result = percent_unanimous(VOTES, 3)
    assert (result.value, result.n) == (pytest.approx(100 / 3), 3)


def test_fleiss_uses_modal_number_of_raters() -> None:
    result = fleiss_kappa(VOTES, 3)
    assert (result.raters_per_item, result.items_used, result.items_left_out) == (3, 2, 2)


def test_agreement_with_majority_excludes_own_vote() -> None:
    result = agreement_with_majority(VOTES, 3)
    # i1: a and b each see a tie (0 vs 1) -> skipped; c sees majority 0 -> miss.
    # i2: everyone sees the others agree on 1 -> hit. i3: each sees the other's vote -> miss.
    assert (result["a"].value, result["a"].n) == (50.0, 2)
    assert (result["c"].value, result["c"].n) == (50.0, 2)


def test_agreement_with_gold() -> None:
    result = agreement_with_gold(VOTES, {"i1": 0, "i2": 0, "i3": None}, 3)
    assert (result["a"].value, result["a"].n) == (50.0, 2)
    assert (result["c"].value, result["c"].n) == (0.0, 2)
    assert agreement_with_gold(VOTES, {"i4": 2}, 3)["b"].value is None


def test_report_json_has_the_documented_keys() -> None:
    data = report_json(agreement_report(VOTES, 3, gold={"i1": 0}))
    for key in ("fleiss_kappa", "krippendorff_alpha", "percent_unanimous", "cohen_kappa", "reasons"):
        assert key in data
    assert set(data["cohen_kappa"]) == {"a", "b", "c"}
    assert data["cohen_kappa"]["a"]["b"] == data["cohen_kappa"]["b"]["a"]
    json.dumps(data, allow_nan=False)


def test_markdown_and_rich_views() -> None:
    report = agreement_report(VOTES, 3)
    lines = report_markdown(report).splitlines()
    assert "| measure | value | based on | note |" in lines  # no interval column unless asked for
    assert any(line.startswith("| a | 4 |") for line in lines)
    console = Console(record=True, width=120)
    console.print(ReportTables(report))
    assert "Krippendorff" in console.export_text()


def at_width(width: int, *renderables: object) -> str:
    console = Console(record=True, width=width)
    for renderable in renderables:
        console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("bootstrap", [None, Bootstrap(resamples=50)], ids=["plain", "intervals"])
def test_tables_at_80_columns_show_undefined_whole_and_cut_no_cell(bootstrap: Bootstrap | None) -> None:
    names = ("anbu", "devi", "kavin", "meena", "selvi-ramasamy")
    votes = [
        (f"i{i}", a, 0 if a in ("anbu", "devi") or i < 20 else (i * 3 + len(a)) % 2) for i in range(32) for a in names
    ]
    category = {f"i{i}": ("cleaning", "clothing", "transport")[i % 3] for i in range(32)}
    report = agreement_report(votes, 2, bootstrap=bootstrap)
    breakdown = agreement_by(votes, category, 2, column="category", bootstrap=bootstrap)
    text = at_width(80, ReportTables(report), BreakdownTable(breakdown))
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())  # nothing cut, nothing wider
    assert "│ anbu – devi " in text and "undefined" in text.split("anbu – devi")[1].splitlines()[0]
    assert "selvi-ramasamy" in text and "│ transport │" in text and "caution, cleaning: too few items" in text
    wide = at_width(200, ReportTables(report), BreakdownTable(breakdown))
    assert "κ selvi-ramasamy" in wide and "caution, cleaning" not in wide  # wide enough: the tables as before


def test_breakdown_equals_report_on_each_group() -> None:
    rng = np.random.default_rng(3)
    votes, _, k = random_votes(rng, missing=0.1)
    dialect = {f"item{i}": ("darija-dz" if i % 3 else "darija-ma") for i in range(40)}
    breakdown = agreement_by(votes, dialect, k, column="dialect")
    assert set(breakdown.groups) <= {"darija-dz", "darija-ma"}
    for group, report in breakdown.groups.items():
        alone = agreement_report([v for v in votes if dialect[v[0]] == group], k)
        assert report_json(report) == report_json(alone)
    assert breakdown_markdown(breakdown).startswith("| dialect | items |")
    by_callable = agreement_by(votes, lambda item: None, k)
    assert list(by_callable.groups) == ["(none)"]
    assert isinstance(by_callable.groups["(none)"], AgreementReport)


def test_bad_votes_are_refused() -> None:
    with pytest.raises(ValueError, match="more than once"):
        VoteTable.from_votes([("i1", "a", 0), ("i1", "a", 1)])
    with pytest.raises(ValueError, match="out of range"):
        fleiss_kappa([("i1", "a", 2)], 2)
    with pytest.raises(ValueError, match="negative"):
        fleiss_kappa([("i1", "a", -1)], 2)


def test_no_votes_at_all() -> None:
    report = agreement_report([], 2)
    assert report.n_items == 0 and report.fleiss.value is None and report.cohen == {}


# --------------------------------------------------------------------------- many annotators: the pairs summarised


def crowd_votes(rng: np.random.Generator, annotators: int, items: int, per_item: int) -> list[tuple[str, str, int]]:
    """``per_item`` votes on each item from annotators drawn at random (names p000, p001 …), two categories."""
    votes = []
    for i in range(items):
        truth = int(rng.integers(0, 2))
        for a in rng.choice(annotators, per_item, replace=False).tolist():
            votes.append((f"i{i}", f"p{a:03d}", truth if rng.random() < 0.8 else 1 - truth))
    return votes


def test_pair_summary_equals_the_full_matrix_below_the_limit() -> None:
    rng = np.random.default_rng(11)
    for _ in range(5):
        votes = crowd_votes(rng, int(rng.integers(3, 12)), int(rng.integers(5, 40)), 3)
        summary = pair_summary(votes, 2)
        matrix = cohen_matrix(votes, n_categories=2)
        pairs = {(a, b): m for a, row in matrix.items() for b, m in row.items() if a < b and m.n}
        defined = sorted(m.value for m in pairs.values() if m.value is not None)
        assert (summary.pairs, summary.defined) == (len(pairs), len(defined))
        if defined:
            assert summary.low == pytest.approx(defined[0], abs=1e-12)
            assert summary.high == pytest.approx(defined[-1], abs=1e-12)
            assert summary.median == pytest.approx(float(np.median(defined)), abs=1e-12)
        fewest = sorted(pairs, key=lambda pair: (pairs[pair].n, pair))[:PAIRS_LISTED]
        assert [(p.first, p.second) for p in summary.fewest] == fewest
        for listed in (*summary.fewest, *summary.lowest):
            full = pairs[(listed.first, listed.second)]
            assert listed.kappa.n == full.n and listed.kappa.reason == full.reason
            assert listed.kappa.value == pytest.approx(full.value, abs=1e-12) if full.value is not None else True
        lowest = sorted((m.value, pair) for pair, m in pairs.items() if m.value is not None)[:PAIRS_LISTED]
        assert [p.kappa.value for p in summary.lowest] == pytest.approx([value for value, _ in lowest], abs=1e-12)


def test_a_report_summarises_the_pairs_past_the_limit_and_lists_them_up_to_it() -> None:
    rng = np.random.default_rng(5)
    listed = agreement_report(crowd_votes(rng, PAIRS_IN_FULL, 60, 4), 2, bootstrap=Bootstrap(20))
    assert listed.pairs is None and len(listed.cohen) == len(listed.annotators) <= PAIRS_IN_FULL
    assert report_json(listed)["cohen_pairs"] is None
    votes = crowd_votes(rng, PAIRS_IN_FULL + 30, 60, 4)
    report = agreement_report(votes, 2, bootstrap=Bootstrap(20))
    assert report.cohen == {} and report.pairs == pair_summary(votes, 2)
    assert report.intervals is not None and report.intervals.cohen == {}  # no per-pair bootstrap either
    data = report_json(report)
    assert data["cohen_kappa"] is None and data["cohen_items"] is None
    assert data["cohen_pairs"]["pairs_sharing_items"] == report.pairs.pairs
    assert data["cohen_pairs"]["listed_in_full_up_to"] == PAIRS_IN_FULL
    assert len(data["cohen_pairs"]["fewest_shared_items"]) == PAIRS_LISTED
    json.dumps(data, allow_nan=False)
    text = report_markdown(report)
    assert f"Cohen's κ per pair, summarised: {len(report.annotators)} annotators" in text
    assert "| κ p000 |" not in text and "κ p000–" not in text  # no column, note or row per pair
    header = next(line for line in text.splitlines() if line.startswith("| annotator |"))
    assert header == "| annotator | votes | % with majority | % with gold |"
    console = Console(record=True, width=160)
    console.print(ReportTables(report))
    assert "fewest shared items:" in console.export_text()


def test_vote_pairs_past_the_bound_are_counted_never_worked_out() -> None:
    votes = [("i0", f"p{a:03d}", a % 2) for a in range(60)]  # 60 votes on one item: 1,770 pairs of votes
    summary = pair_summary(votes, 2, max_vote_pairs=1000)
    assert (summary.vote_pairs, summary.pairs, summary.fewest) == (1770, None, ())
    assert summary.reason and "1,770 pairs of votes share an item" in summary.reason
    assert pair_summary(votes, 2, max_vote_pairs=1770).pairs == 1770  # at the bound: every pair


def test_a_breakdown_summarises_each_group_by_its_own_annotators() -> None:
    rng = np.random.default_rng(8)
    votes = crowd_votes(rng, 90, 80, 3)
    group = {f"i{i}": "small" if i < 10 else "large" for i in range(80)}
    breakdown = agreement_by(votes, group, 2)
    for name, report in breakdown.groups.items():
        alone = agreement_report([v for v in votes if group[v[0]] == name], 2)
        assert report_json(report) == report_json(alone)
    assert breakdown.groups["small"].pairs is None and breakdown.groups["large"].pairs is not None


def test_votes_coded_against_many_names_equal_votes_encoded_one_by_one() -> None:
    rng = np.random.default_rng(2)
    votes = crowd_votes(rng, 999, 400, 5)
    names = sorted({v[1] for v in votes}, reverse=True)
    items = [f"i{i}" for i in range(400)]
    table = VoteTable.from_codes(
        np.array([items.index(v[0]) for v in votes]),
        items,
        np.array([names.index(v[1]) for v in votes]),
        names,
        np.array([v[2] for v in votes]),
        2,
    )
    encoded = VoteTable.from_votes(votes, 2)
    assert table.annotators == encoded.annotators
    assert [(table.items[i], table.annotators[a]) for i, a in zip(table.item, table.annotator, strict=True)] == [
        (v[0], v[1]) for v in votes
    ]
