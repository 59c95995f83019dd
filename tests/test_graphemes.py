"""Grapheme clusters and cell widths: cursor, backspace, truncation and wrap on Indic and Arabic text."""

from __future__ import annotations

import unicodedata

import pytest
import wcwidth

from piqa_tui.core.text import graphemes as g
from piqa_tui.core.text.graphemes import (
    WidthPolicy,
    backspace,
    cell_width,
    delete_grapheme_after,
    grapheme_spans,
    graphemes,
    next_boundary,
    previous_boundary,
    snap_to_boundary,
    truncate,
    wrap_spans,
)

SAMPLES = ["கொ", "க்ஷ", "தமிழ்", "ক্ষ", "বাংলা", "क्षि", "हिन्दी", "شَاي", "مُحَمَّد", "e\u0301te\u0301"]
WORDS = "தமிழ்நாடு বাংলাদেশ हिन्दीभाषा شَايْ مُحَمَّد क्षत्रिय"


def wrap(s: str, width: int) -> list[str]:
    """The lines ``wrap_spans`` cuts ``s`` into, as text."""
    return [s[a:b] for a, b in wrap_spans(s, width)]


def is_mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M") or unicodedata.combining(ch) > 0


def no_orphan_marks(s: str) -> bool:
    """True when no cluster of ``s`` starts with a vowel sign, virama or haraka."""
    return not any(is_mark(c[0]) for c in graphemes(s))


@pytest.mark.parametrize(
    ("text", "clusters"),
    [
        ("கொ", ["கொ"]),
        ("தமிழ்", ["த", "மி", "ழ்"]),
        ("க்ஷ", ["க்", "ஷ"]),  # Tamil pulli is not a conjunct linker in UAX #29 (documented)
        ("ক্ষ", ["ক্ষ"]),  # GB9c keeps Bengali conjuncts whole
        ("বাংলা", ["বাং", "লা"]),
        ("क्षि", ["क्षि"]),  # GB9c keeps Devanagari conjuncts whole
        ("हिन्दी", ["हि", "न्दी"]),
        ("شَاي", ["شَ", "ا", "ي"]),
        ("", []),
    ],
)
def test_clusters_follow_extended_grapheme_rules(text: str, clusters: list[str]) -> None:
    assert graphemes(text) == clusters
    assert "".join(graphemes(text)) == text
    assert [text[a:b] for a, b in grapheme_spans(text)] == clusters


@pytest.mark.parametrize("text", SAMPLES)
def test_cursor_moves_stop_only_at_cluster_boundaries(text: str) -> None:
    boundaries = {0} | {end for _, end in grapheme_spans(text)}
    stops, i = [0], 0
    while i < len(text):
        i = next_boundary(text, i)
        stops.append(i)
    assert set(stops) == boundaries
    back, i = [len(text)], len(text)
    while i > 0:
        i = previous_boundary(text, i)
        back.append(i)
    assert sorted(back) == sorted(stops)
    assert all(snap_to_boundary(text, k) in boundaries for k in range(len(text) + 1))


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("வும்", ["வும", "வு", "வ", ""]),  # pulli, then the consonant, then the vowel sign
        ("கொ", ["க", ""]),  # NFC keeps the two-part vowel sign as one code point
        ("দ্ধ", ["দ্", "দ", ""]),  # a conjunct loses its last consonant, then the virama
        ("বাংলা", ["বাংল", "বাং", "বা", "ব", ""]),
        ("क्षि", ["क्ष", "क्", "क", ""]),
        ("ज़रा", ["ज़र", "ज़", "ज", ""]),  # ा, र, then the nukta
        ("مُحَمَّد", ["مُحَمَّ", "مُحَمَ", "مُحَم", "مُحَ", "مُح", "مُ", "م", ""]),  # shadda before fatha
        ("e\u0301te\u0301", ["e\u0301t", "e\u0301", ""]),  # NFC: "é" is one code point and goes whole
        ("x\u0301", ["x", ""]),  # no precomposed form: the accent goes first
        ("👍🏽❤️", ["👍🏽", ""]),  # emoji with a skin tone or variation selector go whole
        ("ab", ["a", ""]),
    ],
)
def test_backspace_takes_the_last_mark_first_like_the_platforms(text: str, steps: list[str]) -> None:
    text = unicodedata.normalize("NFC", text)
    s, index, seen = text, len(text), []
    while s:
        s, index = backspace(s, index)
        assert index == len(s)
        assert no_orphan_marks(s)
        seen.append(s)
    assert seen == [unicodedata.normalize("NFC", step) for step in steps]
    assert backspace("", 0) == ("", 0)


def test_backspace_never_leaves_the_cursor_inside_a_cluster() -> None:
    # "ক্ষ" minus "ষ" would be "ক্", which joins the "ত" after it: the whole cluster goes instead
    assert backspace("ক্ষত", 3) == ("ত", 0)
    assert backspace("வும்", 2) == ("வம்", 1)  # before the cursor is "வு": its vowel sign goes
    # the index sits between the consonant and its vowel sign / virama / haraka
    assert backspace("कि", 1) == ("", 0)
    assert backspace("தமிழ்", 2) == ("தழ்", 1)  # caret inside "மி"
    assert backspace("شَاي", 1) == ("اي", 0)
    s, i = backspace("हिन्दी", 4)
    assert (s, i) == ("हि", 2) and no_orphan_marks(s)


