"""The workspace keeps every recorded action: through SIGKILL, concurrent writers and restarts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample

EDIT_BURST = textwrap.dedent(
    """
    import sys
    from piqa_tui.core.workspace.project import Project
    path, who, start, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    project = Project.open(path, annotator=who)
    ids = [item.id for item in project.items]
    for n in range(start, start + count):
        item_id = ids[n % len(ids)]
        project.edit(item_id, {"meta:note_" + who: f"{who}-{n}"})
        project.vote(item_id, str(n % 2))
        print(n, item_id, flush=True)  # only after the edit is committed
    """
)


def _spawn(path: Path, who: str, start: int, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", EDIT_BURST, str(path), who, str(start), str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )


def _edit_events(path: Path) -> dict[tuple[str, str], list[str]]:
    ws = Workspace(path.with_name(path.name + ".piqa.sqlite"))
    found: dict[tuple[str, str], list[str]] = {}
    for event in ws.events(kinds=["edit"]):
        found.setdefault((event.annotator, event.item_id or ""), []).append(event.new or "")
    ws.close()
    return found


def test_sigkill_during_a_burst_loses_no_committed_edit(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator="setup")  # create the workspace before the race
    proc = _spawn(path, "amina", 0, 10_000)
    acknowledged: list[tuple[int, str]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        number, item_id = line.split()
        acknowledged.append((int(number), item_id))
        if len(acknowledged) >= 60:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    events = _edit_events(path)
    for number, item_id in acknowledged:
        assert f"amina-{number}" in events[("amina", item_id)]
    reopened = Project.open(path, annotator="amina")
    last_number, last_item = acknowledged[-1]
    assert int(reopened.item(last_item).meta["note_amina"].split("-")[1]) >= last_number
    assert reopened.state.votes[last_item]["amina"].choice in ("0", "1")


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator="setup")
    procs = [_spawn(path, "amina", 0, 150), _spawn(path, "yacine", 1000, 150)]
    outputs = [p.communicate(timeout=240)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    events = _edit_events(path)
    for who, out in zip(("amina", "yacine"), outputs):
        lines = out.split()
        assert len(lines) == 300
        total = sum(len(v) for (annotator, _), v in events.items() if annotator == who)
        assert total == 150
    project = Project.open(path, annotator="lead")
    assert len(project.items) <= 150  # so each burst touched every item
    assert all({"amina", "yacine"} <= set(project.state.votes[item.id]) for item in project.items)


def test_undo_and_redo_survive_a_restart(tmp_path: Path) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    first = Project.open(path, annotator="kavya")
    target = first.items[3]
    first.edit(target.id, {"solution0": "மாற்றம்"})
    first.swap_solutions(target.id, 0, 1)
    first.workspace.close()  # the process ends
    second = Project.open(path, annotator="kavya")
    assert second.item(target.id).solutions == ("" + target.solutions[1], "மாற்றம்")
    assert second.item(target.id).label == (None if target.label is None else 1 - target.label)
    assert second.undo() == target.id  # the swap, label included
    assert second.item(target.id).solutions == ("மாற்றம்", target.solutions[1])
    assert second.item(target.id).label == target.label
    assert second.undo() == target.id
    assert second.item(target.id) == target and target.id not in second.state.edited
    assert second.redo() == target.id and second.item(target.id).solutions[0] == "மாற்றம்"
    other = Project.open(path, annotator="someone-else")
    assert other.undo() is None  # undo is per annotator


def test_derived_ids_are_kept_when_the_file_is_re_sorted(tmp_path: Path) -> None:
    path = tmp_path / "noid.tsv"
    rows = [f"goal {n}\tuse a cup {n}\tuse a pot {n}\t{n % 2}" for n in range(5)]
    path.write_text("goal\tsol1\tsol2\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8")
    project = Project.open(path, annotator="t")
    ids = {item.prompt: item.id for item in project.items}
    assert ids["goal 0"] == "r1" and ids["goal 4"] == "r5"
    project.vote("r3", "1")
    project.workspace.close()
    path.write_text(
        "goal\tsol1\tsol2\tlabel\n" + "\n".join(reversed(rows)) + "\nnew goal\tx y\tx z\t0\n", encoding="utf-8"
    )
    reopened = Project.open(path, annotator="t")
    assert {item.prompt: item.id for item in reopened.items if item.prompt in ids} == ids
    assert reopened.items[-1].id == "r6"
    assert reopened.file_changed and "changed since this workspace last saw it" in reopened.file_changed
    assert reopened.state.votes["r3"]["t"].choice == "1" and reopened.item("r3").prompt == "goal 2"


def test_save_refuses_to_overwrite_a_file_changed_on_disk(tmp_path: Path) -> None:
    path = copy_sample("bengali.tsv", tmp_path)
    project = Project.open(path, annotator="t")
    project.edit(project.items[0].id, {"prompt": "নতুন প্রশ্ন"})
    os.utime(path)  # touching the file is not changing it
    assert not project.disk_changed()
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n", 1))
    assert project.disk_changed()
    try:
        project.save()
    except Exception as exc:  # noqa: BLE001 - the message is what matters
        assert "changed on disk" in str(exc)
    else:
        raise AssertionError("save overwrote a file changed by someone else")


def test_typed_text_is_stored_in_nfc(tmp_path: Path) -> None:
    import unicodedata

    project = Project.open(copy_sample("darija-algerian.tsv", tmp_path), annotator="t")
    decomposed = unicodedata.normalize("NFD", "café شَاي")
    item = project.edit(project.items[0].id, {"prompt": decomposed})
    assert item.prompt == unicodedata.normalize("NFC", decomposed) and unicodedata.is_normalized("NFC", item.prompt)
    project.set_note(item.id, decomposed)  # a note typed in $EDITOR reaches core as typed
    assert project.state.notes[item.id] == unicodedata.normalize("NFC", decomposed)


def test_a_bulk_vote_insert_rebuilds_the_indexes_it_left_out_and_keeps_order_and_ids(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "w.piqa.sqlite")
    indexes = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
    schema = ws.conn.execute(indexes).fetchall()
    votes = [(f"x{i}", "amina", "0", f"2026-11-20T08:00:{i:02d}Z", None) for i in range(5)]
    assert ws.insert_votes(votes) == 5  # more votes than events: the indexes are dropped and built again
    assert ws.conn.execute(indexes).fetchall() == schema
    assert ws.insert_votes(votes[:1]) == 0  # the unique index of the votes still skips a vote seen before
    rows = ws.conn.execute("SELECT seq, clock, uid FROM events INDEXED BY events_in_order ORDER BY clock, uid")
    seqs, clocks, uids = zip(*rows)
    assert list(seqs) == [1, 2, 3, 4, 5] and list(clocks) == [1, 2, 3, 4, 5]
    assert list(uids) == sorted(uids) and len(set(uids)) == 5
    assert ws.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    ws.close()


def test_votes_after_skipped_ones_take_the_next_ids_and_clocks_above_merged_ones(tmp_path: Path) -> None:
    """Each inserted vote's id ends in its own sequence number and its clock follows the highest clock, also when
    the first votes given are skipped, the last row this connection wrote was another table's, and clocks run ahead
    of sequence numbers (as after a merge)."""
    ws = Workspace(tmp_path / "w.piqa.sqlite")
    held = [(f"x{i}", "amina", "0", f"2026-11-20T08:00:{i:02d}Z", None) for i in range(10)]
    assert ws.insert_votes(held) == 10
    with ws.write() as conn:
        conn.execute("UPDATE events SET clock = clock + 100")  # events merged in from a copy with a later clock
    ws.set_meta({"note": "a row of another table written last"})
    fresh = [(f"y{i}", "sara", "1", f"2026-11-20T09:00:{i:02d}Z", None) for i in range(3)]
    assert ws.insert_votes([held[3], held[4], fresh[0], fresh[1], fresh[0], fresh[2]]) == 3  # fewer than the log
    rows = ws.conn.execute("SELECT seq, item_id, clock, uid FROM events WHERE seq > 10 ORDER BY seq").fetchall()
    # Each id and clock continue from the highest sequence number before the row: 10, then 13, then 14 (a vote left
    # out still used up a number of AUTOINCREMENT's); every clock above the merged ones, every id new.
    assert [(seq, item, clock) for seq, item, clock, _ in rows] == [(13, "y0", 111), (14, "y1", 114), (16, "y2", 115)]
    assert [uid[-16:] for *_, uid in rows] == [f"{n:016x}" for n in (11, 14, 15)]
    assert len({uid[:16] for *_, uid in rows}) == 1 and ws.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    ws.close()


def test_a_bulk_vote_insert_skips_the_votes_a_unique_index_would_and_keeps_null_choices(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "w.piqa.sqlite")
    held = ("x0", "amina", "0", "2026-11-20T08:00:00Z", None)
    assert ws.insert_votes([held]) == 1
    votes = [
        held,  # already in the log
        ("x1", "amina", "1", "2026-11-20T08:00:01Z", None),
        ("x1", "amina", "1", "2026-11-20T08:00:01Z", None),  # twice in the file
        ("x1", "amina", "0", "2026-11-20T08:00:01Z", None),  # same instant, another choice: a vote of its own
        ("x2", "sara", None, "2026-11-20T08:00:02Z", None),  # no choice: never the same as another
        ("x2", "sara", None, "2026-11-20T08:00:02Z", None),
    ]
    assert ws.insert_votes(votes) == 4  # more votes than events: the bulk path
    rows = ws.conn.execute("SELECT seq, item_id, new, clock, uid FROM events ORDER BY seq").fetchall()
    assert [(seq, item, new, clock) for seq, item, new, clock, _ in rows] == [
        (1, "x0", "0", 1),
        (2, "x1", "1", 2),
        (3, "x1", "0", 3),
        (4, "x2", None, 4),
        (5, "x2", None, 5),
    ]
    assert [uid[-16:] for *_, uid in rows[1:]] == [f"{n:016x}" for n in range(2, 6)]
    assert ws.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    ws.close()


def test_a_file_imported_again_grown_adds_only_its_new_votes(tmp_path: Path) -> None:
    """The day's votes exported whole every evening and imported again: most of the file is in the log already
    (found by a sample, then the known votes are left out before the insert), the new ones are added once, in
    file order, with ids and clocks continuing the log's, and nothing else changes."""
    ws = Workspace(tmp_path / "w.piqa.sqlite")
    held = [(f"x{i}", name, "0", f"2026-11-20T08:{i:02d}:00Z", None) for i in range(20) for name in ("amina", "sara")]
    assert ws.insert_votes(held) == 40
    fresh = [(f"y{i}", "amina", "1", f"2026-11-21T08:{i:02d}:00Z", None) for i in range(5)]
    grown = held[:20] + [fresh[0], fresh[1], fresh[1]] + held[20:] + fresh[2:]  # a new vote twice in the file
    assert ws.insert_votes(grown) == 5
    rows = ws.conn.execute("SELECT seq, item_id, new, clock, uid FROM events WHERE seq > 40 ORDER BY seq").fetchall()
    assert [(seq, item, clock) for seq, item, _, clock, _ in rows] == [(41 + n, f"y{n}", 41 + n) for n in range(5)]
    assert [uid[-16:] for *_, uid in rows] == [f"{n:016x}" for n in range(41, 46)]
    assert ws.insert_votes(grown) == 0  # and once more: nothing
    assert ws.conn.execute("SELECT count(*) FROM events").fetchone() == (45,)
    assert ws.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    ws.close()


