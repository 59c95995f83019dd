"""What the label audit reads from a project: the current votes with their times, the labels, the models.

Votes are the current votes that name a solution (``decisions.vote_table``: skips and withdrawals
are not votes), each with the time of its latest event. A model's probability per solution is the
softmax of the item's per-solution log-likelihoods (raw sums, as stored), for every stored run of a
known template except the solution-only baselines, which never see the prompt; an item a run has not
scored (or scored before an edit) has no probability from it. Reading changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

import numpy as np

from piqa_tui.core.quality.annotators import vote_seconds
from piqa_tui.core.quality.crowdlab import ModelProbabilities
from piqa_tui.core.scoring.stored import model_results
from piqa_tui.core.scoring.templates import Template
from piqa_tui.core.votes.agreement import VoteTable
from piqa_tui.core.votes.decisions import decisions, vote_table
from piqa_tui.core.votes.policy import Policy
from piqa_tui.core.workspace.project import Project


@dataclass(frozen=True, eq=False)
class Evidence:
    """The votes on the dataset's items, and per voted item its gold label, decided label and models' views."""

    table: VoteTable  # items: the voted items the dataset has, in order of first vote
    positions: np.ndarray  # per table item, its position in the dataset
    seconds: np.ndarray  # per vote, seconds since the epoch (NaN: unreadable)
    gold: np.ndarray  # per table item, the file's label (-1: none)
    decided: np.ndarray  # per table item, the label the votes or a reviewer decided (-1: none)
    models: list[ModelProbabilities]


def softmax(logliks: np.ndarray) -> np.ndarray:
    """Rows of log-likelihoods to probabilities (-inf where a row has fewer solutions gives 0)."""
    scaled = np.exp(logliks - logliks.max(axis=1, keepdims=True))
    return scaled / scaled.sum(axis=1, keepdims=True)


def _known_votes(project: Project, k: int) -> tuple[VoteTable, np.ndarray]:
    """The vote table over ``k`` solutions, without votes on items the dataset no longer has."""
    table = vote_table(project, k)
    index = project.index
    positions = np.fromiter(map(index.get, table.items, repeat(-1)), np.int64, len(table.items))
    if (positions >= 0).all():
        return table, positions
    kept = table.subset((positions >= 0)[table.item])
    return kept, np.fromiter(map(index.__getitem__, kept.items), np.int64, len(kept.items))


def _vote_times(project: Project, table: VoteTable) -> np.ndarray:
    """The time of each vote's latest event, in seconds."""
    votes = project.state.votes
    items, names = table.items, table.annotators
    times = [votes[items[i]][names[a]].time for i, a in zip(table.item.tolist(), table.annotator.tolist())]
    return vote_seconds(times)


def model_probabilities(
    project: Project, positions: np.ndarray, k: int, known: Mapping[str, Template] | None = None
) -> list[ModelProbabilities]:
    """Every stored run's probabilities for the items at ``positions`` (runs that scored none left out)."""
    if project.workspace is None:
        return []
    items = [project.items[p] for p in positions.tolist()]
    row = {item.id: r for r, item in enumerate(items)}
    found = []
    for run, scores in model_results(project.workspace.conn, items, known):
        logliks = np.full((len(items), k), -np.inf)
        scored = np.zeros(len(items), bool)
        for score in scores:
            r = row[score.item_id]
            logliks[r, : len(score.logliks)] = score.logliks
            scored[r] = True
        if scored.any():
            logliks[~scored, 0] = 0.0  # rows never read: kept finite
            found.append(ModelProbabilities(run.label, softmax(logliks), scored))
    return found


def read_evidence(
    project: Project,
    policy: Policy | None = None,
    known: Mapping[str, Template] | None = None,
    times: bool = True,
) -> Evidence:
    """Everything the audit needs, read once; ``known`` templates by name (the shipped ones by default);
    without ``times`` the vote times are not read (``seconds`` is empty): scoring labels needs none."""
    k = max(map(len, map(attrgetter("solutions"), project.items)), default=2)
    table, positions = _known_votes(project, k)
    labels = np.fromiter((-1 if i.label is None else i.label for i in project.items), np.int64, len(project.items))
    decided_by_id = decisions(project, policy)
    decided = np.fromiter(
        (-1 if (d := decided_by_id[project.items[p].id].label) is None else d for p in positions.tolist()),
        np.int64,
        len(positions),
    )
    seconds = _vote_times(project, table) if times else np.zeros(0)
    models = model_probabilities(project, positions, k, known)
    return Evidence(table, positions, seconds, labels[positions], decided, models)
