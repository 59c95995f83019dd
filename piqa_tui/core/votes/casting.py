"""Casting a vote: one key press is one action — one transaction, one undo step — shuffled or not.

In a shuffled round a validator sees an item's solutions in an order of their own, and the order a vote
was cast in is a fact of the log (``core/round/order.py`` says why): an ``order`` event, written when the
log does not hold that order for them yet. It is recorded in the same action as the vote it was cast in,
after it, so a busy workspace leaves neither and an undo takes back the vote alone (the order stays a fact:
it was shown). Every vote the TUI casts comes through ``cast_vote``.
"""

from __future__ import annotations

from collections.abc import Mapping

from piqa_tui.core.workspace.log import Change, Part
from piqa_tui.core.workspace.project import Project

ORDER_KIND = "order"
ORDER_FIELD = "order"

Order = tuple[int, ...]  # display position -> the solution's index in the file


def order_text(order: Order) -> str:
    """An order as the log records it: "2,0,1"."""
    return ",".join(str(index) for index in order)


def file_order(count: int) -> Order:
    return tuple(range(count))


def order_part(before: str | None, item_id: str, shown: Order | None, count: int) -> Part | None:
    """The ``order`` event to record when a vote is cast on an item of ``count`` solutions shown in ``shown``
    (None: file order), the log holding ``before`` for the annotator (None: no order). None when the log already
    says so: the same order recorded, or file order with none recorded (a shuffle that happens to keep the file's
    order is recorded all the same)."""
    if shown is None and before is None:
        return None
    text = order_text(shown if shown is not None else file_order(count))
    return None if before == text else Part(ORDER_KIND, (Change(item_id, ORDER_FIELD, before, text),))


def cast_vote(
    project: Project,
    item_id: str,
    choice: str,
    shown: Order | None = None,
    recorded: Mapping[tuple[str, str], str] | None = None,
) -> None:
    """Record the project annotator's vote ``choice`` (a file index, "skip" or "") on the item shown in ``shown``
    (None: file order), with the order it was shown in when ``recorded`` — the latest order per (annotator, item)
    the log holds — does not say so already: one action."""
    parts = [project.vote_part(item_id, choice)]
    if choice.isdecimal():
        before = (recorded or {}).get((project.annotator, item_id))
        order = order_part(before, item_id, shown, len(project.item(item_id).solutions))
        if order is not None:
            parts.append(order)
    project.record(parts)
