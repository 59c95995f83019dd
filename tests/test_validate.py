"""validate's rules, each by name, on crafted items and real data; exit codes and --json."""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.checks import CheckConfig, check_item, check_items, suspects
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.workspace.project import Project

from .conftest import PIQA_VALID, SAMPLES, XCOPA_TA_TEST


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
    items = [
        Item(id=f"i{n}", prompt="p", solutions=("a b", "a c"), label=lab, row=n) for n, lab in enumerate([1, 2, 2])
    ]
    problems = check_items(items, raw_ids=["a", "b", "a"])
    assert sorted(p.rule for p in problems) == [
        "duplicate-id",
        "duplicate-id",
        "label-out-of-range",
        "label-out-of-range",
    ]
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
    assert (
        data["errors"] == 1 and data["problems"][0]["item_id"] == "a" and data["summary"] == {"identical-solutions": 1}
    )
    assert main(["validate", str(path), "--rule", "nonsense"]) == 2


def test_real_xcopa_tamil_has_no_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(XCOPA_TA_TEST), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["items"] == 500 and data["errors"] == 0 and data["summary"]["not-nfc"] >= 1


# ------------------------------------------------ the vectorised pre-pass


def _one_by_one(items, config):
    return [p for item in items for p in check_item(item, config)]


@pytest.mark.parametrize(
    "config",
    [
        CheckConfig(),
        CheckConfig(max_differences=0),
        CheckConfig(max_differences=1),
        CheckConfig(max_differences=3),
        CheckConfig(min_words=12),
    ],
)
def test_prepass_finds_what_checking_every_item_finds_on_real_data(config):
    """check_items runs check_item only on the items the polars pass cannot clear: same problems as checking all."""
    for path in [*sorted(SAMPLES.glob("*.tsv")), PIQA_VALID]:
        if path.name.startswith("votes-"):
            continue
        items = Project.open(path, create=False).items
        assert check_items(items, None, config) == _one_by_one(items, config), path.name


def test_prepass_is_a_superset_on_random_minimal_pairs():
    """Edge cases of the pre-pass: NBSP and U+001C (whitespace to str.split), joiners, case and edge
    punctuation, insertions that make word_diff align rather than compare in place, 2-4 solutions."""
    rng = random.Random(7)
    common = ["the", "The", "cup,", "cup", "«شاي»", "الما", "த்தம்", "বাংলা", "Go.", "go", "x\u00a0y"]
    rare = ["a\x1cb", "\u200cz", "e\u0301", "  ", "\u200f"]

    def word() -> str:
        return rng.choice(rare if rng.random() < 0.02 else common)

    items = []
    for n in range(6000):
        words = [word() for _ in range(rng.randint(1, 8))]
        solutions = []
        for _ in range(rng.choice([2, 2, 3, 4])):
            variant = list(words)
            for _ in range(rng.randint(0, 4)):
                op = rng.random()
                if op < 0.6 and variant:
                    variant[rng.randrange(len(variant))] = word()
                elif op < 0.8:
                    variant.insert(rng.randrange(len(variant) + 1), word())
                elif variant:
                    variant.pop(rng.randrange(len(variant)))
            solutions.append(" ".join(variant))
        items.append(
            Item(
                str(n),
                rng.choice(["p q", "p q", "p q", " p", "", "كيفاش"]),
                tuple(solutions),
                rng.choice([0, 1, 4, None]),
                n,
            )
        )
    for config in (
        CheckConfig(),
        CheckConfig(max_differences=0),
        CheckConfig(max_differences=1),
        CheckConfig(min_words=5),
    ):
        expected = _one_by_one(items, config)
        assert check_items(items, None, config) == expected
        cleared = set(range(len(items))) - set(suspects(items, config))
        assert cleared or config.max_differences == 0, "the pre-pass should clear some items"
        assert not any(check_item(items[pos], config) for pos in cleared)
