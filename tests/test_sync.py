"""``piqa-tui sync``: the team's record through real git repositories.

A bare remote on disk and three clones (a lead and two annotators) doing random work (votes, answers, edits, swaps,
stage moves, adjudications, undo, new items) and syncing in random orders, some while "offline" (the remote's URL
points at a missing path); at the end every clone gives byte for byte the same ``agree --json``, releases,
``progress --json``, stages and ``workspace conflicts --json``. A push refused because someone pushed first (forced
by a pre-push hook that pushes another clone's commit), a process killed at each step of a sync
(``PIQA_TUI_SYNC_STOP_AFTER``, see ``core/sync/exchange.py``) and finished by the next sync, a newer dataset file
committed by the lead, hostile batch files, each refused whole in one line, repositories not ready, and a team
over ``ssh://`` to an sshd the test starts on 127.0.0.1 (skipped without openssh-server).
"""

from __future__ import annotations

import getpass
import gzip
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from piqa_tui.core.sync import batch as batch_format
from piqa_tui.core.sync import git as git_transport
from piqa_tui.core.sync.batch import Header, encode
from piqa_tui.core.sync.exchange import BATCHES, STOP_ENV
from piqa_tui.core.sync.git import commit_saved
from piqa_tui.core.sync.machine import MACHINE_KEY, place_of
from piqa_tui.core.workspace.project import Project
from tests.test_rounds import ARAB, culture_copy, doc_round, imported
from tests.test_team_exchange import LEAD, TEAM, outputs, run, work

DATA = "culture.tsv"
STEPS = ("batch", "commit", "fetch", "merge", "apply")


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Who commits, from the environment alone: the tests pass as root on a fresh machine with no git config."""
    for what in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{what}_NAME", "piqa test")
        monkeypatch.setenv(f"GIT_{what}_EMAIL", "test@example.org")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.delenv(STOP_ENV, raising=False)


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True)
    return done.stdout


def team(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A bare remote and three clones: ``a`` (the lead's: the dataset committed, a round imported and synced), ``b``
    and ``c`` cloned after it and synced once. Returns the remote and each clone's dataset file."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(remote)], check=True)
    lead = tmp_path / "a"
    lead.mkdir()
    git(lead, "init", "--quiet", "-b", "main")
    culture_copy(lead)
    git(lead, "add", DATA)
    git(lead, "commit", "--quiet", "-m", "the dataset")
    git(lead, "remote", "add", "origin", str(remote))
    imported(lead / DATA, doc_round(ARAB, whole=True))
    run("sync", lead / DATA)
    machines = {"a": lead / DATA}
    for name in ("b", "c"):
        subprocess.run(["git", "clone", "--quiet", str(remote), str(tmp_path / name)], check=True)
        machines[name] = tmp_path / name / DATA
        run("sync", machines[name])
    return remote, machines


def events(dataset: Path) -> list[tuple]:
    """Every event of the dataset's workspace by global id (what a machine holds, whatever its local numbers)."""
    conn = sqlite3.connect(f"{dataset}.piqa.sqlite")
    try:
        return sorted(
            conn.execute("SELECT uid, clock, time, annotator, kind, item_id, field, old, new, note FROM events")
        )
    finally:
        conn.close()


def machine_of(dataset: Path) -> str:
    """The machine id the dataset's workspace syncs under in its place (``core/sync/machine.py``)."""
    conn = sqlite3.connect(f"{dataset}.piqa.sqlite")
    try:
        record = json.loads(conn.execute("SELECT value FROM meta WHERE key = ?", (MACHINE_KEY,)).fetchone()[0])
    finally:
        conn.close()
    return str(record["places"][place_of(Path(f"{dataset}.piqa.sqlite"))])


def offline(dataset: Path, remote: Path | None) -> None:
    """Point the clone's remote at a missing path (None) or back at ``remote``."""
    git(dataset.parent, "remote", "set-url", "origin", str(remote or dataset.parent.parent / "gone.git"))


def sync_json(dataset: Path, codes: tuple[int, ...] = (0,)) -> dict:
    text = run("sync", dataset, "--json", codes=codes)
    return json.loads(text.splitlines()[1])


# ------------------------------------------------------------------ a team


