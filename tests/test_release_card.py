"""The card of a release describes the file ``export --decided`` wrote; the working card says it is work in progress."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.workspace.project import Project

from .conftest import SAMPLES, copy_sample


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def table(card: str, heading: str) -> dict[str, str]:
    """The first two cells of each row of the table under ``heading``."""
    block = card.split(heading, 1)[1].split("\n\n#", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines() if line.startswith("| ")]
    return {row[0]: row[1] for row in rows[1:] if row[0] != "---"}


def decided_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The Darija sample with its votes, an adjudication against the file's label and one unsaved edit."""
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    assert main(["votes", "import", str(dataset), str(SAMPLES / "votes-darija-algerian.tsv")]) == 0
    project = Project.open(dataset, annotator="lead")
    second = next(i.id for i in project.items if i.label == 1 and i.id != "dz-007")  # dz-007's votes also say 1
    project.adjudicate(second, 0, "the first solution is the safe one")
    project.edit("dz-024", {"solution1": project.item("dz-024").solutions[1].rstrip()})
    capsys.readouterr()
    return dataset


def test_release_card_equals_what_the_release_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = decided_workspace(tmp_path, capsys)
    out, card_file = tmp_path / "release.tsv", tmp_path / "README.md"
    assert main(["export", str(dataset), "--decided", "--to", str(out), "--card", str(card_file)]) == 0
    assert "wrote the release's card" in capsys.readouterr().out
    card = card_file.read_text(encoding="utf-8")
    released = read_tsv(out)
    labels = Counter(f"solution {int(row['label']) + 1}" for row in released)
    assert labels != Counter(f"solution {int(row['label']) + 1}" for row in read_tsv(dataset))  # decisions changed it
    assert {k: int(v) for k, v in table(card, "#### Label balance").items()} == labels
    assert table(card, "### Data Splits") == {"test": str(len(released))}
    assert "path: release.tsv" in card and "Work in progress" not in card

    # The release file alone: no workspace of its own, no warning, the same balance.
    assert main(["card", str(out)]) == 0
    alone = capsys.readouterr()
    assert "changed since" not in alone.err and "Work in progress" not in alone.out
    assert {k: int(v) for k, v in table(alone.out, "#### Label balance").items()} == labels
    assert not Path(f"{out}.piqa.sqlite").exists()


def test_working_card_says_how_many_edits_are_unsaved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = decided_workspace(tmp_path, capsys)
    assert main(["card", str(dataset)]) == 0
    card = capsys.readouterr().out
    assert "Work in progress" in card and "1 edited item is not saved to the file (`dz-024`)" in card


def test_a_split_column_gives_the_items_per_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = read_tsv(SAMPLES / "darija-algerian.tsv")
    splits = ["train"] * 20 + ["dev"] * 6 + ["test"] * (len(rows) - 26)
    dataset = tmp_path / "armis-like.tsv"
    with dataset.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, [*rows[0], "split"], delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        writer.writeheader()
        writer.writerows({**row, "split": split} for row, split in zip(rows, splits, strict=True))
    out = tmp_path / "release.tsv"
    assert main(["export", str(dataset), "--decided", "--to", str(out), "--card", str(tmp_path / "README.md")]) == 0
    capsys.readouterr()
    for card in ((tmp_path / "README.md").read_text(encoding="utf-8"), None):
        if card is None:
            assert main(["card", str(out)]) == 0
            card = capsys.readouterr().out
        shown = table(card, "### Data Splits")
        assert shown == {"train": "20", "dev": "6", "test": str(len(rows) - 26)}
        assert re.search(r"\| train \| 20 \| release\.tsv", card)
