"""A model's suggestions for items' fields, and the person's decision on each: the suggestion store.

A suggestion is a ``suggest`` event: the item, the field (a column: ``prompt``, ``solution1``, a metadata column),
``old`` the value it was made on, ``new`` the suggested value, and the note its provenance as strict JSON
(``core/generation/protocol.Provenance``; the event rules refuse a note that names no model). Its id is the
event's global id (``uid``), the same on every machine the log is merged or synced to, so a decision made on one
machine names the suggestion made on another.

Nothing reaches an item without a person: ``accept`` records an ordinary ``edit`` of the field (its note
``suggestion <id>``, so an edited value's origin is traceable) and a ``suggest-review`` event (field: the
suggestion's id, new: ``accept``, or ``amend`` when the person changed the value before keeping it) as one
action, undone in one step; ``reject`` records the review alone. A suggestion is pending until a review in force
names it (an undone review withdraws its decision).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from piqa_tui.core.errors import PiqaError, WorkspaceError
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.workspace.event_rules import SUGGEST_KIND, SUGGEST_REVIEW_KIND
from piqa_tui.core.workspace.log import Change, Part
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.state import field_value, with_field

NOTE_PREFIX = "suggestion "  # the note of an edit that accepted a suggestion: NOTE_PREFIX + its id
PENDING = "pending"


class SuggestionError(PiqaError):
    """A suggestion that cannot be recorded or decided (one line)."""


@dataclass(frozen=True, slots=True)
class NewSuggestion:
    """A suggestion to record: the model's ``value`` for ``field`` of ``item_id``; ``provenance`` its strict JSON
    (``Provenance.to_json()``)."""

    item_id: str
    field: str
    value: str
    provenance: str


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A recorded suggestion and where it stands. ``status`` is ``pending``, ``accept``, ``amend`` or
    ``reject``; ``decided_by`` who decided it (None while pending)."""

    id: str
    item_id: str
    field: str
    value: str
    was: str | None  # the field's value when it was suggested
    provenance: Mapping[str, object]
    by: str  # who ran the job that made it
    time: str
    status: str = PENDING
    decided_by: str | None = None

    @property
    def model(self) -> str:
        """The model's name as its provenance gives it."""
        source = self.provenance.get("source")
        return str(source.get("model", "")) if isinstance(source, dict) else ""


def suggestion_of(note: str | None) -> str | None:
    """The id of the suggestion an edit accepted (its note), None for an edit a person typed."""
    return note[len(NOTE_PREFIX) :] if note and note.startswith(NOTE_PREFIX) else None


def record_suggestions(project: Project, suggestions: Sequence[NewSuggestion]) -> int:
    """Record ``suggestions`` as one action (a job's batch: all or none); returns how many were recorded.

    Each is checked first (the item and field exist, the provenance is strict JSON naming a model): one bad one
    records nothing, and the ``SuggestionError`` says which. Suggestions are no undoable action of their own:
    a person undoes decisions, not a job's output.
    """
    if not suggestions:
        return 0
    changes = []
    for s in suggestions:
        try:
            item = project.item(s.item_id)
            was = field_value(item, s.field)
            with_field(item, s.field, s.value)
        except (PiqaError, KeyError, IndexError, ValueError) as exc:
            raise SuggestionError(f"suggestion for item {s.item_id} field {s.field!r}: {exc}") from None
        changes.append((Change(s.item_id, s.field, was, nfc(s.value)), s.provenance))
    parts = [Part(SUGGEST_KIND, (change,), provenance) for change, provenance in changes]
    try:
        project.record(parts)
    except WorkspaceError as exc:  # the event rules' reason (a provenance that names no model), said in one line
        raise SuggestionError(str(exc)) from None
    return len(parts)


def suggestions(project: Project) -> list[Suggestion]:
    """Every suggestion in the log, in canonical order, with its decision in force (the project's memo keeps it
    until the log moves)."""
    return project.memo.get(("suggestions",), lambda: _read(project))


def pending(project: Project, item_id: str | None = None, field: str | None = None) -> list[Suggestion]:
    """The suggestions nobody has decided yet, of one item (and field) or of all."""
    return [
        s
        for s in suggestions(project)
        if s.status == PENDING and item_id in (None, s.item_id) and field in (None, s.field)
    ]


def pending_by_item(project: Project) -> Mapping[str, list[Suggestion]]:
    """The pending suggestions of each item that has any (kept until the log moves: the item view and the
    queue of pending suggestions ask on every move)."""

    def group() -> dict[str, list[Suggestion]]:
        found: dict[str, list[Suggestion]] = {}
        for s in pending(project):
            found.setdefault(s.item_id, []).append(s)
        return found

    return project.memo.get(("pending-suggestions",), group)


