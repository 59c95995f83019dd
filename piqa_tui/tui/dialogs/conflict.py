"""The dialog shown when someone else changed a field while you edited it: their text, yours, and the one
you started from, and a choice of which to keep (or to merge by hand).

Each version is the data itself (``DataText``): the dialog draws it through the bidi adapter in the field's
direction, as the item blocks do, so a lead comparing two Arabic versions reads both right to left, shaped."""

from __future__ import annotations

from piqa_tui.core.errors import EditConflict, changed_by
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import ADJUDICATION, FieldConflict
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, DataText, Message

KEEP_THEIRS, KEEP_MINE, MERGE = "theirs", "mine", "merge"
KEEP_CURRENT, KEEP_OTHER = "current", "other"


def shown(field: str, value: str) -> str | DataText:
    """A version as the user reads it: a gold label as the solution it names; a text as data, which the dialog
    draws through the bidi adapter in the field's direction (Arabic right to left, shaped; controls shown)."""
    if field == "label":
        return "no gold label" if value == "" else f"solution {int(value) + 1}" if value.isdecimal() else value
    if field == ADJUDICATION and not value:
        return "(no adjudication)"
    if not value:
        return "(empty)"
    return DataText(value, None if field == ADJUDICATION else field)


def conflict_message(conflict: EditConflict) -> Message:
    """The three versions, each under its name, with who changed the field and when."""
    field, who = conflict.field, terminal_safe(changed_by(conflict.by, conflict.when), one_line=True)
    where = terminal_safe(f"{field} of {conflict.item_id}", one_line=True)
    return [
        f"{where} was changed by {who} while you edited it. Nothing of yours is recorded yet.\n\nTheirs (stored now):",
        shown(field, conflict.theirs),
        "\nMine (what you typed):",
        shown(field, conflict.mine),
        "\nStarted from:",
        shown(field, conflict.base),
    ]


def conflict_dialog(conflict: EditConflict) -> ChoiceDialog:
    """Keep theirs (nothing recorded), keep mine (recorded over theirs) or merge (my text in the editor again)."""
    choices: list[tuple[str | None, str, str]] = [
        (KEEP_THEIRS, "Keep theirs", "drop what I typed"),
        (KEEP_MINE, "Keep mine", "record my version over theirs"),
        (MERGE, "Merge by hand", "edit my version again, then save"),
    ]
    return ChoiceDialog("Someone else changed this field", conflict_message(conflict), choices)


def _version(field: str, text: str, by: str, when: str, reason: str) -> list[str | DataText]:
    """One side of a merge conflict: who made it and when, the version, and the reason given (decisions)."""
    who = terminal_safe(changed_by(by, when), one_line=True)
    why: list[str | DataText] = ["Reason:", DataText(reason)] if reason else []
    return [f"(by {who}):", shown(field, text), *why]


def merge_conflict_message(conflict: FieldConflict) -> Message:
    """The two versions made concurrently on two machines, who made each and when (and why, for adjudications),
    and the one both started from."""
    field = conflict.field
    if field == ADJUDICATION:
        where = terminal_safe(conflict.item_id, one_line=True)
        intro = (
            f"{where} was adjudicated differently on two machines before their work was merged. "
            "The decision in force won only by time: choose the one to keep."
        )
        current, base = "In force", "Both were made on"
    else:
        where = terminal_safe(f"{field} of {conflict.item_id}", one_line=True)
        intro = (
            f"{where} was changed on two machines before their work was merged. "
            "The version shown now won only by the log's order: choose the one to keep."
        )
        current, base = "Shown now", "Both started from"
    ours = _version(field, conflict.current, conflict.current_by, conflict.current_time, conflict.current_reason)
    theirs = _version(field, conflict.other, conflict.other_by, conflict.other_time, conflict.other_reason)
    ours[0] = f"{intro}\n\n{current} {ours[0]}"
    theirs[0] = f"\nThe other {theirs[0]}"
    return [*ours, *theirs, f"\n{base}:", shown(field, conflict.base)]


def merge_conflict_dialog(conflict: FieldConflict) -> ChoiceDialog:
    """Keep the version shown, keep the other, or merge by hand: each is recorded, so the choice travels."""
    choices: list[tuple[str | None, str, str]] = [
        (KEEP_CURRENT, "Keep the one shown", "record it as the decision"),
        (KEEP_OTHER, "Keep the other", "record the other version"),
    ]
    if conflict.field not in ("label", ADJUDICATION):  # a label or a decision is chosen, not typed: one of the two
        choices.append((MERGE, "Merge by hand", "edit the one shown, then save"))
    title = "Adjudicated on two machines" if conflict.field == ADJUDICATION else "Changed on two machines"
    return ChoiceDialog(title, merge_conflict_message(conflict), choices)