@pytest.mark.parametrize("seed", range(3))
def test_three_clones_syncing_in_random_orders_end_with_one_state(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    remote, machines = team(tmp_path)
    for _ in range(5):
        for name, who in TEAM.items():
            project = Project.open(machines[name], annotator=rng.choice([who, who, LEAD]))
            work(project, rng, rng.randint(3, 10))
            project.workspace.close()  # type: ignore[union-attr]
        for name in rng.sample(sorted(machines), rng.randint(1, 3)):
            away = rng.random() < 0.3
            if away:
                offline(machines[name], None)
            report = sync_json(machines[name])
            assert report["pushed"] is not away
            if away:
                assert report["offline"] and "remote did not answer" in report["offline"]
                offline(machines[name], remote)
    for name in ("a", "b", "c", "a", "b"):  # every batch everywhere
        sync_json(machines[name])
    assert events(machines["a"]) == events(machines["b"]) == events(machines["c"])
    found = {name: outputs(machines[name], tmp_path) for name in machines}
    for what in found["a"]:
        assert found["a"][what] == found["b"][what] == found["c"][what], f"{what} differs between clones"
    for dataset in machines.values():  # the workspace is never committed
        assert not [f for f in git(dataset.parent, "ls-files").splitlines() if ".piqa.sqlite" in f]


def test_offline_work_waits_and_the_next_sync_pushes_it(tmp_path: Path) -> None:
    remote, machines = team(tmp_path)
    project = Project.open(machines["b"], annotator="karim")
    for item in project.items[:4]:
        project.vote(item.id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    offline(machines["b"], None)
    text = run("sync", machines["b"])
    assert "4 events wait to be pushed: the remote did not answer" in text
    offline(machines["b"], remote)
    assert sync_json(machines["b"])["pushed"]
    assert sync_json(machines["a"])["received"] == {"vote": 4}
    again = sync_json(machines["a"])
    assert again["received"] == {} and again["sent"] == 0  # nothing travels twice


def test_a_push_refused_because_someone_pushed_first_is_merged_and_retried(tmp_path: Path) -> None:
    remote, machines = team(tmp_path)
    for name, who in (("b", "karim"), ("c", "mona")):
        project = Project.open(machines[name], annotator=who)
        project.vote(project.items[0].id, "1")
        project.workspace.close()  # type: ignore[union-attr]
    offline(machines["b"], None)
    sync_json(machines["b"])  # b's batch committed, not pushed
    offline(machines["b"], remote)
    hook = machines["c"].parent / ".git" / "hooks" / "pre-push"
    once = tmp_path / "pushed-once"
    hook.write_text(  # b pushes between c's fetch and c's push: c's first push is refused
        f"#!/bin/sh\nif [ ! -e '{once}' ]; then touch '{once}'; git -C '{machines['b'].parent}' push -q origin main; fi\n"
    )
    hook.chmod(0o755)
    report = sync_json(machines["c"])
    assert once.exists() and report["pushed"]
    assert report["received"] == {"vote": 1}  # b's vote, brought by the retry
    sync_json(machines["b"])
    assert events(machines["b"]) == events(machines["c"])


# ------------------------------------------------------------------ kills


@pytest.mark.parametrize("step", STEPS)
def test_a_sync_killed_at_each_step_is_finished_by_the_next(tmp_path: Path, step: str) -> None:
    remote, machines = team(tmp_path)
    for name, who in (("a", "hala"), ("b", "karim")):
        project = Project.open(machines[name], annotator=who)
        for item in project.items[:3]:
            project.vote(item.id, "0" if name == "a" else "1")
        project.workspace.close()  # type: ignore[union-attr]
    sync_json(machines["a"])
    env = {**os.environ, STOP_ENV: step, "PYTHONPATH": os.getcwd()}
    killed = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "sync", str(machines["b"])], env=env, capture_output=True, text=True
    )
    assert killed.returncode == 137, killed.stderr
    finished = sync_json(machines["b"])
    assert finished["pushed"]
    sync_json(machines["a"])
    assert events(machines["a"]) == events(machines["b"])
    assert len({row[0] for row in events(machines["b"])}) == len(events(machines["b"]))
    assert git(machines["b"].parent, "status", "--porcelain") == ""  # everything committed


# ------------------------------------------------------------------ the dataset file moves on


