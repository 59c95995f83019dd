"""The bidi display adapter: turns logical text into lines a terminal draws correctly.

Text is stored and edited in logical order; only this module produces what
is drawn, and everything it returns carries the logical source (``.logical``,
``.start``/``.end``) so copy, search and edits never see display forms.

Modes (``--bidi``):

* ``app``: the program does bidi.  Each paragraph is wrapped in LOGICAL order
  first (``graphemes.wrap_spans``), then every line is shaped (Arabic
  presentation forms from arabic-reshaper, harakat kept) and reordered for
  display (UAX #9 levels, rules L1, L2 and L4), so a wrapped RTL paragraph
  reads top to bottom and right to left.  RTL paragraphs are right-aligned.
* ``terminal``: the terminal does bidi and shaping (Konsole, VTE/GNOME
  Terminal >= 0.58, mlterm): lines are wrapped and aligned, text stays logical.
* ``off``: no bidi at all: wrapped logical text, left-aligned.
* ``auto``: ``terminal`` for the terminals above, else ``app`` (``bidi_mode.detect_mode``).

Reordering works on display units, not code points: a unit is one grapheme
cluster (two for a lam-alef ligature), so a haraka or vowel sign always stays
after its base in the output (a terminal attaches a combining mark to the cell
before it; reversing code points would move it onto the wrong letter).
python-bidi's ``get_display`` only returns a string, so we take the resolved
embedding levels from it and apply rules L1, L2 and L4 here, to units that
remember their logical span: that is what lets highlights of logical spans
survive reordering.  The levels come from its Rust engine (unicode-bidi, UAX
#9 with isolates and bracket pairs, so "ديرها f (l'eau chaude)" keeps its
parentheses around the French), read from the level dump ``get_display(...,
debug=True)`` returns, since the wrapper has no level API.  The dump is
checked (one level per UTF-8 byte); should its format ever change, the levels
come from python-bidi's older pure-Python engine instead (``bidi.algorithm``:
no isolates, no bracket pairing, otherwise the same results).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from arabic_reshaper import ArabicReshaper
from arabic_reshaper.ligatures import LIGATURES
from bidi import algorithm as uba
from bidi import get_display
from bidi.mirror import MIRRORED
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.style import Style, StyleType
from rich.text import Text

from piqa_tui.core.text.bidi_mode import BidiMode, resolve_mode, screen_mode
from piqa_tui.core.text.characters import BIDI_CONTROLS, JOINERS
from piqa_tui.core.text.direction import Direction, is_rtl
from piqa_tui.core.text.graphemes import (
    WidthPolicy,
    cell_width,
    get_width_policy,
    grapheme_spans,
    paragraph_spans,
    wrap_spans,
)

Align = Literal["left", "right"]
Highlight = tuple[int, int, StyleType]

ELLIPSIS = "…"
MAX_DISPLAY_CHARS = 10_000  # a longer field is drawn up to here, then a marker
_BIDI_CONTROLS = frozenset(BIDI_CONTROLS)
_JOINERS = frozenset(JOINERS)
# Text the adapter must see: right-to-left letters, bidi and other controls, line breaks.
# Anything else (Latin, Indic, CJK) is drawn as it is stored, only cut to fit.
_NEEDS_LAYOUT = re.compile(f"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe{BIDI_CONTROLS}\x00-\x1f\x7f-\x9f\u2028\u2029]")
_TRAILING_KINDS = frozenset({"WS", "BN", "LRI", "RLI", "FSI", "PDI"})  # reset by UAX #9 rule L1


@dataclass(frozen=True, slots=True)
class VisualUnit:
    """One drawn piece (a cluster, or a ligature of two) and the logical span it shows."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class DisplayLine:
    """One screen line: ``text`` is drawn left to right; ``logical`` is what it shows, as stored.

    ``start``/``end`` index the source string given to ``layout``; ``units``
    are in visual order, each with its logical span.
    """

    text: str
    align: Align
    logical: str
    start: int
    end: int
    width: int
    units: tuple[VisualUnit, ...]
    rtl: bool


def needs_layout(text: str) -> bool:
    """Whether drawing ``text`` needs :func:`layout`; when not, reordering would change nothing and cutting suffices."""
    return _NEEDS_LAYOUT.search(text) is not None


# --- levels ----------------------------------------------------------------


