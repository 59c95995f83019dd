"""The members of one duplicate cluster, side by side (stacked when narrow), differing words lit.

Each member is a ``MemberPanel``: its prompt and solutions through the bidi
adapter (right-to-left text laid out per line, highlights on logical spans),
its gold label, flags and note. The chosen member, the one "keep" and "merge
notes" act on, has the accent border.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import Cluster
from piqa_tui.core.text.bidi import BidiText
from piqa_tui.tui.widgets.drawing import app_bidi_mode, app_directions

PANEL_MIN_WIDTH = 40  # narrower than this per member, the members are stacked
Spans = list[tuple[int, int]]


@dataclass(frozen=True)
class MemberCard:
    """What one panel shows about one member of the cluster."""

    number: int  # 1-based, as the keys and the summary name it
    item: Item
    source: str | None = None  # the file it comes from, in leakage mode
    chosen: bool = False
    highlights: dict[str, Spans] = field(default_factory=dict)  # field -> spans that differ
    flags: dict[str, str] = field(default_factory=dict)  # reason -> note
    note: str = ""
    gold_hidden: bool = False  # blind mode: no gold mark until the annotator voted on the item
    order: tuple[int, ...] | None = None  # shuffled validation: the order the annotator sees the solutions in


class MemberPanel(Widget):
    """One member: ``n · id`` in the border, then prompt, numbered solutions, gold, flags, note."""

    DEFAULT_CSS = """
    MemberPanel {
        width: 1fr;
        height: auto;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        padding: 0 1;
    }
    MemberPanel.-chosen {
        border: round $accent;
        border-title-color: $accent;
        border-title-style: bold;
        border-subtitle-color: $accent;
    }
    MemberPanel > .member-panel--diff {
        background: $warning 35%;
        text-style: bold;
    }
    MemberPanel > .member-panel--muted {
        color: $text-muted;
    }
    MemberPanel > .member-panel--flag {
        color: $error;
    }
    """
    COMPONENT_CLASSES = {"member-panel--diff", "member-panel--muted", "member-panel--flag"}

    def __init__(self, card: MemberCard) -> None:
        super().__init__()
        self.card = card
        self._apply()

    def show(self, card: MemberCard) -> None:
        if card != self.card:
            self.card = card
            self._apply()
            self.refresh(layout=True)

    def _apply(self) -> None:
        card = self.card
        where = f"{card.source}:" if card.source else ""
        self.border_title = f"{card.number} · {where}{card.item.id}"
        self.border_subtitle = "◆ chosen" if card.chosen else ""
        self.set_class(card.chosen, "-chosen")

    def render(self) -> RenderableType:
        card, item = self.card, self.card.item
        mode = app_bidi_mode(self)
        diff = self.get_component_rich_style("member-panel--diff")
        muted = self.get_component_rich_style("member-panel--muted")

        directions = app_directions(self)

        def text(value: str, name: str) -> BidiText:
            spans = card.highlights.get(name, ())
            marks = [(a, b, diff) for a, b in spans]
            return BidiText(value or "—", mode, highlights=marks, direction=directions.of(name))

        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(no_wrap=True, style=muted, width=2)
        grid.add_column(ratio=1)
        grid.add_row("▸", text(item.prompt, "prompt"))
        gold = None if card.gold_hidden else item.label
        order = card.order or tuple(range(len(item.solutions)))
        for place, i in enumerate(order):
            grid.add_row(f"{place + 1}✓" if gold == i else str(place + 1), text(item.solutions[i], f"solution{i}"))
        parts: list[RenderableType] = [grid]
        status = Text(style=muted)
        if card.gold_hidden:
            status.append("gold hidden until you vote on it (blind mode)")
        else:
            shown = order.index(item.label) + 1 if item.label in order else (item.label or 0) + 1
            status.append(f"gold {shown}" if item.label is not None else "no gold label")
        for reason, note in sorted(card.flags.items()):
            status.append(
                "  ⚑ " + reason + (f" ({note})" if note else ""), self.get_component_rich_style("member-panel--flag")
            )
        parts.append(status)
        if card.note:
            parts.append(Group(Text("note", style=muted), BidiText(card.note, mode, direction=directions.of("note"))))
        return Group(*parts)


class ClusterView(VerticalScroll, can_focus=False):
    """A one-line summary of the cluster, then its members."""

    DEFAULT_CSS = """
    ClusterView {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    ClusterView > #cluster-summary {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    ClusterView > #members {
        layout: horizontal;
        height: auto;
    }
    ClusterView.-stacked > #members {
        layout: vertical;
    }
    ClusterView.-stacked MemberPanel {
        width: 100%;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._members = 0
        self._cluster: Cluster | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="cluster-summary", markup=False)
        yield Container(id="members")

    def show_cluster(self, cluster: Cluster, number: int, total: int, cards: list[MemberCard]) -> None:
        """Show ``cluster`` (row ``number`` of ``total``) with one card per member."""
        summary = Text()
        summary.append(f"cluster {number} of {total}", "bold")
        summary.append(f" · {cluster.signal} · similarity {cluster.similarity:.2f} · {len(cluster.members)} items")
        evidence = ", ".join(f"{p.a + 1}–{p.b + 1} {p.signal} {p.similarity:.2f}" for p in cluster.pairs[:6])
        if len(cluster.pairs) > 6:
            evidence += f", … {len(cluster.pairs) - 6} more"
        if evidence:
            summary.append(f" · evidence {evidence}")
        summary.append("\nlit: the words that differ from member 1 (member 1: from member 2)", "italic")
        self.query_one("#cluster-summary", Static).update(summary)
        self._members = len(cards)
        self._place()
        if cluster is not self._cluster:
            self._cluster = cluster
            self.scroll_home(animate=False)
        container = self.query_one("#members", Container)
        panels = list(container.query(MemberPanel))
        for panel, card in zip(panels, cards):
            panel.show(card)
            panel.display = True
        for panel in panels[len(cards) :]:
            panel.display = False
        if len(cards) > len(panels):
            new = [MemberPanel(card) for card in cards[len(panels) :]]
            container.mount_all(new)
            panels += new
        chosen = next((p for p, card in zip(panels, cards) if card.chosen), None)
        if chosen is not None and self.has_class("-stacked"):
            self.call_after_refresh(self.scroll_to_widget, chosen, animate=False)

    def show_message(self, message: str) -> None:
        """No cluster to show: say why and what to do."""
        self.query_one("#cluster-summary", Static).update(Text(message, style="italic"))
        for panel in self.query(MemberPanel):
            panel.display = False
        self._members = 0
        self._cluster = None

    def on_resize(self) -> None:
        self._place()

    def _place(self) -> None:
        """Side by side when every member gets PANEL_MIN_WIDTH cells, else one under the other."""
        width = self.scrollable_content_region.width or self.size.width
        self.set_class(self._members > 1 and width < self._members * PANEL_MIN_WIDTH, "-stacked")
