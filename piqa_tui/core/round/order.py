"""Shuffled validation: the order in which one annotator sees an item's solutions, derived and then recorded.

An order is a permutation, display position → the solution's index in the file. While the round in force
says ``shuffle = true``, a validator's order is derived from a SHA-256 of the round's seed, the annotator and
the item id (one digest per solution, sorted), so every machine shows the same person the same order without
asking anyone. It is also recorded: one ``order`` event (field ``order``, ``new`` the permutation as "2,0,1"),
written just before the annotator votes on the item in an order other than the one the log already holds for
them. So the order a vote was cast in is a fact of the log, not a derivation an audit must trust (a round
imported again with another seed would derive another order): a vote was cast in the annotator's latest
``order`` on the item before it, or in file order when there is none. The TUI keeps showing a recorded order
while the round shuffles, so an item already voted on never reorders under its annotator. Recording on the
vote rather than on the first show keeps browsing free of writes (j held over a thousand items, a read-only
workspace): an order nobody voted in is no fact an audit needs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from piqa_tui.core.round.declaration import Round
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.votes.casting import ORDER_FIELD, ORDER_KIND, Order, file_order, order_part, order_text
from piqa_tui.core.workspace.log import Part, Workspace
from piqa_tui.core.workspace.project import Project

__all__ = ["ORDER_FIELD", "ORDER_KIND", "Order", "Orders", "file_order", "order_text", "orders_in_force"]


def derived_order(seed: int, annotator: str, item_id: str, count: int) -> Order:
    """The order ``annotator`` sees ``count`` solutions of ``item_id`` in under ``seed``: the same on every machine."""

    def digest(index: int) -> bytes:
        key = json.dumps([seed, annotator, item_id, index], ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(key.encode("utf-8")).digest()

    return tuple(sorted(range(count), key=digest))


def parse_order(text: str | None, count: int) -> Order | None:
    """The order ``text`` records when it is a permutation of ``count`` solutions (None otherwise)."""
    if not text:
        return None
    try:
        order = tuple(int(part) for part in text.split(","))
    except ValueError:
        return None
    return order if sorted(order) == list(range(count)) else None


def recorded_orders(workspace: Workspace | None) -> dict[tuple[str, str], str]:
    """The latest recorded order per (annotator, item id), as recorded text."""
    latest: dict[tuple[str, str], str] = {}
    for event in workspace.events(kinds=[ORDER_KIND]) if workspace is not None else []:
        if event.item_id is not None and event.new:
            latest[(event.annotator, event.item_id)] = event.new
    return latest


@dataclass(frozen=True, slots=True)
class Orders:
    """The orders in force at one position of the log: the round's, and those recorded with votes."""

    declared: Round | None
    recorded: dict[tuple[str, str], str]

    def of(self, annotator: str, item_id: str, count: int) -> Order | None:
        """The order ``annotator`` sees the item's ``count`` solutions in; None: file order (no shuffling)."""
        if self.declared is None or not self.declared.shuffles_for(annotator) or count < 2:
            return None
        recorded = parse_order(self.recorded.get((annotator, item_id)), count)
        return recorded or derived_order(self.declared.seed, annotator, item_id, count)

    def part(self, annotator: str, item_id: str, shown: Order | None, count: int) -> Part | None:
        """The ``order`` event to record when ``annotator`` votes on an item shown in ``shown`` (``order_part``)."""
        return order_part(self.recorded.get((annotator, item_id)), item_id, shown, count)


def orders_in_force(project: Project) -> Orders:
    """The project's ``Orders``, read again only when the project has applied new events (asked on every move)."""
    workspace = project.workspace
    return project.memo.get(orders_in_force, lambda: Orders(round_in_force(workspace), recorded_orders(workspace)))
