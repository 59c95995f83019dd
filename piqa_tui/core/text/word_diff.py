"""How the solutions of a minimal pair differ, word by word.

Used by validate ("solutions differ by 4 words") and by the TUI, which
highlights exactly these words (``differing_spans``: in an item's solutions,
and between the copies of a duplicate); all must agree, so all call ``word_diff``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from piqa_tui.core.text.characters import word_key


@dataclass(frozen=True, slots=True)
class PairDiff:
    """Words of ``a`` and ``b`` outside their longest common subsequence of words."""

    a_words: tuple[int, ...]  # indices into a.split()
    b_words: tuple[int, ...]
    a_text: tuple[str, ...]
    b_text: tuple[str, ...]

    @property
    def size(self) -> int:
        """How many words differ: the larger side of the change, as a curator would count it."""
        return max(len(self.a_words), len(self.b_words))


def word_diff(a: str, b: str) -> PairDiff:
    """The words that differ between two solutions, compared without edge punctuation or case."""
    wa, wb = a.split(), b.split()
    # Fast path for the common minimal pair: same length, differing in place.
    if len(wa) == len(wb):
        diff = [i for i, (x, y) in enumerate(zip(wa, wb)) if x != y and word_key(x) != word_key(y)]
        if len(diff) <= 2:
            return PairDiff(tuple(diff), tuple(diff), tuple(wa[i] for i in diff), tuple(wb[i] for i in diff))
    ka, kb = [word_key(w) for w in wa], [word_key(w) for w in wb]
    matcher = SequenceMatcher(None, ka, kb, autojunk=False)
    in_a: list[int] = []
    in_b: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            in_a.extend(range(i1, i2))
            in_b.extend(range(j1, j2))
    return PairDiff(tuple(in_a), tuple(in_b), tuple(wa[i] for i in in_a), tuple(wb[j] for j in in_b))


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each whitespace-separated word, to map word indices to text."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for word in text.split():
        start = text.index(word, pos)
        spans.append((start, start + len(word)))
        pos = start + len(word)
    return spans


def differing_spans(text: str, others: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans, in text order, of the words of ``text`` that differ from any of ``others``."""
    words: set[int] = set()
    for other in others:
        words.update(word_diff(text, other).a_words)
    spans = word_spans(text)
    return [spans[w] for w in sorted(words) if w < len(spans)]
