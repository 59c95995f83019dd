"""Choosing the dataset's decision policy: a common one from a list, or any one typed.

The dialog only asks: the policy chosen goes back to its caller (the voting controller), which submits it.
"""

from __future__ import annotations

from collections.abc import Callable

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.votes.decisions import parse_policy, policy_spec
from piqa_tui.core.votes.policy import Policy
from piqa_tui.tui.dialogs.asker import Asker
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.state.ballots import COMMON_POLICIES, Ballots


def _check(value: str) -> str | None:
    try:
        parse_policy(value)
    except PiqaError as exc:
        return str(exc)
    return None


def choose_policy(app: Asker, ballots: Ballots, chosen_policy: Callable[[Policy], None]) -> None:
    """Ask for a policy and call ``chosen_policy`` with it (nothing when cancelled or mistyped: that is said)."""
    current = policy_spec(ballots.policy)

    def store(spec: str | None) -> None:
        if not spec:
            return
        try:
            policy = parse_policy(spec)
        except (PiqaError, ValueError) as exc:
            app.notify(str(exc), severity="error")
            return
        chosen_policy(policy)

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
