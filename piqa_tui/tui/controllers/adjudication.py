"""Adjudication's one write: the reviewer's final label on a disagreement, with the reason asked for.

A digit on the adjudication screen names the label; this controller asks why, submits
``Project.adjudicate`` (logged with the reviewer's name; a busy workspace keeps it pending and retried)
and, once it is committed, says so and tells its host, whose table moves on.
"""

from __future__ import annotations

from typing import Protocol

from piqa_tui.tui.dialogs.asker import Submitter
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.state.session import Session


class AdjudicationHost(Submitter, Protocol):
    def adjudicated(self, item_id: str) -> None:
        """The final label of ``item_id`` is committed: the screens that show it follow."""
        ...


def _reason_problem(value: str) -> str | None:
    return None if value.strip() else "give a reason: it is logged with the label"


class AdjudicationController:
    """Asks for the reason of a final label and submits the label."""

    def __init__(self, session: Session, host: AdjudicationHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host

    def decide(self, item_id: str | None, choice: int) -> None:
        """Give ``item_id`` the final label ``choice`` (from 0), once the reviewer says why."""
        if item_id is None:
            return
        item = self.project.item(item_id)
        if choice >= len(item.solutions):
            self.host.notify(f"{item_id} has {len(item.solutions)} solutions", severity="warning", timeout=3)
            return

        def given(reason: str | None) -> None:
            if reason:
                self.adjudicate(item_id, choice, reason)

        self.host.push_screen(
            TextPrompt(
                f"Final label of {item_id}: {choice + 1}",
                "Why this label? The reason is logged with your name; the item leaves the disagreement queue.",
                check=_reason_problem,
            ),
            given,
        )

    def adjudicate(self, item_id: str, choice: int, reason: str) -> None:
        """Submit the final label; once it is committed the host's table moves on."""

        def committed(_: object) -> None:
            self.host.notify(f"{item_id}: final label {choice + 1}", timeout=3)
            self.host.adjudicated(item_id)

        self.host.submit(
            f"the final label of {item_id}", lambda: self.project.adjudicate(item_id, choice, reason), committed
        )
