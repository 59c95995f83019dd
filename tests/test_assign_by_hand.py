"""The lead gives one item to one validator by hand (``assign --item ID --to NAME``) and sets one item's panel
size (``--item ID --panel N``): ``assign`` events like a draw's, that undo like them; the queue, the draw and
``progress`` follow, and a name not in the round is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

from piqa_tui.core.round.recorded import assigned_to, assignment_in_force
from piqa_tui.core.workspace.project import Project
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported


def culture_round(folder: Path, per_item: int = 1) -> Path:
    text = doc_round(ARAB).replace("validators_per_item = 1", f"validators_per_item = {per_item}")
    code, _, err = cli("round", culture_copy(folder), "import", _round_file(folder, text), "--annotator", "hala")
    assert code == 0, err
    return folder / "culture.tsv"


def _round_file(folder: Path, text: str) -> Path:
    path = folder / "round.toml"
    path.write_text(text, encoding="utf-8")
    return path


def assignment(dataset: Path) -> dict[str, list[str]]:
    code, out, err = cli("assign", dataset, "--json", "--dry-run", "--top-up")
    assert code in (0, 1), err
    return json.loads(out)["assignment"]


def test_an_item_given_by_hand_joins_that_validators_queue_and_undoes(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    lead = Project.open(dataset, annotator="hala")
    item = next(i for i, names in assignment_in_force(lead.workspace).items.items() if names == ("karim",))
    assert item not in assigned_to(Project.open(dataset, annotator="amina"))
    code, out, err = cli("assign", dataset, "--item", item, "--to", "amina", "--annotator", "hala")
    assert code == 0, err
    assert out.splitlines()[0] == f"{item}: validators amina, karim; panel 1; recorded"
    amina = Project.open(dataset, annotator="amina")
    assert item in assigned_to(amina)  # her assigned queue follows
    code, out, _ = cli("progress", dataset, "--json")
    rows = {row["annotator"]: row for row in json.loads(out)["annotators"]}
    assert rows["amina"]["assigned"] == 3  # two drawn, one by hand
    code, out, _ = cli("assign", dataset, "--item", item, "--to", "amina", "--annotator", "hala")
    assert code == 0 and "nothing changed" in out
    lead.refresh()
    assert lead.undo() is not None  # one action, undone like a draw
    assert assignment_in_force(lead.workspace).items[item] == ("karim",)


def test_a_name_not_in_the_round_is_refused_in_one_line(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    item = Project.open(dataset, create=False).items[0].id
    before = assignment_in_force(Project.open(dataset, create=False).workspace)
    code, out, err = cli("assign", dataset, "--item", item, "--to", "nobody")
    assert code != 0 and out == "" and len(err.strip().splitlines()) == 1
    assert "--to nobody: not in the round arab-culture-pilot (its validators: " in err and "Traceback" not in err
    code, _, err = cli("assign", dataset, "--item", item, "--to", "hala")  # the lead: in the round, no validator
    assert code != 0 and len(err.strip().splitlines()) == 1 and "not a validator" in err
    code, _, err = cli("assign", dataset, "--item", "no-such-id", "--to", "amina")
    assert code != 0 and "--item no-such-id: no item with that id" in err
    code, _, err = cli("assign", dataset, "--to", "amina")
    assert code != 0 and "give --item ID with one of --to NAME or --panel N" in err
    code, _, err = cli("assign", dataset, "--item", item, "--panel", "0")
    assert code != 0 and "--panel 0: give 1 to 12" in err
    assert assignment_in_force(Project.open(dataset, create=False).workspace) == before  # nothing recorded


def test_a_smaller_panel_for_one_item_ends_its_wait_for_a_validator_nobody_can_be(tmp_path: Path) -> None:
    dataset = culture_round(tmp_path, per_item=2)  # every item: one writer of its country left to validate it
    code, out, _ = cli("assign", dataset, "--json", "--annotator", "hala")
    unstaffed = {u["item_id"] for u in json.loads(out)["unstaffed"]}
    item = Project.open(dataset, create=False).items[0].id
    assert code == 1 and item in unstaffed
    code, out, _ = cli("progress", dataset, "--json")
    assert json.loads(out)["still_needed"][item] == 2
    code, out, err = cli("assign", dataset, "--item", item, "--panel", "1", "--annotator", "hala")
    assert code == 0, err
    assert out.splitlines() == [f"{item}: validators {assignment(dataset)[item][0]}; panel 1; recorded"]
    code, out, _ = cli("assign", dataset, "--json", "--top-up", "--annotator", "hala")
    assert item not in {u["item_id"] for u in json.loads(out)["unstaffed"]}  # the draw takes it at its size
    code, out, _ = cli("progress", dataset, "--json")
    found = json.loads(out)
    assert found["still_needed"][item] == 1 and found["panels"] == {item: 1}
    code, out, _ = cli("assign", dataset, "--item", item, "--panel", "2", "--annotator", "hala")  # the round's
    assert code == 0 and "panel 2; recorded" in out
    code, out, _ = cli("progress", dataset, "--json")
    assert json.loads(out)["panels"] == {}
    lead = Project.open(dataset, annotator="hala")
    assert lead.undo() is not None
    assert assignment_in_force(lead.workspace).panels == {item: 1}


def test_a_dry_run_by_hand_records_nothing(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    item = Project.open(dataset, create=False).items[0].id
    before = assignment_in_force(Project.open(dataset, create=False).workspace)
    code, out, _ = cli("assign", dataset, "--item", item, "--panel", "2", "--dry-run", "--json")
    assert code == 0 and json.loads(out)["panel"] == 2 and json.loads(out)["changed"]
    assert assignment_in_force(Project.open(dataset, create=False).workspace) == before
