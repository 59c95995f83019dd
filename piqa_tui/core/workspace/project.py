"""A dataset opened for curation: the file's items with the workspace log applied.

``Project`` is what the CLI and the TUI both talk to. It replays the event log
over the items read from the file (edits, undo/redo markers, votes, flags,
notes), records new actions in the workspace before changing anything in
memory, and exports the current state atomically.
"""

from __future__ import annotations

import getpass
import hashlib
import os
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import astuple
from pathlib import Path

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import Dataset, file_digest, read_source, reassign_ids, source_files
from piqa_tui.core.dataset.writing import output_files, write_dataset
from piqa_tui.core.errors import EditConflict, PiqaError, VotesArrived, WorkspaceError
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.workspace.conflicts import (
    ADJUDICATED_FIELD,
    ADJUDICATION,
    ConflictBook,
    FieldConflict,
    adjudication_mark,
    chosen_text,
    decision_field,
    made_on,
)
from piqa_tui.core.workspace.current_votes import Prefetch
from piqa_tui.core.workspace.log import Change, Part, Workspace, default_location
from piqa_tui.core.workspace.memo import LogMemo
from piqa_tui.core.workspace.outputs import check_outputs, check_workspace_path, dataset_protected_files
from piqa_tui.core.workspace.preferences import parse_mapped
from piqa_tui.core.workspace.replay import MARKER_KINDS, NEW_ITEM_KIND, UNREPLAYED_KINDS, Replay
from piqa_tui.core.workspace.state import ProjectState, Vote, apply_vote, field_value, with_field
from piqa_tui.core.workspace.undo import UndoGuard, action_events, compensation
from piqa_tui.core.workspace.undo import stacks as undo_stacks
from piqa_tui.core.workspace.vote_targets import is_solution_field, solution_key

# Re-exported: the names faces and core modules have always imported from here.
__all__ = [
    "ADJUDICATED_FIELD",
    "ADJUDICATION",
    "MARKER_KINDS",
    "NEW_ITEM_KIND",
    "UNREPLAYED_KINDS",
    "FieldConflict",
    "Project",
    "ProjectState",
    "Vote",
    "adjudication_mark",
    "apply_vote",
    "chosen_text",
    "content_key",
    "decision_field",
    "default_annotator",
    "field_value",
    "made_on",
    "with_field",
]

RESOLVED_NOTE = "resolved conflict"  # the note of the edit that settles a conflict


def default_annotator() -> str:
    """The login name, the annotator of last resort (after --annotator and the config file)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER") or "annotator"


def content_key(prompt: str, solutions: tuple[str, ...]) -> str:
    """A short fingerprint of an item's text, to recognise it after the file is re-sorted."""
    return hashlib.sha1("\x1f".join((prompt, *solutions)).encode("utf-8")).hexdigest()[:16]


