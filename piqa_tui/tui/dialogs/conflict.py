"""The dialog shown when someone else changed a field while you edited it: their text, yours, and the one
you started from, and a choice of which to keep (or to merge by hand)."""

from __future__ import annotations

from piqa_tui.core.errors import EditConflict, changed_by
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.tui.dialogs.prompts import ChoiceDialog

KEEP_THEIRS, KEEP_MINE, MERGE = "theirs", "mine", "merge"


def shown(field: str, value: str) -> str:
    """A version as the user reads it: a gold label as the solution it names, any text terminal-safe."""
    if field == "label":
        return "no gold label" if value == "" else f"solution {int(value) + 1}" if value.isdigit() else value
    return terminal_safe(value) if value else "(empty)"


def conflict_message(conflict: EditConflict) -> str:
    """The three versions, each under its name, with who changed the field and when."""
    field, who = conflict.field, terminal_safe(changed_by(conflict.by, conflict.when), one_line=True)
    where = terminal_safe(f"{field} of {conflict.item_id}", one_line=True)
    return (
        f"{where} was changed by {who} while you edited it. Nothing of yours is recorded yet.\n\n"
        f"Theirs (stored now):\n{shown(field, conflict.theirs)}\n\n"
        f"Mine (what you typed):\n{shown(field, conflict.mine)}\n\n"
        f"Started from:\n{shown(field, conflict.base)}"
    )


def conflict_dialog(conflict: EditConflict) -> ChoiceDialog:
    """Keep theirs (nothing recorded), keep mine (recorded over theirs) or merge (my text in the editor again)."""
    choices: list[tuple[str | None, str, str]] = [
        (KEEP_THEIRS, "Keep theirs", "drop what I typed"),
        (KEEP_MINE, "Keep mine", "record my version over theirs"),
        (MERGE, "Merge by hand", "edit my version again, then save"),
    ]
    return ChoiceDialog("Someone else changed this field", conflict_message(conflict), choices)
