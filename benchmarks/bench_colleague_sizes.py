"""What a colleague's file controls, at sizes it can reach: each worst case built, then the command timed.

    python benchmarks/bench_colleague_sizes.py [--tree PATH] [--runs 3] [--case NAME ...] [--memory-gib 2]

Issue 36, item 5: the cost of every command must be linear or bounded in what another machine's file holds. The
cases (``--case``; all by default):

* ``round``: ``round import`` of a round file naming ``--annotators`` people (2,000);
* ``stage``: ``stage --import`` of a drafts file of ``--drafts`` items (20,000);
* ``progress``: ``progress`` on a workspace whose recorded round asks ``validators_per_item = 10**15`` (recorded
  behind the round file's checks, as a merged workspace could bring it);
* ``agree``: ``agree --json`` with 103 annotators who all voted on 12 items (the JSON's size is printed), and with
  ``--crowd`` (50,000) annotators who each cast one vote on one of 1,000 items;
* ``value``: ``stage --import`` of one draft whose prompt is 8 MiB (a value no command should carry).

Each run is the real CLI in a fresh process (``PYTHONPATH=--tree``, so code before a change can be timed from an
exported copy: ``git archive COMMIT piqa_tui | tar -x -C /tmp/before``), each from a fresh copy of the workspace it
needs. Printed per case: the median wall seconds of ``--runs`` runs, the peak RSS of the child (``wait4``), the exit
code and the first line of its stderr. A child is held to ``--memory-gib`` of data (``RLIMIT_DATA``) and ``--timeout``
seconds, so a case that would take the machine down ends as an error here instead.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh_process import machine_line  # noqa: E402

CASES = ("round", "stage", "progress", "agree", "value")


@dataclass
class Timed:
    """The runs of one command: wall seconds, peak RSS (MiB), and how the last run ended."""

    name: str
    wall: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    code: int = 0
    said: str = ""
    out_bytes: int = 0

    def line(self) -> str:
        ended = "ok" if self.code == 0 else f"exit {self.code}: {self.said[:160]}"
        size = f", stdout {self.out_bytes / 1e6:.2f} MB" if self.out_bytes > 10_000 else ""
        return (
            f"{self.name}: median {statistics.median(self.wall):.2f} s wall, peak RSS {max(self.rss):.0f} MiB{size} "
            f"({', '.join(f'{w:.2f}' for w in self.wall)}); {ended}"
        )


def run_child(argv: list[str], env: dict[str, str], timed: Timed, memory: int, timeout: float, cwd: Path) -> None:
    """Run ``argv`` once in a new process held to ``memory`` bytes of data (heap and private maps), in ``cwd`` (never
    a checkout: ``python -m`` puts the working folder first on the path); add its figures to ``timed``."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, preexec_fn=limit)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        timed.wall.append(time.perf_counter() - start)
        timed.rss.append(usage.ru_maxrss / 1024)
        timed.code = proc.returncode
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
        timed.said = ("timed out" if timed.wall[-1] > timeout else "") + (lines[-1] if lines else "")
        timed.out_bytes = out.seek(0, 2)


# --------------------------------------------------------------------------- the files


def write_dataset(path: Path, items: int) -> None:
    """A Global-PIQA-style TSV: ``items`` items with a country column."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id\tprompt\tsolution0\tsolution1\tlabel\tcountry\n")
        for i in range(items):
            fh.write(f"x{i}\tHow to keep bread {i} fresh?\tWrap it in cloth.\tLeave it open.\t{i % 2}\tDZ\n")


def write_round(path: Path, annotators: int, per_item: int = 1) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(f'name = "crowd"\nseed = 1\nvalidators_per_item = {per_item}\n')
        for a in range(annotators):
            fh.write(f'[[annotator]]\nname = "annotator-{a:05d}"\nroles = ["validator"]\ncountry = "DZ"\n')


def write_drafts(path: Path, drafts: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id\tprompt\tsolution0\tsolution1\tlabel\n")
        for i in range(drafts):
            fh.write(f"d{i}\tHow to dry herbs {i}?\tHang them upside down.\tSoak them in water.\t0\n")


def write_votes(path: Path, annotators: int, items: int, every_item: bool) -> None:
    """Long-format votes: each annotator on every one of ``items`` items, or one vote each on item ``a % items``."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write("item_id\tannotator\tchoice\ttime\n")
        for a in range(annotators):
            for i in range(items) if every_item else (a % items,):
                fh.write(f"x{i}\tp{a:05d}\t{(a * 7 + i * 3) % 5 % 2}\t2026-11-20T09:{a % 60:02d}:{i % 60:02d}Z\n")