class Project:
    """A dataset and its workspace: the questions a face asks of the current state, and the writes it makes.

    The state itself (``items``, ``state``, the conflicts) is derived by ``replay`` and only read here; every
    write records in the workspace first, then has the replay catch up with the log.
    """

    def __init__(
        self, dataset: Dataset, workspace: Workspace | None, annotator: str, prefetch: Prefetch | None = None
    ) -> None:
        self.dataset = dataset
        self.workspace = workspace
        self.annotator = annotator
        self.file_changed: str | None = None
        self.workspace_path = workspace.path if workspace is not None else default_location(dataset.path)
        self.replay = Replay(dataset, workspace, prefetch)
        self.memo = LogMemo(self.replay)  # every view derived from this project's log
        if workspace is not None:
            self.file_changed = _bind(workspace, dataset)
            self.replay.catch_up()

    # ---------------------------------------------------------------- opening

    @classmethod
    @gc_paused()
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        mapping: dict[str, str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        annotator: str | None = None,
        create: bool = True,
        busy_timeout: float | None = None,
    ) -> Project:
        """Open a dataset; with ``create=False`` the workspace is only read (read-only commands): a missing
        one is not made, and one on a read-only disk or locked by another process can still be read."""
        path = Path(path)
        # Checked and read once, here: a FIFO, a folder or a symlink loop is one line before anything resolves
        # the path, and the workspace's fingerprint is the hash of these bytes.
        source = read_source(path)
        ws_path = Path(workspace) if workspace else default_location(path)
        check_workspace_path(path, ws_path, source.identity)  # --workspace data.tsv: never SQLite pages in the dataset
        prefetch = Prefetch(ws_path) if ws_path.is_file() else None  # the votes are read while the dataset loads
        dataset = parse_mapped(source, ws_path, mapping)  # else the TUI's kept mapping: no --map needed again
        del source  # its bytes are not needed again
        ws = None
        if create:
            ws = Workspace(ws_path, busy_timeout=busy_timeout)
        elif ws_path.exists():
            ws = Workspace(ws_path, read_only=True)
        if ws is not None and dataset.layout.id is None:
            ids = _derived_ids(ws, dataset)
            if ids != dataset.raw_ids:
                reassign_ids(dataset, ids)
        project = cls(dataset, ws, annotator or default_annotator(), prefetch)
        project.workspace_path = ws_path  # the one named with --workspace, even when it does not exist yet
        return project

    def disk_changed(self) -> bool:
        """Whether the dataset file on disk differs from the one loaded (someone else wrote it)."""
        try:
            sha, _ = file_digest(self.dataset.path)
        except OSError:
            return True
        return sha != self.dataset.sha256

    # --------------------------------------------------------------- the state, as the replay derives it

    @property
    def items(self) -> list[Item]:
        """The current items, in file order (the log's new items after the file's)."""
        return self.replay.items

    @property
    def index(self) -> dict[str, int]:
        """Item id → position in ``items``."""
        return self.replay.index

    @property
    def state(self) -> ProjectState:
        return self.replay.state

    @property
    def version(self) -> int:
        """Moves whenever the state may have changed (an event applied, by this process or another)."""
        return self.replay.version

    def refresh(self) -> list[str]:
        """Apply events recorded since (by any process), in canonical order; returns every item changed since the
        last ``refresh`` — by those events, and by the catch-ups this project's own writes made in between."""
        self.replay.catch_up()
        return self.replay.take_changed()

    def item(self, item_id: str) -> Item:
        return self.replay.item(item_id)

    def conflicts(self) -> list[FieldConflict]:
        """The fields (and notes) in conflict, in file order then by field name."""
        return self.replay.conflicts()

    def in_conflict(self, item_id: str) -> bool:
        """Whether a field or the note of the item is in conflict (the conflicts queue)."""
        return self.replay.book.in_conflict(item_id)

    def solution_keys(self, item_id: str) -> tuple[str, ...]:
        """The keys of an item's current solution texts (``vote_targets.solution_key``)."""
        return self.replay.solution_keys(item_id)

    def votes_invalidated(self, item_id: str, changes: dict[str, str]) -> list[str]:
        """The annotators whose current vote on the item an edit would leave STALE (its text changed).

        A swap or reorder invalidates nothing: the texts voted for are still there.
        """
        item = self.item(item_id)
        for name, value in changes.items():
            if is_solution_field(name):
                item = with_field(item, name, nfc(value))
        after = set(map(solution_key, item.solutions))
        keys = self.solution_keys(item_id)
        votes = self.state.votes.get(item_id, {})
        return [a for a, v in votes.items() if v.choice.isdecimal() and keys[int(v.choice)] not in after]

    def vote_key(self, item_id: str, choice: str) -> str | None:
        """The solution key a new vote records: that of the text at the chosen position (None: skip, withdraw)."""
        keys = self.solution_keys(item_id)
        return keys[int(choice)] if choice.isdecimal() and int(choice) < len(keys) else None

    # ----------------------------------------------------------------- writes

    def _require_workspace(self) -> Workspace:
        if self.workspace is None:
            raise WorkspaceError(
                "this dataset was opened read-only (no workspace); open it with a workspace to record work"
            )
        return self.workspace

    def record(self, parts: list[Part]) -> int:
        """Record ``parts`` as one action — one transaction, one undo step — and apply it; returns its id.

        For compound actions (a duplicate cluster resolved: its members flagged and its decision; a shuffled vote
        and the order it was cast in): a busy or failing workspace leaves all of it unrecorded, never half. Every
        item named must exist, or be added by a ``new-item`` part of the same action.
        """
        added = {c.item_id for part in parts if part.kind == NEW_ITEM_KIND for c in part.changes}
        for part in parts:
            for change in part.changes:
                if change.item_id is not None and change.item_id not in added:
                    self.item(change.item_id)
        action = self._require_workspace().append_action(self.annotator, parts)
        self.replay.catch_up()
        return action

    def _record_checked(self, build: Callable[[], list[Part]]) -> bool:
        """Record the parts ``build`` makes under the write lock, once the replay has caught up there (what other
        processes recorded until now counts); returns whether anything was recorded."""

        def caught_up() -> list[Part]:
            self.replay.catch_up()
            return build()

        recorded = self._require_workspace().append_checked(self.annotator, caught_up) is not None
        if recorded:
            self.replay.catch_up()
        return recorded

    def edit(
        self,
        item_id: str,
        changes: dict[str, str],
        base: dict[str, str] | None = None,
        stale_ok: Collection[str] | None = None,
    ) -> Item:
        """Set fields of one item as one undoable action; returns the new item.

        ``base`` holds, per field, the value the edit was made on (what the editor opened with): a field
        someone else has changed since raises ``EditConflict`` and nothing is recorded. A field without
        a base is set whatever it holds now. ``stale_ok`` names the annotators whose votes the one editing
        agreed to set aside (None: no such question was asked): a vote of anyone else that the edit would set
        aside, cast since, raises ``VotesArrived`` and nothing is recorded.
        """
        self._require_workspace()
        item = self.item(item_id)
        for name, value in changes.items():
            with_field(item, name, value)  # validates the field name before recording
        if all(field_value(item, name) == nfc(value) for name, value in changes.items()):
            return item  # nothing to record: no write lock taken

        def build() -> list[Part]:
            current = self.item(item_id)
            # Typed text is stored in NFC (the product's rule for stored text); nothing else about it is changed.
            recorded = [
                Change(item_id, name, field_value(current, name), nfc(value)) for name, value in changes.items()
            ]
            recorded = [c for c in recorded if c.old != c.new]
            for change in recorded:
                _check_base(self.replay.book, change, (base or {}).get(change.field))
            if stale_ok is not None and recorded:
                unasked = [a for a in self.votes_invalidated(item_id, changes) if a not in stale_ok]
                if unasked:
                    raise VotesArrived(item_id, unasked)
            return [Part("edit", tuple(recorded))] if recorded else []

        self._record_checked(build)
        return self.item(item_id)

    def swap_solutions(self, item_id: str, a: int, b: int) -> Item:
        """Swap two solutions and move the label with them, as one action."""
        item = self.item(item_id)
        changes = {f"solution{a}": item.solutions[b], f"solution{b}": item.solutions[a]}
        if item.label in (a, b):
            changes["label"] = str(b if item.label == a else a)
        return self.edit(item_id, changes)

    def resolve_conflict(self, item_id: str, field: str, value: str) -> None:
        """Settle a conflict on ``field`` (``"note"``: the note) with ``value``: an edit made on the value in force,
        recorded even when it keeps that value, so the decision travels and clears the conflict everywhere."""
        if field == ADJUDICATION:
            self._resolve_decision(item_id, value)
            return
        self._require_workspace()
        if field != "note":
            with_field(self.item(item_id), field, value)  # validates the field name before recording

        def build() -> list[Part]:
            current = self.replay.value_in_force((item_id, field))  # under the write lock: what it is made on
            if current is None:
                raise PiqaError(f"no item with id '{item_id}' or no field '{field}'")
            kind = "note" if field == "note" else "edit"
            return [Part(kind, (Change(item_id, field, current, nfc(value)),), RESOLVED_NOTE)]

        self._record_checked(build)

    def _resolve_decision(self, item_id: str, text: str) -> None:
        """Settle an adjudication conflict with the decision that chose ``text`` ("" none): recorded as a new
        adjudication (or withdrawal) made on the one in force, with the reason of the decision kept."""
        conflict = self.replay.book.conflict((item_id, ADJUDICATION))
        if conflict is None:
            raise PiqaError(f"no adjudication conflict on {item_id}; piqa-tui workspace conflicts lists them")
        if text not in (conflict.current, conflict.other):
            raise PiqaError(f"{item_id}: keep one of the two adjudications in conflict, the one in force or the other")
        reason = conflict.current_reason if text == conflict.current else conflict.other_reason
        solutions = self.item(item_id).solutions
        if text and text not in solutions:
            raise PiqaError(
                f"{item_id}: the solution that adjudication chose was edited since; adjudicate the item again (A)"
            )
        label = str(solutions.index(text)) if text else ""

        def build() -> list[Part]:
            change = Change(item_id, self.replay.book.adjudication_field(item_id), text or None, label)
            return [Part("adjudicate", (change,), reason)]

        self._record_checked(build)

    def undo(self) -> str | None:
        """Undo this annotator's last action (an edit, vote, withdrawal, flag, note, adjudication or duplicate
        decision; even one made before a restart); returns the first item id it touched ("" when it touched
        none: a cluster marked distinct), None when there was nothing to undo."""
        return self._undo_redo("undo")

    def redo(self) -> str | None:
        return self._undo_redo("redo")

    def _undo_redo(self, which: str) -> str | None:
        ws = self._require_workspace()
        undo, redo = undo_stacks(ws, self.annotator)
        stack = undo if which == "undo" else redo
        if not stack:
            return None
        events = action_events(ws, stack[-1])
        guard = UndoGuard(self.replay, ws, self.annotator)
        ws.append_marker(
            self.annotator,
            which,
            stack[-1],
            [astuple(guard.made_on_now(c)) for c in compensation(ws, events, undoing=which == "undo")],
            check=lambda: guard.check_untouched(which, events, stack[-1]),
        )
        self.replay.catch_up()
        return next((e.item_id for e in events if e.item_id is not None), "")

    def vote(self, item_id: str, choice: str) -> None:
        """Record this annotator's vote: a solution index, 'skip' (unsure) or '' (withdraw).

        A vote for a solution records the key of its text, so that it follows the text (``vote_targets``).
        """
        self.record([self.vote_part(item_id, choice)])

    def vote_part(self, item_id: str, choice: str) -> Part:
        """The ``vote`` part that records this annotator's ``choice`` on the item (see ``vote``)."""
        self.item(item_id)
        return Part("vote", (Change(item_id, "choice", self.vote_key(item_id, choice), choice),))

    def set_flag(self, item_id: str, reason: str, on: bool = True, note: str = "") -> None:
        self.set_flags(item_id, {reason: on}, note)

    def set_flags(self, item_id: str, reasons: dict[str, bool], note: str = "") -> None:
        """Set or clear flags on an item as one action (one undo), with one note for those set."""
        self.item(item_id)
        if reasons:
            changes = tuple(Change(item_id, reason, None, "1" if on else "0") for reason, on in reasons.items())
            self.record([Part("flag", changes, note or None)])

    def set_note(self, item_id: str, text: str, base: str | None = None) -> None:
        """Record the item's note; with ``base`` (the note the editor opened with), one someone else has
        changed since raises ``EditConflict`` and nothing is recorded."""
        self.item(item_id)
        if base is None:
            self.record([Part("note", (Change(item_id, "note", self.state.notes.get(item_id), nfc(text)),))])
            return

        def build() -> list[Part]:
            change = Change(item_id, "note", self.state.notes.get(item_id, ""), nfc(text))
            if change.old == change.new:
                return []
            _check_base(self.replay.book, change, base)
            return [Part("note", (change,))]

        self._record_checked(build)

    def adjudicate(self, item_id: str, label: int, reason: str) -> None:
        """Set the final label of a disagreement, with a reason; logged like every action.

        The event keeps the text of the solution chosen (in ``old``), so the decision follows that text, and
        the adjudication in force it was made on (in ``field``), so one made concurrently on another machine
        shows as a conflict after a merge.
        """
        solutions = self.item(item_id).solutions
        if not 0 <= label < len(solutions):
            raise PiqaError(f"item '{item_id}' has no solution {label + 1}")
        text = solutions[label]

        def build() -> list[Part]:  # under the write lock: the adjudication in force is the one this one is made on
            field = self.replay.book.adjudication_field(item_id)
            return [Part("adjudicate", (Change(item_id, field, text, str(label)),), reason)]

        self._record_checked(build)

    # ------------------------------------------------------------------- output

    def check_outputs(self, outputs: list[Path], replace: bool = False) -> None:
        """Refuse outputs over the source dataset or its workspaces (this one and its default, with their WAL/SHM),
        and existing files unless ``replace`` (see ``outputs``)."""
        check_outputs(outputs, dataset_protected_files(source_files(self.dataset), self.workspace_path), replace)

    def export(
        self,
        out: str | os.PathLike[str],
        fmt: str | None = None,
        items: list[Item] | None = None,
        extra_columns: dict[str, list[object]] | None = None,
        replace: bool = False,
        escape_formulas: bool = False,
    ) -> list[Path]:
        """Write the current state (or ``items``) to ``out``; the workspace is untouched.

        Never over the source or the workspace; over another existing file only with ``replace``.
        """
        self.check_outputs(output_files(self.dataset, Path(out), fmt), replace)
        return write_dataset(
            self.dataset, self.items if items is None else items, out, fmt, extra_columns, escape_formulas
        )

    def save(self) -> list[Path]:
        """Write the current state over the source file and rebind the workspace to it."""
        if self.disk_changed():
            raise WorkspaceError(
                f"{self.dataset.path} was changed on disk by someone else since it was opened; "
                "export to another file instead, or reopen it"
            )
        written = write_dataset(
            self.dataset, self.items, self.dataset.path, self.dataset.format
        )  # the one write over the source
        sha, size = file_digest(self.dataset.path)
        self.dataset.sha256, self.dataset.size = sha, size
        if self.workspace is not None:
            self.workspace.bind(self.dataset.path, size, sha)
            _keep_added_ids(self.workspace, self.dataset, self.items)
        return written


