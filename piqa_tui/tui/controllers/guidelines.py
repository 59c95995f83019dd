"""The guidelines screen's writes: an annotator's question to the lead about an item, the lead's reply.

``a`` asks about the item the annotator was on, ``r`` (reviewer mode) answers the open question on it.
This controller asks for the line, checks it as core will, submits it (one ``Part`` the project records)
and, once it is committed, says so and tells its host, whose questions and the main list follow.
"""

from __future__ import annotations

from typing import Protocol

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.guidelines import Question, ask_part, checked_text, reply_part
from piqa_tui.core.workspace.log import Part
from piqa_tui.tui.dialogs.asker import Submitter
from piqa_tui.tui.dialogs.prompts import DataText, TextPrompt
from piqa_tui.tui.state.session import Session


class GuidelinesHost(Submitter, Protocol):
    def after_change(self, item_ids: list[str]) -> None:
        """A question or a reply on ``item_ids`` is committed: redraw the questions and the items."""
        ...


def _problem(text: str, what: str) -> str | None:
    """Why ``text`` cannot be sent (None: it can)."""
    try:
        checked_text(text, what)
    except PiqaError as exc:
        return str(exc)
    return None


class GuidelinesController:
    """Asks for a question or a reply and submits it."""

    def __init__(self, session: Session, host: GuidelinesHost) -> None:
        self.session = session
        self.host = host

    def ask(self, item_id: str | None) -> None:
        """Ask the lead about ``item_id`` (the item the annotator was on: none, and there is nothing to ask about)."""
        if item_id is None:
            self.host.notify("Open an item first: a question is about an item", severity="warning")
            return
        prompt = TextPrompt(
            f"Ask the lead about {item_id}",
            "One line: what in the guidelines is unclear for this item. The lead sees it in the queue asked.",
            check=lambda text: _problem(text, "question"),
        )

        def given(text: str | None) -> None:
            if text:
                self.send(f"the question on {item_id}", ask_part(item_id, text), item_id, "asked the lead")

        self.host.push_screen(prompt, given)

    def reply(self, question: Question | None, item_id: str | None) -> None:
        """Answer ``question``, the open question on ``item_id`` (None: there is none, which is said)."""
        if question is None:
            self.host.notify(f"No open question on {item_id or 'this item'}", severity="warning")
            return
        prompt = TextPrompt(
            f"Answer {question.asked_by} on {question.item_id}",
            [DataText(question.text)],  # the annotator's words, drawn by the bidi adapter
            check=lambda text: _problem(text, "reply"),
        )

        def given(text: str | None) -> None:
            if text:
                self.send(f"the reply on {question.item_id}", reply_part(question, text), question.item_id, "answered")

        self.host.push_screen(prompt, given)

    def send(self, what: str, part: Part, item_id: str, done_text: str) -> None:
        """Submit ``part``; once it is committed, say ``done_text`` and let the host redraw."""

        def committed(_: object) -> None:
            self.host.notify(f"{item_id}: {done_text}", timeout=3)
            self.host.after_change([item_id])

        self.host.submit(what, lambda: self.session.project.record([part]), committed)
