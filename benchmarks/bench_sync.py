"""``piqa-tui sync`` at scale: 30,000 new votes from another machine into a 100,000-item workspace.

    python benchmarks/bench_sync.py [N_ITEMS=100000] [N_VOTES=30000]

A bare remote on this disk and two clones of one repository holding ``make_large.py``'s dataset. The lead's
workspace holds one annotator's vote on every item (N_ITEMS events); the laptop's holds N_VOTES votes of three
other annotators, each with its own solution key (as votes cast in the TUI carry; the key is drawn per item, so
nothing compresses for free), one every few seconds. Measured, in this process (imports excluded): the laptop's
sync (writing the batch, committing, pushing), the lead's sync that brings the votes in (git's time, the
transport, measured apart), a sync with nothing new; the batch's bytes per vote; and the whole ``piqa-tui sync``
command in a fresh process (interpreter, imports and the state derived once for the conflicts count included).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from piqa_tui.core.dataset.reading import load_dataset  # noqa: E402
from piqa_tui.core.sync import exchange  # noqa: E402
from piqa_tui.core.sync.git import Repository  # noqa: E402
from piqa_tui.core.workspace.log import Workspace  # noqa: E402
from piqa_tui.core.workspace.vote_targets import solution_key  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.org"}
GIT_ENV |= {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.org"}


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def votes(
    texts: dict[str, tuple[str, ...]], n_votes: int, who: tuple[str, ...], seed: int
) -> list[tuple[str, str, str, str, str | None]]:
    """(item, annotator, choice, time, solution key): one vote every 1–9 s, on items in a shuffled order, each
    naming the text it chose as a vote cast in the app does (``solution_key``)."""
    n_items = len(texts)
    rng = random.Random(seed)
    when = datetime(2026, 11, 20, 8, tzinfo=UTC)
    items = rng.sample(range(n_items), min(n_votes, n_items))
    out: list[tuple[str, str, str, str, str | None]] = []
    for k in range(n_votes):
        item = f"x{items[k % len(items)]}"
        choice = rng.choice(["0", "1", "0", "1", "skip"])
        key = solution_key(texts[item][int(choice)]) if choice != "skip" else None
        when += timedelta(seconds=rng.randint(1, 9), microseconds=rng.randint(0, 999_999))
        out.append((item, who[k % len(who)], choice, when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), key))
    return out


def timed(label: str, action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    took = time.perf_counter() - start
    print(f"{label}: {took:.3f} s")
    return took


def git_seconds() -> list[float]:
    """Time every fetch, merge and push the sync makes (the transport), into the returned list."""
    spent: list[float] = []
    for name in ("fetch", "merge_in", "push"):
        plain = getattr(Repository, name)

        def measured(self: Repository, *args: str, _plain: Callable = plain) -> object:
            start = time.perf_counter()
            try:
                return _plain(self, *args)
            finally:
                spent.append(time.perf_counter() - start)

        setattr(Repository, name, measured)
    return spent


def main() -> None:
    n_items = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    n_votes = int(sys.argv[2]) if len(sys.argv) > 2 else 30_000
    os.environ.update(GIT_ENV)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        remote, lead, laptop = tmp / "remote.git", tmp / "lead", tmp / "laptop"
        git("init", "-q", "--bare", "-b", "main", str(remote))
        git("init", "-q", "-b", "main", str(lead))
        subprocess.run([sys.executable, str(HERE / "make_large.py"), str(lead / "large.tsv"), str(n_items)], check=True)
        git("-C", str(lead), "add", "large.tsv")
        git("-C", str(lead), "commit", "-qm", "dataset")
        git("-C", str(lead), "remote", "add", "origin", str(remote))
        exchange.sync(lead / "large.tsv")
        git("clone", "-q", str(remote), str(laptop))
        ws = Workspace(lead / "large.tsv.piqa.sqlite")
        texts = {item.id: item.solutions for item in load_dataset(lead / "large.tsv").items}
        ws.insert_votes(votes(texts, n_items, ("amina",), 1))
        ws.close()
        ws = Workspace(laptop / "large.tsv.piqa.sqlite")
        ws.insert_votes(votes(texts, n_votes, ("yacine", "sara", "omar"), 2))
        ws.close()
        print(f"{n_items} items; the lead holds {n_items} votes, the laptop {n_votes} new ones")
        timed(f"lead: first sync, its own {n_items} votes out", lambda: exchange.sync(lead / "large.tsv"))
        sent: list[exchange.SyncReport] = []
        timed(
            f"laptop: sync, {n_votes} votes out and the lead's {n_items} in",
            lambda: sent.append(exchange.sync(laptop / "large.tsv")),
        )
        batch = laptop / exchange.BATCHES / "large.tsv" / sent[0].machine / sent[0].batches_sent[0]
        print(f"batch: {batch.stat().st_size} bytes, {batch.stat().st_size / n_votes:.1f} bytes per vote")
        spent = git_seconds()
        took = timed(f"lead: sync, {n_votes} votes in", lambda: exchange.sync(lead / "large.tsv"))
        print(f"  of which git fetch/merge/push: {sum(spent):.3f} s; the rest: {took - sum(spent):.3f} s")
        spent.clear()
        took = timed("lead: sync with nothing new", lambda: exchange.sync(lead / "large.tsv"))
        print(f"  of which git fetch/merge/push: {sum(spent):.3f} s; the rest: {took - sum(spent):.3f} s")
        ws = Workspace(laptop / "large.tsv.piqa.sqlite")
        ws.insert_votes(votes(texts, n_votes, ("lina", "samir", "hind"), 3))
        ws.close()
        exchange.sync(laptop / "large.tsv")
        argv = [sys.executable, "-m", "piqa_tui.cli.main", "sync", str(lead / "large.tsv")]
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        timed(f"piqa-tui sync (fresh process), {n_votes} votes in", lambda: subprocess.run(argv, check=True, env=env))
        timed("piqa-tui sync (fresh process), nothing new", lambda: subprocess.run(argv, check=True, env=env))


if __name__ == "__main__":
    main()
