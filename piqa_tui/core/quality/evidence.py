"""What the label audit reads from a project: the current votes with their times, the labels, the models.

Votes are the current votes that name a solution (``decisions.vote_table``: skips and withdrawals
are not votes), each with the time of its latest event. A model's probability per solution is the
softmax of the item's per-solution log-likelihoods (raw sums, as stored), for every stored run of a
known template except the solution-only baselines, which never see the prompt; an item a run has not
scored (or scored before an edit) has no probability from it. Reading changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

import numpy as np

from piqa_tui.core.quality.annotators import vote_seconds
from piqa_tui.core.quality.crowdlab import ModelProbabilities
from piqa_tui.core.scoring.results import item_content_hash
from piqa_tui.core.scoring.stored import StoredRun, stored_runs
from piqa_tui.core.scoring.templates import Template
from piqa_tui.core.votes.agreement import VoteTable
from piqa_tui.core.votes.decisions import decided_labels, vote_table
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
    items, names = table.items, table.annotators
    current = project.state.current_votes
    known = current.times() if current is not None else None  # column-wise: no vote dict built for this
    if known is None:
        votes = project.state.votes
        times = [votes[items[i]][names[a]].time for i, a in zip(table.item.tolist(), table.annotator.tolist())]
    else:
        times = [known[items[i], names[a]] for i, a in zip(table.item.tolist(), table.annotator.tolist())]
    return vote_seconds(times)


def _stored_logliks(conn: sqlite3.Connection, run: StoredRun) -> dict[str, str]:
    """The run's log-likelihoods by item hash, as stored (JSON lists).

    Read straight from the score cache's table, all of the run at once: ``ScoreCache.lookup`` builds an
    object per solution, several seconds for two runs of 100,000 items, and only the log-likelihoods count here.
    """
    query = "SELECT item_hash, logliks FROM model_scores WHERE model = ? AND template = ?"
    return dict(conn.execute(query, (run.model, run.template_key)))


def _run_logliks(stored: dict[str, str], hashes: list[str], sizes: list[int], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Items × solutions log-likelihoods of one run (unscored rows: 0 then -inf), and which items it scored:
    as ``stored_scores``, a stored score with another count of solutions is not the item's."""
    rows = [r for r, h in enumerate(hashes) if h in stored]
    values = json.loads("[" + ",".join(stored[hashes[r]] for r in rows) + "]") if rows else []
    logliks = np.full((len(hashes), k), -np.inf)
    logliks[:, 0] = 0.0
    scored = np.zeros(len(hashes), bool)
    if values and all(len(row) == k == sizes[r] for r, row in zip(rows, values)):  # the usual case: one array
        logliks[rows] = np.array(values, float)
        scored[rows] = True
        return logliks, scored
    for r, row in zip(rows, values):
        if len(row) == sizes[r] <= k:
            logliks[r, : len(row)] = row
            logliks[r, len(row) :] = -np.inf
            scored[r] = True
    return logliks, scored


def model_probabilities(
    project: Project, positions: np.ndarray, k: int, known: Mapping[str, Template] | None = None
) -> list[ModelProbabilities]:
    """Every stored run's probabilities for the items at ``positions`` (runs that scored none left out)."""
    if project.workspace is None:
        return []
    conn = project.workspace.conn
    runs = [run for run in stored_runs(conn, known) if run.template is not None and not run.baseline]
    if not runs:
        return []
    items = [project.items[p] for p in positions.tolist()]
    hashes = [item_content_hash(item) for item in items]
    sizes = [len(item.solutions) for item in items]
    found = []
    for run in runs:
        logliks, scored = _run_logliks(_stored_logliks(conn, run), hashes, sizes, k)
        if scored.any():
            found.append(ModelProbabilities(run.label, softmax(logliks), scored))
    return found


def solution_count(project: Project) -> int:
    """The most solutions an item has: the width of every per-solution array here."""
    return max(map(len, map(attrgetter("solutions"), project.items)), default=2)


def every_item_models(project: Project, known: Mapping[str, Template] | None = None) -> list[ModelProbabilities]:
    """``model_probabilities`` for every item of the dataset, in file order: what a caller keeps while the votes
    change (the probabilities change only with the items' text and the stored runs)."""
    return model_probabilities(project, np.arange(len(project.items)), solution_count(project), known)


def read_evidence(
    project: Project,
    policy: Policy | None = None,
    known: Mapping[str, Template] | None = None,
    times: bool = True,
    models: list[ModelProbabilities] | None = None,
) -> Evidence:
    """Everything the audit needs, read once; ``known`` templates by name (the shipped ones by default);
    without ``times`` the vote times are not read (``seconds`` is empty): scoring labels needs none;
    ``models`` (from ``every_item_models``, for the items as they are now) spares reading the stored runs."""
    k = solution_count(project)
    table, positions = _known_votes(project, k)
    labels = np.fromiter((-1 if i.label is None else i.label for i in project.items), np.int64, len(project.items))
    decided = decided_labels(project, policy)[positions]
    seconds = _vote_times(project, table) if times else np.zeros(0)
    found = model_probabilities(project, positions, k, known) if models is None else [m.rows(positions) for m in models]
    return Evidence(table, positions, seconds, labels[positions], decided, found)
