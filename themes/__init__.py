"""Themes shipped with piqa-tui (TOML files of Textual theme variables); installed as piqa_tui.themes."""
