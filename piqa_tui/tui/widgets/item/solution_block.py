"""A solution in its own block: its number, its column, the gold mark and its differing words lit."""

from __future__ import annotations

from collections.abc import Sequence

from piqa_tui.tui.widgets.item.field_block import FieldBlock


class SolutionBlock(FieldBlock):
    """Solution ``index`` of the current item; the gold one says so in its border.

    (A CSS class for gold would restyle the block's subtree on every move,
    which costs more than the whole redraw; the subtitle text costs nothing.)
    """

    DEFAULT_CSS = """
    SolutionBlock {
        border-subtitle-style: bold;
    }
    """

    def __init__(self, index: int, column: str, translations: Sequence[str] = ()) -> None:
        super().__init__(f"solution{index}", f"{index + 1} · {column}", translations)
        self.index = index

    def show_solution(
        self,
        text: str,
        differing: Sequence[tuple[int, int]],
        gold: bool | None,
        translations: dict[str, str] | None = None,
        extra: str = "",
    ) -> None:
        """``gold`` is None when the label must stay hidden (blind voting)."""
        self.show(text, differing, translations)
        marks = ["✓ gold"] if gold else []
        if extra:
            marks.append(extra)
        self.border_subtitle = "  ".join(marks)
