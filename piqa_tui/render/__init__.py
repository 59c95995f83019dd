"""How core results look: Rich renderables, Markdown and JSON shapes, shared by both faces.

The CLI prints these and the TUI shows them; ``piqa_tui.core`` computes the
numbers and never imports this package. It imports neither Textual, the TUI,
the CLI nor the settings, so both faces may use it.
"""
