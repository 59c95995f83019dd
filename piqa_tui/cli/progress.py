"""What a long command is doing, on one line of stderr that rewrites itself and is cleared at the end.

Reading, checking or counting a million rows takes a minute; a silent
terminal for that long looks like a hang. The line is drawn only when stderr
is a terminal and the command was not asked for ``--json``: a pipe, a log
file or a script reading the output gets nothing from here. Redraws are at
most ten a second, so a tight loop may call ``count`` on every row.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from piqa_tui.core.text.terminal_safe import terminal_safe

REDRAW_SECONDS = 0.1
CLEAR_LINE = "\r\x1b[K"  # back to the start of the line, erase to its end


class ProgressLine:
    """One updating status line on a terminal stream; every method does nothing when disabled."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.shown = False
        self.last_draw = 0.0

    def show(self, text: str) -> None:
        """Replace the line with ``text`` (made terminal-safe and cut to the terminal's width)."""
        if not self.enabled:
            return
        width = shutil.get_terminal_size((80, 24)).columns - 1
        line = terminal_safe(text, one_line=True)
        if len(line) > width:
            line = line[: max(width - 1, 0)] + "…"
        self.stream.write(CLEAR_LINE + line)
        self.stream.flush()
        self.shown, self.last_draw = True, time.monotonic()

    def count(self, what: str, done: int, total: int | None = None) -> None:
        """``what 12,000/1,000,000 (1%)``, redrawn at most every REDRAW_SECONDS (and always at the last one)."""
        if not self.enabled or (time.monotonic() - self.last_draw < REDRAW_SECONDS and done != total):
            return
        if total:
            self.show(f"{what} {done:,}/{total:,} ({100 * done // total}%)")
        else:
            self.show(f"{what} {done:,}")

    def counter(self, what: str) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` callback (the form core's long loops take) that counts as ``what``."""
        return lambda done, total: self.count(what, done, total)

    def end(self, *, keep: bool = False) -> None:
        """Clear the line (``keep``: leave its last text and move to the next line)."""
        if self.enabled and self.shown:
            self.stream.write("\n" if keep else CLEAR_LINE)
            self.stream.flush()
        self.shown = False


def wanted(args: argparse.Namespace | None = None) -> bool:
    """Whether a progress line may be drawn: stderr is a terminal and no ``--json`` output was asked for."""
    return sys.stderr.isatty() and not getattr(args, "json", False)


@contextmanager
def progress_line(args: argparse.Namespace | None = None) -> Iterator[ProgressLine]:
    """A progress line for the command run with ``args``, cleared however the block ends (an error stays one line)."""
    line = ProgressLine(wanted(args))
    try:
        yield line
    finally:
        line.end()


def reading(args: argparse.Namespace) -> str:
    """The progress text while the dataset named by ``args`` is read."""
    return f"reading {Path(args.path).name}"
