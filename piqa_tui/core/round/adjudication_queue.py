"""Which items need the lead: the one answer the adjudication screen, ``agree`` and ``progress`` give.

An item needs adjudication when the votes it has, and the votes it can still get, can never decide it:

* **split**: the policy calls the votes a disagreement, or the votes in differ and the validators left to vote
  cannot break the tie (a 1–1 split when ``validators_per_item = 2`` under ``majority:2/3``, which waits for a
  third vote nobody is assigned to cast);
* **votes against gold**: agreed, on another solution than the file's gold label;
* **unsure**: an unsure vote took a place of the panel, and the votes left cannot reach the policy (unsure under
  unanimity, or under a majority the panel cannot fill);
* **under-staffed**: fewer validators can take the item than the policy needs votes (one validator of the
  item's country, two votes needed);
* **decision set aside**: a reviewer's adjudication chose a solution text edited since (or, on a copy fed by a
  votes file, one never held here: an edit made elsewhere that has not arrived), and the votes do not decide the
  item anew.

The votes an item can still get come from the round in force: its assigned validators who may still take it
and have no current vote (a stale vote is no vote), and the places a top-up (``assign --top-up``) would fill
from the other eligible validators, up to ``validators_per_item`` (or the item's own panel size, set with
``assign --item ID --panel N``). Without a round anyone may vote, so only a
policy's disagreement, votes against gold and a decision set aside need the lead. Items in draft or review are
being rewritten and wait for their validators, never for the lead. The lead adjudicates without voting: her
final label settles the item and she never joins the annotators of κ, the audit or the card.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.assignment import eligible
from piqa_tui.core.round.declaration import Round
from piqa_tui.core.round.recorded import Assignment, assignment_in_force, round_in_force
from piqa_tui.core.round.stages import BEFORE_VALIDATION, recorded_stages
from piqa_tui.core.votes.decisions import decisions, policy_spec, project_policy, set_aside
from piqa_tui.core.votes.exchange import texts_held
from piqa_tui.core.votes.policy import SKIP, Policy, Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE


class Why(StrEnum):
    """Why an item needs the lead; the values are the words shown and written to JSON."""

    SPLIT = "split"
    AGAINST_GOLD = "votes against gold"
    UNSURE = "unsure"
    UNDERSTAFFED = "under-staffed"
    SET_ASIDE = "decision set aside"


# Why a set-aside adjudication decides nothing, by whether this copy ever held the text it chose (``texts_held``).
SET_ASIDE_DETAIL = {
    True: "the solution it chose was edited since; adjudicate anew",
    False: "the solution it chose was never held here (edited on another machine, not merged or synced yet); "
    "merge or sync, or adjudicate anew",
}


@dataclass(frozen=True, slots=True)
class Stuck:
    """An item the lead adjudicates: why (``Why``) and one line saying what the votes are."""

    item_id: str
    why: Why
    detail: str

    @property
    def line(self) -> str:
        return f"{self.why.value}: {self.detail}"

    def to_json(self) -> dict[str, object]:
        return {"id": self.item_id, "why": self.why.value, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Panel:
    """The votes on one item: per solution the choices in force, the unsure votes, and how many can still come
    (None: no round limits who may vote)."""

    counts: tuple[int, ...]
    unsure: int
    to_come: int | None


def can_still_decide(policy: Policy, panel: Panel) -> bool:
    """Whether some way the votes still to come could be cast makes the policy agree on a solution."""
    if panel.to_come is None:
        return True
    cast, more = sum(panel.counts), panel.to_come
    for choice, count in enumerate(panel.counts):
        best = count + more  # every vote still to come on this solution
        others = max((c for k, c in enumerate(panel.counts) if k != choice), default=0)
        if policy.kind == "unanimity":
            if others == 0 and best >= policy.required_votes:
                return True
        elif best >= policy.k and best > others and cast + more >= policy.required_votes:
            return True
    return False


def _dead_end(policy: Policy, panel: Panel) -> Stuck | None:
    """Why a panel that cannot decide is stuck (None: it still can); the id is filled in by the caller."""
    if can_still_decide(policy, panel):
        return None
    cast = sum(panel.counts)
    left = (
        "no validator left to vote" if not panel.to_come else f"{panel.to_come} vote{'s' * (panel.to_come != 1)} left"
    )
    rule = policy_spec(policy)
    if sum(1 for c in panel.counts if c) > 1:
        split = "–".join(str(c) for c in sorted((c for c in panel.counts if c), reverse=True))
        return Stuck("", Why.SPLIT, f"split {split}, {left} under {rule}")
    if panel.unsure:
        return Stuck("", Why.UNSURE, f"{panel.unsure} unsure, {cast} for a solution, {left} under {rule}")
    most = cast + panel.unsure + (panel.to_come or 0)
    return Stuck(
        "", Why.UNDERSTAFFED, f"{most} validator{'s' * (most != 1)} can take it, {rule} needs {policy.required_votes}"
    )


class _Staffing:
    """Who can still vote on an item under the round in force (``eligible`` asked once per routing values)."""

    def __init__(self, declared: Round, assignment: Assignment) -> None:
        self.declared = declared
        self.assignment = assignment
        self.columns = declared.routing.columns
        self.pools: dict[tuple[str, ...], frozenset[str]] = {}

    def to_come(self, item: Item, voted: set[str]) -> int:
        key = tuple(item.meta.get(column, "") for column in self.columns)
        pool = self.pools.get(key)
        if pool is None:
            pool = self.pools[key] = frozenset(eligible(self.declared, item)[0])
        assigned = self.assignment.items.get(item.id, ())
        finished = sum(1 for name in assigned if name in voted)
        still = sum(1 for name in assigned if name not in voted and name in pool)
        panel = self.assignment.panel(item.id, self.declared.validators_per_item)
        places = max(0, panel - finished - still)
        free = sum(1 for name in pool if name not in voted and name not in assigned)
        return still + min(places, free)


def _panel(project: Project, item: Item, staffing: _Staffing | None) -> Panel:
    counts = [0] * len(item.solutions)
    unsure = 0
    voted: set[str] = set()
    for annotator, vote in project.state.votes.get(item.id, {}).items():
        if not vote.choice or vote.choice == STALE:
            continue
        voted.add(annotator)
        if vote.choice == SKIP:
            unsure += 1
        elif vote.choice.isdecimal() and int(vote.choice) < len(counts):
            counts[int(vote.choice)] += 1
    return Panel(tuple(counts), unsure, None if staffing is None else staffing.to_come(item, voted))


def to_adjudicate(project: Project, policy: Policy | None = None) -> dict[str, Stuck]:
    """The items that need the lead, with why, in file order (see the module docstring)."""
    policy = policy or project_policy(project)
    chosen = policy
    return project.memo.get(to_adjudicate, lambda: _to_adjudicate(project, chosen), policy)


def _to_adjudicate(project: Project, policy: Policy) -> dict[str, Stuck]:
    declared = round_in_force(project.workspace)
    staffing = (
        _Staffing(declared, assignment_in_force(project.workspace))
        if declared is not None and declared.validators_per_item > 0
        else None
    )
    stages = recorded_stages(project)
    aside = set_aside(project)
    held = texts_held(project, aside)
    found: dict[str, Stuck] = {}
    for item, decision in zip(project.items, decisions(project, policy).values()):
        status = decision.status
        if status in (Status.AGREED, Status.ADJUDICATED) or stages.get(item.id) in BEFORE_VALIDATION:
            continue
        if item.id in aside:
            found[item.id] = Stuck(item.id, Why.SET_ASIDE, SET_ASIDE_DETAIL[held[item.id]])
        elif status is Status.DISAGREEMENT:
            found[item.id] = Stuck(item.id, Why.SPLIT, f"the votes disagree under {policy_spec(policy)}")
        elif status is Status.AGAINST_GOLD:
            found[item.id] = Stuck(
                item.id, Why.AGAINST_GOLD, f"agreed on {(decision.label or 0) + 1}, gold is {_gold(item)}"
            )
        elif staffing is not None and (stuck := _dead_end(policy, _panel(project, item, staffing))) is not None:
            found[item.id] = Stuck(item.id, stuck.why, stuck.detail)
    return found


def _gold(item: Item) -> str:
    return "none" if item.label is None else str(item.label + 1)


def reason_counts(found: dict[str, Stuck]) -> dict[str, int]:
    """Items per reason, in the order of ``Why`` (reasons without items left out)."""
    counts = Counter(stuck.why for stuck in found.values())
    return {why.value: counts[why] for why in Why if counts[why]}


def counts_line(found: dict[str, Stuck]) -> str:
    """``7 to adjudicate (split 5, under-staffed 1, decision set aside 1)``; "0 to adjudicate" when none."""
    counts = reason_counts(found)
    parts = ", ".join(f"{why} {count}" for why, count in counts.items())
    return f"{len(found)} to adjudicate" + (f" ({parts})" if parts else "")


def to_adjudicate_json(found: dict[str, Stuck]) -> dict[str, object]:
    """What ``agree --json`` and ``progress --json`` say of the items that need the lead."""
    return {"count": len(found), "by_reason": reason_counts(found), "items": [s.to_json() for s in found.values()]}


# ------------------------------------------------------------------ the round's panel and the policy


def fitting_policy(validators_per_item: int) -> str:
    """A policy a panel of this size always settles or calls a disagreement: unanimity of one or two, else a
    strict majority of the panel."""
    if validators_per_item <= 2:
        return f"unanimity:{max(validators_per_item, 1)}"
    return f"majority:{validators_per_item // 2 + 1}/{validators_per_item}"


def panel_warning(policy: Policy, validators_per_item: int, solutions: int = 2) -> str | None:
    """One line when ``validators_per_item`` votes can leave an item undecided without the policy calling it a
    disagreement (those items go to adjudication), naming a policy that fits; None when the panel fits."""
    k = validators_per_item
    if k <= 0:
        return None
    rule, needed, waits = policy_spec(policy), policy.required_votes, max(policy.n, policy.required_votes)
    gives = f"the round gives {k} validator{'s' * (k != 1)} per item"
    if k < needed:
        return (
            f"the decision policy {rule} needs {needed} votes to decide an item, and {gives}: no item can be "
            f"agreed, each goes to adjudication; set a policy it can meet ({fitting_policy(k)}) or raise "
            f"validators_per_item to {needed}"
        )
    if k >= waits:
        return None  # every panel that does not agree is a disagreement the policy names
    for counts in _splits(k, max(solutions, 2)):
        if not can_still_decide(policy, Panel(counts, 0, 0)):
            split = "–".join(str(c) for c in counts if c)
            return (
                f"the decision policy {rule} waits for {waits} votes, and {gives}: a {split} split ends undecided "
                f"with nobody left to vote (such items go to adjudication); set a policy that fits "
                f"({fitting_policy(k)}) or raise validators_per_item to {waits}"
            )
    return None


def _splits(votes: int, solutions: int) -> list[tuple[int, ...]]:
    """Every way ``votes`` votes fall on ``solutions`` solutions, most on the first (a few: panels are small)."""
    if solutions == 1:
        return [(votes,)]
    return [(first, *rest) for first in range(votes, -1, -1) for rest in _splits(votes - first, solutions - 1)]
