"""Ask the terminal how wide it draws a few Indic syllables, before the screen opens.

Terminals disagree about spacing vowel signs and conjuncts (xterm, VTE,
Konsole and tmux count code points; some newer terminals count clusters), and
a layout computed with the wrong widths pushes every line with Tamil or
Bengali text sideways. So, unless the user chose a width mode in the config
file, piqa-tui prints each probe string, asks for the cursor position (DSR,
``ESC [ 6 n``), and picks the ``WidthPolicy`` mode that predicts what the
terminal did. The probe line is erased again; with no answer (not a terminal,
or one that ignores DSR) it falls back to ``codepoint``.
"""

from __future__ import annotations

import os
import re
import select
import time

from piqa_tui.core.text.graphemes import WIDTH_MODES, WidthMode, WidthPolicy, cell_width

# Strings whose width differs between the modes (see core.reference_strings).
PROBES = ("கொ", "தமிழ்", "ক্ষি", "বাংলা", "क्षि", "हिन्दी", "कि")
FALLBACK: WidthMode = "codepoint"
_REPORT = re.compile(rb"\x1b\[(\d+);(\d+)R")


def choose_mode(measured: dict[str, int]) -> WidthMode:
    """The mode that predicts most of the measured widths (ties go to the more common terminal model)."""
    order: list[WidthMode] = ["codepoint", "wcwidth", "cluster2", "cluster1"]
    assert set(order) == set(WIDTH_MODES)

    def agreement(mode: WidthMode) -> int:
        policy = WidthPolicy(mode)
        return sum(cell_width(text, policy) == width for text, width in measured.items())

    return max(order, key=lambda mode: (agreement(mode), -order.index(mode)))


def measure(timeout: float = 0.6) -> dict[str, int] | None:
    """Cells the terminal advanced for each probe, or None when it cannot be asked."""
    try:
        import termios
        import tty
    except ImportError:  # not a POSIX terminal
        return None
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        os.close(fd)
        return None
    try:
        tty.setraw(fd)
        request = b"".join(b"\r" + text.encode("utf-8") + b"\x1b[6n" for text in PROBES) + b"\r\x1b[2K"
        os.write(fd, request)
        answer = b""
        deadline = time.monotonic() + timeout
        while len(_REPORT.findall(answer)) < len(PROBES):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            answer += os.read(fd, 1024)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        os.close(fd)
    columns = [int(col) for _, col in _REPORT.findall(answer)]
    if len(columns) < len(PROBES):
        return None
    return {text: col - 1 for text, col in zip(PROBES, columns)}


def detect_width_mode() -> WidthMode:
    """The width mode this terminal follows (``codepoint`` when it cannot tell)."""
    measured = measure()
    return choose_mode(measured) if measured else FALLBACK
