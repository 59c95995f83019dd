"""Two leads adjudicating one item differently on two machines: after a merge, both machines show the same
conflict and the same status, the release names it, and a resolution made on either machine travels and
clears it everywhere. Adjudications recorded before they kept what they were made on replay as before."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.errors import UndoRefused
from piqa_tui.core.votes.decisions import decisions, parse_policy, set_project_policy
from piqa_tui.core.votes.exchange import export_votes
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import ADJUDICATION, Project

from .test_merge import DATA, WS, cli, conflicts, merge, origin


def two_leads(tmp: Path) -> tuple[Path, Path, str, str]:
    """Copies A and B of one origin (votes split under unanimity:2); the lead on A adjudicates dz-001 to
    solution 1, the lead on B (a little later) to solution 2. Returns the copies and the two texts."""
    start = origin(tmp / "origin")
    set_project_policy(Project.open(start / DATA), parse_policy("unanimity:2"))
    a, b = tmp / "a", tmp / "b"
    shutil.copytree(start, a)
    shutil.copytree(start, b)
    on_a, on_b = Project.open(a / DATA, annotator="amina"), Project.open(b / DATA, annotator="bilal")
    first, second = on_a.item("dz-001").solutions
    on_a.adjudicate("dz-001", 0, "amina: the first works")
    on_b.adjudicate("dz-001", 1, "bilal: the second works")
    for project in (on_a, on_b):
        project.workspace.close()  # type: ignore[union-attr]
    return a, b, first, second


def release(machine: Path, out: Path, *options: str) -> tuple[str, bytes]:
    done = cli("export", str(machine / DATA), "--to", str(out), "--decided", "--force", *options)
    return done.stdout + done.stderr, out.read_bytes()


def test_adjudications_made_concurrently_are_one_conflict_on_both_machines(tmp_path: Path) -> None:
    a, b, first, second = two_leads(tmp_path)
    assert "1 conflict" in merge(a, b).stdout
    merge(b, a)
    found = [conflicts(m) for m in (a, b)]
    assert found[0][0] == 1 and found[0] == found[1]
    (conflict,) = found[0][1]
    assert conflict["item_id"] == "dz-001" and conflict["field"] == ADJUDICATION
    # The later decision by time is in force (bilal's); amina's is the other; both were made on none.
    assert (conflict["current"], conflict["current_by"], conflict["current_reason"]) == (
        second,
        "bilal",
        "bilal: the second works",
    )
    assert (conflict["other"], conflict["other_by"], conflict["other_reason"]) == (
        first,
        "amina",
        "amina: the first works",
    )
    assert conflict["base"] == ""

    states = []
    for m in (a, b):
        project = Project.open(m / DATA)
        states.append((decisions(project)["dz-001"], project.state.adjudications["dz-001"].who))
    assert states[0] == states[1] and states[0][0].status is Status.ADJUDICATED and states[0][0].label == 1

    said_a, released_a = release(a, tmp_path / "a.tsv")
    said_b, released_b = release(b, tmp_path / "b.tsv")
    assert released_a == released_b
    assert "conflicts: 1 item adjudicated differently on two machines (dz-001)" in said_a
    summary = json.loads(release(a, tmp_path / "a.tsv", "--json")[0])
    assert summary["conflicts"] == ["dz-001"] and summary["statuses"]["adjudicated"] >= 1
    only, _ = release(a, tmp_path / "only.tsv", "--only-decided")
    assert "left out:" in only and "1 in conflict" in only
    assert "dz-001\t" not in (tmp_path / "only.tsv").read_text(encoding="utf-8")

    # Resolved on A keeping the other (amina's): recorded on the one in force, it travels and clears both.
    on_a = Project.open(a / DATA, annotator="amina")
    on_a.resolve_conflict("dz-001", ADJUDICATION, first)
    assert on_a.conflicts() == [] and on_a.state.adjudications["dz-001"].label == "0"
    assert on_a.state.adjudications["dz-001"].reason == "amina: the first works"
    on_a.workspace.close()  # type: ignore[union-attr]
    merge(b, a)
    assert [conflicts(m) for m in (a, b)] == [(0, [])] * 2
    said_a, released_a = release(a, tmp_path / "a.tsv")
    said_b, released_b = release(b, tmp_path / "b.tsv")
    assert released_a == released_b and "conflicts:" not in said_a
    assert cli("agree", str(a / DATA), "--json").stdout == cli("agree", str(b / DATA), "--json").stdout


def test_the_same_decision_made_on_two_machines_is_no_conflict(tmp_path: Path) -> None:
    start = origin(tmp_path / "origin")
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(start, a)
    shutil.copytree(start, b)
    Project.open(a / DATA, annotator="amina").adjudicate("dz-002", 1, "amina's reason")
    Project.open(b / DATA, annotator="bilal").adjudicate("dz-002", 1, "bilal's reason")
    merge(a, b)
    assert conflicts(a) == (0, [])


def test_a_decision_made_on_the_one_in_force_is_no_conflict_and_undo_keeps_none(tmp_path: Path) -> None:
    """A lead who saw the other's decision (merged in first) and changed it: a sequence, not a conflict; nor
    is undoing it, nor redoing it."""
    a, b, first, second = two_leads(tmp_path)
    conn = sqlite3.connect(b / WS)  # B forgets its own decision: B's lead then decides on A's, seen by a merge
    conn.execute("DELETE FROM events WHERE kind = 'adjudicate'")
    conn.commit()
    conn.close()
    merge(b, a)
    on_b = Project.open(b / DATA, annotator="bilal")
    on_b.adjudicate("dz-001", 1, "bilal, having read amina's")
    assert on_b.conflicts() == []
    assert on_b.undo() == "dz-001" and on_b.state.adjudications["dz-001"].label == "0"  # amina's again
    assert on_b.conflicts() == []
    assert on_b.redo() == "dz-001" and on_b.state.adjudications["dz-001"].label == "1"
    on_b.workspace.close()  # type: ignore[union-attr]
    merge(a, b)
    assert conflicts(a) == (0, []) and conflicts(b) == (0, [])


def test_adjudications_recorded_without_what_they_were_made_on_replay_as_before(tmp_path: Path) -> None:
    """Older logs (and vote files) hold adjudications whose field is plain "label": the later by time stands,
    and no conflict is made of them."""
    start = origin(tmp_path / "origin")
    conn = sqlite3.connect(start / WS)
    text0, text1 = Project.open(start / DATA).item("dz-003").solutions
    conn.executemany(
        "INSERT INTO events(time, annotator, kind, item_id, field, old, new, note, uid, clock)"
        " VALUES (?, ?, 'adjudicate', 'dz-003', 'label', ?, ?, ?, ?, ?)",
        [
            ("2026-11-02T10:00:00.000000Z", "amina", text0, "0", "first", "old-1", 900001),
            ("2026-11-01T10:00:00.000000Z", "bilal", text1, "1", "earlier", "old-2", 900002),
        ],
    )
    conn.commit()
    conn.close()
    project = Project.open(start / DATA)
    assert project.state.adjudications["dz-003"].who == "amina" and project.conflicts() == []
    assert json.loads(cli("workspace", "conflicts", str(start / DATA), "--json").stdout) == []


def test_vote_files_carry_what_an_adjudication_was_made_on(tmp_path: Path) -> None:
    """Leads exchanging vote files instead of workspaces: the importer sees the same conflict; a file written
    before the made_on column existed (here: the column cut off) imports as before, with no conflict."""
    a, b, first, second = two_leads(tmp_path)
    on_b = Project.open(b / DATA, annotator="bilal")
    export_votes(on_b, tmp_path / "bilal.tsv")
    header, *rows = (tmp_path / "bilal.tsv").read_text(encoding="utf-8").splitlines()
    assert header.endswith("\treason\tmade_on")
    (decided,) = [row for row in rows if "\tadjudication\t" in row]
    assert decided.endswith("\tnone")  # made while no adjudication was in force
    old = "\n".join(line.rsplit("\t", 1)[0] for line in (header, *rows)) + "\n"
    (tmp_path / "old.tsv").write_text(old, encoding="utf-8")

    plain = tmp_path / "plain"
    shutil.copytree(a, plain)
    on_plain = Project.open(plain / DATA, annotator="amina")
    import_votes(on_plain, tmp_path / "old.tsv")
    assert on_plain.conflicts() == [] and on_plain.state.adjudications["dz-001"].who == "bilal"

    on_a = Project.open(a / DATA, annotator="amina")
    import_votes(on_a, tmp_path / "bilal.tsv")
    (conflict,) = on_a.conflicts()
    assert (conflict.field, conflict.current, conflict.other) == (ADJUDICATION, second, first)
    import_votes(on_a, tmp_path / "bilal.tsv")  # the same file again: counted once, still one conflict
    assert len(on_a.conflicts()) == 1
    on_a.resolve_conflict("dz-001", ADJUDICATION, second)
    export_votes(on_a, tmp_path / "amina.tsv")
    import_votes(on_b, tmp_path / "amina.tsv")  # the resolution travels by file too
    assert on_b.conflicts() == [] and on_b.state.adjudications["dz-001"].who == "amina"


def test_undo_of_an_adjudication_another_lead_changed_since_is_refused(tmp_path: Path) -> None:
    start = origin(tmp_path / "origin")
    amina = Project.open(start / DATA, annotator="amina")
    amina.adjudicate("dz-004", 0, "amina's")
    bilal = Project.open(start / DATA, annotator="bilal")  # the same workspace, another terminal
    bilal.adjudicate("dz-004", 1, "bilal's, over amina's")
    with pytest.raises(UndoRefused, match="adjudication was changed by bilal"):
        amina.undo()
    assert amina.state.adjudications["dz-004"].who == "bilal"
    assert bilal.undo() == "dz-004" and bilal.state.adjudications["dz-004"].label == "0"  # his own: fine
    assert amina.redo() is None and amina.undo() == "dz-004"  # bilal's is undone: amina's is in force again
    assert "dz-004" not in amina.state.adjudications


def test_a_decision_arriving_after_the_one_made_on_it_is_no_conflict(tmp_path: Path) -> None:
    """The lead adjudicates dz-001 on the laptop and then undoes it; the server imports the laptop's current
    votes (the withdrawal, made on the adjudication) first and its full file (the adjudication) after. The log
    there holds the adjudication after the withdrawal made on it: it was replaced, not contested, as on the
    laptop, and both machines list the same (no) conflicts."""
    start = origin(tmp_path / "origin")
    laptop, server = tmp_path / "laptop", tmp_path / "server"
    shutil.copytree(start, laptop)
    shutil.copytree(start, server)
    lead = Project.open(laptop / DATA, annotator="amina")
    lead.adjudicate("dz-001", 1, "amina: the second works")
    everything, current = tmp_path / "all.tsv", tmp_path / "current.tsv"
    export_votes(lead, everything)
    lead.undo()
    export_votes(lead, current, current_only=True)
    lead.workspace.close()  # type: ignore[union-attr]
    for path in (current, everything):
        cli("votes", "import", str(server / DATA), str(path))
    assert conflicts(laptop) == conflicts(server) == (0, [])
    on_server = Project.open(server / DATA, create=False)
    assert "dz-001" not in on_server.state.adjudications  # the withdrawal, the later by time, stands
    merge(laptop, server)
    merge(server, laptop)
    assert conflicts(laptop) == conflicts(server) == (0, [])


def test_machines_holding_the_same_decisions_in_different_log_orders_list_the_same_conflicts(tmp_path: Path) -> None:
    """Over mona's decision, amina decides on one laptop, hala twice on another (the second made on her first).
    Laptop A merges hala's laptop: its log holds amina's decision before hala's. The server merges hala's laptop
    and then imports amina's votes file, whose decision takes the server's next clock: its log holds amina's after
    hala's. Conflicts are found from the decisions in time order, so both list the same."""
    start = origin(tmp_path / "origin")
    lead = Project.open(start / DATA, annotator="mona")
    lead.adjudicate("dz-001", 1, "mona: the second")
    lead.workspace.close()  # type: ignore[union-attr]
    amina_laptop, hala_laptop, server = tmp_path / "a", tmp_path / "h", tmp_path / "s"
    for copy in (amina_laptop, hala_laptop, server):
        shutil.copytree(start, copy)
    amina = Project.open(amina_laptop / DATA, annotator="amina")
    amina.adjudicate("dz-001", 0, "amina: the first")
    amina_file = tmp_path / "amina.tsv"
    export_votes(amina, amina_file)
    amina.workspace.close()  # type: ignore[union-attr]
    hala = Project.open(hala_laptop / DATA, annotator="hala")
    for n in range(10):  # hala's clock moves ahead of amina's
        hala.set_note(f"dz-0{n + 10}", f"checked {n}")
    hala.adjudicate("dz-001", 1, "hala: the second")
    hala.adjudicate("dz-001", 1, "hala: the second, surely")
    hala.workspace.close()  # type: ignore[union-attr]
    merge(amina_laptop, hala_laptop)
    merge(server, hala_laptop)
    cli("votes", "import", str(server / DATA), str(amina_file))
    orders = []
    for machine in (amina_laptop, server):
        project = Project.open(machine / DATA, create=False)
        held = [e.annotator for e in project.workspace.events(kinds=["adjudicate"]) if e.item_id == "dz-001"]
        orders.append(held)
    assert orders == [["mona", "amina", "hala", "hala"], ["mona", "hala", "hala", "amina"]]  # the logs' orders
    assert conflicts(amina_laptop) == conflicts(server)


def test_the_text_listing_gives_each_decisions_reason(tmp_path: Path) -> None:
    """``workspace conflicts`` without --json: one line for the item, with both texts, who, when and why."""
    a, b, first, second = two_leads(tmp_path)
    merge(a, b)
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "workspace", "conflicts", str(a / DATA)],
        capture_output=True,
        text=True,
    )
    (line,) = done.stdout.splitlines()
    assert done.returncode == 1 and line.startswith("dz-001 adjudication: ")
    in_force, other = line.split(" | ")
    assert "by bilal" in in_force and "because “bilal: the second works”" in in_force and "(in force)" in in_force
    assert "by amina" in other and "because “amina: the first works”" in other
