"""Authoring stages: items written or imported as drafts, moved through review and validation, undone, merged
between machines, saved into the file, and how much each was corrected from the text it started from."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.round.stages import (
    FILE_STAGE,
    add_items,
    correction_rate,
    correction_rates,
    correction_summary,
    draft,
    set_stage,
    stage_of,
    writer_columns,
)
from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.card import dataset_card

from .conftest import copy_sample

TAMIL = "tamil.tsv"


def cli(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == code, done.stderr + done.stdout
    return done


@pytest.fixture
def tamil(tmp_path: Path) -> Path:
    return copy_sample(TAMIL, tmp_path)


def test_file_items_start_at_validation_and_move_through_the_stages_with_undo(tamil: Path) -> None:
    project = Project.open(tamil, annotator="lead")
    first, second = project.items[0].id, project.items[1].id
    assert stage_of(project, first) == FILE_STAGE == "validation"
    assert set_stage(project, [first, second], "review") == 2
    assert set_stage(project, [first], "review") == 0  # already there: nothing recorded
    assert set_stage(project, [first], "done") == 1
    assert (stage_of(project, first), stage_of(project, second)) == ("done", "review")
    project.undo()
    assert stage_of(project, first) == "review"
    project.undo()  # both back where the file put them
    assert stage_of(project, first) == stage_of(project, second) == "validation"
    project.redo()
    assert stage_of(Project.open(tamil, create=False), second) == "review"  # kept in the workspace


def test_a_new_item_is_a_draft_with_a_fresh_id_and_undo_takes_it_away(tamil: Path) -> None:
    project = Project.open(tamil, annotator="writer")
    count = len(project.items)
    (item_id,) = add_items(project, [draft("Goal", ["one way", "another way"], 1)])
    assert item_id.startswith("new-") and item_id not in {i.id for i in project.dataset.items}
    assert project.item(item_id).solutions == ("one way", "another way") and project.item(item_id).label == 1
    assert stage_of(project, item_id) == "draft" and len(project.items) == count + 1
    assert set(project.item(item_id).meta) == set(project.dataset.meta_columns)  # every column, empty
    project.edit(item_id, {"prompt": "A goal"})
    project.undo()  # the edit
    project.undo()  # the item, and its stage with it
    assert item_id not in project.index and len(project.items) == count
    project.redo()
    assert project.item(item_id).prompt == "Goal" and stage_of(project, item_id) == "draft"
    assert Project.open(tamil, create=False).item(item_id).prompt == "Goal"  # replayed on opening


def test_two_copies_each_adding_items_merge_with_both_and_no_clash(tmp_path: Path) -> None:
    start = tmp_path / "start"
    start.mkdir()
    path = copy_sample(TAMIL, start)
    Project.open(path, annotator="lead").workspace.close()  # type: ignore[union-attr]
    copies = []
    for who in ("amala", "bala"):
        shutil.copytree(start, tmp_path / who)
        project = Project.open(tmp_path / who / TAMIL, annotator=who)
        copies.append(add_items(project, [draft(f"{who}'s goal", ["a", "b"], 0), draft(f"{who} again", ["c", "d"], 1)]))
        project.edit(copies[-1][0], {"solution1": f"b by {who}"})
        project.workspace.close()  # type: ignore[union-attr]
    project = Project.open(tmp_path / "amala" / TAMIL, annotator="amala")
    merge_workspace(project.workspace, tmp_path / "bala" / f"{TAMIL}.piqa.sqlite")  # type: ignore[arg-type]
    project.refresh()
    added = [item.id for item in project.items[len(project.dataset.items) :]]
    assert sorted(added) == sorted(copies[0] + copies[1]) and len(set(added)) == 4
    assert project.item(copies[1][0]).solutions == ("a", "b by bala")
    assert all(stage_of(project, item_id) == "draft" for item_id in added)
    out = tmp_path / "release.tsv"
    project.export(out)
    assert sum(line.startswith("new-") for line in out.read_text(encoding="utf-8").splitlines()) == 4


def test_saved_items_are_rows_of_the_file_and_not_added_again(tmp_path: Path) -> None:
    path = tmp_path / "no-ids.tsv"
    path.write_text("goal\tsol1\tsol2\tlabel\nOpen a jar\ttwist\thit\t0\n", encoding="utf-8")  # no id column
    project = Project.open(path, annotator="writer")
    (item_id,) = add_items(project, [draft("Boil water", ["kettle", "fridge"], 0)])
    project.save()
    assert path.read_text(encoding="utf-8").splitlines()[-1] == "Boil water\tkettle\tfridge\t0"
    again = Project.open(path, annotator="writer")
    assert [item.id for item in again.items] == ["r1", item_id]  # the saved row keeps its id: no duplicate


def test_drafts_are_imported_through_the_dataset_reader(tamil: Path, tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text("goal\tsol1\tsol2\tlabel\tcategory\nDrink tea\ta cup\ta fork\t0\tfood\n", encoding="utf-8")
    done = cli("stage", str(tamil), "--import", str(drafts), "--json")
    (item_id,) = json.loads(done.stdout)["imported"]
    project = Project.open(tamil, create=False)
    assert project.item(item_id).meta["category"] == "food" and stage_of(project, item_id) == "draft"
    shown = json.loads(cli("stage", str(tamil), "--json").stdout)
    assert shown["stages"]["draft"] == 1 and shown["stages"]["validation"] == len(project.dataset.items)


def test_a_drafts_column_the_dataset_lacks_is_named_as_left_out(tamil: Path, tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text(
        "goal\tsol1\tsol2\tlabel\tcategory\tengine\tnote\nDrink tea\ta cup\ta fork\t0\tfood\tmt\tcheck\n",
        encoding="utf-8",
    )
    done = cli("stage", str(tamil), "--import", str(drafts))
    assert "left out 2 columns the dataset does not have: engine, note" in done.stdout
    done = cli("stage", str(tamil), "--import", str(drafts), "--json")
    assert json.loads(done.stdout)["columns_left_out"] == ["engine", "note"]


def test_a_bad_drafts_file_is_one_line_and_records_nothing(tamil: Path, tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text("goal\tsol1\tsol2\tlabel\nDrink tea\ta cup\ta fork\t0\nragged\n", encoding="utf-8")
    done = cli("stage", str(tamil), "--import", str(drafts), code=2)
    assert len(done.stderr.strip().splitlines()) == 1 and "drafts.tsv" in done.stderr
    assert cli("stage", str(tamil), "x", "--to", "nowhere", code=2).stderr.count("\n") == 1
    assert json.loads(cli("stage", str(tamil), "--json").stdout)["stages"]["draft"] == 0


def test_the_cli_moves_items_by_stage_and_by_column(tamil: Path) -> None:
    project = Project.open(tamil, create=False)
    food = [item.id for item in project.items if item.meta["category"] == project.items[0].meta["category"]]
    done = json.loads(
        cli(
            "stage", str(tamil), "--where", f"category={project.items[0].meta['category']}", "--to", "review", "--json"
        ).stdout
    )
    assert done == {"stage": "review", "selected": len(food), "moved": len(food), "items": food, "dry_run": False}
    done = json.loads(cli("stage", str(tamil), "--from", "review", "--to", "done", "--json").stdout)
    assert done["moved"] == len(food)
    assert json.loads(cli("stage", str(tamil), "--json").stdout)["stages"]["done"] == len(food)


def authored(folder: Path, count: int = 6) -> Path:
    """A small file with an author and a country column: amina wrote the first half, bilal the rest."""
    path = folder / "authored.tsv"
    rows = [
        f"a{n}\tgoal {n}\tone\ttwo\t0\t{'amina' if n < count // 2 else 'bilal'}\t{'Egypt' if n % 2 else 'Oman'}"
        for n in range(count)
    ]
    path.write_text("\n".join(["id\tgoal\tsol1\tsol2\tlabel\tauthor\tcountry", *rows]) + "\n", encoding="utf-8")
    return path


def test_from_and_where_narrow_each_other_as_they_read(tmp_path: Path) -> None:
    path = authored(tmp_path)
    set_stage(Project.open(path, annotator="lead"), ["a0", "a1", "a3", "a4"], "draft")  # two drafts each
    done = json.loads(
        cli("stage", str(path), "--from", "draft", "--where", "author=amina", "--to", "review", "--json").stdout
    )
    assert done["items"] == ["a0", "a1"] and done["selected"] == 2  # amina's drafts: not every draft, not all hers
    project = Project.open(path, create=False)
    assert [stage_of(project, f"a{n}") for n in range(6)] == [
        "review",
        "review",
        "validation",
        "draft",
        "draft",
        "validation",
    ]
    done = json.loads(
        cli("stage", str(path), "--where", "author=bilal", "--where", "country=Egypt", "--to", "done", "--json").stdout
    )
    assert done["items"] == ["a3", "a5"]  # bilal's items from Egypt: every --where holds
    done = json.loads(cli("stage", str(path), "a0", "a3", "--from", "draft", "--to", "review", "--json").stdout)
    assert done["items"] == [] and done["selected"] == 0  # a0 is in review, a3 done: neither is a draft
    assert (
        "no item among 2 named at draft; nothing moved"
        in cli("stage", str(path), "a0", "a3", "--from", "draft", "--to", "review").stdout
    )


def test_a_dry_run_names_what_would_move_and_records_nothing(tmp_path: Path) -> None:
    path = authored(tmp_path)
    set_stage(Project.open(path, annotator="lead"), ["a0"], "review")
    events = len(Project.open(path, create=False).workspace.events())  # type: ignore[union-attr]
    done = cli("stage", str(path), "--where", "author=amina", "--to", "review", "--dry-run")
    assert "would move 2 of 3 items to review (1 was there already): a1, a2" in done.stdout
    assert "recorded nothing" in done.stdout
    shown = json.loads(
        cli("stage", str(path), "--where", "author=amina", "--to", "review", "--dry-run", "--json").stdout
    )
    assert shown == {"stage": "review", "selected": 3, "moved": 2, "items": ["a1", "a2"], "dry_run": True}
    project = Project.open(path, create=False)
    assert len(project.workspace.events()) == events and stage_of(project, "a1") == "validation"  # type: ignore[union-attr]
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text("goal\tsol1\tsol2\tlabel\nDrink tea\ta cup\ta fork\t0\n", encoding="utf-8")
    assert "would import 1 draft from" in cli("stage", str(path), "--import", str(drafts), "--dry-run").stdout
    assert len(Project.open(path, create=False).items) == 6


def test_a_move_names_the_items_it_moved_cut_past_twenty_in_text(tmp_path: Path) -> None:
    path = authored(tmp_path, count=50)
    done = cli("stage", str(path), "--where", "author=bilal", "--to", "review")
    assert "moved 25 of 25 items to review: a25, a26," in done.stdout
    assert "a44 and 5 more" in done.stdout and "a45" not in done.stdout
    done = json.loads(cli("stage", str(path), "--from", "review", "--to", "done", "--json").stdout)
    assert done["items"] == [f"a{n}" for n in range(25, 50)]  # --json: the full list


def test_correction_rates_against_hand_computed_values(tmp_path: Path) -> None:
    path = tmp_path / "mt.tsv"
    path.write_text("id\tgoal\tsol1\tsol2\tlabel\nf1\tabc\tp\tq\t0\nf2\tuntouched\tx\ty\t0\n", encoding="utf-8")
    project = Project.open(path, annotator="corrector")
    (jar,) = add_items(project, [draft("Open a jar", ["twist lid", "hit it"], 0)])
    project.edit(jar, {"solution0": "twist a lid"})
    project.edit(jar, {"solution0": "twist the lid"})  # measured from the draft, not from the last edit
    set_stage(project, ["f1", "f2"], "review")
    project.edit("f1", {"prompt": "xyz"})
    # "Open a jar\ntwist lid\nhit it" → "Open a jar\ntwist the lid\nhit it": 4 insertions over 31 characters.
    assert correction_rate(project, jar) == pytest.approx(4 / 31)
    # "abc\np\nq" → "xyz\np\nq": 3 substitutions over 7 characters.
    assert correction_rate(project, "f1") == pytest.approx(3 / 7)
    rates = correction_rates(project)
    assert rates == pytest.approx({"f1": 3 / 7, "f2": 0.0, jar: 4 / 31}) and list(rates) == ["f1", "f2", jar]
    summary = correction_summary(rates)
    assert summary is not None and summary.items == 3 and summary.corrected == 2
    assert summary.mean == pytest.approx((3 / 7 + 4 / 31) / 3) and summary.heavy == pytest.approx(1 / 3)
    card = dataset_card(project)
    assert "### Authoring and correction" in card and "| 2/3 | 18.6% | 33.3% |" in card
    project.save()  # the text it started from is in the log, so saving changes nothing
    assert correction_rate(Project.open(path, create=False), "f1") == pytest.approx(3 / 7)


def test_a_card_without_authoring_has_no_correction_section(tamil: Path) -> None:
    assert "Authoring and correction" not in dataset_card(Project.open(tamil, create=False))


def test_votes_on_a_new_item_travel_like_any_other(tamil: Path, tmp_path: Path) -> None:
    project = Project.open(tamil, annotator="validator")
    (item_id,) = add_items(project, [draft("Goal", ["one way", "another way"], 0)])
    project.workspace.close()  # type: ignore[union-attr]
    other = tmp_path / "other"
    shutil.copytree(tamil.parent, other)  # a second machine, holding the new item but not the vote
    project = Project.open(tamil, annotator="validator")
    project.vote(item_id, "1")
    out = tmp_path / "votes.tsv"
    cli("votes", "export", str(tamil), str(out))
    cli("votes", "import", str(other / TAMIL), str(out))
    assert Project.open(other / TAMIL, create=False).state.votes[item_id]["validator"].choice == "1"


def test_a_writer_in_the_round_writes_items_routed_as_theirs(tmp_path: Path) -> None:
    from tests.test_rounds import ARAB, culture_copy, doc_round, imported

    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    project = Project.open(dataset, annotator="karim")
    assert writer_columns(project) == {"author": "karim", "country": "Algeria"}
    assert writer_columns(Project.open(dataset, annotator="nobody")) == {}


def test_a_new_item_takes_every_attribute_of_its_writer_that_names_a_column(tmp_path: Path) -> None:
    from tests.test_rounds import ARAB, culture_copy, doc_round, imported

    karim = 'name = "karim"\nroles = ["writer", "validator"]\ncountry = "Algeria"\n'
    text = doc_round(ARAB)
    assert karim in text
    text = text.replace(karim, karim + 'Region = "Maghreb"\ntopic = ["food", "family"]\n')
    project = Project.open(imported(culture_copy(tmp_path), text), annotator="karim")
    # region by its name whatever the case; topic left empty: karim has two, the form leaves the choice to him
    assert writer_columns(project) == {"author": "karim", "country": "Algeria", "region": "Maghreb"}
    (item_id,) = add_items(project, [draft("Goal", ["one way", "another way"], 0, writer_columns(project))])
    assert project.item(item_id).meta["region"] == "Maghreb"


def test_thousands_of_drafts_get_distinct_ids_in_their_order(tamil: Path) -> None:
    project = Project.open(tamil, annotator="writer")
    drafts = [draft(f"Dry herbs {n}", ["hang them", "soak them"], 0) for n in range(5000)]
    ids = add_items(project, drafts)
    assert len(set(ids)) == len(ids) == 5000 and not set(ids) & {item.id for item in project.dataset.items}
    assert [project.item(item_id).prompt for item_id in ids] == [d.prompt for d in drafts]
    assert all(stage_of(project, item_id) == "draft" for item_id in ids)


def test_imported_drafts_take_their_writers_columns_where_the_file_leaves_them_empty(tmp_path: Path) -> None:
    """``stage --import`` as yacine: his drafts are authored by him and routed to his country, as the ``I`` form's
    are; a value the file gives wins."""
    from tests.test_rounds import ARAB, culture_copy, doc_round, imported

    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    drafts = tmp_path / "drafts.tsv"
    drafts.write_text(
        "premise\toption_a\toption_b\toption_c\tanswer\tcountry\n"
        "Goal one\tone way\tanother way\ta third\tA\t\n"
        "Goal two\tone way\tanother way\ta third\tA\tEgypt\n",
        encoding="utf-8",
    )
    done = cli("stage", str(dataset), "--import", str(drafts), "--annotator", "karim", "--json")
    first, second = json.loads(done.stdout)["imported"]
    project = Project.open(dataset, create=False)
    assert project.item(first).meta["author"] == "karim" and project.item(first).meta["country"] == "Algeria"
    assert project.item(second).meta["author"] == "karim" and project.item(second).meta["country"] == "Egypt"
