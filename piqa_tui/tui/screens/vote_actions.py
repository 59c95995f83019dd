"""Voting, flagging and review on the main screen (issue 4), as a mixin of ``MainScreen``.

Keys (``keymap.VOTE_ACTIONS``): 1-4 vote for a solution and move to the next
item; 0 or s votes unsure; backspace withdraws your vote; f flags; a shows
agreement; A opens adjudication (reviewer mode). Every vote goes through
``Project.vote`` (recorded in the workspace first), then the screen redraws
from the project as after any other change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.votes.policy import SKIP
from piqa_tui.tui.keymap import VOTE_ACTIONS
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.flag_dialog import FlagChoice, FlagDialog
from piqa_tui.tui.screens.policy import choose_policy
from piqa_tui.tui.voting import Ballots, choice_text
from piqa_tui.tui.widgets.vote_panel import VotePanel

if TYPE_CHECKING:
    from piqa_tui.tui.screens.main import MainScreen

# The action names (without arguments) that check_action sees: off while a field is edited.
VOTE_ACTION_NAMES = frozenset(a.action.split("(")[0] for a in VOTE_ACTIONS)


class VoteActions:
    """Actions and drawing for votes; ``self`` is the MainScreen."""

    @property
    def ballots(self: "MainScreen") -> Ballots:
        return self.session.ballots

    def show_votes(self: "MainScreen", item: Item) -> None:
        """Fill the vote lines of the item view (what blind mode allows)."""
        panel = getattr(self, "_vote_panel", None)
        if panel is None:
            panel = self._vote_panel = self.item_view.query_one(VotePanel)
        panel.show_summary(self.ballots.summary(item))

    # ---------------------------------------------------------------- voting

    def action_vote(self: "MainScreen", choice: int) -> None:
        item = self.current
        if item is None:
            return
        count = len(item.solutions)
        if choice >= count:
            self.notify(f"{item.id} has {count} solutions: vote with 1-{count}, or 0 for unsure", severity="warning", timeout=3)
            return
        self._cast(item, str(choice))

    def action_vote_unsure(self: "MainScreen") -> None:
        item = self.current
        if item is not None:
            self._cast(item, SKIP)

    def _cast(self: "MainScreen", item: Item, choice: str) -> None:
        # Move first: when the item leaves a queue (unvoted, needs-votes), the cursor stays on the next one.
        self.item_list.move(1)
        self.app.pending.record(f"your vote on {item.id}", lambda: self.project.vote(item.id, choice),
                                lambda _: self.after_change([item.id]))

    def action_withdraw_vote(self: "MainScreen") -> None:
        item = self.current
        if item is None:
            return
        mine = self.ballots.my_vote(item.id)
        if mine is None:
            self.notify(f"you have no vote on {item.id} to withdraw", timeout=2)
            return
        def withdrawn(_: object) -> None:
            self.after_change([item.id])
            self.notify(f"withdrew your vote ({choice_text(mine)}) on {item.id}", timeout=3)

        self.app.pending.record(f"withdrawing your vote on {item.id}", lambda: self.project.vote(item.id, ""), withdrawn)

    # ---------------------------------------------------------------- flags

    def action_flag(self: "MainScreen") -> None:
        item = self.current
        if item is None:
            return
        current = dict(self.project.state.flags.get(item.id, {}))

        def chosen(choice: FlagChoice | None) -> None:
            if choice is not None:
                self._apply_flags(item, current, choice)

        self.app.push_screen(FlagDialog(item.id, current), chosen)

    def _apply_flags(self: "MainScreen", item: Item, before: dict[str, str], choice: FlagChoice) -> None:
        changes = {reason: False for reason in sorted(set(before) - choice.reasons)}
        changes.update({reason: True for reason in sorted(choice.reasons)
                        if reason not in before or (choice.note and before[reason] != choice.note)})

        def recorded(_: object) -> None:
            self.after_change([item.id])
            shown = ", ".join(sorted(choice.reasons)) or "no flags"
            self.notify(f"{item.id}: {shown}", timeout=3)

        # one action, one undo; a retry after a busy workspace sets again what is already set: harmless
        self.app.pending.record(f"the flags on {item.id}", lambda: self.project.set_flags(item.id, changes, choice.note),
                                recorded)

    # --------------------------------------------------------------- review

    def action_agreement(self: "MainScreen") -> None:
        if not self.ballots.reviewer:  # κ and the status counts come from everyone's votes on every item
            self.notify(
                "agreement and the status counts show how everyone voted (blind mode): start piqa-tui with --reviewer to see them",
                severity="warning",
                timeout=6,
            )
            return
        self.app.push_screen(AgreementScreen(self.session))

    def action_adjudicate(self: "MainScreen") -> None:
        if not getattr(self.app, "reviewer", False):
            self.notify(
                "adjudication shows every vote and the gold label: start piqa-tui with --reviewer to adjudicate",
                severity="warning",
                timeout=6,
            )
            return
        self.app.push_screen(AdjudicationScreen(self.session))

    def action_set_policy(self: "MainScreen") -> None:
        choose_policy(self.app, self.ballots, lambda policy: self.after_change([]))
