"""Facts about stored text: normalisation, invisible characters, words, scripts.

Everything here reads logical (stored) text; display transforms live in
``bidi`` and ``graphemes`` and never come back here.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

# Bidi embedding/override/isolate controls and marks, zero-width characters and
# the BOM: invisible in most editors, they break search, dedup and tokenisation.
# ZWJ/ZWNJ are legitimate inside Indic and Persian words, so they are reported
# only at the start or end of a word (see ``stray_controls``).
BIDI_CONTROLS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
ZERO_WIDTH = "\u200b\u2060\ufeff\u00ad"
JOINERS = "\u200c\u200d"
INVISIBLE = BIDI_CONTROLS + ZERO_WIDTH + JOINERS  # every invisible character above: what search and dedup ignore
# C0 controls (ESC among them) other than tab, newline and carriage return, DEL and C1:
# never text, and on a terminal they are commands.
TERMINAL_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_STRAY = re.compile(f"[{BIDI_CONTROLS}{ZERO_WIDTH}{TERMINAL_CONTROLS}]|(?:^|(?<=\\s))[{JOINERS}]|[{JOINERS}](?=\\s|$)")
_WORD_EDGE_PUNCT = "\"'“”‘’«»()[]{}.,;:!?؟،؛…-–—"

# Unicode blocks of the scripts our users write in. Checked with one regex per
# script over a whole text, which keeps per-character Python loops out of stats.
SCRIPTS: dict[str, str] = {
    "Arabic": "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff",
    "Latin": "A-Za-z\u00c0-\u024f\u1e00-\u1eff",
    # U+0964/U+0965 (danda, double danda) end sentences in Bengali, Gurmukhi, Oriya…
    # too: they are Common script, so they do not make a Bengali text "Devanagari".
    "Devanagari": "\u0900-\u0963\u0966-\u097f\ua8e0-\ua8ff",
    "Bengali": "\u0980-\u09ff",
    "Gurmukhi": "\u0a00-\u0a7f",
    "Gujarati": "\u0a80-\u0aff",
    "Oriya": "\u0b00-\u0b7f",
    "Tamil": "\u0b80-\u0bff",
    "Telugu": "\u0c00-\u0c7f",
    "Kannada": "\u0c80-\u0cff",
    "Malayalam": "\u0d00-\u0d7f",
    "Sinhala": "\u0d80-\u0dff",
    "Hebrew": "\u0590-\u05ff",
    "Cyrillic": "\u0400-\u04ff",
    "Greek": "\u0370-\u03ff",
    "Ethiopic": "\u1200-\u137f",
    "Thai": "\u0e00-\u0e7f",
    "Han": "\u4e00-\u9fff",
}
_SCRIPT_RES = {name: re.compile(f"[{ranges}]") for name, ranges in SCRIPTS.items()}


def nfc(text: str) -> str:
    """The NFC form in which all text is stored."""
    return unicodedata.normalize("NFC", text)


def is_typeable(text: str) -> bool:
    """True when a key's text may enter a field: anything but control characters and lone surrogates
    (format characters such as ZWNJ/ZWJ, bidi marks and combining marks are text a script needs)."""
    return bool(text) and not any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


def is_nfc(text: str) -> bool:
    return unicodedata.is_normalized("NFC", text)


# Any character ``_STRAY`` could match: one character class, which scans a 10 MB field
# in milliseconds where the joiner context (lookbehind) takes a second.
_STRAY_CANDIDATE = re.compile(f"[{BIDI_CONTROLS}{ZERO_WIDTH}{TERMINAL_CONTROLS}{JOINERS}]")


def stray_controls(text: str) -> list[str]:
    """Invisible control characters that do not belong in stored text, as U+XXXX names."""
    if _STRAY_CANDIDATE.search(text) is None:
        return []
    return [f"U+{ord(m.group()):04X}" for m in _STRAY.finditer(text)]


def has_stray_controls(text: str) -> bool:
    return _STRAY_CANDIDATE.search(text) is not None and _STRAY.search(text) is not None


def words(text: str) -> list[str]:
    """Whitespace-separated words: the unit in which minimal pairs differ."""
    return text.split()


def word_key(word: str) -> str:
    """A word with surrounding punctuation removed and case folded, for comparing words."""
    return word.strip(_WORD_EDGE_PUNCT).casefold() or word


@lru_cache(maxsize=1 << 18)
def dominant_script(text: str) -> str | None:
    """The script with the most letters in ``text`` (None for text without letters).

    Dedup uses it to tell a translation (two scripts) from a paraphrase, and to
    warn when an embedding model was not trained on the data's scripts; one
    scan asks up to three times per item (3.4 s per 100,000 items each time),
    hence the cache.
    """
    counts = Counter({name: len(rx.findall(text)) for name, rx in _SCRIPT_RES.items()})
    name, count = counts.most_common(1)[0]
    return name if count else None
