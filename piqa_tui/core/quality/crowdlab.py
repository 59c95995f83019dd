"""CROWDLAB's consensus label and its quality score, from votes and model probabilities, over numpy arrays.

Goh, Tkachenko & Mueller (2022), "CROWDLAB: Supervised learning to infer consensus labels and quality
scores for data with multiple annotators", as ``cleanlab.multiannotator`` computes it: a weighted
average of each model's probabilities and of every annotator's vote, where a model weighs by how
much better than "always the most common label" it matches the majority and an annotator by how
often they match the others. The consensus is the average's top solution; its score is the
average's probability of that solution. The values equal ``get_label_quality_multiannotator``
(one model) and ``get_label_quality_multiannotator_ensemble`` (several) on the same inputs.

Where this departs from cleanlab, it says so: with no model the average is of the votes alone
(cleanlab needs one); a model that did not score an item is left out of that item's average and out
of its own weight's estimate (cleanlab needs every score); a tie cleanlab breaks at random is broken
toward the lower solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from piqa_tui.core.votes.agreement import VoteTable

LOWEST = 1e-6  # cleanlab's CLIPPING_LOWER_BOUND


@dataclass(frozen=True, eq=False)
class ModelProbabilities:
    """One model's probability per solution for the table's items (rows where ``scored`` is false are unused)."""

    name: str
    probs: np.ndarray  # items × solutions
    scored: np.ndarray  # items: bool

    def rows(self, at: np.ndarray) -> ModelProbabilities:
        """The same model over the items at ``at``."""
        return ModelProbabilities(self.name, self.probs[at], self.scored[at])


@dataclass(frozen=True, eq=False)
class Crowdlab:
    """CROWDLAB's answer for the table's items, with the weights it used."""

    consensus: np.ndarray  # items: the consensus solution
    quality: np.ndarray  # items: the weighted average's probability of the consensus (low = in doubt)
    agreement: np.ndarray  # items: share of the item's votes on the consensus
    posterior: np.ndarray  # items × solutions: the weighted average
    annotator_weight: np.ndarray  # annotators
    model_weight: np.ndarray  # models


def _mode_candidates(table: VoteTable) -> np.ndarray:
    """Items × solutions: the solutions with the most votes."""
    return table.counts == table.counts.max(axis=1, keepdims=True)


def _narrow(candidates: np.ndarray, score: np.ndarray, keep_max: bool) -> np.ndarray:
    """Among each item's candidates, those with the best ``score`` (items × solutions, or one per solution)."""
    score = np.broadcast_to(score, candidates.shape).astype(float)
    masked = np.where(candidates, score if keep_max else -score, -np.inf)
    return candidates & (masked == masked.max(axis=1, keepdims=True))


def majority_label(table: VoteTable, mean_probs: np.ndarray | None) -> np.ndarray:
    """cleanlab's ``get_majority_vote_label``: the most voted solution; a tie goes to the models' favourite,
    then the rarer solution overall, then the one voted by annotators who agree with the untied majority
    most, then the lowest (cleanlab: at random)."""
    tied = _mode_candidates(table)
    single = tied.sum(axis=1) == 1
    if mean_probs is not None:
        tied = np.where(single[:, None], tied, _narrow(tied, mean_probs, keep_max=True))
    tied = np.where(tied.sum(axis=1, keepdims=True) == 1, tied, _narrow(tied, table.counts.sum(axis=0), False))
    if (tied.sum(axis=1) > 1).any():
        label = np.argmax(tied, axis=1)
        on_single = single[table.item]
        hits = np.bincount(table.annotator[on_single], weights=table.choice[on_single] == label[table.item][on_single])
        votes = np.bincount(table.annotator[on_single], minlength=len(table.annotators))
        hits = np.pad(hits, (0, len(votes) - len(hits)))
        rate = np.divide(hits, votes, out=np.full(len(votes), np.nan), where=votes > 0)
        rate = np.where(np.isnan(rate), np.nanmean(rate) if (votes > 0).any() else 0.0, rate)
        per_label = np.zeros(table.counts.shape)
        np.add.at(per_label, (table.item, table.choice), rate[table.annotator])
        mean_rate = np.divide(per_label, table.counts, out=np.zeros(per_label.shape), where=table.counts > 0)
        tied = np.where(tied.sum(axis=1, keepdims=True) == 1, tied, _narrow(tied, mean_rate, keep_max=True))
    return np.argmax(tied, axis=1)


