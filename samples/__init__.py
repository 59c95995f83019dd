"""Sample datasets shipped with piqa-tui (see README.md here); installed as piqa_tui.samples."""
