"""Teach Rich and Textual the one cell-width function piqa-tui lays text out with.

Rich measures text one code point at a time from its own tables, in which a
spacing vowel sign (Unicode category Mc, e.g. Tamil "ொ", Bengali "া") takes no
cell; xterm, VTE, Konsole and tmux give it one. Textual pads and crops every
line with Rich's numbers, so a Tamil or Bengali row would push the rest of the
screen sideways by the difference. ``install`` points Rich's measuring
functions at ``core.graphemes`` (grapheme clusters under the active
``WidthPolicy``), so the text layer, Rich, Textual and — once the user picked
the right policy on the calibration screen — the terminal all agree.

This replaces private functions of ``rich.cells`` and ``rich.segment``; the
test suite checks the patched names still exist, so a Rich upgrade that moves
them fails loudly instead of drawing crooked screens.
"""

from __future__ import annotations

from functools import lru_cache

import rich.cells
import rich.segment
from rich.segment import Segment

from piqa_tui.core.text.graphemes import (
    WidthPolicy,
    cell_width,
    get_width_policy,
    grapheme_spans,
    set_width_policy,
)

_installed = False
_originals: dict[tuple[object, str], object] = {}


def _cell_len(text: str, unicode_version: str = "auto") -> int:
    return cell_width(text)


@lru_cache(maxsize=4096)
def _character_cell_size(character: str, unicode_version: str = "auto") -> int:
    return cell_width(character)


def _split_graphemes(text: str, unicode_version: str = "auto") -> tuple[list[tuple[int, int, int]], int]:
    policy = get_width_policy()
    spans = [(start, end, policy.cluster_width(text[start:end])) for start, end in grapheme_spans(text)]
    return spans, sum(width for _, _, width in spans)


@lru_cache(1024 * 16)
def _split_segment(segment: Segment, cut: int) -> tuple[Segment, Segment]:
    """Split a segment at a cell offset between grapheme clusters (never inside one).

    A cut through a wide cluster turns it into spaces on both sides, as Rich
    does for a cut through a CJK character, so the line keeps its width.
    """
    text, style, control = segment
    spans, total = _split_graphemes(text)
    if cut >= total:
        return segment, Segment("", style, control)
    used = 0
    for start, end, width in spans:
        if used == cut:
            return Segment(text[:start], style, control), Segment(text[start:], style, control)
        if used + width > cut:
            left, right = cut - used, used + width - cut
            return (
                Segment(text[:start] + " " * left, style, control),
                Segment(" " * right + text[end:], style, control),
            )
        used += width
    return segment, Segment("", style, control)


def _segment_split_cells(cls: type[Segment], segment: Segment, cut: int) -> tuple[Segment, Segment]:
    return _split_segment(segment, cut)


def install(policy: WidthPolicy | None = None) -> None:
    """Make Rich (and so Textual) measure text with ``core.graphemes``; optionally set the policy first."""
    global _installed
    if policy is not None:
        set_width_policy(policy)
    if not _installed:
        import textual._wrap
        import textual.widgets._input

        replacements: list[tuple[object, str, object]] = [
            (rich.cells, "_cell_len", _cell_len),
            (rich.cells, "split_graphemes", _split_graphemes),
            (rich.cells, "get_character_cell_size", _character_cell_size),
            (rich.segment, "get_character_cell_size", _character_cell_size),
            (textual._wrap, "get_character_cell_size", _character_cell_size),
            (textual.widgets._input, "get_character_cell_size", _character_cell_size),
            (Segment, "_split_cells", classmethod(_segment_split_cells)),
        ]
        for owner, name, replacement in replacements:
            _originals[(owner, name)] = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            setattr(owner, name, replacement)
        _installed = True
    clear_caches()


def uninstall() -> None:
    """Give Rich its own measuring functions back (tests that must not leak the patch)."""
    global _installed
    for (owner, name), original in _originals.items():
        setattr(owner, name, original)
    _originals.clear()
    _installed = False
    clear_caches()


def set_policy(policy: WidthPolicy) -> None:
    """Switch the width policy everywhere (the calibration screen's choice takes effect at once)."""
    install(policy)


def clear_caches() -> None:
    """Forget widths measured under an earlier policy."""
    rich.cells.cached_cell_len.cache_clear()
    _character_cell_size.cache_clear()
    _split_segment.cache_clear()
