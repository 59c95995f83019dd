"""The one way the TUI copies data: control characters left out, and the toast says so when any were.

``PiqaApp.copy_to_clipboard`` strips them too (Textual's own copy of a
selection goes there); ``copy_text`` adds the one-line note naming what was
left out, so an annotator never pastes something other than what they think.
"""

from __future__ import annotations

from textual.app import App

from piqa_tui.core.text.terminal_safe import clipboard_safe


def copy_text(app: App[object], text: str, what: str) -> str:
    """Copy ``text`` (described as ``what``) without its control characters and tell the user in one line."""
    safe, dropped = clipboard_safe(text)
    app.copy_to_clipboard(safe)
    if dropped:
        app.notify(
            f"copied {what} ({len(safe):,} characters) without its control characters ({', '.join(dropped)}): "
            "they could act as commands where it is pasted",
            severity="warning",
            timeout=6,
        )
    else:
        app.notify(f"copied {what} ({len(safe):,} characters, as stored)", timeout=3)
    return safe
