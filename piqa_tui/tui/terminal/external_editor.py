"""The $EDITOR escape hatch: edit one field's text in the user's editor, with the app suspended."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile

from textual.app import App


async def edit_externally(app: App[object], text: str, name: str) -> str | None:
    """Edit ``text`` in $VISUAL/$EDITOR with the app suspended; None (said) when the editor failed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60]
    with tempfile.NamedTemporaryFile("w", suffix=f"-{safe}.txt", delete=False, encoding="utf-8") as fh:
        fh.write(text + "\n")
        path = fh.name
    try:
        command = [*shlex.split(editor), path]
        driver = app._driver  # no public way to ask whether the terminal can be handed over
        try:
            if driver is not None and driver.can_suspend:
                with app.suspend():
                    result = subprocess.run(command)
            else:
                result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True)
        except OSError as exc:
            app.notify(f"could not run {editor!r}: {exc}; set $EDITOR", severity="error")
            return None
        if result.returncode != 0:
            app.notify(f"{editor} exited with status {result.returncode}; the field is unchanged", severity="warning")
            return None
        with open(path, encoding="utf-8") as fh:
            edited = fh.read()
    finally:
        os.unlink(path)
    edited = edited[:-1] if edited.endswith("\n") else edited
    return edited.replace("\r\n", "\n")  # stored in NFC by core
