"""Another machine's workspace is untrusted input: every crafted file of issue 36 is refused whole in one line that
names it and its first bad row (the local record untouched), or merged right; the source is never written; a damaged
or poisoned local workspace says so in one line instead of ending every command in an internal error."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample
from .hostile_generators import EVENT_FAULTS, EVENT_FIELDS, craft_workspace, good_event, hostile_events

DATA = "darija-algerian.tsv"
WS = DATA + ".piqa.sqlite"
ITEMS = [f"dz-0{k:02d}" for k in range(1, 20)]


def cli(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == code, done.stderr + done.stdout
    return done


def rows(ws: Path) -> list[tuple]:
    conn = sqlite3.connect(f"file:{ws}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT * FROM events ORDER BY seq").fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lead's folder: the sample with a vote and an edit, copied to every machine."""
    folder = tmp_path_factory.mktemp("origin")
    project = Project.open(copy_sample(DATA, folder), annotator="lead")
    project.vote("dz-001", "0")
    project.edit("dz-002", {"prompt": "the lead's"})
    project.workspace.close()  # type: ignore[union-attr]
    return folder


def machines(origin: Path, tmp: Path) -> tuple[Path, Path]:
    here, other = tmp / "here", tmp / "other"
    shutil.copytree(origin, here)
    shutil.copytree(origin, other)
    return here, other


@pytest.mark.parametrize("fault", sorted(EVENT_FAULTS))
def test_a_bad_event_refuses_the_whole_file_and_names_it(origin: Path, tmp_path: Path, fault: str) -> None:
    here, other = machines(origin, tmp_path)
    rng = random.Random(fault)
    good = [good_event(rng, ITEMS, k) for k in range(3)]
    bad = good_event(rng, ITEMS, 3)
    EVENT_FAULTS[fault](bad, rng)
    craft_workspace(other / WS, [*good, bad])
    before = rows(here / WS)
    err = cli("workspace", "merge", str(here / DATA), str(other / WS), code=2).stderr
    assert err.count("\n") == 1 and str(other / WS) in err and "refused, nothing was merged: event" in err, err
    assert rows(here / WS) == before


def test_every_command_still_runs_after_a_refused_merge(origin: Path, tmp_path: Path) -> None:
    here, other = machines(origin, tmp_path)
    bad = good_event(random.Random(1), ITEMS, 0)
    EVENT_FAULTS["new-item list meta"](bad, random.Random(1))
    craft_workspace(other / WS, [bad])
    cli("workspace", "merge", str(here / DATA), str(other / WS), code=2)
    for command in (["agree"], ["workspace", "conflicts"], ["progress"]):
        done = subprocess.run(
            [sys.executable, "-m", "piqa_tui.cli.main", *command, str(here / DATA)], capture_output=True, text=True
        )
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr


def test_good_crafted_events_merge(origin: Path, tmp_path: Path) -> None:
    here, other = machines(origin, tmp_path)
    good = [good_event(random.Random(2), ITEMS, k) for k in range(6)]
    craft_workspace(other / WS, good)
    done = json.loads(cli("workspace", "merge", str(here / DATA), str(other / WS), "--json").stdout)
    assert done["added"] == 6


def test_bad_settings_are_refused(origin: Path, tmp_path: Path) -> None:
    for key, value in (("decision_policy", "majority:9/x"), ("release_defaults", "[1]"), ("mapping", "x=y")):
        here, other = machines(origin, tmp_path / key)
        conn = sqlite3.connect(other / WS)
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        conn.commit()
        conn.close()
        err = cli("workspace", "merge", str(here / DATA), str(other / WS), code=2).stderr
        assert f"setting {key}" in err and str(other / WS) in err, err


def test_a_repeated_global_id_is_refused_in_the_source_not_blamed_on_this_workspace(
    origin: Path, tmp_path: Path
) -> None:
    here, other = machines(origin, tmp_path)
    rng = random.Random(3)
    one, two = good_event(rng, ITEMS, 0), good_event(rng, ITEMS, 1)
    two["uid"] = one["uid"]
    craft_workspace(other / WS, [one, two])
    err = cli("workspace", "merge", str(here / DATA), str(other / WS), code=2).stderr
    assert str(other / WS) in err and "another event's too" in err and "UNIQUE" not in err