def _read(project: Project) -> list[Suggestion]:
    workspace = project.workspace
    if workspace is None:
        return []
    rows = workspace.event_fields(
        (SUGGEST_KIND, SUGGEST_REVIEW_KIND), "uid, item_id, field, old, new, note, annotator, time"
    )
    made: dict[str, Suggestion] = {}
    decided: dict[str, tuple[str, str]] = {}
    for kind, uid, item_id, field, old, new, note, annotator, time in rows:
        if kind == SUGGEST_KIND:
            made[uid] = Suggestion(uid, item_id, field, new or "", old, _provenance(note), annotator, time)
        elif new:
            decided[field] = (new, annotator)
        else:  # an undone decision: pending again
            decided.pop(field, None)
    found = []
    for uid, s in made.items():
        decision = decided.get(uid)
        found.append(s if decision is None else _decided(s, *decision))
    return found


def _decided(s: Suggestion, status: str, by: str) -> Suggestion:
    return Suggestion(s.id, s.item_id, s.field, s.value, s.was, s.provenance, s.by, s.time, status, by)


def _provenance(note: str | None) -> Mapping[str, object]:
    try:
        data = json.loads(note or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def find(project: Project, suggestion_id: str) -> Suggestion:
    """The suggestion with this id; ``SuggestionError`` when there is none."""
    for s in suggestions(project):
        if s.id == suggestion_id:
            return s
    raise SuggestionError(f"no suggestion {suggestion_id!r} in this workspace")


def accept(project: Project, suggestion_id: str, value: str | None = None) -> Suggestion:
    """Keep a suggestion: its value (or ``value``, the person's change of it: an ``amend``) becomes the field's,
    as an ordinary edit that names the suggestion, and the decision is recorded with it (one action)."""
    return review(project, [Decision(suggestion_id, True, value)])[0]


def reject(project: Project, suggestion_id: str) -> Suggestion:
    """Turn a suggestion down: the field stays as it is; the decision is recorded (an undoable action)."""
    return review(project, [Decision(suggestion_id, False)])[0]


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's decision on one suggestion: kept (``value``: the person's change of it, None for the
    suggestion's own) or turned down."""

    suggestion_id: str
    keep: bool
    value: str | None = None


def review(project: Project, decisions: Sequence[Decision]) -> list[Suggestion]:
    """Record several decisions as one action (one undo step takes them all back): each kept one an edit that
    names its suggestion and a review, each turned-down one a review. Every suggestion must still be pending
    (``SuggestionError`` otherwise, and nothing is recorded)."""
    parts = []
    for decision in decisions:
        s = _undecided(project, decision.suggestion_id)
        if not decision.keep:
            parts.append(Part(SUGGEST_REVIEW_KIND, (Change(s.item_id, s.id, None, "reject"),)))
            continue
        kept = nfc(s.value if decision.value is None else decision.value)
        current = field_value(project.item(s.item_id), s.field)
        if current != kept:
            parts.append(Part("edit", (Change(s.item_id, s.field, current, kept),), NOTE_PREFIX + s.id))
        verdict = "accept" if kept == s.value else "amend"
        parts.append(Part(SUGGEST_REVIEW_KIND, (Change(s.item_id, s.id, None, verdict),)))
    if parts:
        project.record(parts)
    return [find(project, decision.suggestion_id) for decision in decisions]


def _undecided(project: Project, suggestion_id: str) -> Suggestion:
    s = find(project, suggestion_id)
    if s.status != PENDING:
        raise SuggestionError(f"suggestion {suggestion_id} was already decided ({s.status} by {s.decided_by})")
    return s


@dataclass(frozen=True, slots=True)
class KeptRate:
    """How people decided one model's suggestions for one field: kept as suggested, kept changed, turned down,
    and still pending."""

    model: str
    field: str
    accepted: int = 0
    amended: int = 0
    rejected: int = 0
    pending: int = 0

    @property
    def decided(self) -> int:
        return self.accepted + self.amended + self.rejected

    @property
    def kept_share(self) -> float | None:
        """The share of decided suggestions kept exactly as the model made them (None before any decision)."""
        return self.accepted / self.decided if self.decided else None


def kept_rates(found: Iterable[Suggestion]) -> list[KeptRate]:
    """How often people kept the model's value, per (model, field), in order of first appearance."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for s in found:
        counts.setdefault((s.model, s.field), Counter())[s.status] += 1
    return [
        KeptRate(model, field, c["accept"], c["amend"], c["reject"], c[PENDING]) for (model, field), c in counts.items()
    ]
