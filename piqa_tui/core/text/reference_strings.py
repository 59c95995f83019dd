"""Reference strings for ``piqa-tui --check-terminal``: does this terminal draw text at our widths?

Each sample is printed, padded to one column by the width the program
computes, and followed by a ``|``.  Where the terminal agrees, the bars form a
straight column; a bar out of line shows a sample the terminal draws wider or
narrower.  One block is printed per width mode, so the user can pick the mode
(``WidthPolicy``) whose bars line up.  Lines are plain strings with no
markup, so they can go to stdout or into a Rich ``Text`` unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.text.graphemes import WidthPolicy, get_width_policy


@dataclass(frozen=True, slots=True)
class ReferenceString:
    """A sample of one script and what makes it hard to draw."""

    label: str
    text: str
    note: str


REFERENCE_STRINGS: tuple[ReferenceString, ...] = (
    ReferenceString("ascii", "abcd", "baseline: one cell per letter"),
    ReferenceString("cjk", "漢字", "baseline: two cells per ideograph"),
    ReferenceString("ta ko", "கொ", "Tamil two-part vowel sign (spacing mark)"),
    ReferenceString("ta ku", "கு", "Tamil u-sign, a spacing mark drawn inside one glyph"),
    ReferenceString("ta ksha", "க்ஷ", "Tamil ksha: pulli consonant + consonant (two clusters)"),
    ReferenceString("ta tamil", "தமிழ்", "the word Tamil"),
    ReferenceString("bn ksha", "ক্ষ", "Bengali conjunct (one cluster)"),
    ReferenceString("bn kshi", "ক্ষি", "Bengali conjunct + spacing vowel sign"),
    ReferenceString("bn bangla", "বাংলা", "the word Bangla"),
    ReferenceString("hi ki", "कि", "Devanagari spacing vowel sign drawn before its consonant"),
    ReferenceString("hi kshi", "क्षि", "Devanagari conjunct + vowel sign (one cluster)"),
    ReferenceString("hi hindi", "हिन्दी", "the word Hindi"),
    ReferenceString("ar shay", "شَاي", "Arabic with a haraka (fatha)"),
    ReferenceString("ar muhammad", "مُحَمَّد", "stacked harakat (shadda + fatha)"),
    ReferenceString("ar la", "لا", "lam-alef: one ligature glyph after shaping"),
    ReferenceString("darija mixed", "حط 2 ملاعق سكر في l'eau", "RTL with digits and a Latin word"),
)


def calibration_lines(policy: WidthPolicy | None = None, mode: BidiMode | str = BidiMode.AUTO) -> list[str]:
    """One block of the check: each sample drawn as ``mode`` draws it, then a bar at the computed width."""
    policy = policy or get_width_policy()
    drawn = [(ref, layout(ref.text, 200, mode, policy=policy)[0]) for ref in REFERENCE_STRINGS]
    label_width = max(len(ref.label) for ref in REFERENCE_STRINGS)
    column = max(line.width for _, line in drawn) + 2
    lines = [f"width mode {policy.mode!r}", f"{'':<{label_width}}  {'.' * column}|"]
    for ref, line in drawn:
        pad = " " * (column - line.width)
        lines.append(f"{ref.label:<{label_width}}  {line.text}{pad}|  {line.width:>2}  {ref.note}")
    return lines
