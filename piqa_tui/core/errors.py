"""User-facing errors: each carries a one-line message (what, where, what to do).

The CLI turns them into that line on stderr and exit code 2; the TUI shows them
in a notification. Nothing else should reach the user as a traceback.
"""

from __future__ import annotations

import errno


class PiqaError(Exception):
    """Base of every error a user may see; ``str(err)`` is the one-line message."""


class InputError(PiqaError):
    """The input cannot be read as a dataset (missing, empty, not UTF-8, ragged, ...)."""


class LayoutError(InputError):
    """The columns do not match any known layout and no mapping was given."""


class MappedColumnMissing(LayoutError):
    """A column mapping names a column the file does not have: ``column`` that name, ``columns`` the file's."""

    def __init__(self, message: str, column: str, columns: list[str]) -> None:
        super().__init__(message)
        self.column = column
        self.columns = tuple(columns)


class WorkspaceError(PiqaError):
    """The workspace database is unusable or belongs to another file."""


class WorkspaceBusy(WorkspaceError):
    """Another process held the workspace's write lock past the busy timeout: nothing was recorded, retry."""


class WorkspaceUnwritable(WorkspaceError):
    """The workspace cannot take a write (full disk, read-only file or folder, I/O error): nothing was recorded."""


class EditConflict(PiqaError):
    """Someone else changed a field since the editor opened on it: nothing was recorded, the user chooses.

    ``theirs`` is the field's value now, ``mine`` what was typed, ``base`` the value the editor opened with;
    ``by`` and ``when`` say who recorded ``theirs`` and at what time (the log's clock; "" when unknown).
    """

    def __init__(self, item_id: str, field: str, theirs: str, mine: str, base: str, by: str, when: str) -> None:
        self.item_id, self.field = item_id, field
        self.theirs, self.mine, self.base = theirs, mine, base
        self.by, self.when = by, when
        super().__init__(
            f"{field} of {item_id} was changed by {changed_by(by, when)} since you opened it; nothing was recorded"
        )


class VotesArrived(PiqaError):
    """Votes on the text an edit changes were cast since the one editing was asked about them: nothing was
    recorded, so that they are asked again (``annotators``: whose votes the edit would now set aside unasked)."""

    def __init__(self, item_id: str, annotators: list[str]) -> None:
        self.item_id, self.annotators = item_id, annotators
        super().__init__(f"{', '.join(annotators)} voted on {item_id}'s text since you opened it; nothing was recorded")


class UndoRefused(PiqaError):
    """An undo or redo would overwrite what someone else recorded on the field since: nothing was recorded."""


def changed_by(by: str, when: str) -> str:
    """ "ann at 2026-11-25 23:04 UTC" from a log time (ISO 8601 UTC), for the lines that name who changed a field."""
    who = by or "someone else"
    if len(when) >= 16 and when[10] == "T":
        return f"{who} at {when[:10]} {when[11:16]} UTC"
    return f"{who} at {when}" if when else who


class OutputRefused(PiqaError):
    """An output path would destroy something: the dataset, the workspace, or an existing file without --force."""


class ExistingOutput(OutputRefused):
    """The output file exists; replace it only when the user says so (``--force``, or yes in the TUI)."""


class ExportError(PiqaError):
    """The dataset cannot be written in the requested format."""


class ModelError(PiqaError):
    """A scoring or embedding model cannot be loaded or used."""


class TemplateError(ModelError):
    """A prompt template is malformed, or cannot be rendered on an item (a missing metadata value)."""


def os_error_reason(exc: OSError) -> str:
    """A short phrase for an ``OSError``: what went wrong, in the user's words."""
    reasons = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
        errno.EISDIR: "is a folder",
        errno.ENOTDIR: "a part of the path is not a folder",
        errno.ENOSPC: "the disk is full",
        errno.EROFS: "the file system is read-only",
        errno.ENAMETOOLONG: "the name is too long",
    }
    return reasons.get(exc.errno or 0, exc.strerror or type(exc).__name__)
