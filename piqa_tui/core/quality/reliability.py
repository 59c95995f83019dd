"""How far each annotator can be trusted, fitted to the votes: Dawid–Skene and MACE, by EM over numpy arrays.

Both models read a :class:`~piqa_tui.core.votes.agreement.VoteTable` (current votes that name a
solution; skips and withdrawals are not votes) and never change a label: they are a crosscheck.
Every step is a few ``np.bincount`` calls over the votes, so 100,000 items × 3 annotators fit in
well under a second per model.

* Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM
  algorithm": one confusion matrix per annotator, started from the majority vote. The steps, the
  stopping rule (the evidence lower bound per vote gains less than ``tol``) and the floors follow
  ``crowdkit.aggregation.DawidSkene``, so the two agree to 1e-6 on the same votes.
* Hovy et al. (2013), "Learning Whom to Trust with MACE": each annotator knows the answer with
  probability ``competence`` and otherwise spams by a strategy of their own; variational Bayes with
  Beta(0.5, 0.5) and Dirichlet(10) priors, 50 iterations from crowd-kit's seeded start
  (``crowdkit.aggregation.MACE`` with its defaults, whose ten restarts all begin from that one seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from piqa_tui.core.votes.agreement import VoteTable

FLOOR = 1e-10  # crowd-kit's floor under confusion entries, priors and posteriors


def _per_item(table: VoteTable, weights: np.ndarray) -> np.ndarray:
    """Sum of a per-vote value over each item's votes."""
    return np.bincount(table.item, weights=weights, minlength=len(table.items))


def majority_posterior(table: VoteTable) -> np.ndarray:
    """Items × solutions: each item's share of votes per solution (crowd-kit's majority-vote start)."""
    counts = table.counts.astype(float)
    return counts / counts.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------ Dawid–Skene


@dataclass(frozen=True, eq=False)
class DawidSkene:
    """A fitted Dawid–Skene model: ``confusion[a, k, c]`` = P(annotator a votes k | the answer is c)."""

    posterior: np.ndarray  # items × solutions, rows sum to 1
    prior: np.ndarray  # solutions
    confusion: np.ndarray  # annotators × voted × true
    iterations: int

    @property
    def accuracy(self) -> np.ndarray:
        """Per annotator, P(their vote is the answer) under the fitted prior: Σ_c prior[c]·confusion[a, c, c]."""
        diagonal = np.diagonal(self.confusion, axis1=1, axis2=2)
        return diagonal @ self.prior


def _ds_confusion(table: VoteTable, posterior: np.ndarray, voted: np.ndarray) -> np.ndarray:
    """M-step: expected counts of (annotator, vote, answer), floored, normalised over the votes;
    pairs an annotator never voted stay 0 (crowd-kit leaves them out)."""
    n_ann, k = len(table.annotators), table.n_categories
    cell = table.annotator * k + table.choice
    counts = np.stack(
        [np.bincount(cell, weights=posterior[table.item, c], minlength=n_ann * k) for c in range(k)], axis=1
    ).reshape(n_ann, k, k)
    counts = np.where(voted[:, :, None], np.maximum(counts, FLOOR), 0.0)
    return counts / counts.sum(axis=1, keepdims=True)


def _ds_posterior(table: VoteTable, prior: np.ndarray, log_confusion: np.ndarray) -> np.ndarray:
    """E-step: each item's answer given its votes, in logs, scaled before exponentiating."""
    per_vote = log_confusion[table.annotator, table.choice]  # votes × answers
    log_like = np.log(np.maximum(prior, FLOOR)) + np.stack(
        [_per_item(table, per_vote[:, c]) for c in range(table.n_categories)], axis=1
    )
    scaled = np.exp(log_like - log_like.max(axis=1, keepdims=True))
    return scaled / scaled.sum(axis=1, keepdims=True)


def _ds_bound(table: VoteTable, posterior: np.ndarray, prior: np.ndarray, log_confusion: np.ndarray) -> float:
    """crowd-kit's evidence lower bound per vote (its log prior counted once per vote, as it does)."""
    per_vote = log_confusion[table.annotator, table.choice] + np.log(np.maximum(prior, FLOOR))
    joint = float((posterior[table.item] * per_vote).sum())
    floored = np.maximum(posterior, FLOOR)
    return (joint - float((floored * np.log(floored)).sum())) / max(table.n_votes, 1)


