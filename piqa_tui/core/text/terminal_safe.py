"""Text made safe to show on a terminal: the one output sanitiser every face uses.

Dataset values, file and column names, config values and workspace contents
are data: printed raw, an ESC sequence in them can retitle the terminal, write
the clipboard (OSC 52), clear the screen or plant a link. Before any such
string reaches a terminal it goes through ``terminal_safe``, which shows every
C0/C1 control, DEL and bidi control as a visible escape (``\\x1b``,
``\\u009b``, ``\\u202e``) and leaves all other text as typed. Bidi controls
the display adapter adds for layout are added after this, so they survive.

Rich markup is a second channel: ``[/]`` in a category would be parsed as a
closing tag; ``piqa_tui.render.safe_text`` builds on this module for Rich.

``json_safe`` escapes the same characters inside JSON text with ``\\uXXXX``,
which any JSON reader decodes back to the exact value.

Two more channels: the clipboard (``clipboard_safe`` drops every control
character but tab and newline, so a copied value cannot carry an OSC 52, a
DCS passthrough or a bracketed-paste end into whatever it is pasted into),
and names that print alike (``show_invisible`` writes zero-width and other
format characters as ``<U+200B>``; ``invisible_twins`` finds the names that
differ from another only by them).

Data set inside the program's own words on one line (a question in a list
that ends ``[open]``, a reason after ``adjudicated → 2 by lead:``) goes
through ``isolated``: made terminal-safe, so none of its own bidi controls
is left to act, then wrapped in an isolate (FSI … PDI), so its direction
cannot reorder the words around it. The display adapter and terminals that do
bidi honour the isolate; the adapter draws nothing for it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from piqa_tui.core.text.characters import BIDI_CONTROLS

# C0 controls but tab and newline, DEL, the C1 range, the bidi controls, and
# the line/paragraph separators some terminals treat as line breaks.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")
_UNSAFE_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")
_CLIPBOARD_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# Characters that draw nothing but are not format characters (Cf): fillers, the combining grapheme
# joiner, Mongolian vowel separator, Khmer inherent vowels, variation selectors.
_BLANK_MARKS = "\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0\ufe00-\ufe0f\U000e0100-\U000e01ef"
_INVISIBLE_RE = re.compile(f"[{_BLANK_MARKS}\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\u00ad]")
MAX_MESSAGE_CHARS = 1000  # a one-line message longer than this is cut in the middle


def visible_escape(char: str) -> str:
    """How one unsafe character is shown: ``\\x1b`` below U+0080, ``\\u202e`` above."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def terminal_safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as a visible escape.

    ``one_line`` also escapes tab, newline and carriage return, for
    messages that must stay on one line. Lone surrogates (from JSON
    ``\\ud800``), which no terminal encoding can write, are shown the same way.
    """
    text = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE_IN_LINE if one_line else _UNSAFE
    text = pattern.sub(lambda m: visible_escape(m.group()), text)
    return _SURROGATE.sub(lambda m: visible_escape(m.group()), text)


FIRST_STRONG_ISOLATE, POP_DIRECTIONAL_ISOLATE = "\u2068", "\u2069"


def isolated(text: object) -> str:
    """Terminal-safe ``text`` on one line, wrapped in FSI … PDI: data that cannot reorder the words around it."""
    return f"{FIRST_STRONG_ISOLATE}{terminal_safe(text, one_line=True)}{POP_DIRECTIONAL_ISOLATE}"


# An isolate ``terminal_safe`` escaped (``\\u2068 … \\u2069``) holding no other escaped bidi control.
_KEPT_ISOLATE = re.compile(r"\\u2068((?:(?!\\u20(?:6[6-9]|2[a-e])).)*?)\\u2069")


def kept_isolates(safe: str) -> str:
    """``terminal_safe`` output with the isolates round values (``isolated``: made safe inside, then wrapped) put
    back, for a screen that does bidi: the value keeps its own direction ("Round <Arabic name>: 24 items" does
    not pull the 24 into the name). Only a balanced pair with no other bidi control inside is, so nothing the
    data holds can reorder the words around it."""
    return _KEPT_ISOLATE.sub(f"{FIRST_STRONG_ISOLATE}\\1{POP_DIRECTIONAL_ISOLATE}", safe)


def message_line(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A one-line, terminal-safe message, cut in the middle when longer than ``limit``."""
    line = terminal_safe(text, one_line=True)
    if len(line) <= limit:
        return line
    half = limit // 2
    return f"{line[:half]} … ({len(line) - 2 * half:,} characters left out) … {line[-half:]}"


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a marker naming how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters not shown)"


def json_safe(json_text: str) -> str:
    """JSON text with DEL, C1, bidi controls and lone surrogates written as ``\\uXXXX`` escapes.

    ``json.dumps(..., ensure_ascii=False)`` already escapes C0; these others
    can only occur inside strings, where ``\\uXXXX`` stands for the same value.
    """
    escaped = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)


def clipboard_safe(text: str) -> tuple[str, list[str]]:
    """``text`` without its control characters (tab and newline kept) and lone surrogates, and what was dropped.

    What goes to the clipboard is pasted into shells and editors: an ESC there
    can end a bracketed paste and run what follows, so controls are removed,
    never escaped into look-alike text. The dropped characters come back (as
    ``U+001B``…, each once) so the caller can say what was left out.
    """
    dropped = sorted(set(_CLIPBOARD_UNSAFE.findall(text)))
    return _CLIPBOARD_UNSAFE.sub("", text), [f"U+{ord(c):04X}" for c in dropped]


def is_invisible(char: str) -> bool:
    """Whether ``char`` draws nothing: a format character (zero-width space, joiners, bidi controls, tags…)."""
    return unicodedata.category(char) == "Cf" or bool(_INVISIBLE_RE.fullmatch(char))


def show_invisible(text: object) -> str:
    """Terminal-safe ``text`` with every invisible character written as ``<U+200B>``: a name as it really is."""
    text = text if isinstance(text, str) else str(text)
    shown = "".join(f"<U+{ord(c):04X}>" if is_invisible(c) else c for c in text)
    return terminal_safe(shown, one_line=True)


def without_invisible(text: str) -> str:
    """``text`` as it prints: its invisible characters left out."""
    return "".join(c for c in text if not is_invisible(c))


def invisible_twins(names: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of distinct names that print alike: they differ only by invisible characters (``se\u200blma``
    and ``selma``). Each pair is (the first name seen, the other), in the order given."""
    first: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    for name in dict.fromkeys(names):
        key = without_invisible(name)
        if key in first:
            pairs.append((first[key], name))
        else:
            first[key] = name
    return pairs


def twins_line(pairs: list[tuple[str, str]], what: str = "annotators") -> str:
    """One warning line naming every pair of look-alike names, their invisible characters made visible."""
    shown = "; ".join(f"{show_invisible(a)} and {show_invisible(b)}" for a, b in pairs)
    return message_line(f"{what} that print alike but differ by invisible characters: {shown}")