def test_refresh_names_what_another_process_wrote_even_after_this_one_wrote_in_between(tmp_path: Path) -> None:
    """A write catches up with the log under the write lock; the items others changed meanwhile are still passed
    on by the next refresh (as the TUI's poll asks), so the screen redraws them too."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    mine, theirs = Project.open(path, annotator="amina"), Project.open(path, annotator="karim")
    first, second = mine.items[0].id, mine.items[1].id
    theirs.vote(first, "1")
    mine.vote(second, "0")  # catches up with karim's vote on the way
    assert mine.state.votes[first]["karim"].choice == "1"
    assert set(mine.refresh()) == {first, second}
    assert mine.refresh() == []
    version = mine.version
    theirs.set_note(first, "look again")
    assert mine.version == version and mine.refresh() == [first] and mine.version > version


def test_events_that_name_no_item_are_never_reported_as_an_item_changed(tmp_path: Path) -> None:
    """Guidelines and a release recorded by another process (the CLI) name no item: the next refresh names the
    items that did change and never the empty id, which a screen would try to redraw."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    mine = Project.open(path, annotator="amina")
    guide = tmp_path / "guide.md"
    guide.write_text("# Guidelines\n\nPick the solution that works.\n", encoding="utf-8")
    piqa = [sys.executable, "-m", "piqa_tui.cli.main"]
    for args in (
        ["round", str(path), "guidelines", str(guide)],
        ["export", str(path), "--release", str(tmp_path / "r")],
    ):
        done = subprocess.run([*piqa, *args], capture_output=True, text=True)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert mine.workspace is not None
    kinds = {kind for (kind,) in mine.workspace.conn.execute("SELECT kind FROM events")}
    assert {"guidelines", "release"} <= kinds
    version = mine.version
    assert mine.refresh() == [] and mine.version > version
    first = mine.items[0].id
    mine.vote(first, "1")
    guide.write_text("# Guidelines\n\nPick the one that works, version 2.\n", encoding="utf-8")
    subprocess.run([*piqa, "round", str(path), "guidelines", str(guide)], capture_output=True, check=True)
    assert mine.refresh() == [first]


def test_views_derived_from_the_log_are_worked_out_again_only_when_it_moved(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(path, annotator="amina")
    asked: list[int] = []

    def view() -> int:
        asked.append(project.version)
        return len(asked)

    assert project.memo.get("view", view) == project.memo.get("view", view) == 1
    assert project.memo.get("view", view, stamp="another policy") == 2
    project.vote(project.items[0].id, "0")
    assert project.memo.get("view", view, stamp="another policy") == 3
    assert project.memo.peek("view", stamp="another policy") == 3 and project.memo.peek("view") is None
