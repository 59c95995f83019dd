"""What the recorded votes decide: the policy in force, each item's decision, and the agreement.

Every face (CLI, TUI, card) asks these functions; none re-derives a decision
or an agreement summary of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.votes.agreement import (
    AgreementBreakdown,
    AgreementReport,
    VoteTable,
    agreement_by_codes,
    agreement_report,
)
from piqa_tui.core.votes.policy import STATUSES, Decision, Policy, Status
from piqa_tui.core.votes.uncertainty import Bootstrap
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE, Adjudication

if TYPE_CHECKING:
    import numpy as np
else:
    from piqa_tui.core.numeric import np  # imported on its first use: core/numeric.py

POLICY_KEY = "decision_policy"
DEFAULT_BOOTSTRAP = Bootstrap()  # 1,000 resamples of the items, 95%, seed 0: the same intervals every run


# ------------------------------------------------------------------ decisions


def parse_policy(spec: str) -> Policy:
    """``majority:2/3``, ``majority:2/3:min=2``, ``unanimity:4`` → Policy."""
    parts = spec.strip().lower().split(":")
    try:
        extra = {k: int(v) for k, v in (p.split("=") for p in parts[2:])} if len(parts) > 2 else {}
        if parts[0] == "majority":
            k, n = (int(x) for x in (parts[1] if len(parts) > 1 else "2/3").split("/"))
            return Policy.majority(k, n, extra.get("min"))
        if parts[0] == "unanimity":
            return Policy.unanimity(int(parts[1]) if len(parts) > 1 else 4, extra.get("min"))
    except ValueError as exc:
        raise PiqaError(f"bad policy '{spec}' ({exc}); use majority:K/N, unanimity:N, optionally :min=M") from None
    raise PiqaError(f"bad policy '{spec}'; use majority:K/N (e.g. majority:2/3) or unanimity:N (e.g. unanimity:4)")


def policy_spec(policy: Policy) -> str:
    base = f"majority:{policy.k}/{policy.n}" if policy.kind == "majority" else f"unanimity:{policy.n}"
    return base + (f":min={policy.min_votes}" if policy.min_votes else "")


def project_policy(project: Project) -> Policy:
    """The dataset's decision policy, kept in its workspace (default: majority 2 of 3)."""
    spec = project.workspace.get_meta(POLICY_KEY) if project.workspace else None
    return parse_policy(spec) if spec else Policy.majority(2, 3)


def set_project_policy(project: Project, policy: Policy) -> None:
    if project.workspace is None:
        raise PiqaError("setting a policy needs a workspace")
    project.workspace.set_meta({POLICY_KEY: policy_spec(policy)})


def choices(project: Project, item_id: str) -> dict[str, int]:
    """Each annotator's current vote on an item, as a solution index (skips and withdrawals left out)."""
    return {a: int(v.choice) for a, v in project.state.votes.get(item_id, {}).items() if v.choice.isdecimal()}


def adjudicated_label(project: Project, item_id: str) -> int | None:
    """The label a reviewer decided for the item, or None (none decided, or a record that names no solution)."""
    adjudicated = project.state.adjudications.get(item_id)
    return int(adjudicated[0]) if adjudicated and adjudicated[0].isdecimal() else None


def set_aside(project: Project) -> dict[str, Adjudication]:
    """The adjudications set aside because the solution text they chose was edited since, by item in file order;
    their items are decided by the votes again, back in their queue."""
    found = {
        item_id: adjudication
        for item_id, adjudication in project.state.adjudications.items()
        if adjudication.label == STALE and item_id in project.index
    }
    return dict(sorted(found.items(), key=lambda pair: project.index[pair[0]]))


def adjudication_edited_away(project: Project, item_id: str, changes: dict[str, str]) -> Adjudication | None:
    """The adjudication in force on the item that an edit of ``changes`` would set aside — it chose a solution
    whose text the edit changes — or None. Asked before the edit, so the one editing is told (the lead's own
    decision included)."""
    adjudication = project.state.adjudications.get(item_id)
    if adjudication is None or not adjudication.label.isdecimal():
        return None
    chosen = f"solution{adjudication.label}"
    item = project.item(item_id)
    if chosen not in changes or int(adjudication.label) >= len(item.solutions):
        return None
    return adjudication if nfc(changes[chosen]) != item.solutions[int(adjudication.label)] else None


def against_gold(decision: Decision, gold: int | None) -> Decision:
    """An agreed decision on another solution than the gold label becomes ``votes-against-gold`` (same label):
    the release would change the file's label, so a reviewer should see it (and may adjudicate)."""
    if decision.status is Status.AGREED and gold is not None and decision.label != gold:
        return Decision(Status.AGAINST_GOLD, decision.label)
    return decision