_LEVEL = re.compile(r"Level\(\s*(\d+),?\s*\)")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _embedding_levels(paragraph: str, base_level: int) -> list[int]:
    """Resolved UBA level (rules up to I2) of every character of one paragraph."""
    if not paragraph:
        return []
    # A lone surrogate (a file name that is not UTF-8) cannot reach the Rust engine; U+FFFD is as neutral.
    paragraph = _LONE_SURROGATE.sub("\ufffd", paragraph)
    return _unicode_bidi_levels(paragraph, base_level) or _python_bidi_levels(paragraph, base_level)


def _unicode_bidi_levels(paragraph: str, base_level: int) -> list[int] | None:
    """Levels from python-bidi's Rust engine, read from its debug dump; ``None`` if unreadable."""
    dump = str(get_display(paragraph, base_dir="LR"[base_level], debug=True))
    start = dump.rfind("\n    levels: [")  # an escaped text field cannot hold a real newline
    end = dump.find("\n    ],", start)
    if start < 0 or end < 0:
        return None
    per_byte = [int(level) for level in _LEVEL.findall(dump, start, end)]
    if len(per_byte) != len(paragraph.encode("utf-8")):
        return None
    levels: list[int] = []
    offset = 0
    for ch in paragraph:
        levels.append(per_byte[offset])
        offset += len(ch.encode("utf-8"))
    return levels


def _python_bidi_levels(paragraph: str, base_level: int) -> list[int]:
    """Levels from python-bidi's pure-Python engine (UAX #9 without isolates and rule N0)."""
    storage = uba.get_empty_storage()
    storage["base_level"] = base_level
    storage["base_dir"] = ("L", "R")[base_level]
    uba.get_embedding_levels(paragraph, storage)
    for index, char in enumerate(storage["chars"]):
        char["index"] = index  # survives X9, which drops embedding controls and BN
    uba.explicit_embed_and_overrides(storage)
    uba.resolve_weak_types(storage)
    uba.resolve_neutral_types(storage, False)
    uba.resolve_implicit_levels(storage, False)
    levels: list[int | None] = [None] * len(paragraph)
    for char in storage["chars"]:
        levels[char["index"]] = char["level"]
    resolved: list[int] = []
    for level in levels:  # X9-removed characters take their neighbour's level
        resolved.append(level if level is not None else (resolved[-1] if resolved else base_level))
    return resolved


def _reorder(units: list[VisualUnit], levels: list[int], kinds: list[str], base_level: int) -> list[VisualUnit]:
    """Units of one line in visual order: UAX #9 L1 (trailing whitespace) and L2 (reversal)."""
    levels = list(levels)
    at_end = True
    for i in range(len(units) - 1, -1, -1):
        if kinds[i] in ("S", "B"):
            levels[i], at_end = base_level, True
        elif at_end and kinds[i] in _TRAILING_KINDS:
            levels[i] = base_level
        else:
            at_end = False
    order = list(range(len(units)))
    odd = [lv for lv in levels if lv % 2]
    if not odd:
        return units
    for level in range(max(levels), min(odd) - 1, -1):
        i = 0
        while i < len(order):
            if levels[order[i]] >= level:
                j = i
                while j < len(order) and levels[order[j]] >= level:
                    j += 1
                order[i:j] = order[i:j][::-1]
                i = j
            else:
                i += 1
    return [_mirror(units[k]) if levels[k] % 2 else units[k] for k in order]


def _mirror(unit: VisualUnit) -> VisualUnit:
    """A unit drawn right-to-left, with brackets and the like mirrored (UAX #9 L4)."""
    if not any(unicodedata.mirrored(c) for c in unit.text):
        return unit
    text = "".join(MIRRORED.get(c, c) if unicodedata.mirrored(c) else c for c in unit.text)
    return VisualUnit(unit.start, unit.end, text)


# --- Arabic shaping ----------------------------------------------------------


_reshaper = ArabicReshaper(configuration={"delete_harakat": False, "ARABIC LIGATURE ALLAH": False})
_LIGATURE_LETTERS = {
    glyph: pattern
    for name, (pattern, forms) in LIGATURES
    if _reshaper.configuration.getboolean(name) and pattern.isalpha()
    for glyph in forms
    if glyph
}


