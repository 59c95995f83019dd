"""The comparison table of several runs, against figures worked out by hand from per-item predictions.

Six hand-made culture items (country, region, topic, ArabCulture's relevance
flags in several spellings, one flagged ``should_discard``) and two runs
whose per-item log-likelihoods are chosen so that acc, acc_norm and acc_bytes
pick differently. Each item's predictions are written beside it; the
expected accuracies below are counted from those lines by hand, not from the
function under test.
"""

from __future__ import annotations

import sys

import pytest
from rich.console import Console

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import InputError
from piqa_tui.core.report.comparison import (
    NOT_RELEVANT,
    SHARED,
    SPECIFIC,
    SPECIFICITY,
    RunScores,
    compare,
    read_flag,
)
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.render.comparison import comparison_tables, metric_table


def item(item_id: str, label: int, country: str, region: str, topic: str, this: str, other: str, discard: str) -> Item:
    meta = {
        "country": country,
        "region": region,
        "topic": topic,
        "relevant_to_this_country": this,
        "relevant_to_other_countries": other,
        "should_discard": discard,
    }
    return Item(item_id, f"prompt {item_id}", ("x", "y", "z"), label, int(item_id[1:]) + 1, meta)


ITEMS = [
    item("i1", 0, "Morocco", "Maghreb", "food", "yes", "no", "no"),  # country-specific
    item("i2", 1, "Morocco", "Maghreb", "hospitality", "Yes", "YES", "No"),  # shared
    item("i3", 2, "Egypt", "Nile Valley", "food", "TRUE", "false", "False"),  # country-specific
    item("i4", 0, "Egypt", "Nile Valley", "weddings", "1", "1", "0"),  # shared
    item("i5", 1, "Jordan", "Levant", "food", " no ", "no", "no"),  # not relevant to its country
    item("i6", 0, "Jordan", "Levant", "food", "yes", "no", "yes"),  # discarded
]
LABELS = {it.id: it.label for it in ITEMS}


def score(
    item_id: str,
    logliks: tuple[float, ...],
    chars: tuple[int, ...] = (10, 10, 10),
    utf8: tuple[int, ...] = (10, 10, 10),
) -> ItemScore:
    return ItemScore(item_id, logliks, (3, 3, 3), chars, LABELS[item_id], "mcq", byte_lengths=utf8)


# Run A (per item: acc / acc_norm / acc_bytes predictions against the label):
RUN_A = RunScores(
    "A · mcq",
    [
        score("i1", (-2, -4, -6)),  # 0 0 0, label 0: ✓ ✓ ✓
        score("i2", (-4, -6, -8), chars=(2, 30, 30), utf8=(4, 60, 60)),  # 0 1 1, label 1: ✗ ✓ ✓
        score("i3", (-3, -5, -4), chars=(10, 10, 40)),  # 0 2 0, label 2: ✗ ✓ ✗
        score("i4", (-1, -3, -3)),  # 0 0 0, label 0: ✓ ✓ ✓
        score("i5", (-9, -3, -5), utf8=(10, 40, 10)),  # 1 1 1, label 1: ✓ ✓ ✓
        score("i6", (-1, -2, -3)),  # discarded: in no figure
    ],
)
# Run B did not score i5:
RUN_B = RunScores(
    "B · mcq",
    [
        score("i1", (-5, -1, -2)),  # 1 1 1, label 0: ✗ ✗ ✗
        score("i2", (-6, -2, -7)),  # 1 1 1, label 1: ✓ ✓ ✓
        score("i3", (-8, -7, -1)),  # 2 2 2, label 2: ✓ ✓ ✓
        score("i4", (-2, -1, -3)),  # 1 1 1, label 0: ✗ ✗ ✗
        score("i6", (-9, -1, -9)),  # discarded
    ],
)


def figures(found: dict, *, acc: float, norm: float, utf8: float, n: int) -> None:
    assert (found["acc"], found["acc_norm"], found["acc_bytes"], found["n"]) == pytest.approx((acc, norm, utf8, n))


