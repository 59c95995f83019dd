"""What a dialog needs of whoever opens it: a way to say a line and to push a screen.

``App``, the main screen and every controller's host are one, so dialogs open from any of them
without importing the controllers that use them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Asker(Protocol):
    """Says a line and asks a question: ``App`` and the main screen both are one."""

    def notify(self, message: str, *, severity: Any = "information", timeout: float | None = None) -> None: ...

    def push_screen(self, screen: Any, callback: Callable[[Any], object] | None = None) -> Any: ...
