"""A solution in its own block: its number, its column, the gold mark and its differing words lit."""

from __future__ import annotations

from collections.abc import Sequence

from piqa_tui.tui.widgets.item.field_block import FieldBlock


class SolutionBlock(FieldBlock):
    """The solution shown in place ``slot`` of the item view; the gold one says so in its border.

    In file order slot i shows solution i. In shuffled validation a slot stands for another solution
    (``stand_for``): its field (what the edit, copy and direction keys act on) follows the solution,
    while its place and number on screen stay. (A CSS class for gold would restyle the block's subtree
    on every move, which costs more than the whole redraw; the subtitle text costs nothing.)
    """

    DEFAULT_CSS = """
    SolutionBlock {
        border-subtitle-style: bold;
    }
    """

    def __init__(self, index: int, column: str, translations: Sequence[str] = ()) -> None:
        super().__init__(f"solution{index}", f"{index + 1} · {column}", translations)
        self.slot = index  # where it stands on screen
        self.index = index  # the solution it shows: its index in the file

    def stand_for(self, index: int, title: str, translation_columns: Sequence[str]) -> None:
        """Show solution ``index`` here from now on, under ``title``, with these translation captions."""
        self.index = index
        self.field = self.body.field = f"solution{index}"
        self.translation_columns = list(translation_columns)
        if self.border_title != title:
            self.border_title = title

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
