"""How a label column spells its labels: 0-based or 1-based numbers, or letters.

Labels are read into 0-based indices and written back in the column's own
spelling, so an unmodified dataset exports exactly as it came in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from piqa_tui.core.errors import InputError

LATIN_LETTERS = "ABCD"
ARABIC_LETTERS = "أبجد"
# ASCII digits only: "١" (Arabic-Indic one) or "１" (fullwidth one) are reported, never read as 1.
# More than six digits is no solution number (and float() of 5,000 digits is infinity).
_INTEGER = re.compile(r"^\s*(-?[0-9]{1,6})(\.0+)?\s*$", re.ASCII)
# The same bound for numbers stored as numbers (JSON, Parquet): 99999999999999999999, 1e300 or UInt64's
# maximum is no solution number, and would overflow the agreement tables' 64-bit arrays downstream.
LARGEST_LABEL = 999_999
LABEL_BASES = (0, 1)


@dataclass(frozen=True)
class LabelCodec:
    """``kind`` is 'number' (with ``base`` 0 or 1) or 'letter' (with ``letters``)."""

    kind: str = "number"
    base: int = 0
    letters: str = LATIN_LETTERS
    lower: bool = False

    def decode(self, raw: object) -> int | None:
        """The 0-based index for a raw value, None when empty; raises ValueError when unreadable."""
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return None
        if isinstance(raw, bool):
            raise ValueError(raw)
        if self.kind == "letter":
            text = str(raw).strip().upper()
            if len(text) == 1 and text in self.letters:
                return self.letters.index(text)
            raise ValueError(raw)
        if isinstance(raw, (int, float)):
            if not (isinstance(raw, int) or raw.is_integer()) or abs(raw) > LARGEST_LABEL:
                raise ValueError(raw)
            return int(raw) - self.base
        match = _INTEGER.match(str(raw))
        if match:
            return int(match.group(1)) - self.base
        raise ValueError(raw)

    def encode(self, index: int | None, like: object = "") -> object:
        """The raw value for ``index``, typed like the value it replaces (int stays int)."""
        if index is None:
            return None if like is None or isinstance(like, (int, float)) else ""
        if self.kind == "letter":
            letter = self.letters[index] if 0 <= index < len(self.letters) else str(index)
            return letter.lower() if self.lower else letter
        value = index + self.base
        if isinstance(like, (int, float)) and not isinstance(like, bool):
            return value
        return str(value)


def _choose_codec(texts: set[str], base: int) -> LabelCodec:
    """The spelling of a label column, from its distinct non-empty values (stripped)."""
    if texts and all(len(t) == 1 and t.upper() in LATIN_LETTERS for t in texts):
        return LabelCodec("letter", letters=LATIN_LETTERS, lower=all(t.islower() for t in texts))
    if texts and all(t in ARABIC_LETTERS for t in texts):
        return LabelCodec("letter", letters=ARABIC_LETTERS)
    return LabelCodec("number", base=base)


def detect_codec(values: list[object], base: int, where: str) -> tuple[LabelCodec, list[int | None]]:
    """The codec that reads every value and the decoded labels, or InputError naming the rows that fail.

    A label column holds a handful of distinct values: each is decoded once.
    """
    if base not in LABEL_BASES:  # a stored or mapped base of 2 or 10**30 would shift every label
        raise InputError(f"{where}: label_base must be 0 or 1, not {_shown(base)}; map the labels again")
    if set(map(type, values)) <= {str, type(None)}:  # text files: every value is text (or missing)
        distinct = set(values)
        codec = _choose_codec({t for v in distinct if isinstance(v, str) and (t := v.strip())}, base)
        lookup: dict[object, int | None] = {None: None}
        unreadable = set()
        for value in distinct - {None}:
            try:
                lookup[value] = codec.decode(value)
            except ValueError:
                unreadable.add(value)
        if not unreadable:
            return codec, list(map(lookup.__getitem__, values))
        _fail(where, [(row, v) for row, v in enumerate(values) if v in unreadable])
    present = [(i, v) for i, v in enumerate(values) if v is not None and str(v).strip() != ""]
    codec = _choose_codec({str(v).strip() for _, v in present}, base)
    decoded: list[int | None] = [None] * len(values)
    bad = []
    seen: dict[object, int | None] = {}
    for row, value in present:
        try:
            key = (type(value), value)
            if key in seen:
                decoded[row] = seen[key]
                continue
        except TypeError:  # a JSON list or object: never a label
            bad.append((row, value))
            continue
        try:
            decoded[row] = seen[key] = codec.decode(value)
        except ValueError:
            bad.append((row, value))
    if bad:
        _fail(where, bad)
    return codec, decoded


def _fail(where: str, bad: list[tuple[int, object]]) -> None:
    shown = ", ".join(f"row {row + 1} ({_shown(value)})" for row, value in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    digits = any(_non_ascii_digit(value) for _, value in bad)
    hint = " (digits such as ١ or １ are not ASCII digits: write 0-9)" if digits else ""
    if not hint and any(_too_large(value) for _, value in bad):
        hint = f" (a solution number is at most {LARGEST_LABEL:,})"
    raise InputError(
        f"{where}: the label column has values that are not labels: {shown}{more}{hint}; "
        "labels must be solution numbers (0-based, or 1-based with --map label_base=1) or letters A-D"
    )


def _shown(value: object, limit: int = 24) -> str:
    """A bad label as shown in a message, cut when long (a 5,000-digit number)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _too_large(value: object) -> bool:
    """A number (stored as one, or as digits) beyond any solution number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return not abs(value) <= LARGEST_LABEL  # NaN too
    return bool(re.fullmatch(r"\s*-?[0-9]{7,}(\.0+)?\s*", str(value), re.ASCII))


def _non_ascii_digit(value: object) -> bool:
    return any(ch.isdecimal() and not ch.isascii() for ch in str(value))
