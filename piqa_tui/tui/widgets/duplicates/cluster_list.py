"""The open duplicate clusters, one row each: signal, similarity, size, member ids, the first prompt.

A virtual list like the item list: it draws only the rows on screen, so a
10,000-item draft with thousands of clusters costs no more than ten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from piqa_tui.core.dedup.clusters import Cluster, Member
from piqa_tui.core.text.bidi import layout
from piqa_tui.core.text.graphemes import cell_width, truncate
from piqa_tui.render.safe_text import shown
from piqa_tui.tui.widgets.drawing import app_bidi_mode, field_direction, line_segments

IDS_WIDTH = 30
SIGNAL_WIDTH = 11  # "translation", the longest signal name
SIGNAL_STYLES = {
    "exact": "cluster-list--exact",
    "lexical": "cluster-list--lexical",
    "semantic": "cluster-list--semantic",
    "translation": "cluster-list--translation",
    "prompt": "cluster-list--prompt",
}


class ClusterList(ScrollView, can_focus=False):
    """Rows for ``clusters``; ``cursor`` indexes them. The screen moves it (its keys act on the
    cluster and its members, not on a focused list)."""

    DEFAULT_CSS = """
    ClusterList {
        height: 30%;
        min-height: 4;
        max-height: 14;
        border-bottom: hkey $panel-lighten-2;
        scrollbar-size-vertical: 1;
    }
    ClusterList > .cluster-list--cursor {
        background: $primary 45%;
        text-style: bold;
    }
    ClusterList > .cluster-list--muted { color: $text-muted; }
    ClusterList > .cluster-list--exact { color: $error; }
    ClusterList > .cluster-list--lexical { color: $warning; }
    ClusterList > .cluster-list--semantic { color: $primary; }
    ClusterList > .cluster-list--translation { color: $accent; }
    ClusterList > .cluster-list--prompt { color: $text-muted; }
    ClusterList > .cluster-list--empty { color: $text-muted; text-style: italic; }
    """
    COMPONENT_CLASSES = {"cluster-list--cursor", "cluster-list--muted", "cluster-list--empty", *SIGNAL_STYLES.values()}

    cursor: reactive[int] = reactive(0, repaint=False)

    class Moved(Message):
        """The cursor moved to ``index`` (-1 when the list is empty)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clusters: Sequence[Cluster] = ()
        self.prompt_of: Callable[[Member], str] = lambda member: ""
        self.label_of: Callable[[Member], str] = lambda member: member.id
        self.empty_message = ""
        self._cache: dict[tuple[object, ...], Strip] = {}

    def show_clusters(
        self,
        clusters: Sequence[Cluster],
        prompt_of: Callable[[Member], str],
        label_of: Callable[[Member], str],
        cursor: int = 0,
        empty_message: str = "",
    ) -> None:
        """Show ``clusters``, the cursor on row ``cursor`` (kept in range)."""
        self.clusters = clusters
        self.prompt_of = prompt_of
        self.label_of = label_of
        self.empty_message = empty_message
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(clusters))
        self.set_reactive(ClusterList.cursor, -1)
        self.cursor = cursor
        self.refresh()

    @property
    def current(self) -> Cluster | None:
        return self.clusters[self.cursor] if 0 <= self.cursor < len(self.clusters) else None

    # ---------------------------------------------------------------- moving

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.clusters) - 1)) if self.clusters else 0

    def watch_cursor(self, old: int, new: int) -> None:
        self._cache = {k: v for k, v in self._cache.items() if k[0] not in (old, new)}
        self.refresh()
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True, immediate=True)
        self.post_message(self.Moved(new if self.clusters else -1))

    def move(self, step: int) -> None:
        self.cursor = self.cursor + step

    def on_click(self, event: events.Click) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < len(self.clusters):
            self.cursor = index

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.clusters))
        self._cache.clear()

    # ------------------------------------------------------------- rendering

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = y + self.scroll_offset.y
        if not self.clusters:
            if y == 0 and self.empty_message:
                style = base + self.get_component_rich_style("cluster-list--empty")
                return Strip([Segment(" " + self.empty_message, style)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        if index >= len(self.clusters):
            return Strip.blank(width, base)
        key = (index, index == self.cursor, width, app_bidi_mode(self), self.app.theme)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._row(index, width, base)
        return strip

    def _row(self, index: int, width: int, base: Style) -> Strip:
        cluster = self.clusters[index]
        if index == self.cursor:
            base = base + self.get_component_rich_style("cluster-list--cursor")
        muted = base + self.get_component_rich_style("cluster-list--muted")
        signal = base + self.get_component_rich_style(SIGNAL_STYLES.get(cluster.signal, "cluster-list--muted"))
        number = str(index + 1).rjust(len(str(len(self.clusters))))
        ids = truncate(shown(" ".join(self.label_of(m) for m in cluster.members), one_line=True), IDS_WIDTH)
        segments = [
            Segment(f" {number} ", muted),
            Segment(f"{cluster.signal:<{SIGNAL_WIDTH}} ", signal),
            Segment(f"{cluster.similarity:.2f} ", base),
            Segment(f"×{len(cluster.members):<2} ", muted),
            Segment(ids + " " * (IDS_WIDTH - cell_width(ids)) + "  ", base),
        ]
        room = width - sum(s.cell_length for s in segments)
        if room > 4:
            prompt = self.prompt_of(cluster.members[0]) or "—"
            line = layout(prompt, room, app_bidi_mode(self), max_lines=1, direction=field_direction(self, "prompt"))[0]
            segments.extend(line_segments(line, room, muted))
        return Strip(segments).adjust_cell_length(width, base)