def _shape(line: str) -> list[str | None] | None:
    """Per logical character, what it becomes after Arabic shaping.

    arabic-reshaper only returns a string, so its output is aligned back to
    the input: letters become one of their forms; a lam-alef ligature takes
    the lam's place and the alef becomes ``None`` (absorbed into the cluster
    before it); a dropped tatweel becomes ''.  The whole result is ``None`` when
    the output cannot be aligned; the line is then shown unshaped.
    """
    if not any(c in _reshaper.letters for c in line):
        return list(line)
    try:
        shaped = _reshaper.reshape(line)
    except Exception:  # arabic-reshaper mis-indexes some joiner/ligature mixes; show unshaped
        return None
    pieces: list[str | None] = []
    absorb = ""  # letters of a ligature still to be matched, harakat skipped
    j = 0
    for ch in line:
        glyph = shaped[j] if j < len(shaped) else ""
        if absorb and ch == absorb[0]:
            pieces.append(None)
            absorb = absorb[1:]
        elif glyph and (glyph == ch or glyph in _reshaper.letters.get(ch, ())):
            pieces.append(glyph)
            j += 1
        elif glyph in _LIGATURE_LETTERS and _LIGATURE_LETTERS[glyph][0] == ch:
            pieces.append(glyph)
            absorb = _LIGATURE_LETTERS[glyph][1:]
            j += 1
        elif ch in _JOINERS:  # dropped by the reshaper; kept so cluster widths do not change
            pieces.append(ch)
        elif ch == "\u0640":
            pieces.append("")
        else:
            return None
    return pieces if j == len(shaped) and not absorb else None


# --- units -----------------------------------------------------------------


def _drawable(ch: str, mode: BidiMode) -> str:
    """What the terminal is sent for one character: tabs as a space, bidi controls dropped in ``app`` mode.

    Other control characters (ESC, BEL, C1) are data, never commands: they are
    drawn as their one-cell Unicode control picture (␛), so a curator sees them.
    """
    if ch == "\t":
        return " "
    if not ch or ch in "\r\n" or (mode is BidiMode.APP and ch in _BIDI_CONTROLS):
        return ""
    if unicodedata.category(ch) == "Cc":
        return _control_picture(ch)
    return ch


def _control_picture(ch: str) -> str:
    """U+2400 + code for C0 (␛ for ESC), ␡ for DEL, the replacement character for C1."""
    code = ord(ch)
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def _line_units(source: str, start: int, end: int, mode: BidiMode) -> list[VisualUnit]:
    """The line ``source[start:end]`` as display units in logical order (shaped in ``app`` mode)."""
    line = source[start:end]
    pieces = (_shape(line) if mode is BidiMode.APP else None) or list(line)
    units: list[VisualUnit] = []
    for c_start, c_end in grapheme_spans(line):
        text = "".join(_drawable(p, mode) for p in pieces[c_start:c_end] if p is not None)
        if pieces[c_start] is None and units:  # the alef of a lam-alef ligature
            units[-1] = VisualUnit(units[-1].start, start + c_end, units[-1].text + text)
        else:
            units.append(VisualUnit(start + c_start, start + c_end, text))
    return units


@dataclass(frozen=True, slots=True)
class _Paragraph:
    """Where a paragraph starts in the source, its base level and its characters' levels."""

    start: int
    base_level: int
    levels: tuple[int, ...]

    def level(self, index: int) -> int:
        """Resolved level of ``source[index]`` (the base level outside ``app`` mode)."""
        return self.levels[index - self.start] if self.levels else self.base_level


def _visual_line(
    source: str,
    start: int,
    end: int,
    para: _Paragraph,
    mode: BidiMode,
    policy: WidthPolicy,
    ellipsis: bool = False,
) -> DisplayLine:
    """One wrapped logical line turned into a ``DisplayLine`` for ``mode``."""
    base_level = para.base_level
    units = _line_units(source, start, end, mode)
    unit_levels = [para.level(u.start) for u in units]
    if ellipsis:
        units.append(VisualUnit(end, end, ELLIPSIS))
        unit_levels.append(base_level)
    if mode is BidiMode.APP:
        kinds = [unicodedata.bidirectional(source[u.start]) if u.end > u.start else "ON" for u in units]
        units = _reorder(units, unit_levels, kinds, base_level)
    rtl = base_level == 1 and mode is not BidiMode.OFF
    return DisplayLine(
        text="".join(u.text for u in units),
        align="right" if rtl else "left",
        logical=source[start:end],
        start=start,
        end=end,
        width=sum(cell_width(u.text, policy) for u in units),
        units=tuple(units),
        rtl=rtl,
    )


