"""Decision policy: when the votes on an item settle its gold label."""

from __future__ import annotations

import pytest

from piqa_tui.core.votes.policy import Decision, Policy, Status

MAJORITY = Policy.majority(k=2, n=3)
UNANIMITY = Policy.unanimity(4)


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([], Decision(Status.NEEDS_VOTES)),
        ([1], Decision(Status.NEEDS_VOTES)),
        ([1, 1], Decision(Status.AGREED, 1)),
        ([0, 1], Decision(Status.NEEDS_VOTES)),  # the third vote breaks the tie
        ([0, 1, 1], Decision(Status.AGREED, 1)),
        ([0, 1, 2], Decision(Status.DISAGREEMENT)),
        ([0, 0, 1, 1], Decision(Status.DISAGREEMENT)),  # an extra annotator tied it
        ([0, 0, 1, 1, 1], Decision(Status.AGREED, 1)),
    ],
)
def test_majority_two_of_three(votes: list[int], expected: Decision) -> None:
    assert MAJORITY.decide(votes) == expected


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([], Status.NEEDS_VOTES),
        ([2, 2, 2], Status.NEEDS_VOTES),
        ([2, 2, 2, 2], Status.AGREED),
        ([2, 2, 0], Status.DISAGREEMENT),  # decided as soon as two votes differ
        ([2, 2, 2, 0], Status.DISAGREEMENT),
    ],
)
def test_unanimity_four_of_four(votes: list[int], expected: Status) -> None:
    decision = UNANIMITY.decide(votes)
    assert decision.status == expected
    assert decision.label == (2 if expected == Status.AGREED else None)


def test_majority_min_votes_waits_for_the_whole_panel() -> None:
    policy = Policy.majority(k=2, n=3, min_votes=3)
    assert policy.decide([1, 1]).status == Status.NEEDS_VOTES
    assert policy.decide([1, 1, 0]) == Decision(Status.AGREED, 1)


def test_unanimity_min_votes() -> None:
    policy = Policy.unanimity(n=4, min_votes=3)
    assert policy.decide([0, 0]).status == Status.NEEDS_VOTES
    assert policy.decide([0, 0, 0]) == Decision(Status.AGREED, 0)


def test_majority_out_of_reach_is_disagreement_early() -> None:
    policy = Policy.majority(k=3, n=3)
    assert policy.decide([0, 1]).status == Status.DISAGREEMENT
    assert policy.decide([0, 0]).status == Status.NEEDS_VOTES


@pytest.mark.parametrize("policy", [MAJORITY, UNANIMITY])
@pytest.mark.parametrize("votes", [[], [0, 1, 2], [1, 1, 1, 1]])
def test_adjudicated_label_wins(policy: Policy, votes: list[int]) -> None:
    assert policy.decide(votes, adjudicated=0) == Decision(Status.ADJUDICATED, 0)


def test_status_words() -> None:
    assert [s.value for s in Status] == ["needs-votes", "agreed", "disagreement", "adjudicated", "votes-against-gold"]
    assert Policy() == MAJORITY


@pytest.mark.parametrize("kwargs", [{"k": 4, "n": 3}, {"k": 0}, {"kind": "plurality"}, {"min_votes": 0}])
def test_bad_policies_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        Policy(**kwargs)
