"""Grapheme clusters and terminal cell widths: the units every cursor, cut and column uses.

Segmentation is Unicode's extended grapheme cluster (UAX #29) as implemented by
the ``regex`` module's ``\\X``.  Its Unicode tables include rule GB9c (Unicode
15.1+), so Devanagari, Bengali, Gujarati, Oriya, Telugu and Malayalam
consonant + virama + consonant conjuncts ("क्षि", "ক্ষ") are one cluster.  Tamil
and Kannada viramas are not conjunct linkers in Unicode, so "க்ஷ" is two
clusters, "க்" and "ஷ": that is deliberate here, because a Tamil pulli
consonant is a letter of its own (and Tamil readers expect the cursor to stop
there); we do not tailor UAX #29.  Either way no cut, cursor stop or backspace
ever separates a vowel sign, virama or haraka from its base.

Width is measured per cluster, never per code point, under one ``WidthPolicy``
(module default, settable from the terminal calibration screen), and a cluster
is never negative.  Text is only measured and sliced here, never changed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import regex
import wcwidth

WidthMode = Literal["wcwidth", "codepoint", "cluster1", "cluster2"]
WIDTH_MODES: tuple[WidthMode, ...] = ("wcwidth", "codepoint", "cluster1", "cluster2")

_CLUSTER = regex.compile(r"\X")
_VIRAMA_CCC = 9  # canonical combining class shared by every Indic virama / pulli


@dataclass(frozen=True)
class WidthPolicy:
    """How many cells the user's terminal gives a grapheme cluster.

    Terminals disagree about Indic syllables, so the mode is a setting:

    * ``"wcwidth"`` (default): ``wcwidth.wcswidth`` of the cluster, the wcwidth
      library's grapheme-aware model (a spacing vowel sign adds a cell, a
      virama conjunct is two cells).  "கொ" = 2, "कि" = 2, "के" = 1, "क्षि" = 2.
    * ``"codepoint"``: the sum of per-code-point widths with spacing marks
      (Mc) as 1 and non-spacing marks as 0, as glibc/glib ``wcwidth`` count:
      what per-code-point terminals (xterm, VTE/GNOME Terminal, Konsole,
      tmux) typically advance the cursor by.
      "ক্ষি" = 3 here (2 under ``wcwidth``).
    * ``"cluster1"``: a syllable (base + marks, conjuncts included) takes the
      cells of its base, i.e. one: terminals that draw each grapheme cluster
      in one cell.  "கொ" = 1, "ক্ষ" = 1.
    * ``"cluster2"``: a syllable with a spacing vowel sign or a virama
      conjunct takes exactly two cells, other syllables one.  "கொ" = 2,
      "क्त्र" = 2, "के" = 1.

    Non-syllable clusters (Latin, Arabic with harakat, CJK, emoji) use the
    ``wcwidth`` measure in every mode.  ``overrides`` maps an exact cluster to
    a width and wins over the mode, for a terminal that is odd about a few
    clusters only.
    """

    mode: WidthMode = "wcwidth"
    overrides: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in WIDTH_MODES:
            raise ValueError(f"unknown width mode {self.mode!r}; use one of {', '.join(WIDTH_MODES)}")

    def __hash__(self) -> int:
        return hash((self.mode, tuple(sorted(self.overrides.items()))))

    def cluster_width(self, cluster: str) -> int:
        """Cells one grapheme cluster takes under this policy (0 or more)."""
        override = self.overrides.get(cluster)
        if override is not None:
            return max(0, override)
        return _mode_width(cluster, self.mode)


_policy = WidthPolicy()


def get_width_policy() -> WidthPolicy:
    """The process-wide policy used when a function is given none."""
    return _policy


def set_width_policy(policy: WidthPolicy) -> None:
    """Set the process-wide policy (from configuration or the calibration screen)."""
    global _policy
    _policy = policy


# --- segmentation -----------------------------------------------------------


def grapheme_spans(s: str) -> list[tuple[int, int]]:
    """``(start, end)`` string indices of each grapheme cluster, in order."""
    return [m.span() for m in _CLUSTER.finditer(s)]


def graphemes(s: str) -> list[str]:
    """The grapheme clusters of ``s``, in logical order."""
    return _CLUSTER.findall(s)


def _cluster_at(s: str, index: int) -> tuple[int, int]:
    """The span of the cluster containing ``s[index]`` (``index`` in range)."""
    for start, end in grapheme_spans(s):
        if start <= index < end:
            return start, end
    raise IndexError(index)


def next_boundary(s: str, index: int) -> int:
    """The first cluster boundary after ``index`` (``len(s)`` at the end): cursor right."""
    if index >= len(s):
        return len(s)
    return _cluster_at(s, max(index, 0))[1]


def previous_boundary(s: str, index: int) -> int:
    """The last cluster boundary before ``index`` (0 at the start): cursor left."""
    if index <= 0:
        return 0
    return _cluster_at(s, min(index, len(s)) - 1)[0]


def snap_to_boundary(s: str, index: int) -> int:
    """``index`` moved back to the start of its cluster when it falls inside one."""
    if index <= 0 or index >= len(s):
        return max(0, min(index, len(s)))
    return _cluster_at(s, index)[0]


def _is_mark(ch: str) -> bool:
    """A combining mark: vowel sign, virama/pulli, nukta, haraka, shadda (Mn, Mc, Me)."""
    return unicodedata.category(ch) in ("Mn", "Mc", "Me")


def _last_code_point_goes(cluster: str) -> bool:
    """True when Backspace should take only the last code point of ``cluster``.

    That is what the platforms' text fields do in a syllable (a letter with
    marks): the last vowel sign, virama, nukta or haraka goes first, and in a
    virama conjunct ("দ্ধ") the last consonant goes first, leaving "দ্".  A
    cluster that does not start with a letter (an emoji with a variation
    selector or skin tone, a flag) always goes whole.
    """
    if len(cluster) < 2 or not unicodedata.category(cluster[0]).startswith("L"):
        return False
    last, before = cluster[-1], cluster[-2]
    if _is_mark(last):
        return True
    linked = unicodedata.combining(before) == _VIRAMA_CCC or (
        before == "\u200d" and len(cluster) > 2 and unicodedata.combining(cluster[-3]) == _VIRAMA_CCC
    )
    return linked and unicodedata.category(last).startswith("L")


def backspace(s: str, index: int) -> tuple[str, int]:
    """Backspace at ``index``: returns (new text, new index).

    Removes the last code point of the cluster before ``index`` when
    ``_last_code_point_goes`` says so, else the whole cluster.  If taking one
    code point would leave the cursor inside a cluster (the shortened
    "ক্" joining the consonant after it), or ``index`` falls inside a
    cluster, the whole cluster goes: the cursor never stops inside one and no
    lone vowel sign, virama or haraka is left behind.
    """
    if index <= 0 or not s:
        return s, max(0, min(index, len(s)))
    start, end = _cluster_at(s, min(index, len(s)) - 1)
    if end == index and _last_code_point_goes(s[start:end]):
        shorter = s[: end - 1] + s[end:]
        if snap_to_boundary(shorter, end - 1) == end - 1:
            return shorter, end - 1
    return s[:start] + s[end:], start


def delete_grapheme_after(s: str, index: int) -> tuple[str, int]:
    """Delete key: remove the whole cluster at ``index``; returns (new text, new index)."""
    if index >= len(s):
        return s, len(s)
    start, end = _cluster_at(s, max(index, 0))
    return s[:start] + s[end:], start


# --- width ------------------------------------------------------------------


def _is_syllable(cluster: str) -> bool:
    """True for a letter followed by combining marks (an Indic syllable, "é", "شَ"), not emoji."""
    return (
        len(cluster) > 1
        and unicodedata.category(cluster[0]).startswith("L")
        and unicodedata.category(cluster[1]) in ("Mn", "Mc")
    )


def _has_spacing_part(cluster: str) -> bool:
    """True when a syllable has a spacing vowel sign or a virama joining two consonants."""
    for i, ch in enumerate(cluster):
        if unicodedata.category(ch) == "Mc":
            return True
        if unicodedata.combining(ch) == _VIRAMA_CCC and i + 1 < len(cluster):
            if unicodedata.category(cluster[i + 1]) == "Lo":
                return True
    return False


def _codepoint_width(ch: str) -> int:
    """glibc-style width of one code point: Mc 1, other marks and controls 0, tab 1."""
    if ch == "\t" or unicodedata.category(ch) == "Mc":  # the display shows a tab as one space
        return 1
    return max(0, wcwidth.wcwidth(ch))


@lru_cache(maxsize=65536)
def _mode_width(cluster: str, mode: WidthMode) -> int:
    """Width of one cluster under a mode, cached (clusters repeat a lot)."""
    measured = wcwidth.wcswidth(cluster)
    if measured < 0:  # a control character inside: count only what is printable
        measured = sum(_codepoint_width(ch) for ch in cluster)
    if mode == "wcwidth" or not _is_syllable(cluster):
        return max(0, measured)
    base = _codepoint_width(cluster[0])
    if mode == "codepoint":
        return sum(_codepoint_width(ch) for ch in cluster)
    if mode == "cluster2" and _has_spacing_part(cluster):
        return max(2, base)
    return base


def cell_width(s: str, policy: WidthPolicy | None = None) -> int:
    """Cells ``s`` takes in the terminal: the one width function all layout uses.

    Controls count 0, except a tab, which counts 1 because the display shows
    it as one space.
    """
    if s.isascii() and s.isprintable():
        return len(s)
    policy = policy or _policy
    return sum(policy.cluster_width(c) for c in graphemes(s))


# --- fitting text into cells -----------------------------------------------


def truncate(s: str, width: int, ellipsis: str = "…", policy: WidthPolicy | None = None) -> str:
    """``s`` cut at a cluster boundary to fit ``width`` cells, ending in ``ellipsis`` when cut."""
    policy = policy or _policy
    # No cluster is narrower than an eighth of a cell in practice: a 10 MB field is not measured whole
    # to draw one row of it (text of zero-width characters alone may then lose its ellipsis).
    s = s[: 8 * max(width, 0) + 64]
    if cell_width(s, policy) <= width:
        return s
    room = width - cell_width(ellipsis, policy)
    if room < 0:  # not even the ellipsis fits: show what fits of the text itself
        room, ellipsis = width, ""
    kept: list[str] = []
    used = 0
    for cluster in graphemes(s):
        w = policy.cluster_width(cluster)
        if used + w > room:
            break
        kept.append(cluster)
        used += w
    return "".join(kept) + ellipsis


def paragraph_spans(s: str) -> list[tuple[int, int]]:
    """Spans of the paragraphs of ``s``, split at (and excluding) line breaks."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in regex.finditer(r"\r\n|[\n\r\u2028\u2029\x85]", s):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(s)))
    return spans


