"""Setting the dataset's decision policy, from the main screen (P) or the agreement screen (p).

The dialog (``dialogs/policy.py``) asks; this controller submits the policy chosen and, once it is
committed, says so and tells its host that every item's decision may have changed.
"""

from __future__ import annotations

from typing import Protocol

from piqa_tui.tui.dialogs.asker import Submitter
from piqa_tui.tui.dialogs.policy import choose_policy
from piqa_tui.tui.state.session import Session


class PolicyHost(Submitter, Protocol):
    def after_change(self, item_ids: list[str]) -> None:
        """The project changed (committed already): redraw what depends on ``item_ids`` (``[]``: the decisions)."""
        ...


class PolicyController:
    """Asks for a decision policy and submits it."""

    def __init__(self, session: Session, host: PolicyHost) -> None:
        self.session = session
        self.host = host

    def choose(self) -> None:
        ballots = self.session.ballots

        def committed(_: object) -> None:
            self.host.notify(f"decision policy: {ballots.policy_text}", timeout=4)
            self.host.after_change([])  # every item's decision may have changed

        choose_policy(
            self.host,
            ballots,
            lambda policy: self.host.submit("the decision policy", lambda: ballots.set_policy(policy), committed),
        )