def test_a_newer_dataset_file_from_the_lead_does_not_block_sync(tmp_path: Path) -> None:
    remote, machines = team(tmp_path)
    project = Project.open(machines["b"], annotator="karim")
    last = project.items[-1].id
    project.vote(last, "0")
    project.workspace.close()  # type: ignore[union-attr]
    lines = machines["a"].read_text(encoding="utf-8").splitlines(keepends=True)
    machines["a"].write_text("".join(lines[:-1]), encoding="utf-8")  # the lead drops the last item
    said = sync_json(machines["a"])["dataset_file"]
    assert said == "changed since its last commit"  # and a sync says it stays here until it is committed
    git(machines["a"].parent, "commit", "--quiet", "-am", "the lead's new version")
    sync_json(machines["a"])
    report = sync_json(machines["b"])  # merges the new dataset file in, no --force
    assert report["pushed"]
    assert git(machines["b"].parent, "show", "HEAD:culture.tsv") == "".join(lines[:-1])
    got = sync_json(machines["a"])
    assert got["received"] == {"vote": 1} and got["items_not_here"] == [last]
    assert "1 items the received work names are not in this dataset file" in run("sync", machines["c"])


@pytest.mark.parametrize("order", ["bc", "cb"])
def test_the_leads_saved_dataset_travels_and_a_clone_on_the_old_version_syncs_forward(
    tmp_path: Path, order: str
) -> None:
    """The lead edits a solution and saves: the save commits the dataset file, the sync pushes it. Karim, still on
    the old version, votes on the old text and syncs without --force: git takes the new file beside his workspace
    (nothing to commit or set aside), his vote is kept and said to be stale, and every clone ends with one state."""
    remote, machines = team(tmp_path)
    lead = Project.open(machines["a"], annotator="hala")
    target, other = lead.items[3].id, lead.items[4].id
    old_text = lead.items[3].solutions[0]
    lead.edit(target, {"solution0": "نص جديد كتبته المشرفة."})
    said = commit_saved(lead.save(), "save")
    lead.workspace.close()  # type: ignore[union-attr]
    assert said is not None and said.startswith(f"committed {DATA} (") and "the next piqa-tui sync shares it" in said
    assert git(machines["a"].parent, "log", "-1", "--format=%s") == f"piqa-tui save: {DATA}\n"
    assert sync_json(machines["a"])["pushed"]
    for name, who, item in (("b", "karim", target), ("c", "mona", other)):  # both on the old file
        project = Project.open(machines[name], annotator=who)
        assert project.items[3].solutions[0] == old_text
        project.vote(item, "0")
        project.workspace.close()  # type: ignore[union-attr]
    for name in order:
        text = run("sync", machines[name])
        assert text.startswith("exit 0") and "is now the version the team committed" in text, text
        if name == "b":
            assert f"1 votes were cast on solution texts changed since ({target} (karim))" in text, text
        assert git(machines[name].parent, "status", "--porcelain") == ""  # the new file beside the workspace
        assert "changed since this workspace last saw it" not in run("agree", machines[name], "--json")
    got = sync_json(machines["a"])
    assert got["received"] == {"vote": 2} and got["stale_votes"] == 1  # said on the lead's machine too
    for name in ("b", "c", "a", "b", "c"):
        sync_json(machines[name])
    assert events(machines["a"]) == events(machines["b"]) == events(machines["c"])
    assert [row for row in events(machines["a"]) if row[3] == "karim" and row[5] == target]  # kept, not dropped
    found = {name: outputs(machines[name], tmp_path) for name in machines}
    for what in found["a"]:
        assert found["a"][what] == found["b"][what] == found["c"][what], f"{what} differs between clones"


