"""stats and card on real data and the samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.cli.main import main

from .conftest import PIQA_VALID, SAMPLES, XCOPA_TA_TEST, copy_sample


def stats_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["stats", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_piqa_label_balance_and_lengths(capsys: pytest.CaptureFixture[str]) -> None:
    data = stats_json(PIQA_VALID, capsys)
    assert data["items"] == 1838 and data["labels"] == {"0": 910, "1": 928}
    assert data["scripts"] == {"Latin": 1838} and 5 < data["mean_prompt_words"] < 10


def test_scripts_and_categories_of_the_samples(capsys: pytest.CaptureFixture[str]) -> None:
    assert stats_json(XCOPA_TA_TEST, capsys)["scripts"] == {"Tamil": 500}
    darija = stats_json(SAMPLES / "darija-algerian.tsv", capsys)
    assert darija["scripts"]["Arabic"] == darija["items"] and "Latin" in darija["scripts"]
    assert (
        set(darija["categories"]) >= {"dialect", "category", "source"} and "msa_translation" not in darija["categories"]
    )
    assert sum(darija["categories"]["category"].values()) == darija["items"]
    culture = stats_json(SAMPLES / "msa-culture.tsv", capsys)
    assert culture["solutions_per_item"] == {"3": culture["items"]} and set(culture["labels"]) == {"0", "1", "2"}
    assert stats_json(SAMPLES / "bengali.tsv", capsys)["scripts"] == {"Bengali": 32}  # the danda is not Devanagari


def test_card_reports_votes_and_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    main(["votes", "import", str(dataset), str(SAMPLES / "votes-darija-algerian.tsv")])
    capsys.readouterr()
    assert main(["card", str(dataset), "--out", str(tmp_path / "CARD.md")]) == 0
    card = (tmp_path / "CARD.md").read_text(encoding="utf-8")
    assert (
        card.startswith("---\n") and "# Dataset Card for " in card
    )  # --out: the old name of --to (tests/test_card.py)
    assert "| test | 36 |" in card and "Fleiss" in card and "identical-solutions" in card and "majority:2/3" in card


def test_script_prescan_never_misses_a_script() -> None:
    """scripts_maybe_present (UTF-8 lead bytes, in chunks) names every script a regex finds, chunk edges included."""
    import random
    import re

    from piqa_tui.core.dataset.frames import scripts_maybe_present
    from piqa_tui.core.text.characters import SCRIPTS

    rng = random.Random(0)
    planes = [(0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF)]
    for _ in range(2000):
        texts = [
            "".join(chr(rng.randint(*rng.choice(planes))) for _ in range(rng.randint(0, 4)))
            for _ in range(rng.randint(1, 4))
        ]
        found = {name for name, ranges in SCRIPTS.items() if any(re.search(f"[{ranges}]", t) for t in texts)}
        assert found <= set(scripts_maybe_present(texts, chunk=rng.choice([1, 3, 1000])))
    assert scripts_maybe_present(["plain ascii"]) == ["Latin"] and scripts_maybe_present(["١٢٣"]) == ["Arabic"]
