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


def batch_line(verb: str, changed: Sequence[str], selected: int, target: str, already: str) -> str:
    """What a command that changes many items did (or would do): ``moved 3 of 4 items to review (1 was there
    already): a, b, c`` — ``already`` the words for the selected items it left as they were ("" for none)."""
    listed = f": {name_some(changed)}" if changed else ""
    extra = f" ({already})" if already else ""
    return f"{verb} {len(changed)} of {selected} item{'s' * (selected != 1)} to {target}{extra}{listed}"
