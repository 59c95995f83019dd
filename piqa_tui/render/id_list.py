"""How a command names many items (or columns) on one line: the first ones, then how many more.

A command that moves or leaves out things names them, so nobody has to look them up afterwards; past a
screenful the line would stop being read, so it is cut after ``NAMED`` with the count of the rest (``--json``
gives the full list)."""

from __future__ import annotations

from collections.abc import Sequence

NAMED = 20  # names a line shows before "and N more"


def name_some(names: Sequence[str], shown: int = NAMED) -> str:
    """``a, b, c`` — or the first ``shown`` and ``and N more`` past them ("" for none)."""
    head = ", ".join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")