def _with_votes_in_wal(folder: Path) -> tuple[Path, sqlite3.Connection]:
    """A copy of ``folder``'s workspace whose last 3 votes are only in its -wal (copied while its writer held it)."""
    project = Project.open(folder / DATA, annotator="bilal")
    project.workspace.close()  # type: ignore[union-attr]
    writer = sqlite3.connect(folder / WS, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    rng = random.Random(4)
    events = []
    for k in range(3):
        event = good_event(rng, ITEMS, k)
        event.update(kind="vote", field="choice", new="1", item_id=ITEMS[k + 5])
        events.append(event)
    writer.executemany(
        f"INSERT INTO events({', '.join(EVENT_FIELDS)}) VALUES ({', '.join('?' * len(EVENT_FIELDS))})",
        [tuple(e[f] for f in EVENT_FIELDS) for e in events],
    )
    copy = folder.parent / "usb"
    copy.mkdir()
    shutil.copyfile(folder / WS, copy / WS)
    shutil.copyfile(f"{folder / WS}-wal", f"{copy / WS}-wal")
    return copy, writer


def test_votes_still_in_the_wal_of_a_read_only_copy_are_merged_and_nothing_is_written_beside_it(
    origin: Path, tmp_path: Path
) -> None:
    here, other = machines(origin, tmp_path)
    usb, writer = _with_votes_in_wal(other)
    writer.close()
    assert Path(f"{usb / WS}-wal").stat().st_size > 0
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in usb.iterdir()}
    usb.chmod(0o555)  # as a read-only mount (root still could write: the check is what is left beside it)
    try:
        done = json.loads(cli("workspace", "merge", str(here / DATA), str(usb / WS), "--json").stdout)
    finally:
        usb.chmod(0o755)
    assert done["new"] == {"vote": 3}
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in usb.iterdir()} == digest  # no -shm, same bytes


def test_a_source_opened_without_a_wal_leaves_no_wal_or_shm_beside_it(origin: Path, tmp_path: Path) -> None:
    here, other = machines(origin, tmp_path)
    craft_workspace(other / WS, [good_event(random.Random(5), ITEMS, 0)])
    before = sorted(p.name for p in other.iterdir())
    cli("workspace", "merge", str(here / DATA), str(other / WS))
    assert sorted(p.name for p in other.iterdir()) == before


def test_a_view_named_events_is_refused_at_once(origin: Path, tmp_path: Path) -> None:
    here, other = machines(origin, tmp_path)
    conn = sqlite3.connect(other / WS)
    conn.executescript(
        "ALTER TABLE events RENAME TO real_events;"
        "CREATE VIEW events AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)"
        " SELECT x AS seq, '' AS time, '' AS annotator, 'vote' AS kind, NULL AS item_id, NULL AS field, NULL AS old,"
        " NULL AS new, NULL AS action, NULL AS note, '' AS uid, x AS clock FROM n;"
    )
    conn.close()
    start = time.monotonic()
    err = cli("workspace", "merge", str(here / DATA), str(other / WS), code=2).stderr
    assert time.monotonic() - start < 20 and "is a view" in err and str(other / WS) in err


def test_missing_binding_rows_are_refused_unless_forced_or_a_copy_of_this_workspace(
    origin: Path, tmp_path: Path
) -> None:
    here, other = machines(origin, tmp_path)
    craft_workspace(other / WS, [good_event(random.Random(6), ITEMS, 0)])
    conn = sqlite3.connect(other / WS)
    conn.execute("DELETE FROM meta WHERE key LIKE 'dataset_%'")
    conn.commit()
    assert json.loads(cli("workspace", "merge", str(here / DATA), str(other / WS), "--json").stdout)["added"] == 1
    conn.execute("UPDATE meta SET value = 'a stranger' WHERE key = 'workspace_id'")
    conn.commit()
    conn.close()
    here2, _ = machines(origin, tmp_path / "again")
    err = cli("workspace", "merge", str(here2 / DATA), str(other / WS), code=2).stderr
    assert "no binding to a dataset file" in err and "--force" in err
    cli("workspace", "merge", str(here2 / DATA), str(other / WS), "--force")


