"""Workspaces on several machines brought together by merging: nothing lost, nothing counted twice, the same
state, agreement and release on every machine whatever the order, and a concurrent edit of one field shown as a
conflict until someone resolves it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from piqa_tui.core.round.positions import position_preference
from piqa_tui.core.votes.decisions import parse_policy, policy_spec, project_policy, set_project_policy
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.workspace.project import FieldConflict, Project
from piqa_tui.tui.state.listing import Filters, filtered_positions
from piqa_tui.tui.state.session import OpenRequest, Session

from .conftest import SAMPLES, copy_sample

DATA = "darija-algerian.tsv"
WS = DATA + ".piqa.sqlite"


def cli(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == code, done.stderr + done.stdout
    return done


def merge(into: Path, other: Path, *extra: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    return cli("workspace", "merge", str(into / DATA), str(other / WS), *extra, code=code)


def uids(machine: Path) -> list[str]:
    conn = sqlite3.connect(machine / WS)
    try:
        return [uid for (uid,) in conn.execute("SELECT uid FROM events")]
    finally:
        conn.close()


def origin(folder: Path) -> Path:
    """The lead's starting point: the sample with its votes imported, copied to every laptop."""
    folder.mkdir()
    path = copy_sample(DATA, folder)
    lead = Project.open(path, annotator="lead")
    import_votes(lead, SAMPLES / "votes-darija-algerian.tsv")
    lead.workspace.close()  # type: ignore[union-attr]
    return folder


def machines(tmp: Path, names: str = "ab") -> list[Path]:
    """A copy of the lead's starting point (:func:`origin`) per machine, in folders named by ``names``."""
    start = origin(tmp / "origin")
    for name in names:
        shutil.copytree(start, tmp / name)
    return [tmp / name for name in names]


def laptop(start: Path, folder: Path, who: str, n: int) -> Project:
    """A copy of ``start`` where ``who`` votes, edits, withdraws, makes a vote stale, adjudicates, flags and notes."""
    shutil.copytree(start, folder)
    project = Project.open(folder / DATA, annotator=who)
    mine = [f"dz-0{10 * n + k:02d}" for k in range(1, 6)]
    for item_id in mine:
        project.vote(item_id, "0")
    project.edit(mine[0], {"prompt": f"{project.item(mine[0]).prompt} ({who})"})
    project.vote(mine[1], "")  # a withdrawal
    project.edit(mine[2], {"solution0": project.item(mine[2]).solutions[0] + f" [{who}]"})  # the vote is stale now
    project.adjudicate(mine[3], 1, f"{who} decided")
    project.set_flag(mine[4], "typo", note=f"{who}'s flag")
    project.set_note(mine[4], f"{who}: check the wording")
    return project


def same_everywhere(machines: list[Path], tmp: Path) -> dict:
    """``agree --json`` and the released files of every machine, identical byte for byte; returns the agreement."""
    agreements = [cli("agree", str(m / DATA), "--json").stdout for m in machines]
    releases = []
    for m in machines:
        out = tmp / f"release-{m.name}.tsv"
        cli("export", str(m / DATA), "--to", str(out), "--decided", "--force")
        releases.append(out.read_bytes())
    assert all(a == agreements[0] for a in agreements), "agree --json differs between machines"
    assert all(r == releases[0] for r in releases), "the released files differ between machines"
    return json.loads(agreements[0])


