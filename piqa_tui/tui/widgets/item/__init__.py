"""The widgets of the current item: its fields, solutions, label, metadata, votes, scores and flags."""