def decide(project: Project, item_id: str, policy: Policy) -> Decision:
    """One item's decision: the policy over its current votes, then adjudication, then the gold label's check."""
    decision = policy.decide(choices(project, item_id).values(), adjudicated_label(project, item_id))
    return against_gold(decision, project.item(item_id).label)


@dataclass(frozen=True)
class GoldChange:
    """An item whose released label (``export --decided``) differs from its gold label; 0-based labels."""

    id: str
    gold: int | None
    decided: int

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "gold": self.gold, "decided": self.decided}


def gold_changes_json(project: Project, policy: Policy | None = None) -> list[dict[str, object]]:
    """``[change.to_json() for change in gold_changes(project, policy)]`` made straight from the decided labels,
    without a ``GoldChange`` per item in between (a draft against rough gold has tens of thousands)."""
    changed, decided = _changed_labels(project, policy)
    items = project.items
    return [
        {"id": item.id, "gold": item.label, "decided": value}
        for item, value in zip(map(items.__getitem__, changed), decided)
    ]


def _changed_labels(project: Project, policy: Policy | None) -> tuple[list[int], list[int]]:
    """The positions of the items whose decided label is not their gold label, and those decided labels."""
    label = decided_labels(project, policy)
    changed = np.flatnonzero((label >= 0) & (label != _gold_labels(project.items)))
    return changed.tolist(), label[changed].tolist()


def gold_changes(
    project: Project, policy: Policy | None = None, found: dict[str, Decision] | None = None
) -> list[GoldChange]:
    """The items whose decided label (agreed, against gold, adjudicated) is not their gold label, in file order."""
    items = project.items
    if found is None:  # the decided labels as one array: no decision object per item
        changed, decided = _changed_labels(project, policy)
        return [GoldChange(items[k].id, items[k].label, value) for k, value in zip(changed, decided)]
    return [
        GoldChange(item.id, item.label, decision.label)
        for item in items
        if (decision := found[item.id]).label is not None and decision.label != item.label
    ]


def _gold_labels(items: list[Item]) -> np.ndarray:
    """Per item, its gold label; -1 for none."""
    return np.fromiter((-1 if i.label is None else i.label for i in items), np.int64, len(items))


def vote_table(project: Project, n_categories: int | None = None) -> VoteTable:
    """The current votes that name a solution, encoded: ``VoteTable.from_votes(vote_triples(project)).canonical()``.

    Straight from the column-wise current votes while nothing has built ``state.votes``.
    """
    current = project.state.current_votes
    if current is None:
        return VoteTable.from_votes(vote_triples(project), n_categories).canonical()

    def encode() -> VoteTable:
        choice = current.numeric()
        cast = choice >= 0
        return VoteTable.from_codes(
            current.item[cast], current.item_ids, current.annotator[cast], current.annotators, choice[cast]
        ).canonical()  # the order the votes arrived in (another machine's may differ) changes no figure

    table = current.memo("table", encode)  # agree asks twice: for the report and for the decisions
    return table if n_categories is None else table.with_categories(n_categories)


def _positions(project: Project, table: VoteTable) -> np.ndarray:
    """Each of the table's items' position in ``project.items``; -1 for an id the dataset does not have."""
    index = project.index

    def look_up() -> np.ndarray:
        return np.fromiter(map(index.get, table.items, repeat(-1)), np.int64, len(table.items))

    current = project.state.current_votes  # its tables share one items tuple: look the ids up once
    return look_up() if current is None else current.memo(("positions", id(table.items)), look_up)


def _decided(project: Project, policy: Policy) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
    """Per item (file order): status code (index in STATUSES) and voted label (-1: none); and the adjudicated labels by position."""
    table = vote_table(project)
    counts = np.zeros((len(project.items), table.n_categories), np.int64)
    pos = _positions(project, table)
    known = pos >= 0
    counts[pos[known]] = table.counts[known]
    status, label = policy.decide_many(counts)
    gold = _gold_labels(project.items)
    agreed = status == STATUSES.index(Status.AGREED)
    status[agreed & (gold >= 0) & (label != gold)] = STATUSES.index(Status.AGAINST_GOLD)
    adjudicated = {}
    for item_id in project.state.adjudications:
        if (where := project.index.get(item_id)) is not None and (
            value := adjudicated_label(project, item_id)
        ) is not None:
            adjudicated[where] = value
    status[list(adjudicated)] = STATUSES.index(Status.ADJUDICATED)
    return status, label, adjudicated


