"""What this machine offers a local model: its CPU's SIMD width and feature flags, and its free memory.

Each answer comes from a text the operating system or llama.cpp writes
(``/proc/cpuinfo``, ``/proc/meminfo``, ``llama_print_system_info()``), and
the parsers take that text as an argument, so they are tested on other
machines' texts without those machines.
"""

from __future__ import annotations

import os

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