@lru_cache(maxsize=4096)
def _layout(
    text: str, width: int, mode: BidiMode, policy: WidthPolicy, max_lines: int | None, direction: Direction
) -> tuple[DisplayLine, ...]:
    """Cached body of ``layout`` (rows are re-rendered often while scrolling)."""
    lines: list[tuple[int, int, _Paragraph]] = []
    for p_start, p_end in paragraph_spans(text):
        paragraph = text[p_start:p_end]
        base_level = 1 if is_rtl(paragraph, direction) else 0
        levels = _embedding_levels(paragraph, base_level) if mode is BidiMode.APP else []
        para = _Paragraph(p_start, base_level, tuple(levels))
        lines.extend((p_start + a, p_start + b, para) for a, b in wrap_spans(paragraph, width, policy))
    cut = max_lines is not None and len(lines) > max_lines
    if cut:
        lines = lines[: max(1, max_lines or 0)]
        start, end, para = lines[-1]
        room = width - cell_width(ELLIPSIS, policy)
        while end > start and cell_width(text[start:end], policy) > room:
            end = start + grapheme_spans(text[start:end])[-1][0]  # drop the last cluster
        lines[-1] = (start, end, para)
    last = len(lines) - 1
    return tuple(
        _visual_line(text, start, end, para, mode, policy, ellipsis=cut and i == last)
        for i, (start, end, para) in enumerate(lines)
    )


