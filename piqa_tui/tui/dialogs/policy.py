"""Choosing the dataset's decision policy: a common one from a list, or any one typed."""

from __future__ import annotations

from collections.abc import Callable

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.votes.decisions import parse_policy, policy_spec
from piqa_tui.core.votes.policy import Policy
from piqa_tui.tui.dialogs.asker import Asker
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.pending import PendingWrites
from piqa_tui.tui.state.ballots import COMMON_POLICIES, Ballots


def _check(value: str) -> str | None:
    try:
        parse_policy(value)
    except PiqaError as exc:
        return str(exc)
    return None


def choose_policy(app: Asker, ballots: Ballots, writes: PendingWrites, done: Callable[[Policy], None]) -> None:
    """Ask for a policy; record it in the workspace through the session's write queue (a busy workspace
    is retried) and call ``done`` with it once recorded."""
    current = policy_spec(ballots.policy)

    def store(spec: str | None) -> None:
        if not spec:
            return
        try:
            policy = parse_policy(spec)
        except (PiqaError, ValueError) as exc:
            app.notify(str(exc), severity="error")
            return

        def recorded(_: None) -> None:
            app.notify(f"decision policy: {ballots.policy_text}", timeout=4)
            done(policy)

        writes.record("the decision policy", lambda: ballots.set_policy(policy), recorded)

    def chosen(key: str | None) -> None:
        if key == "custom":
            app.push_screen(
                TextPrompt(
                    "Decision policy",
                    "majority:K/N (K of N annotators agree), unanimity:N (all of N), optionally :min=M votes",
                    current,
                    _check,
                ),
                store,
            )
        else:
            store(key)

    choices: list[tuple[str | None, str, str]] = [(None, "Policies", "")]
    for spec, meaning in COMMON_POLICIES:
        choices.append((spec, spec, meaning + ("  ← now" if spec == current else "")))
    if current not in dict(COMMON_POLICIES):
        choices.append((current, current, "← now"))
    choices.append(("custom", "other…", "type majority:K/N or unanimity:N, with :min=M if you like"))
    app.push_screen(
        ChoiceDialog("Decision policy", f"When do votes settle an item's label? Now: {ballots.policy_text}.", choices),
        chosen,
    )
