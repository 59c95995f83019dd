"""Rich and Textual measure text with our width function; the terminal probe picks the right mode."""

from __future__ import annotations

import rich.cells
import rich.segment
from rich.segment import Segment

from piqa_tui.core.text.graphemes import WIDTH_MODES, WidthPolicy, cell_width, graphemes
from piqa_tui.tui.terminal import cell_widths
from piqa_tui.tui.terminal.probe import PROBES, choose_mode

SAMPLES = ["கொ", "தமிழ்நாடு", "বাংলা ভাষা", "क्षत्रिय हिन्दी", "شَاي بالنعناع", "漢字 abc", "plain ascii"]


def test_the_patched_names_still_exist_in_rich() -> None:
    # cell_widths replaces these; if a Rich upgrade moves them, fail here, not on a crooked screen.
    for name in ("_cell_len", "cached_cell_len", "split_graphemes", "get_character_cell_size"):
        assert hasattr(rich.cells, name)
    assert hasattr(rich.segment, "get_character_cell_size")
    assert hasattr(Segment, "_split_cells")


def test_rich_measures_like_the_text_layer_under_every_mode() -> None:
    for mode in WIDTH_MODES:
        cell_widths.set_policy(WidthPolicy(mode))
        for text in SAMPLES:
            assert rich.cells.cell_len(text) == cell_width(text), (mode, text)
            assert Segment(text).cell_length == cell_width(text)


def test_splitting_a_segment_never_cuts_a_cluster() -> None:
    cell_widths.set_policy(WidthPolicy("codepoint"))
    for text in SAMPLES:
        total = cell_width(text)
        clusters = set(graphemes(text))
        for cut in range(total + 1):
            left, right = Segment(text).split_cells(cut)
            assert left.cell_length + right.cell_length == total
            assert left.cell_length == cut or left.text.endswith(" ")  # a wide cluster cut turns into spaces
            for piece in (left.text.strip(), right.text.strip()):
                for cluster in graphemes(piece):
                    assert cluster in clusters or cluster == " ", (text, cut, cluster)


def test_choose_mode_from_what_the_terminal_reported() -> None:
    for mode in ("codepoint", "cluster1"):
        measured = {text: cell_width(text, WidthPolicy(mode)) for text in PROBES}
        assert choose_mode(measured) == mode
    wcwidth_like = {text: cell_width(text, WidthPolicy("wcwidth")) for text in PROBES}
    assert choose_mode(wcwidth_like) in ("wcwidth", "cluster2")  # the probes cannot tell these two apart
    tmux = {"கொ": 2, "தமிழ்": 4, "ক্ষি": 3, "বাংলা": 5, "क्षि": 3, "हिन्दी": 5, "कि": 2}  # read in tmux 3.3a
    assert choose_mode(tmux) == "codepoint"
