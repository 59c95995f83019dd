"""Prompt templates shipped with piqa-tui (TOML files, see docs/scoring.md); installed as piqa_tui.prompt_templates."""