def test_a_damaged_local_workspace_says_so_in_one_line_from_every_command(origin: Path, tmp_path: Path) -> None:
    here, _ = machines(origin, tmp_path)
    data = bytearray((here / WS).read_bytes())
    data[4096 + 100 : 4096 + 4000] = bytes(3900)  # a page of the log's table zeroed
    data[2 * 4096 : 2 * 4096 + 200] = b"\xff" * 200
    (here / WS).write_bytes(bytes(data))
    votes = tmp_path / "votes.tsv"
    votes.write_text("item_id\tannotator\tchoice\ttime\ndz-003\tamina\t1\t2026-11-20T09:00:00Z\n")
    for command in (["agree", str(here / DATA)], ["votes", "import", str(here / DATA), str(votes)]):
        done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *command], capture_output=True, text=True)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
        if done.returncode:
            assert done.stderr.count("\n") == 1 and "workspace check" in done.stderr, done.stderr
    (here / WS).write_bytes(b"not a database at all" * 100)
    for command in (["agree"], ["workspace", "conflicts"], ["validate"]):
        done = subprocess.run(
            [sys.executable, "-m", "piqa_tui.cli.main", *command, str(here / DATA)], capture_output=True, text=True
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "workspace check" in done.stderr, done.stderr


def test_a_bad_event_already_in_the_workspace_is_set_aside_once_and_left_out(origin: Path, tmp_path: Path) -> None:
    here, _ = machines(origin, tmp_path)
    rng = random.Random(7)
    bad = good_event(rng, ITEMS, 0)
    EVENT_FAULTS["new-item bad JSON"](bad, rng)
    null_vote = good_event(rng, ITEMS, 1)
    EVENT_FAULTS["NULL item vote"](null_vote, rng)
    text_clock = good_event(rng, ITEMS, 2)
    EVENT_FAULTS["text clock"](text_clock, rng)
    craft_workspace(here / WS, [bad, null_vote, text_clock])  # as an older version's merge left them
    (here / WS).chmod(0o444)
    read_only = Workspace(here / WS, read_only=True)
    assert len(read_only.left_out) == 3 and "left out of what this command reads" in read_only.take_notices()[0]
    read_only.close()
    (here / WS).chmod(0o644)
    first = cli("agree", str(here / DATA), "--workspace", str(here / WS))
    second = cli("stats", str(here / DATA))
    third = cli("agree", str(here / DATA))
    for done in (first, second, third):
        assert "internal error" not in done.stderr
    opened = Project.open(here / DATA, annotator="lead")  # writes: the bad events are set aside, named once
    assert opened.item("dz-002").prompt == "the lead's"
    notices = opened.workspace.take_notices()  # type: ignore[union-attr]
    assert any("3 events break the log's rules" in n and "events_left_out" in n for n in notices)
    opened.workspace.close()  # type: ignore[union-attr]
    again = Workspace(here / WS)
    assert again.take_notices() == [] and again.conn.execute("SELECT count(*) FROM events_left_out").fetchone()[0] == 3
    again.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), n=st.integers(1, 6), faulty=st.sampled_from([0.0, 0.2, 0.6]))
def test_merging_any_generated_workspace_leaves_the_record_unchanged_or_with_exactly_the_valid_events(
    origin: Path, tmp_path: Path, seed: int, n: int, faulty: float
) -> None:
    folder = tmp_path / f"p{seed}-{n}-{faulty}"
    here, other = machines(origin, folder)
    events = hostile_events(random.Random(seed), ITEMS, n, faulty)
    craft_workspace(other / WS, [event for event, _ in events])
    before = rows(here / WS)
    target = Workspace(here / WS)
    try:
        merge_workspace(target, other / WS)
        merged = True
    except PiqaError:
        merged = False
    finally:
        target.close()
    after = rows(here / WS)
    valid = [event for event, fault in events if not fault]
    if not merged:
        assert after == before and len(valid) < len(events)
        return
    assert len(valid) == len(events)
    expected = {(e["uid"], e["kind"], e["item_id"], e["time"], e["new"], e["clock"]) for e in valid}
    got = {(r[10], r[3], r[4], r[1], r[7], r[11]) for r in after[len(before) :]}
    assert after[: len(before)] == before and got == expected