def _annotator_agreement(table: VoteTable) -> np.ndarray:
    """Per annotator, how often the other votes on their items match theirs (items with one vote skipped);
    an annotator who shares no item takes the others' mean."""
    raters = table.raters[table.item]
    same = table.counts[table.item, table.choice] - 1
    n_ann = len(table.annotators)
    weight = np.bincount(table.annotator, weights=raters - 1, minlength=n_ann)
    hits = np.bincount(table.annotator, weights=same, minlength=n_ann)
    rate = np.divide(hits, weight, out=np.full(n_ann, np.nan), where=weight > 0)
    return np.where(np.isnan(rate), np.nanmean(rate) if (weight > 0).any() else 0.0, rate)


def _model_weight(
    model: ModelProbabilities, consensus: np.ndarray, multi: np.ndarray, baseline_error: float, scale: float
) -> float:
    """How much better than "always the most common label" the model's top solution matches the consensus,
    on the items with two or more votes it scored (0 when it scored none of them)."""
    used = multi & model.scored
    if not used.any():
        return 0.0
    error = float(np.mean(np.argmax(model.probs[used], axis=1) != consensus[used]))
    return max(1 - error / baseline_error, LOWEST) * scale


def _weighted(
    table: VoteTable, consensus: np.ndarray, models: list[ModelProbabilities], annotator_rate: np.ndarray
) -> Crowdlab:
    """cleanlab's ``_get_consensus_stats`` for one consensus: weights, the weighted average and its score."""
    k, n = table.n_categories, len(table.items)
    agreement = table.counts[np.arange(n), consensus] / table.raters
    multi = table.raters != 1
    likely = float(agreement[multi].mean())
    unlikely = (1 - likely) / (k - 1)
    common = np.argmax(np.bincount(consensus[multi], minlength=k))
    baseline_error = max(float(np.mean(consensus[multi] != common)), LOWEST)
    annotator_weight = np.maximum(1 - (1 - annotator_rate) / baseline_error, LOWEST)
    scale = np.sqrt(table.raters.mean())
    model_weight = np.array([_model_weight(m, consensus, multi, baseline_error, scale) for m in models])
    vote_weight = annotator_weight[table.annotator]
    total = np.bincount(table.item, weights=vote_weight, minlength=n)
    posterior = np.zeros((n, k))
    for c in range(k):
        share = np.where(table.choice == c, likely, unlikely) * vote_weight
        posterior[:, c] = np.bincount(table.item, weights=share, minlength=n)
    for model, weight in zip(models, model_weight):
        posterior += np.where(model.scored[:, None], model.probs * weight, 0.0)
        total = total + np.where(model.scored, weight, 0.0)
    posterior /= total[:, None]
    quality = posterior[np.arange(n), consensus]
    return Crowdlab(consensus, quality, agreement, posterior, annotator_weight, model_weight)


def crowdlab(table: VoteTable, models: list[ModelProbabilities]) -> Crowdlab | None:
    """CROWDLAB's "best quality" consensus and score for every voted item; None when no item has two votes."""
    if not (table.raters > 1).any() or table.n_categories < 2:
        return None
    mean_probs = np.mean([np.where(m.scored[:, None], m.probs, np.nan) for m in models], axis=0) if models else None
    if mean_probs is not None:
        mean_probs = np.nan_to_num(mean_probs, nan=0.0)
    majority = majority_label(table, mean_probs)
    rate = _annotator_agreement(table)
    first = _weighted(table, majority, models, rate)
    top = first.posterior == first.posterior.max(axis=1, keepdims=True)
    consensus = np.where(top.sum(axis=1) == 1, np.argmax(first.posterior, axis=1), majority)
    return _weighted(table, consensus, models, rate)
