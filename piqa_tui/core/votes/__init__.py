"""Votes and what they decide: vote files, the decision policy, each item's decision,
agreement statistics, what blind mode hides, and flags."""
