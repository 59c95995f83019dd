"""Who puts right-to-left text in display order: the bidi modes, and what ``auto`` means in this terminal.

Kept apart from the display adapter (``bidi``) so that reading the config
file, which holds a mode, costs none of the adapter's imports.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum


class BidiMode(StrEnum):
    """Who puts right-to-left text in display order (what each mode does: the ``bidi`` module docstring)."""

    AUTO = "auto"
    APP = "app"
    TERMINAL = "terminal"
    OFF = "off"


def detect_mode(environ: Mapping[str, str] | None = None) -> BidiMode:
    """The mode ``auto`` means here: ``terminal`` where the terminal does bidi, else ``app``.

    ``PIQA_TUI_BIDI=app|terminal|off`` overrides detection.  Detection only
    sees the environment, so a stale ``VTE_VERSION`` (e.g. tmux attached from
    another terminal) can mislead it; ``--bidi`` is the fix.
    """
    env = os.environ if environ is None else environ
    forced = env.get("PIQA_TUI_BIDI", "").strip().lower()
    if forced in (BidiMode.APP, BidiMode.TERMINAL, BidiMode.OFF):
        return BidiMode(forced)
    if env.get("KONSOLE_VERSION"):
        return BidiMode.TERMINAL
    vte = env.get("VTE_VERSION", "")
    if vte.isdecimal() and int(vte) >= 5800:  # VTE implements bidi since 0.58
        return BidiMode.TERMINAL
    if env.get("TERM", "").startswith("mlterm") or env.get("MLTERM"):
        return BidiMode.TERMINAL
    return BidiMode.APP


def resolve_mode(mode: BidiMode | str, environ: Mapping[str, str] | None = None) -> BidiMode:
    """``mode`` as a concrete mode, with ``auto`` decided by ``detect_mode``."""
    mode = BidiMode(mode)
    return detect_mode(environ) if mode is BidiMode.AUTO else mode


# The mode the TUI's screen draws in; None where no screen is drawn (the CLI prints text as it is stored).
# The TUI keeps it in step with the session's mode (``b`` cycles it); ``bidi.on_screen`` and the safe
# renderer read it, so every line of the app that holds data (titles, table cells, dialog messages, toasts)
# goes through the display adapter in the screen's mode, as the item blocks do. A process draws one screen.
_screen_mode: BidiMode | None = None


def set_screen_mode(mode: BidiMode | str | None) -> None:
    """Set the bidi mode the screen draws in (None: no screen, text is shown as stored)."""
    global _screen_mode
    _screen_mode = None if mode is None else resolve_mode(mode)


def screen_mode() -> BidiMode | None:
    """The mode set with ``set_screen_mode``; None outside the TUI."""
    return _screen_mode
