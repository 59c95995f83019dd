"""A lead's round records travel between copies: items given by hand and panel sizes (``assign --item``) and the
ids a release gave (``export --readable-ids``) reach every copy through ``workspace merge`` and ``sync`` and give
the same state whatever order the copies were merged in, even where two copies decided differently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from piqa_tui.core.report.release_ids import kept_ids
from piqa_tui.core.round.recorded import assignment_in_force
from piqa_tui.core.round.stages import Draft, add_items, set_stage
from piqa_tui.core.workspace.project import Project
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported
from tests.test_sync import git_identity, team  # noqa: F401  (git_identity: autouse, commits need no git config)
from tests.test_team_exchange import run

WS = "culture.tsv.piqa.sqlite"


def origin(folder: Path) -> Path:
    """The Arab-culture round of docs/rounds.md imported and drawn: the copy every laptop starts from."""
    folder.mkdir()
    imported(culture_copy(folder), doc_round(ARAB))
    return folder


def merge(into: Path, other: Path) -> None:
    code, _, err = cli("workspace", "merge", into / "culture.tsv", other / WS)
    assert code == 0, err


def state(machine: Path, tmp: Path) -> tuple[object, ...]:
    """What a lead reads of the round on ``machine``: the assignment with the panels, ``progress --json``, the
    adjudication queue of ``agree --json`` and the ids a release gives."""
    project = Project.open(machine / "culture.tsv", create=False)
    assignment = assignment_in_force(project.workspace)
    ids = kept_ids(project)
    project.workspace.close()  # type: ignore[union-attr]
    code, progress, err = cli("progress", machine / "culture.tsv", "--json")
    assert code == 0, err
    code, agree, err = cli("agree", machine / "culture.tsv", "--json")
    assert code in (0, 1), err
    return assignment.items, assignment.panels, json.loads(progress), json.loads(agree), ids


def laptop(start: Path, folder: Path, who: str, moves: list[tuple[str, ...]], draft: str) -> Path:
    """A copy of ``start`` where the lead ``who`` runs ``assign`` with each of ``moves``, writes one item
    (``draft``) and releases with readable ids."""
    shutil.copytree(start, folder)
    dataset = folder / "culture.tsv"
    for move in moves:
        code, _, err = cli("assign", dataset, "--item", *move, "--annotator", who)
        assert code == 0, err
    project = Project.open(dataset, annotator=who)
    (written,) = add_items(project, [Draft(draft, ("one way", "another way"), 0)])
    set_stage(project, [written], "validation")
    project.workspace.close()  # type: ignore[union-attr]
    code, _, err = cli("export", dataset, "--to", folder / "release.tsv", "--readable-ids", "--force")
    assert code == 0, err
    return folder


def test_assignments_panels_and_release_ids_merge_to_one_state_in_any_order(tmp_path: Path) -> None:
    start = origin(tmp_path / "origin")
    first, second, third = (item.id for item in Project.open(start / "culture.tsv", create=False).items[:3])
    a = laptop(start, tmp_path / "a", "hala", [(first, "--to", "omar"), (second, "--panel", "2")], "Bake bread")
    b = laptop(start, tmp_path / "b", "hala", [(second, "--panel", "3"), (third, "--to", "lina")], "Brew tea")
    for machine in (a, b):  # both copies released their one new item as msa-031: the merge must settle it
        assert list(kept_ids(Project.open(machine / "culture.tsv", create=False)).values()) == ["msa-031"]
    c, d = tmp_path / "c", tmp_path / "d"
    shutil.copytree(start, c)
    shutil.copytree(start, d)
    merge(a, b)  # A←B, B←A; C←A then C←B; D←B then D←A
    merge(b, a)
    merge(c, a)
    merge(c, b)
    merge(d, b)
    merge(d, a)
    states = [state(m, tmp_path) for m in (a, b, c, d)]
    assert all(found == states[0] for found in states)
    items, panels, progress, _, ids = states[0]
    assert "omar" in items[first] and "lina" in items[third]  # both hands reached every copy
    assert panels[second] in (2, 3)  # one panel size, the same everywhere: the later setting by the log's order
    assert list(ids.values()) == ["msa-031"]  # one of the two items keeps msa-031 …
    for machine in (a, d):  # … and the next release on any copy gives the other the next free number, once
        code, _, err = cli(
            "export", machine / "culture.tsv", "--to", machine / "again.tsv", "--readable-ids", "--force"
        )
        assert code == 0, err
    merge(a, d)
    merge(d, a)
    again = [kept_ids(Project.open(m / "culture.tsv", create=False)) for m in (a, d)]
    assert again[0] == again[1] and sorted(again[0].values()) == ["msa-031", "msa-032"]
    assert (a / "again-ids.tsv").read_bytes() == (d / "again-ids.tsv").read_bytes()
    assert progress


def test_assignments_and_release_ids_travel_through_sync(tmp_path: Path) -> None:
    """``sync`` carries the events a hand, a panel and a release recorded: the other laptop reads the same."""
    _, machines = team(tmp_path)
    lead, other = machines["a"], machines["b"]
    first, second = (item.id for item in Project.open(lead, create=False).items[:2])
    for move in ((first, "--to", "omar"), (second, "--panel", "2")):
        code, _, err = cli("assign", lead, "--item", *move, "--annotator", "hala")
        assert code == 0, err
    project = Project.open(lead, annotator="hala")
    (written,) = add_items(project, [Draft("Bake bread", ("one way", "another way"), 0)])
    set_stage(project, [written], "validation")
    project.workspace.close()  # type: ignore[union-attr]
    code, _, err = cli("export", lead, "--to", tmp_path / "release.tsv", "--readable-ids", "--force")
    assert code == 0, err
    run("sync", lead)
    run("sync", other)
    there = Project.open(other, create=False)
    assert kept_ids(there) == {written: "msa-031"}
    assignment = assignment_in_force(there.workspace)
    assert "omar" in assignment.items[first] and assignment.panels[second] == 2
