"""How much memory a lexical dedup needs, decided from the input before any index is built.

The lexical search holds, per item, the 40-bit hashes of its character 3-grams
(8 bytes for about every character), its folded text, 25 band keys, a
150-byte MinHash sketch and a row of up to 2,048 bits (core/dedup/overlap.py),
plus work arrays of a fixed size (the exact Jaccard and estimate chunks on
each core). Measured on template drafts of 20,000 and
100,000 items (benchmarks/bench_dedup.py, docs/dedup.md): peak RSS above the
loaded items was 190 MB and 411 MB, about 135 MB plus 9.8 bytes a character.
The estimate below is that line with a margin (it over-states both by 20-30%),
so a refusal comes before the work, not after the machine starts swapping.
The rows of frequent-gram bits (256 bytes a unit at most) came later: at
100,000 opening drafts the peak rose from 441 to 497 MB above the loaded
items, against an estimate of about 530 MB (BENCHMARKS.md, frame-shaped drafts).
"""

from __future__ import annotations

from collections.abc import Iterable

from piqa_tui.core.dataset.item import Item

FIXED_BYTES = 160 * 2**20  # work arrays whatever the input (two cores' chunks)
BYTES_PER_CHARACTER = 10  # gram hashes (8 bytes each, about one per character) and the folded text
BYTES_PER_ITEM = 900  # band keys, sketch, the row of frequent-gram bits (overlap.py), offsets, union-find, fields


def lexical_bytes(items: Iterable[Item]) -> int:
    """About how many bytes finding the exact, lexical and prompt duplicates of ``items`` takes, beyond the
    items themselves (linear in the input: the search never holds anything per pair of items)."""
    count = characters = 0
    for item in items:
        count += 1
        characters += len(item.prompt) + sum(map(len, item.solutions)) + len(item.question or "")
    grows = BYTES_PER_CHARACTER * characters + BYTES_PER_ITEM * count
    return grows + min(FIXED_BYTES, grows)  # the work arrays are chunks of the input: small inputs, small chunks


def available_bytes(meminfo: str | None = None) -> int | None:
    """Memory the system can give without swapping (``MemAvailable`` in /proc/meminfo); None where unknown."""
    if meminfo is None:
        try:
            with open("/proc/meminfo", encoding="ascii", errors="replace") as f:
                meminfo = f.read(1 << 16)
        except OSError:
            return None
    for line in meminfo.splitlines():
        name, _, value = line.partition(":")
        parts = value.split()
        if name == "MemAvailable" and parts and parts[0].isdecimal():
            return int(parts[0]) * 1024  # kB
    return None


def parse_size(text: str) -> int:
    """Bytes from ``512M``, ``4G``, ``1.5G``, ``2000000`` (K, M, G, T are powers of 1024); ValueError otherwise."""
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    body = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (body[:-1], body[-1]) if body[-1:] in units.keys() - {""} else (body, "")
    if not number.isascii() or not number.replace(".", "", 1).isdecimal():
        raise ValueError(f"not a size: {text!r} (e.g. 512M, 4G)")
    value = float(number) * units[unit]
    if not 0 < value < 2**63:
        raise ValueError(f"not a size: {text!r} (e.g. 512M, 4G)")
    return int(value)


def format_bytes(n: int) -> str:
    """``n`` bytes as ``1.2 GB`` or ``350 MB`` (powers of 1024, as --max-memory reads them)."""
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{max(1, round(n / 2**20))} MB"
