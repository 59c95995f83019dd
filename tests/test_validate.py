"""validate's rules, each by name, on crafted items and real data; exit codes and --json."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from piqa_tui.cli import main
from piqa_tui.core.checks import CheckConfig, check_item, check_items
from piqa_tui.core.item import Item

from .conftest import XCOPA_TA_TEST


def item(prompt: str = "افتح القرعة", sols: tuple[str, ...] = ("بالفتاحة", "بالمطرقة"), label: int | None = 0) -> Item:
    return Item(id="x", prompt=prompt, solutions=sols, label=label, row=0)


def rules(it: Item, config: CheckConfig = CheckConfig()) -> list[str]:
    return [p.rule for p in check_item(it, config)]


def test_clean_minimal_pair_has_no_problem() -> None:
    assert rules(item()) == []


@pytest.mark.parametrize(
    "it,rule",
    [
        (item(prompt="  "), "empty-text"),
        (item(sols=("سخن الما", "سخن الما")), "identical-solutions"),
        (item(sols=("حط الكاس في الثلاجة باش يبرد", "حط الصحن فوق الطابلة و خليه يسخن")), "too-many-differences"),
        (item(label=None), "label-missing"),
        (item(label=2), "label-out-of-range"),
        (item(prompt=unicodedata.normalize("NFD", "café au lait")), "not-nfc"),
        (item(prompt="افتح\u200f القرعة"), "control-characters"),
        (item(sols=("بالفتاحة ", "بالمطرقة")), "whitespace"),
    ],
)
def test_each_rule_fires(it: Item, rule: str) -> None:
    assert rule in rules(it)


def test_differing_words_are_reported_and_threshold_configurable() -> None:
    it = item(sols=("put the cold milk in the fridge", "put the warm bread in the oven"))
    problems = check_item(it)
    assert problems[0].rule == "too-many-differences" and "cold milk fridge / warm bread oven" in problems[0].detail
    assert rules(it, CheckConfig(max_differences=3)) == []


def test_zero_width_joiner_inside_an_indic_word_is_fine() -> None:
    assert rules(item(prompt="ক্\u200dষ কাজ", sols=("জল দিন", "তেল দিন"))) == []


def test_length_policy_is_off_by_default_and_can_be_enabled() -> None:
    assert "too-short" not in rules(item())
    assert "too-short" in rules(item(), CheckConfig(min_words=25))


def test_duplicate_ids_and_one_based_hint() -> None:
    items = [Item(id=f"i{n}", prompt="p", solutions=("a b", "a c"), label=lab, row=n) for n, lab in enumerate([1, 2, 2])]
    problems = check_items(items, raw_ids=["a", "b", "a"])
    assert sorted(p.rule for p in problems) == ["duplicate-id", "duplicate-id", "label-out-of-range", "label-out-of-range"]
    assert "1-based" in next(p.detail for p in problems if p.rule == "label-out-of-range")


def test_cli_exit_codes_filters_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("id\tprompt\tsolution0\tsolution1\tlabel\na\tp\tx\tx\t0\nb\tp\tx y\tx z\t1\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].split("\t")[:3] == ["a", "error", "identical-solutions"] and out[-1].startswith("2 items, 1 errors")
    assert main(["validate", str(path), "--skip", "identical-solutions"]) == 0
    capsys.readouterr()
    assert main(["validate", str(path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["errors"] == 1 and data["problems"][0]["item_id"] == "a" and data["summary"] == {"identical-solutions": 1}
    assert main(["validate", str(path), "--rule", "nonsense"]) == 2


def test_real_xcopa_tamil_has_no_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(XCOPA_TA_TEST), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["items"] == 500 and data["errors"] == 0 and data["summary"]["not-nfc"] >= 1
