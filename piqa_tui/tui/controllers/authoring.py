"""Writing new items and moving items between the authoring stages, on the main screen.

Keys (``keymap.MAIN_ACTIONS``): I opens the new-item form (``dialogs/new_item.py``); the draft is recorded
through the session's write queue and the list moves to it. T moves the item under the cursor to its next
stage (draft → review → validation → done → draft); u undoes either. K keeps the model's pending suggestion for
one of the item's metadata columns (``classify``'s: it becomes an ordinary edit naming the suggestion), Z turns it
down; u undoes either (``core/workspace/suggestions``). A writer in the round in force gets
their columns filled (``author``, their ``country``: ``stages.writer_columns``), so the item is routed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from piqa_tui.core.dataset.capacity import room
from piqa_tui.core.round.stages import STAGES, Draft, add_items, check_draft, set_stage, stage_of, writer_columns
from piqa_tui.core.workspace.suggestions import Suggestion, accept, pending, reject
from piqa_tui.render.safe_text import markup_safe
from piqa_tui.tui.controllers.host import Host
from piqa_tui.tui.dialogs.new_item import NewItemDialog
from piqa_tui.tui.state.session import Session


class AuthoringHost(Host, Protocol):
    def go_to_position(self, position: int) -> None:
        """Move the cursor to the item at ``position`` (clearing filters that hide it)."""
        ...


class AuthoringController:
    """Opens the new-item form and records its draft; moves items on through the stages."""

    def __init__(self, session: Session, host: AuthoringHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host

    def new_item(self) -> None:
        """Open the form; a saved draft is recorded as a new item at the draft stage."""
        self.host.push_screen(
            NewItemDialog(
                self.session.validation.candidate,
                lambda written: check_draft(self.project, written),
                room(self.project.dataset.layout),
            ),
            self._write,
        )

    def _write(self, written: Draft | None) -> None:
        if written is None:
            return
        written = replace(written, meta=tuple(sorted(writer_columns(self.project).items())))
        self.host.submit("new item", lambda: add_items(self.project, [written]), self._added)

    def _added(self, written: object) -> None:
        ids = list(written) if isinstance(written, list) else []
        self.host.after_change(ids)
        position = self.project.index.get(ids[0]) if ids else None
        if position is None:
            return
        self.host.go_to_position(position)
        self.host.notify(f"new item {markup_safe(ids[0], one_line=True)} written as a draft (u undoes)", timeout=3)

    def next_stage(self) -> None:
        """Move the current item to the stage after its own."""
        item = self.host.current
        if item is None:
            return
        stage = STAGES[(STAGES.index(stage_of(self.project, item.id)) + 1) % len(STAGES)]
        item_id = item.id
        self.host.submit(
            "stage", lambda: set_stage(self.project, [item_id], stage), lambda _: self._moved(item_id, stage)
        )

    def decide_suggestion(self, keep: bool) -> None:
        """Keep (or turn down) the first pending suggestion for a metadata column of the current item."""
        item = self.host.current
        if item is None:
            return
        found = [s for s in pending(self.project, item.id) if s.field.startswith("meta:")]
        if not found:
            self.host.notify("no pending suggestion for this item's metadata", timeout=2)
            return
        chosen = found[0]
        decide = accept if keep else reject
        self.host.submit(
            "suggestion", lambda: decide(self.project, chosen.id), lambda _: self._decided(chosen, keep, len(found))
        )

    def _decided(self, suggestion: Suggestion, kept: bool, pending_before: int) -> None:
        self.host.after_change([suggestion.item_id])
        column = suggestion.field.removeprefix("meta:")
        what = "kept" if kept else "turned down"
        more = f"; {pending_before - 1} more pending" if pending_before > 1 else ""
        value = markup_safe(suggestion.value, one_line=True)
        self.host.notify(
            f"{what} {markup_safe(suggestion.model, one_line=True)}'s {markup_safe(column, one_line=True)} = {value} (u undoes){more}",
            timeout=3,
        )

    def _moved(self, item_id: str, stage: str) -> None:
        self.host.after_change([item_id])
        self.host.notify(f"{markup_safe(item_id, one_line=True)} is now at {stage}", timeout=2)
