"""``export --pseudonyms``: the release's author column names people as "annotator N", numbered as the card's
``--pseudonyms`` numbers them, so the card and the release agree without naming anyone."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from piqa_tui.core.report.pseudonyms import pseudonyms
from piqa_tui.core.workspace.project import Project
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_the_release_names_authors_by_the_cards_pseudonyms(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    voter = Project.open(dataset, annotator="karim")  # a writer who validates other countries' items
    voter.vote(next(i for i in voter.items if i.meta["author"] != "karim").id, "0")
    voter.workspace.close()
    authors = {row["id"]: row["author"] for row in rows(dataset)}
    out = tmp_path / "release.tsv"
    code, _, err = cli("export", dataset, "--decided", "--pseudonyms", "--to", out, "--card", tmp_path / "README.md")
    assert code == 0, err
    written = {row["id"]: row["author"] for row in rows(out)}
    assert written.keys() == authors.keys()
    assert all(name.startswith("annotator ") for name in written.values())
    assert not set(written.values()) & set(authors.values())  # no name left
    by_person = {(author, written[item_id]) for item_id, author in authors.items()}
    assert len(by_person) == len(set(authors.values())) == len(set(written.values()))  # one person, one pseudonym
    names = pseudonyms(Project.open(dataset, create=False), authors.values())
    assert names["karim"] == "annotator 1"  # the only voter comes first, as in the card's agreement tables
    assert written[next(i for i, a in authors.items() if a == "karim")] == "annotator 1"
    card = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "karim" not in card and "annotator 1" in card


def test_without_the_option_the_release_keeps_the_names(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    out = tmp_path / "release.tsv"
    code, out_text, err = cli("export", dataset, "--to", out, "--json")
    assert code == 0, err
    assert json.loads(out_text)["items"] == len(rows(dataset))
    assert [row["author"] for row in rows(out)] == [row["author"] for row in rows(dataset)]