def conflicts(machine: Path) -> tuple[int, list[dict]]:
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "workspace", "conflicts", str(machine / DATA), "--json"],
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def test_three_laptops_exchanging_in_any_order_end_with_one_state(tmp_path: Path) -> None:
    start = origin(tmp_path / "origin")
    a, b, c = (tmp_path / name for name in "abc")
    projects = {m: laptop(start, m, who, n) for m, who, n in ((a, "amina", 0), (b, "bilal", 1), (c, "chahra", 2))}
    projects[b].edit("dz-031", {"prompt": "bilal's wording"})  # one field edited differently on two laptops
    projects[c].edit("dz-031", {"prompt": "chahra's wording"})
    for project in projects.values():
        project.workspace.close()  # type: ignore[union-attr]
    union = set().union(*(uids(m) for m in (a, b, c)))

    first = merge(a, b).stdout  # A←B, C←B, A←C, B←A, C←A, and A←B again
    assert "already here" in first and "no conflicts" in first
    merge(c, b)
    assert "1 conflict: resolve them in the TUI (queue conflicts)" in merge(a, c).stdout
    merge(b, a)
    merge(c, a)
    again = json.loads(merge(a, b, "--json").stdout)
    assert again["added"] == 0 and again["conflicts"] == 1  # a merge repeated counts nothing twice

    for m in (a, b, c):
        assert sorted(uids(m)) == sorted(union)  # every event once, everywhere
    agreement = same_everywhere([a, b, c], tmp_path)
    assert agreement
    listed = [conflicts(m) for m in (a, b, c)]
    assert listed[0][0] == 1 and all(found == listed[0] for found in listed)
    (conflict,) = listed[0][1]
    assert conflict["item_id"] == "dz-031" and conflict["field"] == "prompt"
    assert {conflict["current"], conflict["other"]} == {"bilal's wording", "chahra's wording"}
    assert conflict["base"] == Project.open(start / DATA).item("dz-031").prompt  # both were made on the file's

    # Resolved on B, keeping the text in force: the resolution travels and clears the conflict everywhere.
    on_b = Project.open(b / DATA, annotator="bilal")
    kept = on_b.conflicts()[0].current
    on_b.resolve_conflict("dz-031", "prompt", kept)
    assert on_b.conflicts() == [] and on_b.item("dz-031").prompt == kept
    on_b.workspace.close()  # type: ignore[union-attr]
    merge(a, b)
    merge(c, a)
    assert [conflicts(m) for m in (a, b, c)] == [(0, [])] * 3
    same_everywhere([a, b, c], tmp_path)
    assert len(set(uids(a))) == len(union) + 1  # the resolution, once


def test_concurrent_edits_and_their_resolution_derived_from_the_log(tmp_path: Path) -> None:
    """The rules on a hand-made case: the later edit in canonical order was made on the file's value."""
    a, b = machines(tmp_path)
    on_a, on_b = Project.open(a / DATA, annotator="amina"), Project.open(b / DATA, annotator="bilal")
    original = on_a.item("dz-002").solutions[1]
    on_a.edit("dz-002", {"solution1": "same text", "prompt": on_a.item("dz-002").prompt + " A"})
    on_b.edit("dz-002", {"solution1": "same text", "prompt": on_b.item("dz-002").prompt + " B"})
    on_a.set_note("dz-003", "amina's note")
    on_b.set_note("dz-003", "bilal's note")
    on_b.workspace.close()  # type: ignore[union-attr]
    merge(a, b)
    on_a.refresh()
    found = {(c.item_id, c.field): c for c in on_a.conflicts()}
    assert set(found) == {("dz-002", "prompt"), ("dz-003", "note")}  # the same text typed twice: no conflict
    assert on_a.item("dz-002").solutions[1] == "same text" != original
    note = found[("dz-003", "note")]
    assert isinstance(note, FieldConflict) and note.base == ""
    assert {note.current, note.other} == {"amina's note", "bilal's note"}
    assert {note.current_by, note.other_by} == {"amina", "bilal"}
    on_a.resolve_conflict("dz-003", "note", "both notes, merged by hand")
    assert [c.field for c in on_a.conflicts()] == ["prompt"]
    assert on_a.state.notes["dz-003"] == "both notes, merged by hand"
    listed = cli("workspace", "conflicts", str(a / DATA), code=1).stdout.splitlines()
    assert len(listed) == 1 and listed[0].startswith("dz-002 prompt:")
    session = Session.open(OpenRequest(a / DATA, annotator="amina"))  # the TUI's queue
    queue = filtered_positions(session, Filters(queue="conflicts"))
    assert [session.project.items[pos].id for pos in queue] == ["dz-002"]


def test_undo_after_a_merge_undoes_the_annotators_own_last_action(tmp_path: Path) -> None:
    a, b = machines(tmp_path)
    on_a = Project.open(a / DATA, annotator="amina")
    before = on_a.item("dz-004").prompt
    on_a.edit("dz-004", {"prompt": "amina's edit"})
    on_b = Project.open(b / DATA, annotator="bilal")
    for k in range(5):  # more events on B: its clocks go past A's
        on_b.vote(f"dz-01{k}", "1")
    on_b.edit("dz-005", {"prompt": "bilal's edit"})
    on_b.workspace.close()  # type: ignore[union-attr]
    merge(a, b)
    assert on_a.undo() == "dz-004"
    assert on_a.item("dz-004").prompt == before and on_a.item("dz-005").prompt == "bilal's edit"
    on_a.vote("dz-020", "0")  # a new event follows everything it has seen
    conn = sqlite3.connect(a / WS)
    last, before = conn.execute(
        "SELECT (SELECT clock FROM events ORDER BY seq DESC LIMIT 1),"
        " (SELECT MAX(clock) FROM events WHERE seq < (SELECT MAX(seq) FROM events))"
    ).fetchone()
    conn.close()
    assert last > before