def dawid_skene(table: VoteTable, n_iter: int = 100, tol: float = 1e-5) -> DawidSkene:
    """Fit Dawid–Skene by EM from the majority vote (crowd-kit's steps and stopping rule)."""
    k = table.n_categories
    voted = np.bincount(table.annotator * k + table.choice, minlength=len(table.annotators) * k) > 0
    voted = voted.reshape(len(table.annotators), k)
    posterior = majority_posterior(table)
    prior = posterior.mean(axis=0)
    confusion = _ds_confusion(table, posterior, voted)
    bound, done = -np.inf, 0
    with np.errstate(divide="ignore"):  # log 0 where an annotator never cast a vote: never looked up
        while done < n_iter:
            done += 1
            posterior = _ds_posterior(table, prior, np.log(confusion))
            prior = posterior.mean(axis=0)
            confusion = _ds_confusion(table, posterior, voted)
            new = _ds_bound(table, posterior, prior, np.log(confusion))
            if new - bound < tol:
                break
            bound = new
    return DawidSkene(posterior, prior, confusion, done)


# ------------------------------------------------------------------ MACE


@dataclass(frozen=True, eq=False)
class Mace:
    """A fitted MACE model: P(an annotator knows the answer), and what they pick when they do not."""

    posterior: np.ndarray  # items × solutions
    competence: np.ndarray  # annotators: P(not spamming)
    strategy: np.ndarray  # annotators × solutions: their picks when spamming


def digamma(x: np.ndarray) -> np.ndarray:
    """ψ(x) for x > 0: the recurrence up to 6, then the asymptotic series (error below 1e-12)."""
    x = np.asarray(x, float).copy()
    shift = np.zeros_like(x)
    for _ in range(6):
        small = x < 6
        shift -= np.where(small, 1.0 / np.where(small, x, 1.0), 0.0)
        x = np.where(small, x + 1, x)
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return shift + np.log(x) - 0.5 / x - series


def _variational(counts: np.ndarray, prior: float) -> np.ndarray:
    """The variational M-step: exp ψ(count + prior) / exp ψ(Σ(count + prior)), row by row."""
    return np.exp(digamma(counts + prior) - digamma((counts + prior).sum(axis=1, keepdims=True)))


def mace_start(n_annotators: int, k: int, seed: int = 0, noise: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """crowd-kit's start: uniform draws on [1, 1 + noise·3] — its ``sps.uniform(1, 1 + noise)`` — for the
    (spamming, knowing) pair and the strategy, both from ``seed``, rows normalised."""
    knowing = np.random.RandomState(seed).uniform(size=(n_annotators, 2)) * (1 + noise) + 1
    strategy = np.random.RandomState(seed).uniform(size=(n_annotators, k)) * (1 + noise) + 1
    return knowing / knowing.sum(axis=1, keepdims=True), strategy / strategy.sum(axis=1, keepdims=True)


def _mace_expectations(
    table: VoteTable, knowing: np.ndarray, strategy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E-step: the answer's marginals per item, expected (annotator, vote) spam counts, expected knowing counts.

    A vote's likelihood takes two values only — P(spam)·strategy when the answer is another solution, that
    plus P(knows) when it is the one voted — so each item's product is one sum of logs over its votes and
    one more over the votes for each solution; a vote is either spam or known, so its two shares add to 1.
    """
    k, n_ann, n_items = table.n_categories, len(table.annotators), len(table.items)
    spam = knowing[table.annotator, 0] * strategy[table.annotator, table.choice]
    knows = knowing[table.annotator, 1]
    log_spam = np.log(spam)
    voted = np.bincount(table.item * k + table.choice, weights=np.log(spam + knows) - log_spam, minlength=n_items * k)
    marginals = np.exp(_per_item(table, log_spam)[:, None] + voted.reshape(n_items, k)) / k
    total = marginals.sum(axis=1)[table.item]
    knows_share = marginals[table.item, table.choice] / total * knows / (spam + knows)
    spam_counts = np.bincount(table.annotator * k + table.choice, weights=1 - knows_share, minlength=n_ann * k)
    knowing_counts = np.stack(
        [
            np.bincount(table.annotator, weights=1 - knows_share, minlength=n_ann),
            np.bincount(table.annotator, weights=knows_share, minlength=n_ann),
        ],
        axis=1,
    )
    return marginals, spam_counts.reshape(n_ann, k), knowing_counts


def mace(table: VoteTable, n_iter: int = 50, seed: int = 0, alpha: float = 0.5, prior: float = 10.0) -> Mace:
    """Fit MACE by variational EM (crowd-kit's ``method="vb"``, its defaults, its seeded start)."""
    knowing, strategy = mace_start(len(table.annotators), table.n_categories, seed)
    marginals, spam_counts, knowing_counts = _mace_expectations(table, knowing, strategy)
    for _ in range(n_iter):
        knowing = _variational(knowing_counts, alpha)
        strategy = _variational(spam_counts, prior)
        marginals, spam_counts, knowing_counts = _mace_expectations(table, knowing, strategy)
    return Mace(marginals / marginals.sum(axis=1, keepdims=True), knowing[:, 1], strategy)
