"""A merge killed mid-way (SIGKILL, as a closed laptop lid or an OOM kill would end it) leaves the target with all
of the source's events or none: the workspace checks ok and holds the event count of before or of after."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample
from .test_merge import DATA, WS, cli

VOTES = 50_000


def copies(tmp: Path) -> tuple[Path, Path]:
    """A (one vote of its own) and B, a copy of A with 50,000 imported votes more."""
    a, b = tmp / "a", tmp / "b"
    a.mkdir()
    copy_sample(DATA, a)
    project = Project.open(a / DATA, annotator="amina")
    project.vote("dz-001", "0")
    ids = [item.id for item in project.items]
    project.workspace.close()  # type: ignore[union-attr]
    shutil.copytree(a, b)
    source = Workspace(b / WS)
    source.insert_votes(
        (
            (ids[k % len(ids)], f"annotator {k // len(ids)}", str(k % 2), f"2026-11-01T10:00:00.{k:06d}Z", None)
            for k in range(VOTES)
        ),
        note="imported from a large round",
    )
    source.close()
    return a, b


def events(machine: Path) -> int:
    conn = sqlite3.connect(machine / WS)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    finally:
        conn.close()


def wal_bytes(machine: Path) -> int:
    wal = machine / (WS + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def killed_command(args: list[str], when: Callable[[], bool]) -> int | None:
    """Run ``piqa-tui ARGS`` and SIGKILL it as soon as ``when()`` holds; its exit status (None: it was killed)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "piqa_tui.cli.main", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while proc.poll() is None and not when():
        time.sleep(0.005)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    code = proc.wait()
    return None if code == -signal.SIGKILL else code


def after(seconds: float) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def killed_at_points(folder: Path, args: list[str], before: int, full: int, reset: Callable[[], None]) -> list[int]:
    """Run ``piqa-tui ARGS`` (it writes to ``folder``'s workspace) and SIGKILL it while its inserts spill into the
    WAL, then 0.4, 0.9 and 1.5 s after it starts; after each kill the workspace checks ok and holds ``before`` or
    ``full`` events (``reset`` takes one that finished back to ``before``). The event counts, in order."""
    start = wal_bytes(folder)
    points: list[Callable[[], Callable[[], bool]]] = [
        lambda: lambda: wal_bytes(folder) > start + 64 * 1024,  # the inserts under way: mid-transaction
        lambda: lambda: wal_bytes(folder) > start + 1024 * 1024,
        *(lambda s=s: after(s) for s in (0.4, 0.9, 1.5)),
    ]
    outcomes = []
    for point in points:
        assert killed_command(args, point()) in (None, 0)
        count = events(folder)
        outcomes.append(count)
        assert count in (before, full), f"a killed {args[0]} {args[1]} left {count - before} of {full - before} events"
        assert "ok" in cli("workspace", "check", str(folder / WS)).stdout
        if count == full:  # it finished before the kill: start again without them
            reset()
            assert events(folder) == before
    assert before in outcomes  # at least one kill landed before the commit
    return outcomes


def test_a_merge_killed_at_any_point_leaves_all_of_the_source_or_none(tmp_path: Path) -> None:
    a, b = copies(tmp_path)
    before, full = events(a), events(a) + VOTES

    def reset() -> None:  # the copy without the votes
        shutil.rmtree(a)
        shutil.copytree(tmp_path / "b", a)
        conn = sqlite3.connect(a / WS)
        conn.execute("DELETE FROM events WHERE note = 'imported from a large round'")
        conn.commit()
        conn.close()

    killed_at_points(a, ["workspace", "merge", str(a / DATA), str(b / WS)], before, full, reset)
    cli("workspace", "merge", str(a / DATA), str(b / WS))
    assert events(a) == full
    assert Project.open(a / DATA).state.votes["dz-001"]["amina"].choice == "0"
