"""The item list: a virtual list that draws only the rows on screen.

Like Toolong's log view, it is a ``ScrollView`` whose ``render_line`` builds
the one row asked for, so 100,000 items cost no more than 100: the list
holds item positions (the filtered view), not widgets, and caches the rows it
drew until the data changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.bidi import DisplayLine, layout, needs_layout
from piqa_tui.core.text.direction import Direction, detect_direction
from piqa_tui.core.text.graphemes import cell_width, graphemes, truncate
from piqa_tui.render.safe_text import shown
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction, line_segments

COMPACT_WIDTH = 44  # narrower rows than this pack their marks into COMPACT_MARKS cells
COMPACT_MARKS = 2
PREFETCH_ROWS = 8  # rows drawn per idle tick: a key pressed meanwhile waits a few ms at most
PREFETCH_DELAY = 0.03

MARK_STYLES = {
    "✎": "item-list--edited",
    "✓": "item-list--voted",
    "⚑": "item-list--flagged",
    "≈": "item-list--duplicate",
    "✗": "item-list--model",
    "!": "item-list--invalid",
    "=": "item-list--agreed",
    "≠": "item-list--disagreement",
    "⚖": "item-list--adjudicated",
}


ID_CELLS = 16  # the widest id column: longer ids are cut in the middle


def shown_id(item_id: str, width: int) -> str:
    """An id in ``width`` cells: whole when it fits, else its start, ``…`` and its end — ids written in the
    workspace share their start (``new-``) and differ at the end, as numbered ids do."""
    if cell_width(item_id) <= width:
        return item_id
    clusters = graphemes(item_id[: 8 * width + 64])
    head = truncate(item_id, max(1, (width - 1) // 3), ellipsis="")
    room = width - cell_width(head) - 1
    tail: list[str] = []
    for cluster in reversed(clusters):
        room -= cell_width(cluster)
        if room < 0:
            break
        tail.append(cluster)
    return head + "…" + "".join(reversed(tail))


def _excerpt(text: str, cells: int, mode: str, direction: Direction = Direction.AUTO) -> DisplayLine:
    """The first display line of ``text`` in ``cells``, ending in … when cut.

    Only a prefix is laid out (bidi costs grow with length); when the prefix
    turns out to fit on one line, the whole text is laid out after all, so the
    ellipsis is never lost.  The direction is the whole text's, not the
    prefix's, so the row reads the way the item view shows it.
    """
    if direction is Direction.AUTO:
        direction = detect_direction(text)
    cut = cells + 12  # one code point a cell, plus room for a few harakat or vowel signs
    if len(text) > cut:
        lines = layout(text[:cut], cells, mode, max_lines=1, direction=direction)
        if lines[0].logical != text[:cut]:  # the prefix did not fit: the line is cut, ellipsis included
            return lines[0]
    return layout(text, cells, mode, max_lines=1, direction=direction)[0]


class ItemList(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of ``marks  id  prompt excerpt`` for the positions in ``rows``; ``cursor`` indexes ``rows``."""

    DEFAULT_CSS = """
    ItemList {
        width: 38%;
        min-width: 28;
        max-width: 64;
        height: 1fr;
        border-right: vkey $panel-lighten-2;
        scrollbar-size-vertical: 1;
    }
    ItemList:focus {
        border-right: vkey $accent;
    }
    ItemList > .item-list--cursor {
        background: $primary 30%;
        text-style: bold;
    }
    ItemList:focus > .item-list--cursor {
        background: $primary 55%;
    }
    ItemList > .item-list--id {
        color: $text-muted;
    }
    ItemList > .item-list--edited { color: $warning; }
    ItemList > .item-list--voted { color: $success; }
    ItemList > .item-list--flagged { color: $error; }
    ItemList > .item-list--duplicate { color: $secondary; }
    ItemList > .item-list--model { color: $error; }
    ItemList > .item-list--invalid { color: $error; text-style: bold; }
    ItemList > .item-list--agreed { color: $success; }
    ItemList > .item-list--disagreement { color: $warning; text-style: bold; }
    ItemList > .item-list--adjudicated { color: $accent; }
    ItemList > .item-list--empty { color: $text-muted; text-style: italic; }
    """
    COMPONENT_CLASSES = {"item-list--cursor", "item-list--id", "item-list--empty", *MARK_STYLES.values()}

    cursor: reactive[int] = reactive(0, repaint=False)

    class Moved(Message):
        """The cursor moved to row ``index`` (item position ``position``, None when the list is empty)."""

        def __init__(self, item_list: ItemList, index: int, position: int | None) -> None:
            super().__init__()
            self.item_list = item_list
            self.index = index
            self.position = position

    def __init__(
        self,
        items: Sequence[Item],
        marks: Callable[[int, Item], str],
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.items = items
        self.marks = marks
        self.rows: Sequence[int] = range(len(items))
        self.empty_message = "no items"
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(1024)
        # Excerpts depend on the text alone, so they outlive ``invalidate`` (marks) and cursor moves.
        self._excerpts: LRUCache[tuple[str, int, str, Direction], DisplayLine] = LRUCache(4096)
        self._generation = 0
        self._style_key: tuple[object, ...] | None = None
        self._style_map: dict[str, Style] = {}
        self._prefetch_timer: Timer | None = None
        sample = items if len(items) <= 5000 else [items[i] for i in range(0, len(items), max(1, len(items) // 5000))]
        self.id_width = min(ID_CELLS, max((cell_width(it.id) for it in sample), default=4))
        self._ids_sized = len(items)  # the items the id column was sized for: items written later widen it

    def on_mount(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        self.post_message(self.Moved(self, self.cursor, self.position))

    # ------------------------------------------------------------------ data

    def set_rows(
        self, rows: Sequence[int], cursor_position: int | None = None, empty_message: str = "no items"
    ) -> None:
        """Show ``rows`` (item positions); keep the cursor on ``cursor_position`` if it is among them."""
        self.rows = rows
        self.empty_message = empty_message
        self.invalidate()
        self.virtual_size = Size(self.size.width, len(rows))
        index = 0
        if cursor_position is not None:
            try:
                index = rows.index(cursor_position)
            except ValueError:
                index = 0
        self.set_reactive(ItemList.cursor, -1)
        self.cursor = index

    def invalidate(self, positions: Sequence[int] | None = None) -> None:
        """Forget drawn rows (all of them: marks depend on state other rows share); items written since the id
        column was sized widen it as their ids need."""
        if len(self.items) > self._ids_sized:
            added = (cell_width(self.items[i].id) for i in range(self._ids_sized, len(self.items)))
            self.id_width = min(ID_CELLS, max(self.id_width, *added))
            self._ids_sized = len(self.items)
        self._generation += 1
        self._cache.clear()
        self.refresh()

    @property
    def position(self) -> int | None:
        """The item position under the cursor."""
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    # ---------------------------------------------------------------- moving

    def validate_cursor(self, value: int) -> int:
        if not self.rows:
            return 0
        return max(0, min(value, len(self.rows) - 1))

    def watch_cursor(self, old: int, new: int) -> None:
        self._refresh_row(old)
        self._refresh_row(new)
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True, immediate=True)
        self.post_message(self.Moved(self, new, self.position))

    def _refresh_row(self, index: int) -> None:
        y = index - self.scroll_offset.y
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def move(self, step: int) -> None:
        self.cursor = self.cursor + step

    def page(self, pages: int) -> None:
        self.cursor = self.cursor + pages * max(1, self.scrollable_content_region.height - 1)

    def go(self, index: int) -> None:
        self.cursor = index

    def on_click(self, event: events.Click) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < len(self.rows):
            self.cursor = index
        self.focus()

    # ------------------------------------------------------------- rendering

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        self._cache.clear()

    def _styles(self) -> dict[str, Style]:
        """The base and component styles, looked up once per frame rather than once per row."""
        key = (self._generation, self.has_focus, self.app.theme)
        if self._style_key != key:
            self._style_key = key
            names = ["item-list--cursor", "item-list--id", "item-list--empty", *MARK_STYLES.values()]
            self._style_map = {"": self.rich_style, **{n: self.get_component_rich_style(n) for n in names}}
        return self._style_map

    def render_lines(self, crop: Region) -> list[Strip]:
        strips = super().render_lines(crop)
        self._schedule_prefetch()
        return strips

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = y + self.scroll_offset.y
        styles = self._styles()
        base = styles[""]
        if not self.rows:
            if y == 0:
                style = base + styles["item-list--empty"]
                return Strip([Segment(" " + self.empty_message, style)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        return self._row(index, width, styles)

    def _row(self, index: int, width: int, styles: dict[str, Style]) -> Strip:
        position = self.rows[index]
        is_cursor = index == self.cursor
        key = (position, is_cursor, width, self._generation, app_bidi_mode(self))
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(position, is_cursor, width, styles)
            self._cache[key] = strip
        return strip

    def _render_row(self, position: int, is_cursor: bool, width: int, styles: dict[str, Style]) -> Strip:
        item = self.items[position]
        base = styles[""]
        if is_cursor:
            base = base + styles["item-list--cursor"]
        segments: list[Segment] = []
        marks = self.marks(position, item)
        if width < COMPACT_WIDTH:  # narrow: the marks that apply, packed, so the prompt gets the cells
            marks = "".join(m for m in marks if m != " ")[:COMPACT_MARKS].ljust(COMPACT_MARKS)
        for mark in marks:
            segments.append(Segment(mark, base + styles[MARK_STYLES[mark]] if mark in MARK_STYLES else base))
        id_style = base if is_cursor else base + styles["item-list--id"]
        cut_id = shown_id(shown(item.id, one_line=True), self.id_width)
        segments.append(Segment(" " + cut_id + " " * (self.id_width - cell_width(cut_id)) + " ", id_style))
        room = width - sum(s.cell_length for s in segments)
        if room > 2:
            prompt = item.prompt or "—"
            direction = field_direction(self, "prompt")
            if direction is Direction.RTL or needs_layout(prompt):
                key = (prompt, room, app_bidi_mode(self), direction)
                excerpt = self._excerpts.get(key)
                if excerpt is None:
                    excerpt = self._excerpts[key] = _excerpt(prompt, room, key[2], direction)
                segments.extend(line_segments(excerpt, room, base))
            else:  # left-to-right text without controls: reordering would change nothing
                segments.append(Segment(truncate(prompt, room), base))
        return Strip(segments).adjust_cell_length(width, base)

    # -------------------------------------------------------------- prefetch

    def _schedule_prefetch(self) -> None:
        if self._prefetch_timer is None and self.rows:
            self._prefetch_timer = self.set_timer(PREFETCH_DELAY, self._prefetch)

    def _prefetch(self) -> None:
        """Draw the pages above and below into the row cache while the user reads (a few rows per tick)."""
        self._prefetch_timer = None
        height = self.scrollable_content_region.height
        width = self.scrollable_content_region.width
        if not height or not self.rows:
            return
        top = self.scroll_offset.y
        wanted = [*range(top + height, top + 2 * height), *range(max(0, top - height), top)]
        styles = self._styles()
        mode = app_bidi_mode(self)
        drawn = 0
        for index in wanted:
            if not 0 <= index < len(self.rows):
                continue
            key = (self.rows[index], index == self.cursor, width, self._generation, mode)
            if key in self._cache:
                continue
            self._row(index, width, styles)
            drawn += 1
            if drawn >= PREFETCH_ROWS:
                self._prefetch_timer = self.set_timer(PREFETCH_DELAY, self._prefetch)
                return
