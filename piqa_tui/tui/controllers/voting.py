"""Voting, flagging and review on the main screen, as a plain object the screen owns.

Keys (``keymap.VOTE_ACTIONS``): 1-4 vote for a solution and move to the next
item; 0 or s votes unsure; backspace withdraws your vote; f flags; a shows
agreement; A opens adjudication (reviewer mode). Every vote goes through
``Project.vote`` (recorded in the workspace first), then the screen redraws
from the project as after any other change. In shuffled validation a key names
the solution as shown: the controller maps it to the file's index (the vote
then records that text) and records the order shown before the first vote cast
in it (``core/round/order.py``).
"""

from __future__ import annotations

from typing import Protocol

from piqa_tui.core.dataset.capacity import shown_solutions
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.order import orders_in_force
from piqa_tui.core.votes.casting import cast_vote
from piqa_tui.core.votes.policy import SKIP
from piqa_tui.tui.controllers.host import Host
from piqa_tui.tui.controllers.policy import PolicyController
from piqa_tui.tui.dialogs.flag import FlagChoice, FlagDialog
from piqa_tui.tui.dialogs.questions import ask_questions
from piqa_tui.tui.state.ballots import Ballots
from piqa_tui.tui.state.session import Session


class VotingHost(Host, Protocol):
    def advance(self) -> None:
        """Move the cursor to the next item of the list."""
        ...

    def open_agreement(self) -> None:
        """Show the agreement screen over this one."""
        ...

    def open_adjudication(self) -> None:
        """Show the adjudication screen over this one."""
        ...


class VotingController:
    """Casts, withdraws and flags on the item under the host's cursor; opens the review screens."""

    def __init__(self, session: Session, host: VotingHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host
        self.policy = PolicyController(session, host)

    @property
    def ballots(self) -> Ballots:
        return self.session.ballots

    # ---------------------------------------------------------------- voting

    def vote(self, choice: int) -> None:
        """Vote for the solution shown at ``choice`` (from 0) on the current item and move on."""
        item = self.host.current
        if item is None:
            return
        count = shown_solutions(self.project.dataset.layout, item)  # a key names a solution on screen, no other
        if choice >= count:
            self.host.notify(
                f"{item.id} {'has' if count == len(item.solutions) else 'shows'} {count} solutions: vote with 1-{count},"
                " or 0 for unsure",
                severity="warning",
                timeout=3,
            )
            return
        self._cast(item, str(self.ballots.file_index(item, choice)))

    def vote_unsure(self) -> None:
        item = self.host.current
        if item is not None:
            self._cast(item, SKIP)

    def _cast(self, item: Item, choice: str) -> None:
        shown = self.ballots.order(item)
        # Move first: when the item leaves a queue (unvoted, needs-votes), the cursor stays on the next one.
        self.host.advance()
        self.host.submit(
            f"your vote on {item.id}",
            lambda: cast_vote(self.project, item.id, choice, shown, orders_in_force(self.project).recorded),
            lambda _: self.host.after_change([item.id]),
        )

    def withdraw(self) -> None:
        item = self.host.current
        if item is None:
            return
        mine = self.ballots.my_vote(item.id)
        if mine is None:
            self.host.notify(f"you have no vote on {item.id} to withdraw", timeout=2)
            return

        def withdrawn(_: object) -> None:
            self.host.after_change([item.id])
            self.host.notify(f"withdrew your vote ({self.ballots.shown_choice(item.id, mine)}) on {item.id}", timeout=3)

        self.host.submit(f"withdrawing your vote on {item.id}", lambda: self.project.vote(item.id, ""), withdrawn)

    # ---------------------------------------------------------------- flags

    def flag(self) -> None:
        """Ask for the current item's flags (the dialog starts from the ones it has)."""
        item = self.host.current
        if item is None:
            return
        current = dict(self.project.state.flags.get(item.id, {}))

        def chosen(choice: FlagChoice | None) -> None:
            if choice is not None:
                self.apply_flags(item, current, choice)

        self.host.push_screen(FlagDialog(item.id, current), chosen)

    def apply_flags(self, item: Item, before: dict[str, str], choice: FlagChoice) -> None:
        """Record the difference between the flags ``item`` had and the ones chosen, as one action."""
        changes = {reason: False for reason in sorted(set(before) - choice.reasons)}
        changes.update(
            {
                reason: True
                for reason in sorted(choice.reasons)
                if reason not in before or (choice.note and before[reason] != choice.note)
            }
        )

        def recorded(_: object) -> None:
            self.host.after_change([item.id])
            shown = ", ".join(sorted(choice.reasons)) or "no flags"
            self.host.notify(f"{item.id}: {shown}", timeout=3)

        # one action, one undo; a retry after a busy workspace sets again what is already set: harmless
        self.host.submit(
            f"the flags on {item.id}", lambda: self.project.set_flags(item.id, changes, choice.note), recorded
        )

    # --------------------------------------------------------------- review

    def agreement(self) -> None:
        if not self.ballots.reviewer:  # κ and the status counts come from everyone's votes on every item
            self.host.notify(
                "agreement and the status counts show how everyone voted (blind mode): start piqa-tui with --reviewer to see them",
                severity="warning",
                timeout=6,
            )
            return
        self.host.open_agreement()

    def adjudicate(self) -> None:
        if not self.ballots.reviewer:
            self.host.notify(
                "adjudication shows every vote and the gold label: start piqa-tui with --reviewer to adjudicate",
                severity="warning",
                timeout=6,
            )
            return
        self.host.open_adjudication()

    def questions(self) -> None:
        """Answer the round's extra questions on the current item (others' answers only where blind mode allows)."""
        item = self.host.current
        if item is not None:
            ask_questions(self.host, self.project, item, self.ballots.visible(item.id))

    def set_policy(self) -> None:
        self.policy.choose()
