"""A suggested text as changes a person takes or leaves one by one, word by word.

A model's suggestion (a spelling fix, a distractor, a translation) never replaces a field whole: the TUI shows
the old text against the new as word-level changes, and the person accepts or rejects each. Words compare
exactly (a fixed accent or letter case is a change), and a run of changed words next to each other is one
change, as a reviewer reads it. ``apply_changes`` builds the text from the old one with the accepted changes
only: none accepted gives the old text back, all accepted the suggestion (with its single spaces).
The offsets are logical (stored order), so the display adapter can highlight them in any script.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from difflib import SequenceMatcher

_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class WordChange:
    """One change: the old words at ``start:end`` of the old text (empty for an insertion there) become ``new``
    (empty for a deletion)."""

    start: int
    end: int
    old: str
    new: str

    @property
    def kind(self) -> str:
        """``insert``, ``delete`` or ``replace``."""
        return "insert" if not self.old else "delete" if not self.new else "replace"


def word_changes(old: str, new: str) -> list[WordChange]:
    """The changes that turn ``old`` into ``new``, in text order (none when their words are the same)."""
    a, b = list(_WORD.finditer(old)), list(_WORD.finditer(new))
    matcher = SequenceMatcher(None, [m.group() for m in a], [m.group() for m in b], autojunk=False)
    changes = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        added = new[b[j1].start() : b[j2 - 1].end()] if j2 > j1 else ""
        if i2 > i1:
            changes.append(WordChange(a[i1].start(), a[i2 - 1].end(), old[a[i1].start() : a[i2 - 1].end()], added))
        else:
            at = a[i1].start() if i1 < len(a) else len(old.rstrip())
            changes.append(WordChange(at, at, "", added))
    return changes


def apply_changes(old: str, changes: list[WordChange], accepted: Collection[int]) -> str:
    """``old`` with the changes whose positions in ``changes`` are in ``accepted``, the others left as they were."""
    out: list[str] = []
    pos = 0
    for index, change in enumerate(changes):
        if index not in accepted:
            continue
        start, end = change.start, change.end
        if not change.new and end < len(old) and old[end : end + 1].isspace():
            end += 1  # a deleted word takes its following space with it
        elif not change.new and start > 0 and old[start - 1 : start].isspace():
            start -= 1  # ... or, at the end, the space before it
        out.append(old[pos:start])
        out.append(_inserted(old, change) if not change.old else change.new)
        pos = end
    out.append(old[pos:])
    return "".join(out)


def _inserted(old: str, change: WordChange) -> str:
    """An inserted run with the space that keeps it apart from its neighbours."""
    if change.start >= len(old.rstrip()):
        return (" " if old.strip() else "") + change.new
    return change.new + " "
