"""What this machine offers a local model: its CPU's SIMD width and feature flags, and its free memory.

Each answer comes from a text the operating system or llama.cpp writes
(``/proc/cpuinfo``, ``/proc/meminfo``, ``llama_print_system_info()``), and
the parsers take that text as an argument, so they are tested on other
machines' texts without those machines.
"""

from __future__ import annotations

import os
import time

from piqa_tui.core.cores import cores_for, cpu_quota
from piqa_tui.core.errors import ModelError

# KV cells llama.cpp's CPU kernels sum together in one SIMD block: AVX/AVX2 (and NEON), AVX-512, SVE.
BLOCK_WIDTHS = (8, 16, 64)
REPACK_SETTINGS = ("auto", "on", "off")
_AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16"})


def simd_lanes(system_info: str) -> int:
    """KV cells llama.cpp's CPU kernels sum together in one SIMD block, from its system-info string.

    The attention's float dot products (llamafile's tinyBLAS, ggml's vec_dot)
    and its softmax sum along the KV cells in vectors of this many floats: 16
    with AVX-512, 8 with AVX/AVX2 (and 4 with NEON, which 8 covers). SVE's
    width is the hardware's (up to 64 floats), so it gets the largest; not
    measured on such a CPU. The string is ``llama_print_system_info()``'s, which
    names the features the loaded CPU backend was built with.
    """
    avx, avx512, sve = BLOCK_WIDTHS
    features = {
        name.strip(): value.strip() == "1"
        for part in system_info.split("|")
        if "=" in part
        for name, value in [part.rsplit("=", 1)]
    }
    if features.get("SVE"):
        return sve
    if features.get("AVX512"):
        return avx512
    return avx


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo's first ``flags`` line (empty where there is none)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):  # x86 / ARM
            return frozenset(value.split())
    return frozenset()


def decide_repack(setting: str, flags: frozenset[str]) -> bool:
    """Whether llama.cpp may repack weights into its extra CPU buffer types (``use_extra_bufts``).

    ``auto`` repacks unless the CPU advertises AMX: llama.cpp's AMX buffers
    crash ``llama_decode`` on some Sapphire Rapids VMs (upstream issue #20824;
    ``llama-perplexity`` dies the same way without ``--no-repack``). Elsewhere
    repacking is llama.cpp's default and faster (BENCHMARKS.md).
    """
    if setting not in REPACK_SETTINGS:
        raise ModelError(
            f"repack must be one of {', '.join(REPACK_SETTINGS)}, not {setting!r}; fix the config or --repack"
        )
    if setting != "auto":
        return setting == "on"
    return not (flags & _AMX_FLAGS)


def available_memory_bytes() -> int | None:
    """Memory the model can use now (MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def busy_cpu_seconds(stat: str, ticks_per_second: int, cpus: frozenset[int] | None = None) -> float | None:
    """CPU seconds the machine's processes have run since boot on ``cpus`` (None: every CPU), from /proc/stat's
    ``cpuN`` lines (or its ``cpu`` total): user, nice, system, irq and softirq; idle, iowait and a hypervisor's
    steal are not busy. None when no line answers."""
    total, found = 0, False
    for line in stat.splitlines():
        fields = line.split()
        if len(fields) < 8 or not fields[0].startswith("cpu") or not all(f.isdecimal() for f in fields[1:8]):
            continue
        name = fields[0][3:]
        if (cpus is None and name == "") or (cpus is not None and name.isdecimal() and int(name) in cpus):
            user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[1:8])
            total, found = total + user + nice + system + irq + softirq, True
    return total / ticks_per_second if found else None


def threads_for(max_threads: int, cores: int, others_busy: float) -> int:
    """How many threads to decode with when other processes kept ``others_busy`` cores busy meanwhile.

    llama.cpp's threads wait for each other at every operation of the graph, so a thread without a core of
    its own stalls the rest: under two busy loops on two cores, one thread scored 1.76 times as fast as two
    (BENCHMARKS.md, contention). So: the cores the others leave, rounded, at least one, at most ``max_threads``.
    """
    return max(1, min(max_threads, int(cores - others_busy + 0.5)))


class FreeCores:
    """The share of the machine other processes take while this one decodes, from /proc/stat and this
    process's own CPU time; ``others_busy`` answers None where /proc/stat cannot be read (then nothing adapts)."""

    def __init__(self, stat_path: str = "/proc/stat", min_interval: float = 0.5) -> None:
        self.stat_path = stat_path
        self.min_interval = min_interval  # seconds between answers: shorter is too short for /proc/stat's ticks
        self.ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        # The CPUs this process may run on: on a bigger machine, what others do elsewhere takes nothing from it.
        self.cpus = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        self.cores = len(self.cpus) if self.cpus else os.cpu_count() or 1
        # A CPU quota (a container's --cpus) caps the threads however idle the CPUs are (``core.cores``).
        self.cap = cores_for(self.cores, cpu_quota())
        self._last = self._sample()

    def _sample(self) -> tuple[float, float, float] | None:
        try:
            with open(self.stat_path, encoding="ascii", errors="replace") as f:
                busy = busy_cpu_seconds(f.read(), self.ticks, self.cpus)
        except OSError:
            return None
        if busy is None:
            return None
        own = os.times()
        return time.monotonic(), busy, own.user + own.system

    def others_busy(self) -> float | None:
        """Cores the other processes used on average since the last answer (None: unknown, or fewer than
        ``min_interval`` seconds ago)."""
        if self._last is not None and time.monotonic() - self._last[0] < self.min_interval:
            return None  # checked before reading /proc/stat: a decode every tenth of a second reads nothing
        now = self._sample()
        if now is None or self._last is None:
            self._last = now
            return None
        wall = now[0] - self._last[0]
        if wall <= 0:  # the same instant (min_interval 0): nothing to average over
            return None
        others = ((now[1] - self._last[1]) - (now[2] - self._last[2])) / wall
        self._last = now
        return max(0.0, others)