def test_a_newcomers_clone_opens_with_everyones_work_before_any_sync(tmp_path: Path) -> None:
    """``git clone`` and any command (here the real CLI, a process of its own): the team's batches in the clone are
    applied on opening, through the gate and merge a sync uses, said in one line; nothing to commit after."""
    remote, machines = team(tmp_path)
    rng = random.Random(7)
    for name, who in TEAM.items():
        project = Project.open(machines[name], annotator=who)
        work(project, rng, 8)
        project.workspace.close()  # type: ignore[union-attr]
    for name in ("a", "b", "c", "a", "b"):
        sync_json(machines[name])
    newcomer = tmp_path / "d"
    subprocess.run(["git", "clone", "--quiet", str(remote), str(newcomer)], check=True)
    dataset = newcomer / DATA
    assert not Path(f"{dataset}.piqa.sqlite").exists()
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "agree", str(dataset), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    notes = [
        line for line in done.stderr.splitlines() if "batches of the team's work already in the repository" in line
    ]
    assert len(notes) == 1 and notes[0].startswith("piqa-tui: warning: applied "), done.stderr
    assert "applied" not in run("progress", dataset, "--json", codes=(0, 2))  # said once: nothing new since
    assert events(dataset) == events(machines["b"])
    found, theirs = outputs(dataset, tmp_path), outputs(machines["b"], tmp_path)
    for what in theirs:
        assert found[what] == theirs[what], f"{what} differs on the newcomer's clone"
    assert git(newcomer, "status", "--porcelain") == ""  # the workspace is ignored, never committed
    first = sync_json(dataset)
    assert first["sent"] == 0 and first["received"] == {} and first["pushed"]  # nothing of theirs travels back


def test_a_workspace_committed_by_hand_is_refused_in_one_line(tmp_path: Path) -> None:
    remote, machines = team(tmp_path)
    folder = machines["b"].parent
    git(folder, "add", "-f", f"{DATA}.piqa.sqlite")
    git(folder, "commit", "--quiet", "-m", "oops")
    said = run("sync", machines["b"], codes=(2,))
    assert f"the workspace {DATA}.piqa.sqlite is committed to the repository" in said and said.count("\n") == 2
    assert f"git rm --cached {DATA}.piqa.sqlite && git commit" in said
    git(folder, "rm", "--quiet", "--cached", f"{DATA}.piqa.sqlite")
    git(folder, "commit", "--quiet", "-m", "out again")
    assert sync_json(machines["b"])["pushed"] and Path(f"{machines['b']}.piqa.sqlite").is_file()


# ------------------------------------------------------------------ hostile batches


