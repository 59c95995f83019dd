"""Finding items by text: substring on normalised text first, then fuzzy matches by rapidfuzz.

Search reads stored (logical) text only; display forms never reach it. The
normalisation forgives what annotators type differently from the file:
case, Unicode composition, Arabic harakat and tatweel, invisible joiners and
runs of spaces. Pure Python, no Textual: the TUI runs it in a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import INVISIBLE, nfc

# Arabic harakat (fathatan..sukun, superscript alef, Quranic marks), tatweel,
# and the invisible characters (bidi controls, zero-width, joiners): optional when typing.
_IGNORED = re.compile(f"[\u064b-\u065f\u0670\u06d6-\u06ed\u0640{INVISIBLE}]")
_SPACES = re.compile(r"\s+")

FUZZY_CUTOFF = 80.0
FUZZY_LIMIT = 500


def normalise(text: str) -> str:
    """``text`` as search compares it: NFC, case-folded, harakat and invisibles removed, spaces collapsed."""
    text = nfc(text).casefold()
    return _SPACES.sub(" ", _IGNORED.sub("", text)).strip()


def item_text(item: Item) -> str:
    """What search looks at for one item: its prompt and solutions."""
    return normalise(" \n ".join((item.prompt, *item.solutions)))


@dataclass
class SearchResult:
    query: str
    positions: list[int]  # item positions, best first
    exact: int  # how many leading positions are substring matches

    @property
    def fuzzy(self) -> int:
        return len(self.positions) - self.exact


class SearchIndex:
    """Normalised text of every item, kept up to date as items are edited."""

    def __init__(self, items: list[Item], pause: Callable[[], None] | None = None) -> None:
        """Normalise every item (seconds on 100,000: ``pause`` is called between chunks to yield)."""
        self.texts: list[str] = []
        for start in range(0, len(items), 2000):
            if pause is not None:
                pause()
            self.texts.extend(item_text(item) for item in items[start : start + 2000])

    def update(self, position: int, item: Item) -> None:
        self.texts[position] = item_text(item)

    def search(self, query: str, *, fuzzy: bool = True) -> SearchResult:
        """Items containing ``query`` (in file order), then items that fuzzily match it (best first)."""
        needle = normalise(query)
        if not needle:
            return SearchResult(query, [], 0)
        exact = [pos for pos, text in enumerate(self.texts) if needle in text]
        positions = list(exact)
        if fuzzy and len(needle) >= 3:
            found = set(exact)
            matches = process.extract(
                needle, self.texts, scorer=fuzz.partial_ratio, score_cutoff=FUZZY_CUTOFF, limit=FUZZY_LIMIT + len(exact)
            )
            positions += [pos for _, _, pos in matches if pos not in found][:FUZZY_LIMIT]
        return SearchResult(query, positions, len(exact))
