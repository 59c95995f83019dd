"""Planted copies for the dedup benchmarks: near copies (1-3 character edits, or one word changed), the
planting of near copies and exact variants into generated drafts, and the drafts TSV with its ``copy_of`` column.

``make_template_drafts.py``, ``make_frame_drafts.py`` and ``bench_dedup.py``'s labelled set plant their copies
the same way, so the code is here once. Every function draws from the ``rng`` it is given, in a fixed order:
a seed gives the same data on every run (and the same data it gave before this module was shared).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

LATIN = "abcdefghijklmnopqrstuvwxyz"

Row = tuple[str, str, str, str]  # id, prompt, solution0, solution1
Planted = tuple[str, str, str]  # original id, copy id, kind ("near" or "exact")
WordEdit = Callable[[str, random.Random, list[str]], str]


def _edit_one(tokens: list[str], rng: random.Random, choices: Sequence[str]) -> None:
    """Insert one of ``choices`` into ``tokens``, delete a token (never the last) or replace one, in place."""
    i, op = rng.randrange(len(tokens)), rng.random()
    if op < 1 / 3:
        tokens.insert(i, rng.choice(choices))
    elif op < 2 / 3 and len(tokens) > 1:
        del tokens[i]
    else:
        tokens[i] = rng.choice(choices)


def char_edits(text: str, rng: random.Random, k: int, alphabet: str) -> str:
    """``k`` character edits: each inserts a letter of ``alphabet``, deletes one (never the last) or replaces one."""
    chars = list(text)
    for _ in range(k if chars else 0):
        _edit_one(chars, rng, alphabet)
    return "".join(chars)


def word_edit(text: str, rng: random.Random, vocab: list[str]) -> str:
    """One word of ``vocab`` inserted, one word deleted (never the last) or one replaced."""
    words = text.split()
    if not words:
        return text
    _edit_one(words, rng, vocab)
    return " ".join(words)


def word_swap(text: str, rng: random.Random, vocab: list[str]) -> str:
    """One word replaced by a word of ``vocab`` (the length in words kept: a slot word changed)."""
    words = text.split()
    words[rng.randrange(len(words))] = rng.choice(vocab)
    return " ".join(words)


def near_copy(
    fields: Sequence[str], rng: random.Random, alphabet: str, vocab: list[str], word: WordEdit = word_edit
) -> list[str]:
    """``fields`` with one of them changed: 1-3 character edits, or (half the time) one word by ``word``."""
    out = list(fields)
    f = rng.randrange(len(out))
    out[f] = char_edits(out[f], rng, rng.randint(1, 3), alphabet) if rng.random() < 0.5 else word(out[f], rng, vocab)
    return out


def plant_copies(
    rows: list[Row],
    n_planted: int,
    rng: random.Random,
    near: Callable[[list[str]], list[str]],
    exact: Callable[[list[str]], list[str]],
) -> list[Planted]:
    """Append to ``rows`` ``n_planted`` near copies, then as many exact variants, each of a random row among
    those already there (``near`` / ``exact`` make one from its prompt and solutions); the planted pairs."""
    n_base = len(rows)
    planted: list[Planted] = []
    for kind in ("near", "exact"):
        for src in rng.sample(range(n_base), n_planted):
            fields = list(rows[src][1:])
            fields = near(fields) if kind == "near" else exact(fields)
            copy = f"{kind}{len(planted)}"
            rows.append((copy, fields[0], fields[1], fields[2]))
            planted.append((rows[src][0], copy, kind))
    return planted


def write_drafts(path: str, rows: list[Row], planted: list[Planted]) -> None:
    """The drafts TSV: id, prompt, solution0, solution1, label (alternating 0 and 1) and ``copy_of`` (the
    original's id for a planted copy, else empty), so a benchmark scores recall without generating again."""
    copy_of = {copy: original for original, copy, _ in planted}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id\tprompt\tsolution0\tsolution1\tlabel\tcopy_of\n")
        for k, (item_id, prompt, sol0, sol1) in enumerate(rows):
            fh.write(f"{item_id}\t{prompt}\t{sol0}\t{sol1}\t{k % 2}\t{copy_of.get(item_id, '')}\n")