def valid_batch(machines: dict[str, Path]) -> Path:
    """b's first batch after three votes, synced (so a holds nothing of it until it syncs); a has two votes of its
    own, not shared yet."""
    project = Project.open(machines["a"], annotator="hala")
    for item in project.items[5:7]:
        project.vote(item.id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    project = Project.open(machines["b"], annotator="karim")
    for item in project.items[:3]:
        project.vote(item.id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    sync_json(machines["b"])
    folder = machines["b"].parent / BATCHES / DATA
    return max(folder.glob("*/*.piqa.gz"), key=lambda p: p.stat().st_mtime_ns)


def planted(machines: dict[str, Path], machine: str, name: str, data: bytes) -> Path:
    folder = machines["a"].parent / BATCHES / DATA / machine
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return folder / name


def forged_rows(dataset: Path) -> list[tuple]:
    conn = sqlite3.connect(f"{dataset}.piqa.sqlite")
    try:
        return conn.execute(
            "SELECT seq, time, annotator, kind, item_id, field, old, new, action, note, uid, clock FROM events"
            " WHERE kind = 'vote' ORDER BY seq LIMIT 2"
        ).fetchall()
    finally:
        conn.close()


def hostile(kind: str, machines: dict[str, Path], good: Path) -> tuple[str, str, bytes]:
    """(machine folder, file name, bytes) of a hostile batch of ``kind``."""
    name, machine = good.name, "f" * 16
    header = batch_format.read_batch(good)[0]
    if kind == "corrupt":
        return machine, name, b"\x1f\x8b\x08\x00not gzip at all"
    if kind == "truncated":
        return machine, name, good.read_bytes()[: good.stat().st_size // 2]
    if kind == "misplaced":  # b's batch copied into another machine's folder
        return machine, name, good.read_bytes()
    if kind == "other-dataset":
        other = Header("other.tsv", machine, header.first, header.last, header.events, {})
        return machine, name, encode(other, forged_rows(machines["b"])[: header.events], {})
    rows = forged_rows(machines["a"])
    if kind == "claims-another-event":  # a's own vote, its id kept, its choice changed
        rows = [(*row[:7], "1" if row[7] == "0" else "0", *row[8:]) for row in rows]
        return machine, "1-2.piqa.gz", encode(Header(DATA, machine, 1, 2, 2, {}), rows, {})
    if kind == "too-many-events":  # a header that claims more events than a batch may hold
        many = Header(DATA, machine, 1, 2, batch_format.MAX_EVENTS + 1, {})
        return machine, "1-2.piqa.gz", encode(many, forged_rows(machines["a"])[:2], {})
    if kind == "future":
        rows = [(1, "2999-01-01T00:00:00.000000Z", *rows[0][2:8], None, rows[0][9], "e" * 32, 7)]
        return machine, "1-1.piqa.gz", encode(Header(DATA, machine, 1, 1, 1, {}), rows, {})
    assert kind == "bomb"  # a few kilobytes that inflate past the bound
    head = json.dumps({"format": "piqa-tui batch", "version": 1, "dataset": DATA, "machine": machine})
    return machine, "1-1.piqa.gz", gzip.compress(head.encode() + b"\n" + b" " * (batch_format.MAX_RAW_BYTES + 10))


WHY = {
    "corrupt": "it is not a gzip file or is damaged",
    "truncated": "it is truncated",
    "misplaced": "it claims to come from machine",
    "other-dataset": "it was made on another dataset (other.tsv)",
    "claims-another-event": "of another event, changed",
    "future": "time '2999-01-01T00:00:00.000000Z'",
    "bomb": "it inflates to over 1048576 bytes",
    "too-many-events": "it holds 500001 events, over the 500000 a batch may hold",
}


@pytest.mark.parametrize("kind", sorted(WHY))
def test_a_hostile_batch_is_refused_whole_in_one_line(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_format, "MAX_RAW_BYTES", 2**20)  # the bound, small enough to test quickly
    remote, machines = team(tmp_path)
    good = valid_batch(machines)
    machine, name, data = hostile(kind, machines, good)
    path = planted(machines, machine, name, data)
    held = events(machines["a"])
    report = run("sync", machines["a"], codes=(1,))
    refused = [line for line in report.splitlines() if "refused" in line]
    assert len(refused) == 1 and path.name in refused[0] and "nothing of it was applied" in refused[0], report
    assert WHY[kind] in refused[0], refused[0]
    assert held != events(machines["a"])  # b's good batch came in the same sync, and nothing of the hostile one:
    assert set(events(machines["a"])) == set(held) | set(events(machines["b"]))
    assert run("sync", machines["a"], codes=(1,)).count("refused") == 1  # said again, never applied


def test_an_oversized_batch_file_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, machines = team(tmp_path)
    good = valid_batch(machines)
    monkeypatch.setattr(batch_format, "MAX_FILE_BYTES", good.stat().st_size - 1)
    text = run("sync", machines["a"], codes=(1,))
    assert f"{good.name}: refused, nothing of it was applied: it is {good.stat().st_size} bytes" in text
    assert not [row for row in events(machines["a"]) if row[3] == "karim"]


# ------------------------------------------------------------------ repositories not ready


def test_a_repository_not_ready_is_one_line_and_nothing_is_lost(tmp_path: Path) -> None:
    remote, machines = team(tmp_path)
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(machines["a"], lone / DATA)
    assert "is in no git repository: clone the team's repository" in run("sync", lone / DATA, codes=(2,))
    shutil.copy(machines["a"], machines["a"].parent / "new.tsv")
    assert "the dataset file is not committed in the repository" in run("sync", machines["a"].parent / "new.tsv")
    folder = machines["b"].parent
    git(folder, "checkout", "--quiet", "--detach")
    assert "on no branch (a detached HEAD): go back to the team's branch" in run("sync", machines["b"], codes=(2,))
    git(folder, "checkout", "--quiet", "main")
    (folder / ".git" / "MERGE_HEAD").write_text(git(folder, "rev-parse", "HEAD"))
    assert "in the middle of a merge: finish it" in run("sync", machines["b"], codes=(2,))
    (folder / ".git" / "MERGE_HEAD").unlink()
    (folder / ".git" / "rebase-merge").mkdir()
    said = run("sync", machines["b"], codes=(2,))
    assert "in the middle of a rebase: finish it (git status says how) or abort it (git rebase --abort)" in said
    assert said.count("\n") == 2  # "exit 2" and the one line
    (folder / ".git" / "rebase-merge").rmdir()
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'the branch is frozen for the release' >&2\nexit 1\n")
    hook.chmod(0o755)
    project = Project.open(machines["c"], annotator="mona")
    project.vote(project.items[2].id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    said = run("sync", machines["c"], codes=(2,))
    assert "the remote refused the push (! [remote rejected]" in said and "your work is committed here" in said
    hook.unlink()
    git(machines["c"].parent, "remote", "set-url", "origin", "http://127.0.0.1:9/dz.git")  # nothing listens there
    assert "wait to be pushed: the remote did not answer" in run("sync", machines["c"])
    git(machines["c"].parent, "remote", "remove", "origin")
    project = Project.open(machines["c"], annotator="mona")
    project.vote(project.items[0].id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    assert "2 events wait to be pushed: this repository has no remote" in run("sync", machines["c"])
    folder = machines["c"].parent / BATCHES / DATA
    (folder / machine_of(machines["c"]) / ".abc.tmp").write_bytes(b"half a batch")  # left by a kill while writing
    (folder / ("e" * 16)).mkdir()
    (folder / ("e" * 16) / "1-1.piqa.gz").symlink_to(machines["c"])
    text = run("sync", machines["c"], codes=(1,))
    assert "1-1.piqa.gz: refused, nothing of it was applied: it is a symbolic link" in text
    assert ".abc.tmp" not in git(machines["c"].parent, "ls-files") and not list(folder.glob("*/.abc.tmp"))


def test_a_remote_that_never_answers_ends_at_the_time_limit_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A black hole (an ssh whose ProxyCommand only sleeps: no answer, no refusal): the fetch is ended at its time
    limit with the ssh under it (which would otherwise hold git's output open until it ends), the work waits."""
    remote, machines = team(tmp_path)
    project = Project.open(machines["b"], annotator="karim")
    project.vote(project.items[0].id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    git(machines["b"].parent, "remote", "set-url", "origin", "ssh://git@192.0.2.1/team.git")
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -o ProxyCommand='sleep 600' -o BatchMode=yes")
    monkeypatch.setattr(git_transport, "NETWORK_SECONDS", 2.0)
    said = run("sync", machines["b"])
    assert "1 events wait to be pushed: " in said and "git fetch took over 2 s and was stopped" in said, said
    assert git(machines["b"].parent, "status", "--porcelain") == ""  # the batch: committed, nothing lost
    git(machines["b"].parent, "remote", "set-url", "origin", str(remote))
    monkeypatch.delenv("GIT_SSH_COMMAND")
    assert sync_json(machines["b"])["pushed"]


def test_a_copied_workspace_shares_under_a_machine_id_of_its_own(tmp_path: Path) -> None:
    """A workspace copied to another clone (the old way of handing out work) draws its own machine id, so two
    machines never write into one folder; what both copies hold travels twice and counts once."""
    remote, machines = team(tmp_path)
    project = Project.open(machines["b"], annotator="karim")
    project.vote(project.items[0].id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    before = sync_json(machines["b"])["machine"]
    shutil.copy(f"{machines['b']}.piqa.sqlite", f"{machines['c']}.piqa.sqlite")
    project = Project.open(machines["c"], annotator="mona")
    project.vote(project.items[1].id, "1")
    project.workspace.close()  # type: ignore[union-attr]
    copied = sync_json(machines["c"])
    assert copied["machine"] != before and copied["sent"] == 1
    assert sync_json(machines["b"])["machine"] == before
    sync_json(machines["c"])
    assert events(machines["b"]) == events(machines["c"])
    rules = (machines["a"].parent / ".gitattributes").read_text(encoding="utf-8")
    assert ".piqa/** binary -filter" in rules.splitlines()


def test_the_machine_id_stays_with_the_workspace_in_its_place_whatever_its_inode(tmp_path: Path) -> None:
    """The id is no inode's: a workspace rewritten in place (a restore, an NFS or FUSE mount giving new inode
    numbers) keeps it; the same file moved to another clone draws its own."""
    remote, machines = team(tmp_path)
    before = machine_of(machines["b"])
    workspace = Path(f"{machines['b']}.piqa.sqlite")
    shutil.copy(workspace, tmp_path / "copy.sqlite")
    inode = workspace.stat().st_ino
    os.replace(tmp_path / "copy.sqlite", workspace)  # the same bytes in the same place, another inode
    assert workspace.stat().st_ino != inode
    assert sync_json(machines["b"])["machine"] == before
    moved = tmp_path / "moved"
    shutil.move(machines["b"].parent, moved)  # the clone moved: a new place, a new id, and nothing is lost
    report = sync_json(moved / DATA)
    assert report["machine"] != before and report["pushed"]
    sync_json(machines["a"])
    assert sync_json(moved / DATA)["received"] == {}  # what the old id shared counts once
    assert events(moved / DATA) == events(machines["a"])


# ------------------------------------------------------------------ over ssh


@pytest.fixture
def sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An sshd on 127.0.0.1 that lets this user in with a key of the test's own (git reaches it through
    ``GIT_SSH_COMMAND``); the ``ssh://`` address of its folder ``tmp_path``. Skipped without Debian's openssh-server
    (``.ci/run`` installs it)."""
    daemon = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(daemon).is_file() or not shutil.which("ssh-keygen"):
        pytest.skip("no sshd (apt install openssh-server)")
    keys = tmp_path / "ssh"
    keys.mkdir()
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\nAuthorizedKeysFile {keys / 'client.pub'}\n"
        f"PidFile {keys / 'sshd.pid'}\nStrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\n"
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # the privilege separation folder sshd wants when run as root
    log = (keys / "sshd.log").open("w")
    server = subprocess.Popen([daemon, "-D", "-e", "-f", str(config)], stderr=log)
    try:
        for _ in range(100):
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        monkeypatch.setenv(
            "GIT_SSH_COMMAND",
            f"ssh -i {keys / 'client'} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no "
            "-o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR",
        )
        yield f"ssh://{getpass.getuser()}@127.0.0.1:{port}{tmp_path}"
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def test_a_team_syncs_through_a_bare_repository_over_ssh(
    tmp_path: Path, sshd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, machines = team(tmp_path)
    for name in machines:
        git(machines[name].parent, "remote", "set-url", "origin", f"{sshd}/remote.git")
    for name, who in (("b", "karim"), ("c", "mona")):
        project = Project.open(machines[name], annotator=who)
        project.vote(project.items[0].id, "0")
        project.workspace.close()  # type: ignore[union-attr]
        assert sync_json(machines[name])["pushed"]
    assert sync_json(machines["a"])["received"] == {"vote": 2}
    sync_json(machines["b"])
    assert events(machines["a"]) == events(machines["b"]) == events(machines["c"])
    unknown = os.environ["GIT_SSH_COMMAND"].replace(str(tmp_path / "ssh" / "client"), str(tmp_path / "ssh" / "host"))
    monkeypatch.setenv("GIT_SSH_COMMAND", unknown)  # a key the server does not know…
    project = Project.open(machines["c"], annotator="mona")
    project.vote(project.items[1].id, "1")
    project.workspace.close()  # type: ignore[union-attr]
    text = run("sync", machines["c"])  # … is one line, and the work waits
    assert "1 events wait to be pushed: the remote refused the credentials" in text, text


def test_a_saved_dataset_file_the_team_also_changed_is_one_line_and_the_work_waits_committed(tmp_path: Path) -> None:
    remote, machines = team(tmp_path)
    lines = machines["a"].read_text(encoding="utf-8").splitlines(keepends=True)
    machines["a"].write_text("".join(lines[:-1]), encoding="utf-8")
    git(machines["a"].parent, "commit", "--quiet", "-am", "the lead's new version")
    sync_json(machines["a"])
    machines["b"].write_text("".join(lines[:-2]), encoding="utf-8")  # b saved, not committed
    project = Project.open(machines["b"], annotator="karim")
    project.vote(project.items[0].id, "0")
    project.workspace.close()  # type: ignore[union-attr]
    said = run("sync", machines["b"], codes=(2,))
    assert "files the team changed have changes here not committed: commit them (git commit) or set them aside" in said
    assert "your work is committed here" in said and said.count("\n") == 2  # "exit 2" and the one line
    assert git(machines["b"].parent, "status", "--porcelain", "--", ".piqa") == ""  # the batch: committed
    assert not (machines["b"].parent / ".git" / "MERGE_HEAD").exists()
    git(machines["b"].parent, "stash", "--quiet")
    assert sync_json(machines["b"])["pushed"] and sync_json(machines["a"])["received"] == {"vote": 1}
