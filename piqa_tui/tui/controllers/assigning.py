"""Giving the item under the cursor to one validator by hand, from the lead's view (``V``, reviewer mode).

The TUI's form of ``piqa-tui assign --item ID --to NAME``: a dialog lists the round's active validators (those
who have the item already, and its writer, are said so), and the one chosen is recorded as the same ``assign``
event (``core.round.recorded.given_part``), through the session's write queue like every other write of the
TUI; ``u`` undoes it. The validator's assigned queue follows as soon as their copy has the event.
"""

from __future__ import annotations

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.recorded import assignment_in_force, given_part, round_in_force
from piqa_tui.render.safe_text import markup_safe
from piqa_tui.tui.controllers.host import Host
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, DataText
from piqa_tui.tui.state.session import Session

GIVE_TITLE = "Give this item to a validator"


class AssigningController:
    """Opens the validator choice for the current item and records the one chosen."""

    def __init__(self, session: Session, host: Host) -> None:
        self.session = session
        self.project = session.project
        self.host = host

    def give(self) -> None:
        """The dialog of the round's validators for the current item (the lead's: reviewer mode only)."""
        item = self.host.current
        if item is None:
            return
        if not self.session.reviewer:
            self.host.notify("giving an item to a validator is the lead's: start piqa-tui with --reviewer")
            return
        try:
            declared = round_in_force(self.project.workspace)
        except PiqaError as exc:
            self.host.notify(f"the recorded round cannot be read: {markup_safe(str(exc), one_line=True)}")
            return
        if declared is None or not declared.validators:
            self.host.notify("no round with validators is declared: piqa-tui round PATH import ROUND.toml")
            return
        has = assignment_in_force(self.project.workspace).items.get(item.id, ())
        never = [column for column in declared.routing.never if column in item.meta]
        choices: list[tuple[str | None, str, str]] = []
        for person in declared.validators:
            wrote = any(item.meta.get(column) == person.name for column in never)
            why = "has it already" if person.name in has else ("wrote it (the round's never rule)" if wrote else "")
            choices.append((person.name, person.name, why))
        message: list[str | DataText] = [
            DataText(item.id),
            f"Validators now: {', '.join(has) or 'none'}. The one you choose validates it too (u undoes); "
            "as piqa-tui assign --item ID --to NAME.",
        ]
        self.host.push_screen(ChoiceDialog(GIVE_TITLE, message, choices), lambda name: self._chosen(item.id, name))

    def _chosen(self, item_id: str, name: str | None) -> None:
        if name is None:
            return
        part = given_part(assignment_in_force(self.project.workspace), item_id, name)
        if part is None:
            self.host.notify(f"{markup_safe(name, one_line=True)} validates this item already", timeout=2)
            return
        self.host.submit("assign", lambda: self.project.record([part]), lambda _: self._given(item_id, name))

    def _given(self, item_id: str, name: str) -> None:
        self.host.after_change([item_id])
        shown = markup_safe(item_id, one_line=True)
        self.host.notify(f"{shown} given to {markup_safe(name, one_line=True)} (u undoes)", timeout=3)
