"""How dedup sees text: folded (never shown or stored), and the keys that make two items the same.

Folding (:func:`fold`): NFKC, case folding, punctuation and whitespace folded,
Arabic spelling variants (alef forms, taa marbuta/haa, alef maqsura/yaa,
tatweel, harakat) and Indic nukta, zero-width joiners and the other invisible
characters removed. An item's exact key (:func:`item_key`) joins its folded
fields with the solutions in sorted order, so an item copied with its
solutions swapped has the same key; the ``prompt`` signal's key
(:func:`prompt_key`) is the folded question and prompt alone. Items with the
same exact key form one :class:`Units` entry, so lexical and semantic work is
done once per unit.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import INVISIBLE

_ALEF_VARIANTS = "أإآٱ"
_ARABIC_DELETE = (
    "\u0640"  # tatweel
    + "".join(map(chr, range(0x064B, 0x0660)))  # harakat, shadda, sukun, combining hamza/madda
    + "\u0670"  # superscript (dagger) alef
    + "".join(map(chr, [*range(0x06D6, 0x06DD), *range(0x06DF, 0x06E5), 0x06E7, 0x06E8, *range(0x06EA, 0x06EE)]))
)
_INDIC_NUKTA = "\u093c\u09bc\u0a3c\u0abc\u0b3c\u0c3c\u0cbc"
# Devanagari letters that NFC keeps precomposed with a nukta (the others are
# composition exclusions, so NFC already splits them into letter + nukta).
_NUKTA_LETTERS = {"\u0929": "\u0928", "\u0931": "\u0930", "\u0934": "\u0933"}
_ARABIC_LETTERS = {"ة": "ه", "ى": "ي", "ی": "ي", "ک": "ك"}
_DIGITS = {chr(0x0660 + d): str(d) for d in range(10)} | {chr(0x06F0 + d): str(d) for d in range(10)}


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str | None]:
    """str.translate table: punctuation and spaces to ' ', marks deleted, variants mapped.

    Built on first use (a pass over all of Unicode, ~0.3 s) rather than at import.
    """
    table: dict[int, str | None] = {
        cp: " " for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp))[0] in "PZ" or chr(cp).isspace()
    }
    for ch in _ARABIC_DELETE + _INDIC_NUKTA + INVISIBLE:
        table[ord(ch)] = None
    for ch in _ALEF_VARIANTS:
        table[ord(ch)] = "ا"
    for src, dst in (_NUKTA_LETTERS | _ARABIC_LETTERS | _DIGITS).items():
        table[ord(src)] = dst
    return table


def fold(text: str) -> str:
    """The text as dedup compares it; never shown or stored.

    NFKC (NFC plus compatibility forms, which also undoes Arabic presentation
    forms pasted from PDFs), case folding, punctuation to spaces, runs of
    whitespace to one space, Arabic and Indic spelling variants folded.
    """
    if not text:
        return ""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_fold_table())
    return " ".join(folded.split())


def folded_fields(item: Item, fold_text: Callable[[str], str] = fold) -> tuple[str, ...]:
    """Folded question (COPA cause/effect, usually ''), prompt, then solutions in sorted order.

    ``fold_text``: :func:`fold`, or a memo of it when many items repeat the same texts.
    """
    return (fold_text(item.question or ""), fold_text(item.prompt), *sorted(fold_text(s) for s in item.solutions))


def item_key(item: Item) -> str:
    """The exact-duplicate key. Folding turns the separator (U+001F, a space to
    ``str.isspace``) into a space, so fields cannot run into each other."""
    return "\x1f".join(folded_fields(item))


def prompt_key(fields: tuple[str, ...]) -> str:
    return fields[0] + "\x1f" + fields[1] if fields[1] else ""


@dataclass
class Units:
    """Items grouped by exact key; lexical and semantic work is done once per unit.

    ``side`` is a bit set: 1 when the unit has items of the checked set, 2 when it
    has items of the ``against`` set.
    """

    members: list[list[int]]  # global item positions, checked items first
    side: list[int]
    fields: list[tuple[str, ...]]  # folded fields of the unit's first item
    prompt_keys: list[str]  # per item position: the key of the prompt signal


def group_units(items: Sequence[Item], n_checked: int) -> Units:
    """Items with the same exact key as one unit. Each distinct text is folded once: drafts written on a
    few sentence frames repeat their goals and solutions, and folding is most of this function's time."""
    index: dict[str, int] = {}
    units = Units([], [], [], [])
    folded: dict[str, str] = {}

    def fold_once(text: str) -> str:
        out = folded.get(text)
        if out is None:
            out = folded[text] = fold(text)
        return out

    for pos, item in enumerate(items):
        fields = folded_fields(item, fold_once)
        units.prompt_keys.append(prompt_key(fields))
        key = "\x1f".join(fields)
        u = index.get(key)
        if u is None:
            u = index[key] = len(units.members)
            units.members.append([])
            units.side.append(0)
            units.fields.append(tuple(f for f in fields if f))
        units.members[u].append(pos)
        units.side[u] |= 1 if pos < n_checked else 2
    return units