def _tokens(s: str, start: int, end: int, policy: WidthPolicy) -> list[tuple[bool, list[tuple[int, int, int]]]]:
    """Runs of whitespace / non-whitespace clusters: (is_space, [(start, end, width), ...])."""
    runs: list[tuple[bool, list[tuple[int, int, int]]]] = []
    for m in _CLUSTER.finditer(s, start, end):
        cluster = m.group()
        is_space = cluster.isspace()
        item = (m.start(), m.end(), policy.cluster_width(cluster))
        if runs and runs[-1][0] == is_space:
            runs[-1][1].append(item)
        else:
            runs.append((is_space, [item]))
    return runs


def _wrap_paragraph(s: str, start: int, end: int, width: int, policy: WidthPolicy) -> list[tuple[int, int]]:
    """Greedy word wrap of one paragraph; spaces at a break belong to no line."""
    lines: list[tuple[int, int]] = []
    line: list[int] | None = None  # [start, end, cells]
    gap = 0  # cells of the whitespace run waiting between the line and the next word
    for is_space, clusters in _tokens(s, start, end, policy):
        run_w = sum(w for _, _, w in clusters)
        if is_space and (line is not None or lines):
            gap = run_w
            continue
        if line is not None and line[2] + gap + run_w <= width:
            line[1], line[2] = clusters[-1][1], line[2] + gap + run_w
        else:
            if line is not None:
                lines.append((line[0], line[1]))
            line = None
            for c_start, c_end, w in clusters:  # over-long words break between clusters
                if line is not None and line[2] + w > width:
                    lines.append((line[0], line[1]))
                    line = None
                if line is None:
                    line = [c_start, c_end, w]
                else:
                    line[1], line[2] = c_end, line[2] + w
        gap = 0
    if line is not None:
        lines.append((line[0], line[1]))
    return lines or [(start, start)]


def wrap_spans(s: str, width: int, policy: WidthPolicy | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` spans of ``s`` word-wrapped to ``width`` cells, cut only between clusters.

    Line breaks in ``s`` end a line; whitespace where a line is broken is
    dropped; a word wider than ``width`` is split between clusters (a single
    cluster wider than ``width`` still gets its own line).
    """
    policy = policy or _policy
    width = max(1, width)
    spans: list[tuple[int, int]] = []
    for p_start, p_end in paragraph_spans(s):
        spans.extend(_wrap_paragraph(s, p_start, p_end, width, policy))
    return spans
