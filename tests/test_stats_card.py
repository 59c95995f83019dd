"""stats and card on real data and the samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.cli import main

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
    assert set(darija["categories"]) >= {"dialect", "category", "source"} and "msa_translation" not in darija["categories"]
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
    assert card.startswith("# Dataset card: darija-algerian.tsv")
    assert "| items | 36 |" in card and "Fleiss" in card and "identical-solutions" in card and "majority:2/3" in card
