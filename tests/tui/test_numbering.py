"""One numbering for people: solutions are 1 … n on every surface people read; files keep their own convention."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Footer

from piqa_tui.cli.main import main
from tests.conftest import SAMPLES, copy_sample

from .conftest import curate, main_screen


def footer_keys(pilot) -> list[str]:
    footer = pilot.app.screen.query_one(Footer)
    return [str(key.render()) for key in footer.query("FooterKey")]


@pytest.mark.parametrize(("sample", "keys"), [("darija-algerian.tsv", "1-2"), ("msa-culture.tsv", "1-3")])
async def test_the_footer_offers_only_the_vote_keys_the_item_has(tmp_path: Path, sample: str, keys: str) -> None:
    async with curate(copy_sample(sample, tmp_path)) as pilot:
        shown = footer_keys(pilot)
        assert f"{keys} vote" in shown and not any("1-4" in key for key in shown)


async def test_remapped_vote_keys_are_listed_as_they_are(darija: Path) -> None:
    async with curate(darija, keys={"vote_1": "z", "vote_2": "w"}) as pilot:
        assert "z/w vote" in footer_keys(pilot)


async def test_the_tui_says_solution_numbers_from_one(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        assert screen.item_view.block("solution0").border_title.startswith("1 · ")
        await pilot.press("2")  # votes for solution 2 of dz-001 and moves on
        await pilot.press("k")
        assert screen.project.state.votes["dz-001"]["tester"].choice == "1"  # stored 0-based, as vote files have it
        assert "you voted 2" in str(screen.item_view.query_one("#item-title").render())


def test_validate_numbers_solutions_from_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(
        "id\tprompt\tsolution0\tsolution1\tlabel\na\tp\tsame\tsame\t0\nb\tp\tx y\tx z\t2\n", encoding="utf-8"
    )
    main(["validate", str(path)])
    out = capsys.readouterr().out
    assert "solution 1 and solution 2 are identical" in out
    assert "the gold label points to solution 3, but the item has 2 solutions" in out
    assert "solution 0" not in out


def test_card_and_stats_name_gold_solutions_from_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = copy_sample("msa-culture.tsv", tmp_path)  # labels A/B/C in the file
    assert main(["card", str(dataset), "--out", str(tmp_path / "CARD.md")]) == 0
    card = (tmp_path / "CARD.md").read_text(encoding="utf-8")
    assert "| solution 1 | 10 |" in card and "| solution 3 | 10 |" in card
    capsys.readouterr()
    assert main(["stats", str(SAMPLES / "msa-culture.tsv")]) == 0
    assert "solution 1:" in capsys.readouterr().out
