"""Duplicates and leakage: text folding, lexical and semantic search, clusters, their
resolution, and the one scan both the CLI and the TUI run."""