def test_accuracy_per_run_overall_and_per_group() -> None:
    table = compare([RUN_A, RUN_B], ITEMS, ["country", "region", "topic"])
    assert table.runs == ("A · mcq", "B · mcq")
    assert table.discarded == ("i6",) and table.n_items == 5
    figures(table.overall["A · mcq"], acc=3 / 5, norm=5 / 5, utf8=4 / 5, n=5)
    figures(table.overall["B · mcq"], acc=2 / 4, norm=2 / 4, utf8=2 / 4, n=4)

    country = table.groups["country"]
    assert list(country) == ["Egypt", "Jordan", "Morocco"]
    figures(country["Egypt"]["A · mcq"], acc=1 / 2, norm=2 / 2, utf8=1 / 2, n=2)  # i3 ✗✓✗, i4 ✓✓✓
    figures(country["Egypt"]["B · mcq"], acc=1 / 2, norm=1 / 2, utf8=1 / 2, n=2)
    figures(country["Jordan"]["A · mcq"], acc=1, norm=1, utf8=1, n=1)  # i5 only: i6 is discarded
    assert "B · mcq" not in country["Jordan"]  # B scored no kept Jordan item
    figures(country["Morocco"]["A · mcq"], acc=1 / 2, norm=1, utf8=1, n=2)  # i1 ✓✓✓, i2 ✗✓✓
    figures(country["Morocco"]["B · mcq"], acc=1 / 2, norm=1 / 2, utf8=1 / 2, n=2)
    assert list(table.groups["region"]) == ["Levant", "Maghreb", "Nile Valley"]
    figures(table.groups["region"]["Maghreb"]["A · mcq"], acc=1 / 2, norm=1, utf8=1, n=2)

    topic = table.groups["topic"]
    figures(topic["food"]["A · mcq"], acc=2 / 3, norm=3 / 3, utf8=2 / 3, n=3)  # i1, i3, i5
    figures(topic["food"]["B · mcq"], acc=1 / 2, norm=1 / 2, utf8=1 / 2, n=2)  # i1 ✗, i3 ✓
    figures(topic["hospitality"]["A · mcq"], acc=0, norm=1, utf8=1, n=1)
    figures(topic["weddings"]["B · mcq"], acc=0, norm=0, utf8=0, n=1)

    specific = table.groups[SPECIFICITY]
    assert set(specific) == {SPECIFIC, SHARED, NOT_RELEVANT}
    figures(specific[SPECIFIC]["A · mcq"], acc=1 / 2, norm=1, utf8=1 / 2, n=2)  # i1, i3
    figures(specific[SHARED]["A · mcq"], acc=1 / 2, norm=1, utf8=1, n=2)  # i2, i4
    figures(specific[SHARED]["B · mcq"], acc=1 / 2, norm=1 / 2, utf8=1 / 2, n=2)
    figures(specific[NOT_RELEVANT]["A · mcq"], acc=1, norm=1, utf8=1, n=1)  # i5
    # The flag columns are summarised through the country-specific split, not as columns of their own.
    assert set(table.groups) == {"country", "region", "topic", SPECIFICITY}


def test_without_flags_nothing_is_discarded_or_split() -> None:
    plain = [Item(it.id, it.prompt, it.solutions, it.label, it.row, {"country": it.meta["country"]}) for it in ITEMS]
    table = compare([RUN_A], plain, ["country"])
    assert table.discarded == () and table.n_items == 6 and set(table.groups) == {"country"}
    figures(table.overall["A · mcq"], acc=4 / 6, norm=6 / 6, utf8=5 / 6, n=6)  # i6 counts now: ✓ ✓ ✓


def test_an_unreadable_flag_is_an_error_naming_the_item() -> None:
    bad = ITEMS[2].with_changes(meta={**ITEMS[2].meta, "should_discard": "maybe"})
    with pytest.raises(InputError, match=r"item i3 \(row 4\): should_discard is 'maybe', which is neither yes nor no"):
        compare([RUN_A], [*ITEMS[:2], bad], [])
    empty = ITEMS[0].with_changes(meta={**ITEMS[0].meta, "relevant_to_other_countries": ""})
    with pytest.raises(InputError, match="relevant_to_other_countries is empty"):
        read_flag(empty, "relevant_to_other_countries")
    with pytest.raises(ValueError, match="unique"):
        compare([RUN_A, RUN_A], ITEMS, [])


def test_the_cli_refuses_a_bad_flag_in_one_line_before_any_model_runs(tmp_path, capsys) -> None:
    data = tmp_path / "culture.tsv"
    data.write_text(
        "id\tpremise\toption_a\toption_b\toption_c\tanswer\tcountry\tshould_discard\n"
        "c1\tفي البيت\tأ\tب\tج\tA\tEgypt\tno\n"
        "c2\tفي السوق\tأ\tب\tج\tB\tEgypt\tperhaps\n",
        encoding="utf-8",
    )
    code = main(["score", str(data), "--model", sys.executable])  # not a model: never reached
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "item c2" in err and "should_discard is 'perhaps'" in err


def test_the_tables_read_in_100_columns() -> None:
    long_a = RunScores(
        "gemma-3-270m-instruct-finetuned-on-darija-q4_k_m.gguf · mcq-arabic-region+country", RUN_A.scores
    )
    runs = [long_a, RUN_B, *(RunScores(f"model-{k}.gguf · completion", RUN_B.scores) for k in range(8))]
    table = compare(runs, ITEMS, ["country", "topic"])
    console = Console(width=100, record=True, color_system=None)
    for part in comparison_tables(table):
        console.print(part)
    console.print(metric_table(table, "country", "acc_norm"))
    text = console.export_text()
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "1 item(s) flagged should_discard left out of every figure (5 kept)" in text
    assert "by country-specific" in text and "shared with other countries" in text
    assert "0.600" in text and "1.000" in text  # A's acc and acc_norm overall
