"""Walking duplicate clusters: keep one, mark distinct, merge notes — logged and reflected in export.

A resolution is one action: its flags (or merged note) and its decision are recorded in one transaction, so
a lock held by another process or a kill part-way leaves all of it or none of it, and one undo takes it back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dedup.clusters import Cluster, Member, find_duplicates
from piqa_tui.core.dedup.resolution import (
    cluster_key,
    keep_one,
    mark_distinct,
    merge_notes,
    open_clusters,
)
from piqa_tui.core.errors import WorkspaceBusy
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.workspace.project import Project

from .conftest import ROOT, SAMPLES, copy_sample, piqa_slice, write_lock_held


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


def _cluster_of(project: Project, ids: list[str] | None = None) -> Cluster:
    """A cluster of the given items (every item of the project when none are given)."""
    ids = ids if ids is not None else [item.id for item in project.items]
    return Cluster(tuple(Member(item_id, project.index[item_id]) for item_id in ids), 0.9, "near")


def _resolution_events(project: Project) -> list:
    return project.workspace.events(["flag", "dedup"])


def test_a_resolution_is_one_transaction_whose_events_share_one_action(tmp_path: Path) -> None:
    project = Project.open(piqa_slice(tmp_path, 40), annotator="lead")
    statements: list[str] = []
    project.workspace.conn.set_trace_callback(statements.append)
    flagged = keep_one(project, _cluster_of(project), project.items[0].id)
    project.workspace.conn.set_trace_callback(None)
    assert len(flagged) == 39
    assert sum(s.startswith("BEGIN IMMEDIATE") for s in statements) == 1
    events = _resolution_events(project)
    assert len(events) == 40 and {e.action for e in events} == {events[0].seq}
    assert events[-1].kind == "dedup" and events[-1].new == f"keep:{project.items[0].id}"


def test_a_resolution_while_another_process_holds_the_lock_records_nothing_then_all_at_once(tmp_path: Path) -> None:
    path = piqa_slice(tmp_path, 60)
    project = Project.open(path, annotator="lead", busy_timeout=0.2)
    cluster, keep = _cluster_of(project), project.items[5].id
    with write_lock_held(path.with_name(path.name + ".piqa.sqlite")):
        with pytest.raises(WorkspaceBusy):
            keep_one(project, cluster, keep)
        with pytest.raises(WorkspaceBusy):
            merge_notes(project, cluster, keep)
        assert not any(project.state.flags.values()) and not project.state.dedup
        assert open_clusters(project, [cluster]) == [cluster]
    reader = Project.open(path, annotator="x")
    assert not any(reader.state.flags.values()) and not reader.state.dedup and not _resolution_events(reader)
    assert len(keep_one(project, cluster, keep)) == 59  # the lock is gone: everything, at once
    reader.refresh()
    assert sum("duplicate" in flags for flags in reader.state.flags.values()) == 59
    assert reader.state.dedup and not open_clusters(reader, [cluster])


# Resolves one cluster of every item of the dataset, and waits (inside the transaction, before the
# statement runs) at the N-th event it inserts, so the test can kill it there.
RESOLVER = """
import sys
from piqa_tui.core.dedup.clusters import Cluster, Member
from piqa_tui.core.dedup.resolution import keep_one
from piqa_tui.core.workspace.project import Project

project = Project.open(sys.argv[1], annotator="lead")
stop_at, inserted = int(sys.argv[2]), 0

def trace(statement):
    global inserted
    if statement.startswith("INSERT INTO events"):
        inserted += 1
        if inserted == stop_at:
            print("inside", flush=True)
            sys.stdin.readline()

project.workspace.conn.set_trace_callback(trace)
cluster = Cluster(tuple(Member(item.id, n) for n, item in enumerate(project.items)), 0.9, "near")
keep_one(project, cluster, project.items[0].id)
print("resolved", flush=True)
"""


@pytest.mark.parametrize("stop_at", [1, 150, 300])  # the first flag, halfway, the decision itself
def test_a_resolution_killed_part_way_leaves_none_of_it(tmp_path: Path, stop_at: int) -> None:
    path = piqa_slice(tmp_path, 300)
    Project.open(path, annotator="lead").workspace.close()
    child = subprocess.Popen(
        [sys.executable, "-c", RESOLVER, str(path), str(stop_at)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "inside"
    child.kill()  # SIGKILL, the transaction open
    child.wait(timeout=30)
    project = Project.open(path, annotator="lead")
    assert not any(project.state.flags.values()) and not project.state.dedup and not _resolution_events(project)
    assert len(keep_one(project, _cluster_of(project), project.items[0].id)) == 299  # the workspace works on


def test_a_resolution_not_killed_leaves_all_of_it(tmp_path: Path) -> None:
    path = piqa_slice(tmp_path, 300)
    Project.open(path, annotator="lead").workspace.close()
    done = subprocess.run(
        [sys.executable, "-c", RESOLVER, str(path), "0"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "resolved", done.stderr
    project = Project.open(path, annotator="lead")
    assert sum("duplicate" in flags for flags in project.state.flags.values()) == 299
    assert project.state.dedup == {cluster_key(_cluster_of(project)): f"keep:{project.items[0].id}"}


def test_undo_takes_a_whole_resolution_back_in_one_step(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    project.set_flag("dz-003", "unclear", note="which pot?")  # before the resolution: stays through its undo
    cluster = _cluster_of(project, ["dz-001", "dz-002", "dz-003", "dz-004"])
    assert keep_one(project, cluster, "dz-001") == ["dz-002", "dz-003", "dz-004"]
    project.workspace.close()

    reopened = Project.open(path, annotator="lead")  # undo works across a restart
    assert reopened.undo() == "dz-002"
    assert not any("duplicate" in reopened.state.flags.get(i, {}) for i in ("dz-002", "dz-003", "dz-004"))
    assert reopened.state.flags["dz-003"] == {"unclear": "which pot?"}
    assert open_clusters(reopened, [cluster]) == [cluster] and not reopened.state.dedup
    assert reopened.redo() == "dz-002"
    assert all(reopened.state.flags[i]["duplicate"] == "duplicate of dz-001" for i in ("dz-002", "dz-003", "dz-004"))
    assert not open_clusters(reopened, [cluster])
    assert Project.open(path, annotator="x").state.dedup == {cluster_key(cluster): "keep:dz-001"}


def test_undo_reopens_a_cluster_marked_distinct_and_gives_merged_notes_back(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="lead")
    near = _cluster_of(project, ["dz-006", "dz-019"])
    mark_distinct(project, near, "different situations")
    assert project.undo() == ""  # an action on no single item
    assert open_clusters(project, [near]) == [near]
    project.set_note("dz-019", "seen twice")
    merge_notes(project, near, "dz-006")
    assert project.state.notes["dz-006"] == "[dz-019] seen twice"
    assert project.undo() == "dz-006"
    assert project.state.notes.get("dz-006", "") == "" and project.state.notes["dz-019"] == "seen twice"
    assert open_clusters(project, [near]) == [near]
    assert project.undo() == "dz-019"  # the note before it: an action of its own
