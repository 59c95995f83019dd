"""The browse-and-edit screen (``screen.py``) and what serves it: the view that fills its widgets (``view.py``),
the host its controllers reach it through (``host.py``) and its field editors (``fields.py``)."""

from piqa_tui.tui.screens.main.screen import MainScreen

__all__ = ["MainScreen"]