def decisions(project: Project, policy: Policy | None = None) -> dict[str, Decision]:
    """Every item's decision (``decide`` for each, in file order), computed for all items at once."""
    status, label, adjudicated = _decided(project, policy or project_policy(project))
    made: dict[tuple[int, int], Decision] = {}  # decisions are immutable: one object per (status, label)
    found = {}
    for item, code, value in zip(project.items, status.tolist(), label.tolist()):
        decision = made.get((code, value))
        if decision is None:
            decision = made[code, value] = Decision(STATUSES[code], None if value < 0 else value)
        found[item.id] = decision
    for where, value in adjudicated.items():
        found[project.items[where].id] = Decision(Status.ADJUDICATED, value)
    return found


def decided_labels(project: Project, policy: Policy | None = None) -> np.ndarray:
    """Per item (file order), its decided label (agreed, against gold, adjudicated), -1 for none: the labels of
    ``decisions`` as one array, without building a decision per item."""
    label, adjudicated = _decided(project, policy or project_policy(project))[1:]
    label[list(adjudicated)] = list(adjudicated.values())
    return label


def decision_counts(project: Project, policy: Policy | None = None) -> dict[str, int]:
    """Items per status (the status words, in the order of ``Status``), without building a decision per item."""
    status = _decided(project, policy or project_policy(project))[0]
    return {s.value: int(n) for s, n in zip(STATUSES, np.bincount(status, minlength=len(STATUSES)))}


def vote_triples(project: Project) -> list[tuple[str, str, int]]:
    """(item, annotator, choice) for every current vote, as the agreement functions take them."""
    return [(item_id, a, c) for item_id in project.state.votes for a, c in choices(project, item_id).items()]


def _per_vote_item(per_item: np.ndarray, pos: np.ndarray, missing: int) -> np.ndarray:
    """``per_item`` (one value per dataset item) at positions ``pos``; ``missing`` where pos is -1."""
    out = np.full(len(pos), missing, np.int64)
    known = pos >= 0
    out[known] = per_item[pos[known]]
    return out


def project_agreement(
    project: Project, by: list[str] | None = None, bootstrap: Bootstrap | None = DEFAULT_BOOTSTRAP
) -> tuple[AgreementReport, dict[str, AgreementBreakdown]]:
    """The agreement report of the recorded votes, overall and broken down by categorical columns,
    with bootstrap intervals (``bootstrap=None``: none).

    Gold labels and groups are the dataset's; items voted on that the dataset does not have
    count without gold, in the group "(none)".
    """
    n_categories = max(map(len, map(attrgetter("solutions"), project.items)), default=2)
    votes = vote_table(project, n_categories)  # encoded once for every breakdown
    pos = _positions(project, votes)
    gold = _per_vote_item(_gold_labels(project.items), pos, -1)
    report = agreement_report(votes, n_categories=n_categories, gold=gold, bootstrap=bootstrap)
    breakdowns = {}
    for column in by or []:
        values = _column_values(project.items, column)
        code = {name: k for k, name in enumerate(dict.fromkeys(values))}
        none = code.setdefault("(none)", len(code))
        names = list(code)
        group = _per_vote_item(np.fromiter(map(code.__getitem__, values), np.int64, len(values)), pos, none)
        in_use = np.flatnonzero(np.bincount(group, minlength=len(names))).tolist()
        present = sorted(in_use, key=names.__getitem__)  # groups ordered by name
        rank = np.zeros(len(names), np.int64)
        rank[present] = np.arange(len(present))
        groups = [names[k] for k in present]
        breakdowns[column] = agreement_by_codes(votes, rank[group], groups, gold, column, report, bootstrap)
    return report, breakdowns


def _column_values(items: list[Item], column: str) -> list[str]:
    """Each item's value in a metadata column as text ("" where it has none, "(none)" for a None)."""
    values = list(map(methodcaller("get", column, ""), map(attrgetter("meta"), items)))
    if set(map(type, values)) <= {str}:  # the usual case, looked at in C
        return values
    return ["(none)" if v is None else str(v) for v in values]


@dataclass(frozen=True)
class AgreementSummary:
    """What the votes say, all read together: the policy in force, items per status, and the agreement."""

    policy: Policy
    statuses: dict[str, int]
    report: AgreementReport
    breakdowns: dict[str, AgreementBreakdown]


def agreement_summary(
    project: Project,
    by: list[str] | None = None,
    policy: Policy | None = None,
    bootstrap: Bootstrap | None = DEFAULT_BOOTSTRAP,
) -> AgreementSummary:
    """The summary ``agree``, the dataset card and the TUI's agreement screen show (``by``: columns to break
    down by; ``bootstrap``: how the intervals are made, None for none)."""
    policy = policy or project_policy(project)
    report, breakdowns = project_agreement(project, by, bootstrap)
    return AgreementSummary(policy, decision_counts(project, policy), report, breakdowns)