def layout(
    text: str,
    width: int,
    mode: BidiMode | str = BidiMode.AUTO,
    *,
    policy: WidthPolicy | None = None,
    max_lines: int | None = None,
    direction: Direction | str = Direction.AUTO,
) -> list[DisplayLine]:
    """``text`` (logical) laid out in lines of at most ``width`` cells, ready to draw.

    Wraps first, in logical order, then shapes and reorders each line (``app``
    mode).  Each paragraph's direction is ``direction``, or detected from its
    strong characters under ``auto``; it decides the alignment, the order of
    the line's runs and the side of the ellipsis.  With ``max_lines``, the
    last line kept ends in an ellipsis when text was left out.  ``text``
    itself is never changed. Text longer than
    ``MAX_DISPLAY_CHARS`` is drawn up to there, then a line saying how much
    was left out: laying out a 10 MB field would freeze the screen, and
    nobody reads past the first pages on it.
    """
    width, resolved, policy = max(1, width), resolve_mode(mode), policy or get_width_policy()
    direction = Direction(direction)
    limit = MAX_DISPLAY_CHARS if max_lines is None else min(MAX_DISPLAY_CHARS, 8 * width * max_lines + 64)
    if len(text) <= limit:
        return list(_layout(text, width, resolved, policy, max_lines, direction))
    cut = text.rfind(" ", limit // 2, limit) + 1 or limit
    lines = list(_layout(text[:cut], width, resolved, policy, max_lines, direction))
    if max_lines is not None and len(lines) >= max_lines:
        return lines
    marker = f"… ({len(text) - cut:,} more characters not shown)"
    return lines + [_marker_line(line, cut) for line in _layout(marker, width, resolved, policy, None, Direction.AUTO)]


def _marker_line(line: DisplayLine, at: int) -> DisplayLine:
    """A line of the "not shown" marker, pointing at no stored text (selecting it copies nothing)."""
    units = tuple(VisualUnit(at, at, unit.text) for unit in line.units)
    return replace(line, logical="", start=at, end=at, units=units)


# --- Rich -----------------------------------------------------------------


def _as_style(style: StyleType | None) -> Style:
    """A Rich ``Style`` from a style or a style string."""
    if style is None:
        return Style()
    return Style.parse(style) if isinstance(style, str) else style


def _unit_style(unit: VisualUnit, base: StyleType | None, highlights: Sequence[Highlight]) -> Style:
    """The style of one unit: the base style plus every highlight overlapping its logical span."""
    styles = [_as_style(style) for start, end, style in highlights if start < unit.end and unit.start < end]
    return Style.combine([_as_style(base), *styles])


def rich_text(
    text: str,
    width: int,
    mode: BidiMode | str = BidiMode.AUTO,
    style: StyleType | None = None,
    *,
    highlights: Iterable[Highlight] = (),
    policy: WidthPolicy | None = None,
    max_lines: int | None = None,
    direction: Direction | str = Direction.AUTO,
) -> Text:
    """``text`` laid out for ``width`` cells as a Rich ``Text``, RTL lines padded to the right edge.

    ``highlights`` are ``(start, end, style)`` spans of LOGICAL indices into
    ``text`` (e.g. the words that differ between two solutions); each is
    applied to the units showing those characters, wherever reordering put
    them, and to a whole cluster when it covers part of one.
    """
    marks = [h for h in highlights if h[1] > h[0]]
    out = Text(no_wrap=True, overflow="ignore")
    lines = layout(text, width, mode, policy=policy, max_lines=max_lines, direction=direction)
    for n, line in enumerate(lines):
        if n:
            out.append("\n")
        if line.align == "right" and line.width < width:
            out.append(" " * (width - line.width), _as_style(style))
        for unit in line.units:
            out.append(unit.text, _unit_style(unit, style, marks))
    return out


class BidiText:
    """A Rich renderable for logical text that lays itself out at the width it is given.

    Widgets render ``BidiText(item.prompt, highlights=...)`` directly; ``.logical``
    is the stored text, for copy and search.
    """

    def __init__(
        self,
        logical: str,
        mode: BidiMode | str = BidiMode.AUTO,
        style: StyleType | None = None,
        *,
        highlights: Iterable[Highlight] = (),
        policy: WidthPolicy | None = None,
        max_lines: int | None = None,
        direction: Direction | str = Direction.AUTO,
    ) -> None:
        self.logical = logical
        self.direction = Direction(direction)
        self.mode = BidiMode(mode)
        self.style = style
        self.highlights = tuple(highlights)
        self.policy = policy
        self.max_lines = max_lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield rich_text(
            self.logical,
            options.max_width,
            self.mode,
            self.style,
            highlights=self.highlights,
            policy=self.policy,
            max_lines=self.max_lines,
            direction=self.direction,
        )

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        paragraphs = [self.logical[a:b] for a, b in paragraph_spans(self.logical)]
        widest = max(cell_width(p, self.policy) for p in paragraphs)
        longest_word = max((cell_width(w, self.policy) for p in paragraphs for w in p.split()), default=0)
        return Measurement(min(longest_word, widest), widest).clamp(max_width=options.max_width)


# --- The screen's lines -----------------------------------------------------

_PRESENTATION_FORMS = re.compile("[\ufb50-\ufdff\ufe70-\ufefe]")
_RTL_LETTERS = re.compile("[\u0590-\u08ff\ufb1d-\ufb4f]")  # what the app reorders (presentation forms aside)


def reorders(text: str, mode: BidiMode | str | None = None) -> bool:
    """Whether the screen reorders ``text``: ``app`` mode, right-to-left letters, not laid out already.

    Such text must be wrapped BEFORE it is reordered, each line on its own (UAX #9 reorders per line, after
    line breaking): a widget that wraps it must draw it with ``BidiText`` or ``on_screen(..., width=)``,
    never wrap the string ``on_screen`` returns (its first line would show the END of a long RTL sentence).
    """
    resolved = screen_mode() if mode is None else resolve_mode(mode)
    return resolved is BidiMode.APP and _RTL_LETTERS.search(text) is not None and not _PRESENTATION_FORMS.search(text)


def on_screen(text: str, mode: BidiMode | str | None = None, *, width: int | None = None) -> str:
    """``text`` (logical, terminal-safe) as the screen draws it: each line laid out by the adapter, left to right
    (the app's lines are; data isolated in them with ``isolated`` keeps its own direction), in ``mode`` or the
    screen's (``bidi_mode.screen_mode``). The one display path of the app's lines that hold data (see
    ``bidi_mode.set_screen_mode``). Unchanged outside the TUI, for text with nothing to lay out, and for text
    already laid out (it holds presentation forms: laying it out again would reverse it back).

    With ``width`` (the cells the widget draws it in), a line the app reorders (right-to-left letters, ``app``
    mode) is wrapped to ``width`` in logical order first and each piece reordered on its own, so the widget has nothing left to wrap; without
    it, each line stays one line (for widgets that cut, not wrap). Text the app does not reorder is never
    wrapped here: the widget wraps it, as before."""
    resolved = screen_mode() if mode is None else resolve_mode(mode)
    if resolved is None or not needs_layout(text) or _PRESENTATION_FORMS.search(text):
        return text
    lines = []
    for line in text.split("\n"):
        if not needs_layout(line):
            lines.append(line)
            continue
        if width is not None and resolved is BidiMode.APP and _RTL_LETTERS.search(line):
            lines.extend(piece.text for piece in layout(line, width, resolved, direction=Direction.LTR))
            continue
        room = 2 * len(line) + 8  # one display line: never wrapped here, the widget cuts or wraps it
        laid = layout(line, room, resolved, max_lines=1, direction=Direction.LTR)
        lines.append(laid[0].text if laid else "")
    return "\n".join(lines)
