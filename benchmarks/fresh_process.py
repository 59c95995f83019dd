"""Timing a command in fresh processes, and the one line that says which machine gave the figures.

Each run is a new interpreter (start-up and imports included, as a user pays them): wall time from spawn to exit,
and the CPU seconds (user + system) the child used, read from ``getrusage`` so the neighbours' load does not
count. The figures printed are medians.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Runs:
    """Wall and CPU seconds of the runs of one command."""

    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def line(self) -> str:
        """``name: median W s wall, C s CPU (runs: ...)``."""
        runs = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in zip(self.wall, self.cpu))
        return (
            f"{self.name}: median {statistics.median(self.wall):.2f} s wall, {statistics.median(self.cpu):.2f} s CPU "
            f"(wall/CPU per run: {runs})"
        )


def run_once(argv: list[str], runs: Runs, ok: Callable[[subprocess.CompletedProcess[str]], bool] | None = None) -> None:
    """Run ``argv`` once in a new process and add its wall and CPU seconds to ``runs``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not (ok(proc) if ok else proc.returncode == 0):
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.strip()}")
    runs.wall.append(wall)
    runs.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def cli(*args: str) -> list[str]:
    """The argv of ``piqa-tui ARGS`` run by this interpreter."""
    return [sys.executable, "-m", "piqa_tui.cli.main", *args]


def byte_compile() -> str:
    """Write the piqa_tui modules' bytecode, as ``pip install`` does for a wheel, and say so.

    Without it a checkout run with ``PYTHONDONTWRITEBYTECODE`` set (or from a read-only tree) compiles every module
    from source at every start, a cost no installed copy pays (about 0.2 s of CPU for the CLI, more for the TUI).
    """
    spec = importlib.util.find_spec("piqa_tui")
    where = list(spec.submodule_search_locations or []) if spec else []
    done = all(compileall.compile_dir(path, quiet=1) for path in where)
    return f"piqa_tui bytecode written beforehand, as an installed wheel has it: {'yes' if where and done else 'NO'}"


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            return next((set(line.split(":", 1)[1].split()) for line in fh if line.startswith("flags")), set())
    except OSError:
        return set()


def machine_line() -> str:
    """The CPU model, the CPUs this process may use, its vector extensions and the load when measured."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), model)
    except OSError:
        pass
    flags = cpu_flags()
    shown = sorted(f for f in flags if f.startswith(("avx", "amx", "sse4", "fma", "f16c", "bmi")))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"machine: {model}, {cpus} CPUs; Python {platform.python_version()}; load average {load}\n"
        f"CPU flags: {' '.join(shown) or 'unknown'}"
    )
