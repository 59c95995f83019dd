"""numpy, imported where it is first used rather than where it is named.

numpy's import takes about 50 ms, a tenth of the TUI's start-up, and nothing
on its first screen computes with it: the modules the TUI imports at start-up
(votes, decisions, agreement, the workspace's vote columns) name it through
``np`` below, and the import happens on their first numpy call, which for a
large file runs in the loading thread once the first rows are on screen.
Every attribute is numpy's own, so every result is too.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

_loaded: ModuleType | None = None  # set once numpy's import has finished (never a half-imported module)


class _Numpy:
    """Stands for the numpy module: every attribute is numpy's (imported on the first one)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(_loaded or _load(), name)


def _load() -> ModuleType:
    global _loaded
    _loaded = importlib.import_module("numpy")  # the import lock: a second thread waits for the first's import
    return _loaded


np = _Numpy()