def test_a_merge_reaches_a_project_another_process_has_open(tmp_path: Path) -> None:
    """As a TUI session sees it: its next refresh rebuilds from the log and names every item."""
    a, b = machines(tmp_path)
    session = Project.open(a / DATA, annotator="amina")
    session.edit("dz-006", {"prompt": "amina's"})
    on_b = Project.open(b / DATA, annotator="bilal")
    on_b.edit("dz-007", {"prompt": "bilal's"})
    on_b.adjudicate("dz-008", 0, "bilal decided")
    on_b.workspace.close()  # type: ignore[union-attr]
    merge(a, b)
    changed = session.refresh()
    assert set(changed) == {item.id for item in session.items}
    assert session.item("dz-007").prompt == "bilal's" and session.item("dz-006").prompt == "amina's"
    assert session.state.adjudications["dz-008"].who == "bilal"
    assert session.refresh() == []


OLD_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, annotator TEXT NOT NULL,
    kind TEXT NOT NULL, item_id TEXT, field TEXT, old TEXT, new TEXT, action INTEGER, note TEXT);
CREATE INDEX events_by_item ON events(item_id);
CREATE INDEX events_by_kind ON events(kind, seq);
CREATE UNIQUE INDEX one_vote_per_instant ON events(item_id, annotator, time, new) WHERE kind = 'vote';
CREATE TABLE row_ids(row INTEGER PRIMARY KEY, id TEXT NOT NULL, content TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1'), ('workspace_id', 'old-one');
INSERT INTO events(time, annotator, kind, item_id, field, old, new, action) VALUES
    ('2026-11-01T10:00:00.000000Z', 'amina', 'vote', 'dz-001', 'choice', NULL, '1', 1),
    ('2026-11-01T10:01:00.000000Z', 'amina', 'edit', 'dz-002', 'prompt', NULL, 'old-schema edit', 2);
"""


def test_old_schema_workspaces_merge_without_duplicating_their_shared_events(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    copy_sample(DATA, a)
    conn = sqlite3.connect(a / WS)
    conn.executescript(OLD_SCHEMA)
    conn.commit()
    conn.close()
    shutil.copytree(a, b)
    on_a = Project.open(a / DATA, annotator="amina")  # migrated on opening to write
    assert on_a.item("dz-002").prompt == "old-schema edit"
    on_a.vote("dz-003", "0")
    on_a.workspace.close()  # type: ignore[union-attr]
    (b / WS).chmod(0o444)  # the old copy is read as it is, without migrating it
    assert json.loads(merge(a, b, "--json").stdout)["added"] == 0
    assert len(uids(a)) == 3
    (b / WS).chmod(0o644)
    assert json.loads(merge(b, a, "--json").stdout)["new"] == {"vote": 1}
    assert sorted(uids(a)) == sorted(uids(b))
    assert Project.open(b / DATA).item("dz-002").prompt == "old-schema edit"


def test_a_failing_merge_leaves_the_workspace_as_it_was(tmp_path: Path) -> None:
    a, b = machines(tmp_path)
    on_b = Project.open(b / DATA, annotator="bilal")
    on_b.vote("dz-001", "0")
    on_b.edit("dz-002", {"prompt": "bilal's"})
    on_b.set_note("dz-003", "boom")  # last in B's order: the merge fails after inserting the others
    on_b.workspace.close()  # type: ignore[union-attr]
    count = len(uids(a))
    conn = sqlite3.connect(a / WS)  # a real SQLite failure on one insert, as a full disk would make one
    conn.execute(
        "CREATE TRIGGER fail BEFORE INSERT ON events WHEN NEW.new = 'boom' BEGIN SELECT RAISE(ABORT, 'x'); END"
    )
    conn.commit()
    conn.close()
    done = merge(a, b, code=2)
    assert done.stderr.count("\n") == 1 and "nothing was recorded" in done.stderr
    assert len(uids(a)) == count


def test_merge_refuses_itself_a_stranger_and_another_dataset(tmp_path: Path) -> None:
    a, b = machines(tmp_path)
    assert "this workspace itself" in merge(a, a, code=2).stderr
    (b / WS).write_text("not a database\n")
    assert "not a piqa-tui workspace" in merge(a, b, code=2).stderr
    (b / WS).unlink()
    sqlite3.connect(b / WS).execute("CREATE TABLE other(x)")  # SQLite, but no event log
    assert "not a piqa-tui workspace" in merge(a, b, code=2).stderr
    other = tmp_path / "other"
    other.mkdir()
    copy_sample("tamil.tsv", other)
    Project.open(other / "tamil.tsv", annotator="t").vote(Project.open(other / "tamil.tsv").items[0].id, "0")
    shutil.copy(other / "tamil.tsv.piqa.sqlite", b / WS)
    refused = merge(a, b, code=2).stderr
    assert "different dataset file" in refused and "--force" in refused
    assert json.loads(merge(a, b, "--force", "--json").stdout)["new"] == {"vote": 1}


def test_an_undo_made_on_the_value_in_force_clears_the_conflict_everywhere(tmp_path: Path) -> None:
    a, b = machines(tmp_path)
    on_a, on_b = Project.open(a / DATA, annotator="amina"), Project.open(b / DATA, annotator="bilal")
    on_a.edit("dz-009", {"prompt": "amina's"})
    on_b.vote("dz-001", "0")  # one event more: bilal's edit has the higher clock, so it is the one in force
    on_b.edit("dz-009", {"prompt": "bilal's"})
    on_a.workspace.close()  # type: ignore[union-attr]
    merge(b, a)
    on_b.refresh()
    (conflict,) = on_b.conflicts()
    assert (conflict.current, conflict.current_by, conflict.other, conflict.other_by) == (
        "bilal's",
        "bilal",
        "amina's",
        "amina",
    )
    assert on_b.undo() == "dz-009"
    assert on_b.conflicts() == []
    on_b.workspace.close()  # type: ignore[union-attr]
    merge(a, b)
    assert conflicts(a) == (0, [])


def test_the_decision_policy_travels_and_a_different_one_is_named(tmp_path: Path) -> None:
    a, b, c = machines(tmp_path, "abc")
    set_project_policy(Project.open(b / DATA), parse_policy("unanimity:2"))
    set_project_policy(Project.open(c / DATA), parse_policy("majority:2/3"))
    taken = json.loads(merge(a, b, "--json").stdout)
    assert taken["meta_taken"] == ["decision_policy"] and taken["meta_differences"] == []
    assert policy_spec(project_policy(Project.open(a / DATA))) == policy_spec(parse_policy("unanimity:2"))
    kept = merge(a, c).stdout
    assert "settings differ (this workspace's kept): decision_policy" in kept
    assert policy_spec(project_policy(Project.open(a / DATA))) == policy_spec(parse_policy("unanimity:2"))


def test_position_preference_counts_the_vote_in_force_by_time_whatever_order_files_came_in(tmp_path: Path) -> None:
    """amina votes on her laptop, then withdraws; the server imports her current votes (the withdrawal) first and
    her full file (the vote) after, so by the log's order the vote comes last there. The vote in force is the
    withdrawal everywhere (by time), and position preference counts what is in force, the same on both."""
    laptop, server = tmp_path / "laptop", tmp_path / "server"
    laptop.mkdir(), server.mkdir()
    mine = Project.open(copy_sample(DATA, laptop), annotator="amina")
    copy_sample(DATA, server)
    mine.vote("dz-001", "1")
    mine.vote("dz-002", "0")
    everything, current = tmp_path / "all.tsv", tmp_path / "current.tsv"
    cli("votes", "export", str(laptop / DATA), str(everything))
    mine.vote("dz-001", "")  # withdrawn
    cli("votes", "export", str(laptop / DATA), str(current), "--current")
    cli("votes", "import", str(server / DATA), str(current))
    cli("votes", "import", str(server / DATA), str(everything))
    found = [position_preference(Project.open(m / DATA, create=False)) for m in (laptop, server)]
    assert found[0] == found[1]
    (amina,) = found[0]
    assert amina.annotator == "amina" and amina.votes == 1 and amina.counts == {2: (1, 0)}  # dz-002 only
