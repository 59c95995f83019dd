"""The workspace beside a dataset: the append-only SQLite event log and the project state
(items with edits applied, votes, flags, notes) derived from it."""
