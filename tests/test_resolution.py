"""Walking duplicate clusters: keep one, mark distinct, merge notes — logged and reflected in export."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.cli.main import main
from piqa_tui.core.dedup.clusters import find_duplicates
from piqa_tui.core.dedup.resolution import (
    keep_one,
    mark_distinct,
    merge_notes,
    open_clusters,
)
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.workspace.project import Project

from .conftest import SAMPLES, copy_sample


def _cluster_with(clusters, item_id):
    return next(c for c in clusters if item_id in {m.id for m in c.members})


def test_keep_one_flags_the_others_keeps_their_votes_and_export_drops_them(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    import_votes(project, SAMPLES / "votes-darija-algerian.tsv")
    clusters = find_duplicates(project.items)
    exact = _cluster_with(clusters, "dz-029")  # planted exact copy of dz-008
    assert {m.id for m in exact.members} == {"dz-008", "dz-029"}
    assert keep_one(project, exact, "dz-008") == ["dz-029"]
    reopened = Project.open(path, annotator="lead")
    assert "duplicate" in reopened.state.flags["dz-029"] and len(reopened.state.votes["dz-029"]) == 3
    assert exact not in open_clusters(reopened, find_duplicates(reopened.items))
    out = tmp_path / "release.tsv"
    assert main(["export", str(path), "--to", str(out), "--drop-flagged"]) == 0
    ids = [line.split("\t")[0] for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert "dz-029" not in ids and "dz-008" in ids and len(ids) == 35
    assert main(["export", str(path), "--to", str(tmp_path / "flags.tsv"), "--flag-column"]) == 0
    flags = {
        l.split("\t")[0]: l.split("\t")[-1]
        for l in (tmp_path / "flags.tsv").read_text(encoding="utf-8").splitlines()[1:]
    }
    assert flags["dz-029"] == "duplicate" and flags["dz-008"] == ""


def test_distinct_clusters_are_never_shown_again_and_notes_merge(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    clusters = find_duplicates(project.items)
    near = _cluster_with(clusters, "dz-019")  # planted near-duplicate of dz-006
    mark_distinct(project, near, "different situations")
    assert near not in open_clusters(Project.open(path, annotator="x"), find_duplicates(project.items))
    exact = _cluster_with(clusters, "dz-029")
    project.set_note("dz-029", "from the LLM draft")
    project.set_note("dz-008", "checked by amina")
    merged = merge_notes(project, exact, "dz-008")
    assert merged == "checked by amina\n[dz-029] from the LLM draft"
    assert Project.open(path).state.notes["dz-008"] == merged