def _bind(workspace: Workspace, dataset: Dataset) -> str | None:
    """Bind a new workspace to the dataset file; for one bound to another version of the file, the notice that
    its edits are replayed over the new content (None: nothing to say; a read-only look binds nothing)."""
    bound = workspace.binding()
    if bound is None and not workspace.read_only:
        workspace.bind(dataset.path, dataset.size, dataset.sha256)
    elif bound is not None and bound[2] != dataset.sha256:
        return (
            f"{dataset.path} changed since this workspace last saw it "
            f"({bound[1]} bytes then, {dataset.size} now): recorded edits are replayed over the new content; "
            "review them before saving"
        )
    return None


def _check_base(book: ConflictBook, change: Change, base: str | None) -> None:
    """Raise ``EditConflict`` when ``change``'s field no longer holds ``base`` (None: no base, no check)."""
    if base is None or nfc(base) == change.old:
        return
    by, when = book.changed_by.get((change.item_id or "", change.field), ("", ""))
    raise EditConflict(change.item_id or "", change.field, change.old or "", change.new or "", base, by, when)


def _keep_added_ids(workspace: Workspace, dataset: Dataset, items: list[Item]) -> None:
    """A file without an id column keeps the ids of the items the log added, now rows of the saved file, so
    reopening it finds them there (and their ``new-item`` events add nothing)."""
    stored, first = workspace.row_ids(), len(dataset.items)
    if dataset.layout.id is not None or len(items) == first or len(stored) != first:
        return
    added = [
        (pos, items[pos].id, content_key(items[pos].prompt, items[pos].solutions)) for pos in range(first, len(items))
    ]
    workspace.set_row_ids([*stored, *added])


def _derived_ids(ws: Workspace, dataset: Dataset) -> list[str]:
    """Ids for a dataset without an id column: made once, kept in the workspace, re-found after re-sorting."""
    keys = [content_key(item.prompt, item.solutions) for item in dataset.items]
    stored = ws.row_ids()
    bound = ws.binding()
    if stored and bound and bound[2] == dataset.sha256 and len(stored) == len(keys):
        return [row_id for _, row_id, _ in stored]
    if not stored:
        ids = [f"r{row + 1}" for row in range(len(keys))]
    else:
        free: dict[str, list[str]] = defaultdict(list)
        for _, row_id, key in stored:
            free[key].append(row_id)
        for queue in free.values():
            queue.reverse()
        taken = {row_id for _, row_id, _ in stored}
        ids = []
        next_number = len(stored) + 1
        for key in keys:
            if free.get(key):
                ids.append(free[key].pop())
                continue
            while f"r{next_number}" in taken:
                next_number += 1
            ids.append(f"r{next_number}")
            taken.add(f"r{next_number}")
    if not ws.read_only:  # a read-only reader derives the same ids the next writer will store
        ws.set_row_ids(zip(range(len(keys)), ids, keys))
    return ids
