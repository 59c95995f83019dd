"""What the TUI shows of the votes on a dataset: decisions, status marks, what blind mode hides, the order shown.

``Ballots`` reads the project (votes, adjudications, the dataset's decision
policy) and never changes it except for the policy. Decisions are cached
until the workspace log moves, so drawing list rows and counting queues costs
a dictionary lookup per item, not a policy evaluation. Like ``listing.py``, it
imports no Textual, so the rules are tested without a screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from piqa_tui.core.dataset.capacity import shown_solutions
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.adjudication_queue import to_adjudicate
from piqa_tui.core.round.order import Order, orders_in_force
from piqa_tui.core.text.terminal_safe import isolated, show_invisible
from piqa_tui.core.votes.blind import cast_votes, current_vote, may_see_answers
from piqa_tui.core.votes.decisions import (
    choices,
    decide,
    policy_spec,
    project_policy,
    set_project_policy,
)
from piqa_tui.core.votes.exchange import texts_held
from piqa_tui.core.votes.policy import SKIP, Decision, Policy, Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE
from piqa_tui.render.agreement import describe_policy, set_aside_reason
from piqa_tui.tui.state.doubt import known_doubt

# One cell in the list's mark column per status (needs-votes has none: it is the common case).
STATUS_MARKS: dict[Status, str] = {
    Status.NEEDS_VOTES: " ",
    Status.AGREED: "=",
    Status.DISAGREEMENT: "≠",
    Status.ADJUDICATED: "⚖",
    Status.AGAINST_GOLD: "≢",
}

# Policies offered in the palette; any other is typed as majority:K/N or unanimity:N.
COMMON_POLICIES: tuple[tuple[str, str], ...] = (
    ("majority:2/3", "2 of 3 annotators pick the same solution"),
    ("majority:3/4", "3 of 4 annotators"),
    ("majority:3/5", "3 of 5 annotators"),
    ("unanimity:2", "both of 2 annotators agree"),
    ("unanimity:3", "all 3 annotators agree"),
    ("unanimity:4", "all 4 annotators agree"),
)


def choice_text(choice: str) -> str:
    """A stored vote as annotators say it: solution numbers count from 1."""
    if choice == SKIP:
        return "unsure"
    if choice.isdecimal():
        return str(int(choice) + 1)
    if choice == STALE:
        return "a text since edited"
    return "withdrawn"


@dataclass(frozen=True)
class VoteSummary:
    """The vote lines of the item view: ``votes`` and ``status`` as short texts, and whether blind mode hid them."""

    votes: str
    status: str
    hidden: bool
    mine: str | None  # my vote as shown ("2", "unsure"), None when I have not voted


class Ballots:
    """One user's view of the votes on ``project``; ``reviewer`` sees everything (no blind mode)."""

    def __init__(self, project: Project, reviewer: bool = False) -> None:
        self.project = project
        self.reviewer = reviewer
        self._policy: Policy | None = None
        self._log_position: object = None
        self._decisions: dict[str, Decision] = {}

    # ---------------------------------------------------------------- policy

    @property
    def policy(self) -> Policy:
        if self._policy is None:
            self._policy = project_policy(self.project)
        return self._policy

    def set_policy(self, policy: Policy) -> None:
        """Store the dataset's decision policy in its workspace (every annotator's decisions follow it)."""
        set_project_policy(self.project, policy)
        self.reload_policy()

    def reload_policy(self) -> None:
        """Read the policy again (another process may have changed it)."""
        self._policy = None
        self._decisions.clear()

    @property
    def policy_text(self) -> str:
        return f"{describe_policy(self.policy)} ({policy_spec(self.policy)})"

    # ------------------------------------------------------------- decisions

    def decision(self, item_id: str) -> Decision:
        """The item's status and decided label under the dataset's policy."""
        # The project's version moves with every event applied, recorded by this process or another.
        position = self.project.version
        if position != self._log_position:
            self._log_position = position
            self._decisions.clear()
        found = self._decisions.get(item_id)
        if found is None:
            found = self._decisions[item_id] = decide(self.project, item_id, self.policy)
        return found

    def status(self, item_id: str) -> Status:
        return self.decision(item_id).status

    def counts(self) -> dict[Status, int]:
        """Items per status, in the order of ``Status``."""
        counts = {status: 0 for status in Status}
        for item in self.project.items:
            counts[self.status(item.id)] += 1
        return counts

    def queue(self, status: Status) -> list[str]:
        """Ids of the items with ``status``, in file order."""
        return [item.id for item in self.project.items if self.status(item.id) is status]

    # --------------------------------------------------- shuffled validation

    def order(self, item: Item) -> Order | None:
        """The order the user sees ``item``'s solutions in (shown position → index in the file); None: file
        order. A reviewer always sees file order, as the adjudication screen shows it."""
        if self.reviewer:
            return None
        return orders_in_force(self.project).of(self.project.annotator, item.id, len(item.solutions))

    def shown_index(self, item: Item, index: int) -> int:
        """Where solution ``index`` (in the file) stands on the user's screen."""
        order = self.order(item)
        return order.index(index) if order is not None and 0 <= index < len(order) else index

    def file_index(self, item: Item, shown: int) -> int:
        """The file's index of the solution the user sees at ``shown`` (a key 1-4 names a shown position)."""
        order = self.order(item)
        return order[shown] if order is not None and 0 <= shown < len(order) else shown

    def shown_choice(self, item_id: str, choice: str) -> str:
        """A stored vote or label (a file index) as the user says it: the number of the solution as shown."""
        if not choice.isdecimal():
            return choice_text(choice)
        return choice_text(str(self.shown_index(self.project.item(item_id), int(choice))))

    # ----------------------------------------------------------- blind mode

    def visible(self, item_id: str) -> bool:
        """Whether the gold label, others' votes and the status may be shown (blind mode)."""
        return may_see_answers(self.project, item_id, self.reviewer)

    def visible_items(self, items: list[Item]) -> list[Item]:
        """The items whose answers may be shown: every item for a reviewer, else the ones voted on.
        Totals that judge against gold (accuracies, status counts) are taken over these only."""
        return items if self.reviewer else [item for item in items if self.visible(item.id)]

    def my_vote(self, item_id: str) -> str | None:
        return current_vote(self.project, item_id)

    def status_mark(self, item: Item) -> str:
        """The list's status cell: hidden (blank) until the user may see answers."""
        if not self.visible(item.id):
            return " "
        return STATUS_MARKS[self.status(item.id)]

    def summary(self, item: Item) -> VoteSummary:
        """What the item view says about the votes on ``item``."""
        me = self.project.annotator
        mine = self.my_vote(item.id)
        mine_text = None if mine is None else self.shown_choice(item.id, mine)
        if not self.visible(item.id):
            keys = "/".join(str(n + 1) for n in range(shown_solutions(self.project.dataset.layout, item)))
            return VoteSummary(
                f"not voted yet: {keys} votes, 0 or s is unsure",
                "hidden until you vote (blind mode), like the gold label",
                True,
                None,
            )
        parts = [f"you {mine_text}"] if mine_text is not None else ["you —"]
        parts += [
            f"{show_invisible(a)} {self.shown_choice(item.id, c)}"
            for a, c in cast_votes(self.project, item.id).items()
            if a != me
        ]
        return VoteSummary("  ·  ".join(parts), self.status_text(item.id), False, mine_text)

    def status_text(self, item_id: str) -> str:
        """The item's status in words; an adjudication set aside by an edit says so after it."""
        status = self._status_words(item_id)
        if (doubt := known_doubt(self.project, self.policy, item_id)) is not None:
            status = f"{status}  ·  label in doubt: {doubt.reason}"  # as the "doubt" queue last worked it out
        adjudication = self.project.state.adjudications.get(item_id)
        if adjudication is not None and adjudication.label == STALE:
            held = texts_held(self.project, {item_id: adjudication})[item_id]
            status = f"{status}  ·  {set_aside_reason(adjudication, held)}"
        if self.project.in_conflict(item_id):
            status += "  ·  changed on two machines before a merge: press C to choose the version"
        return status

    def _status_words(self, item_id: str) -> str:
        decision = self.decision(item_id)
        status = decision.status
        if status is Status.ADJUDICATED:
            adjudication = self.project.state.adjudications[item_id]
            text = (
                f"adjudicated → {self.shown_choice(item_id, adjudication.label)} by {show_invisible(adjudication.who)}"
            )
            return text + (f": {isolated(adjudication.reason)}" if adjudication.reason else "")  # the reviewer's words
        if status is Status.AGREED:
            return f"agreed → {self.shown_choice(item_id, str(decision.label))}  ({describe_policy(self.policy)})"
        if status is Status.AGAINST_GOLD:
            gold = self.project.item(item_id).label
            return (
                f"votes against gold: agreed → {self.shown_choice(item_id, str(decision.label))}, gold "
                f"{self.shown_choice(item_id, str(gold))} ({describe_policy(self.policy)}) — a reviewer adjudicates it"
            )
        if status is Status.DISAGREEMENT:
            return f"disagreement  ({describe_policy(self.policy)}) — a reviewer adjudicates it"
        cast = len(choices(self.project, item_id))
        stale = sum(v.choice == STALE for v in self.project.state.votes.get(item_id, {}).values())
        earlier = f"; {stale} predate an edit (cast on an earlier text: vote again)" if stale else ""
        # Whether any vote left can decide it: asked for a reviewer only (the whole round is read for it).
        stuck = to_adjudicate(self.project, self.policy).get(item_id) if self.reviewer else None
        if stuck is not None:
            return f"to adjudicate — {stuck.line}; {cast} in, {describe_policy(self.policy)}{earlier}"
        return f"needs votes: {cast} in, {describe_policy(self.policy)}{earlier}"