RECORD_ROUND = """
import json, sys
from pathlib import Path
from piqa_tui.core.workspace.log import Change, Workspace
workspace = Workspace(Path(sys.argv[1]))
row = workspace.conn.execute("SELECT new FROM events WHERE kind = 'round' ORDER BY seq DESC").fetchone()
table = json.loads(row[0])
table["validators_per_item"] = 10**15
new = json.dumps(table, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
workspace.append("lead", "round", [Change(None, "round", row[0], new)])
"""


# --------------------------------------------------------------------------- the cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=str(HERE.parent), help="the source tree to time (default: this checkout)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", action="append", choices=CASES)
    parser.add_argument("--annotators", type=int, default=2000)
    parser.add_argument("--drafts", type=int, default=20_000)
    parser.add_argument("--crowd", type=int, default=50_000)
    parser.add_argument("--memory-gib", type=float, default=4.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": args.tree, "HF_HUB_OFFLINE": "1"}
    memory = int(args.memory_gib * 2**30)
    cli = [sys.executable, "-m", "piqa_tui.cli.main"]
    print(machine_line())
    print(f"tree: {args.tree}; runs: {args.runs}; memory limit {args.memory_gib} GiB, timeout {args.timeout:.0f} s")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)

        def fresh(name: str) -> Path:
            """A copy of the prepared workspace ``name`` (or a new path when there is none)."""
            target = tmp / f"run-{name}.sqlite"
            for suffix in ("", "-wal", "-shm"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
            if (tmp / f"{name}.sqlite").exists():
                shutil.copy(tmp / f"{name}.sqlite", target)
            return target

        def timed(name: str, argv: list[str], workspace: str) -> Timed:
            found = Timed(name)
            for _ in range(args.runs):
                run_child([*cli, *argv, "--workspace", str(fresh(workspace))], env, found, memory, args.timeout, tmp)
            print(found.line(), flush=True)
            return found

        def prepare(name: str, argv: list[str]) -> None:
            subprocess.run([*cli, *argv, "--workspace", str(tmp / f"{name}.sqlite")], env=env, cwd=tmp, check=True)

        data = tmp / "data.tsv"
        write_dataset(data, 1000)
        small = tmp / "small.tsv"
        write_dataset(small, 12)
        for case in args.case or CASES:
            if case == "round":
                write_round(tmp / "round.toml", args.annotators)
                timed(
                    f"round import, {args.annotators:,} annotators",
                    ["round", str(data), "import", str(tmp / "round.toml")],
                    "none",
                )
            elif case == "stage":
                write_drafts(tmp / "drafts.tsv", args.drafts)
                timed(
                    f"stage --import, {args.drafts:,} drafts",
                    ["stage", str(data), "--import", str(tmp / "drafts.tsv")],
                    "none",
                )
            elif case == "progress":
                write_round(tmp / "panel.toml", 3)
                prepare("panel", ["round", str(data), "import", str(tmp / "panel.toml")])
                subprocess.run(
                    [sys.executable, "-c", RECORD_ROUND, str(tmp / "panel.sqlite")], env=env, cwd=tmp, check=True
                )
                timed("progress, validators_per_item = 10**15 recorded", ["progress", str(data)], "panel")
            elif case == "agree":
                write_votes(tmp / "wide.tsv", 103, 12, every_item=True)
                prepare("wide", ["votes", "import", str(small), str(tmp / "wide.tsv")])
                timed("agree --json, 103 annotators x 12 items", ["agree", str(small), "--json"], "wide")
                write_votes(tmp / "crowd.tsv", args.crowd, 1000, every_item=False)
                prepare("crowd", ["votes", "import", str(data), str(tmp / "crowd.tsv")])
                timed(
                    f"agree --json, {args.crowd:,} one-vote annotators on 1,000 items",
                    ["agree", str(data), "--json"],
                    "crowd",
                )
            elif case == "value":
                prompt = "Validate the items of your country. " * 233_017  # 8 MiB (the reader takes 16 Mi characters)
                (tmp / "big.tsv").write_text(f"id\tprompt\tsolution0\tsolution1\tlabel\nd0\t{prompt}\ta\tb\t0\n")
                timed(
                    "stage --import, one 8 MiB prompt", ["stage", str(data), "--import", str(tmp / "big.tsv")], "none"
                )
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