def test_delete_key_removes_the_cluster_after_the_cursor() -> None:
    assert delete_grapheme_after("தமிழ்", 1) == ("தழ்", 1)
    assert delete_grapheme_after("شَاي", 0) == ("اي", 0)
    assert delete_grapheme_after("ab", 2) == ("ab", 2)


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("கொ", 2),
        ("க்ஷ", 2),
        ("தமிழ்", 4),
        ("ক্ষ", 2),
        ("বাংলা", 4),
        ("क्षि", 2),
        ("हिन्दी", 4),
        ("شَاي", 3),
        ("abc", 3),
        ("漢字", 4),
    ],
)
def test_default_width_is_wcwidth_per_cluster(text: str, width: int) -> None:
    assert cell_width(text, WidthPolicy()) == width
    assert cell_width(text, WidthPolicy()) == sum(max(0, wcwidth.wcswidth(c)) for c in graphemes(text))


def test_width_is_never_negative() -> None:
    for text in ["\u064e", "\u094d", "\u0bcd", "\x07", "\x1b", "\u200d", "a\x00b"]:
        assert cell_width(text) >= 0
    assert cell_width("a\x07b") == 2
    assert cell_width("\t") == 1  # shown as one space by the display layer


def test_width_modes_differ_where_terminals_differ() -> None:
    assert [cell_width("கொ", WidthPolicy(m)) for m in ("wcwidth", "codepoint", "cluster1", "cluster2")] == [2, 2, 1, 2]
    assert [cell_width("ক্ষি", WidthPolicy(m)) for m in ("wcwidth", "codepoint", "cluster1", "cluster2")] == [2, 3, 1, 2]
    assert [cell_width("के", WidthPolicy(m)) for m in ("wcwidth", "codepoint", "cluster1", "cluster2")] == [1, 1, 1, 1]
    for mode in ("wcwidth", "codepoint", "cluster1", "cluster2"):  # non-Indic text is the same everywhere
        assert cell_width("شَاي", WidthPolicy(mode)) == 3
        assert cell_width("漢字 abc", WidthPolicy(mode)) == 8
    with pytest.raises(ValueError):
        WidthPolicy("bogus")  # type: ignore[arg-type]


def test_override_table_wins_and_the_module_policy_is_the_default() -> None:
    policy = WidthPolicy("wcwidth", overrides={"கொ": 1})
    assert cell_width("கொகொ", policy) == 2
    assert hash(policy) == hash(WidthPolicy("wcwidth", overrides={"கொ": 1}))
    previous = g.get_width_policy()
    try:
        g.set_width_policy(WidthPolicy("cluster1"))
        assert cell_width("বাংলা") == 2
    finally:
        g.set_width_policy(previous)
    assert cell_width("বাংলা") == 4


@pytest.mark.parametrize("text", SAMPLES + [WORDS])
def test_truncate_never_cuts_inside_a_cluster(text: str) -> None:
    clusters = graphemes(text)
    prefixes = {"".join(clusters[:k]) for k in range(len(clusters) + 1)}
    for width in range(0, cell_width(text) + 2):
        cut = truncate(text, width)
        assert cell_width(cut) <= width
        kept = cut[:-1] if cut.endswith("…") and cut != text else cut
        assert kept in prefixes
        assert no_orphan_marks(cut)
    assert truncate(text, cell_width(text)) == text


def test_truncate_uses_the_ellipsis_given() -> None:
    assert truncate("தமிழ்நாடு", 5) == "தமிழ்…"
    assert truncate("abcdef", 4, ellipsis="..") == "ab.."
    assert truncate("abcdef", 1, ellipsis="..") == "a"


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8, 13])
def test_wrap_never_cuts_inside_a_cluster(width: int) -> None:
    clusters = graphemes(WORDS)
    boundaries = {0} | {end for _, end in grapheme_spans(WORDS)}
    spans = wrap_spans(WORDS, width)
    for start, end in spans:
        assert start in boundaries and end in boundaries
        line = WORDS[start:end]
        assert no_orphan_marks(line)
        if max(cell_width(c) for c in graphemes(line)) <= width:
            assert cell_width(line) <= width
    # logical order, nothing lost but the spaces at the breaks
    assert "".join(wrap(WORDS, width)).replace(" ", "") == "".join(c for c in clusters if not c.isspace())
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)


def test_wrap_breaks_at_spaces_and_keeps_paragraphs() -> None:
    assert wrap("one two three four", 9) == ["one two", "three", "four"]
    assert wrap("தமிழ் நாடு வாழ்க", 9) == ["தமிழ் நாடு", "வாழ்க"]
    assert wrap("a\n\nb", 10) == ["a", "", "b"]
    assert wrap("", 10) == [""]
    assert wrap("abcdefgh", 3) == ["abc", "def", "gh"]
    assert wrap("हिन्दीहिन्दी", 3) == ["हि", "न्दी", "हि", "न्दी"]  # 2-cell clusters never split
