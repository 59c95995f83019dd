"""Authoring stages: items written or imported as drafts, reviewed and corrected, then validated.

Every item is at one stage of ``STAGES``. A ``stage`` event (field ``stage``, ``new`` the stage; "" after an
undo that found none before) moves items on; the latest in the log's order is in force. Items the file
already had, with no stage event, are at ``FILE_STAGE`` (validation): they were written before the round.
An item written in the TUI or imported is one ``new-item`` event (its fields as canonical JSON; the
project's replay adds it) recorded with a ``stage`` event putting it at ``draft``: one action, one undo.

The correction rate of an item is the character edit rate (normalised Levenshtein distance) between its
text at its first recorded state — the machine translation a corrector started from — and its text now.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from rapidfuzz.distance import Levenshtein

from piqa_tui.core.dataset.capacity import room, solutions_refused
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import parse_dataset, read_source
from piqa_tui.core.errors import InputError, PiqaError
from piqa_tui.core.round.origin import Origin, origin_of
from piqa_tui.core.round.recorded import assigned_to, round_in_force
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.workspace.limits import MAX_VALUE_BYTES, check_value
from piqa_tui.core.workspace.log import CANONICAL, Change, Part, Workspace
from piqa_tui.core.workspace.project import NEW_ITEM_KIND, Project, field_value

STAGES = ("draft", "review", "validation", "done")
STAGE_KIND = "stage"
STAGE_FIELD = "stage"
NEW_ITEM_FIELD = "item"
VALIDATION = "validation"  # the one stage whose items validators vote on
FILE_STAGE = VALIDATION  # items the file had before any stage was recorded
DONE = "done"
BEFORE_VALIDATION = STAGES[:2]  # items being written or rewritten: no validator's work yet
NEW_STAGE = "draft"  # items written in the TUI or imported
HEAVY_CORRECTION = 0.30  # the card reports the share of items corrected more than this
TEXT_FIELDS = ("prompt", "solution0", "solution1", "solution2", "solution3")


class StageError(PiqaError):
    """A stage or a new item that cannot be recorded: one line saying what to do."""


def check_stage(name: str) -> str:
    """``name`` when it is a stage, else ``StageError`` listing them."""
    if name not in STAGES:
        raise StageError(f"unknown stage '{name}'; use one of {', '.join(STAGES)}")
    return name


def stages_in_force(workspace: Workspace | None) -> dict[str, str]:
    """Item id → stage, for the items a ``stage`` event names (latest in canonical order; "" is dropped)."""
    latest: dict[str, str] = {}
    for event in workspace.events(kinds=[STAGE_KIND]) if workspace is not None else []:
        if event.item_id is not None:
            latest[event.item_id] = event.new or ""
    return {item: stage for item, stage in latest.items() if stage}


def recorded_stages(project: Project) -> dict[str, str]:
    """The recorded stages as the project has replayed the log; read again only when it applied new events."""
    if project.workspace is None:
        return {}
    workspace = project.workspace
    return project.memo.get(recorded_stages, lambda: stages_in_force(workspace))  # a queue asks per item


def stage_of(project: Project, item_id: str) -> str:
    """The item's stage: recorded, or ``FILE_STAGE``."""
    return recorded_stages(project).get(item_id, FILE_STAGE)


def to_validate(project: Project, item_id: str, annotator: str | None = None) -> bool:
    """Whether the item is assigned to ``annotator`` (default: the project's) and at ``validation`` now: an
    assigned item sent back to review or draft, or closed at done, waits for no vote until it returns."""
    return item_id in assigned_to(project, annotator) and stage_of(project, item_id) == VALIDATION


def stage_part(project: Project, item_ids: list[str], stage: str) -> Part | None:
    """The ``stage`` changes moving ``item_ids`` to ``stage`` (None: all of them are there already)."""
    check_stage(stage)
    recorded = recorded_stages(project)
    changes = []
    for item_id in dict.fromkeys(item_ids):
        project.item(item_id)  # an unknown id is one line, before anything is recorded
        if recorded.get(item_id, FILE_STAGE) != stage:
            changes.append(Change(item_id, STAGE_FIELD, recorded.get(item_id), stage))
    return Part(STAGE_KIND, tuple(changes)) if changes else None


def set_stage(project: Project, item_ids: list[str], stage: str) -> int:
    """Move ``item_ids`` to ``stage`` as one undoable action; returns how many moved."""
    part = stage_part(project, item_ids, stage)
    if part is None:
        return 0
    project.record([part])
    return len(part.changes)


# ---------------------------------------------------------------- new items


@dataclass(frozen=True, slots=True)
class Draft:
    """The fields of an item to add: a goal, 2-4 solutions, the gold label (0-based) and meta columns."""

    prompt: str
    solutions: tuple[str, ...]
    label: int | None = None
    meta: tuple[tuple[str, str], ...] = ()
    origin: Origin | None = None  # None: typed in (``written``)

    def canonical(self) -> str:
        """The JSON a ``new-item`` event records: the same fields give the same text everywhere."""
        data: dict[str, object] = {
            "prompt": self.prompt,
            "solutions": list(self.solutions),
            "label": self.label,
            "meta": dict(self.meta),
        }
        if self.origin is not None:
            data["origin"] = self.origin.to_json()
        return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def item(self, item_id: str = "", row: int = 0) -> Item:
        """The draft as an item, for the live checks before it is recorded."""
        return Item(item_id, self.prompt, self.solutions, self.label, row, dict(self.meta))


def draft(prompt: str, solutions: list[str], label: int | None, meta: dict[str, str] | None = None) -> Draft:
    """A draft from typed text (stored in NFC, as every typed text); empty trailing solutions are dropped."""
    texts = [nfc(s) for s in solutions]
    while len(texts) > 2 and not texts[-1].strip():
        texts.pop()
    if not 2 <= len(texts) <= 4:
        raise StageError(f"an item has 2 to 4 solutions, not {len(texts)}")
    if label is not None and not 0 <= label < len(texts):
        raise StageError(f"the label must name one of the {len(texts)} solutions")
    return Draft(nfc(prompt), tuple(texts), label, tuple(sorted((meta or {}).items())))


def writer_columns(project: Project) -> dict[str, str]:
    """The columns an item the project's annotator writes is filled with from the round in force: a ``never``
    column (``author``) names them, and every column named as one of their attributes (``country``, ``region``,
    ``dialect``; the name's case aside) takes their value of it when they have one value only (two countries
    leave it for them to choose), so the new item is routed as the file's items are and carries what the round
    knows of its writer. Empty without a round or when they are not in it."""
    declared = round_in_force(project.workspace)
    writer = declared.annotator(project.annotator) if declared is not None else None
    if declared is None or writer is None:
        return {}
    columns = project.dataset.meta_columns
    found = {column: writer.name for column in declared.routing.never if column in columns}
    by_name = {column.casefold(): column for column in reversed(columns)}  # the first of columns named alike
    for attribute, values in writer.attributes:
        column = attribute if attribute in columns else by_name.get(attribute.casefold())
        if column is not None and column not in found and len(values) == 1:
            found[column] = values[0]
    return found


def check_draft(project: Project, written: Draft) -> None:
    """``StageError`` when the project's file cannot hold ``written`` (more solutions than its solution columns):
    the one check every path that adds items asks, the new-item form as it is typed included."""
    refused = solutions_refused(project.dataset.layout, len(written.solutions))
    if refused is not None:
        raise StageError(f"{refused}; leave solution {len(written.solutions)} empty")


def new_item_id(project: Project) -> str:
    """A fresh id: ``new-`` and 12 random hex digits (48 bits), none the project holds; two copies adding items
    apart never draw the same one in practice, so a merge keeps both."""
    while True:
        item_id = f"new-{secrets.token_hex(6)}"
        if item_id not in project.index:
            return item_id


def add_items(project: Project, drafts: list[Draft], stage: str = NEW_STAGE) -> list[str]:
    """Record ``drafts`` as new items at ``stage``, as one action (one undo takes them all away); returns their ids."""
    check_stage(stage)
    if not drafts:
        return []
    for written in drafts:
        check_draft(project, written)
    taken: dict[str, None] = {}  # in draft order, one look-up per new id (a list made 200,000 drafts quadratic)
    for _ in drafts:
        item_id = new_item_id(project)
        while item_id in taken:
            item_id = new_item_id(project)
        taken[item_id] = None
    ids = list(taken)
    added = tuple(Change(i, NEW_ITEM_FIELD, None, d.canonical()) for i, d in zip(ids, drafts))
    staged = tuple(Change(i, STAGE_FIELD, None, stage) for i in ids)
    project.record([Part(NEW_ITEM_KIND, added), Part(STAGE_KIND, staged)])
    return ids


@dataclass(frozen=True)
class DraftsFile:
    """The drafts a file holds, and its columns they leave out (the project's file has no such column)."""

    drafts: list[Draft]
    left_out: tuple[str, ...] = ()


def read_drafts(project: Project, path: str | Path) -> DraftsFile:
    """The items of a drafts file, read by the dataset reader (any format and layout it knows); meta columns
    the project's file also has are kept, the others left out (and named in ``DraftsFile.left_out``). A column
    the row leaves empty takes the importing writer's value from the round (``writer_columns``: ``author``,
    their ``country``), as an item written with ``I`` does, so the drafts are routed like the file's items."""
    dataset = parse_dataset(read_source(path))
    writer = writer_columns(project)
    if not dataset.items:
        raise InputError(f"{path}: no items to import; give a file with a header and at least one row")
    layout = project.dataset.layout
    columns = set(project.dataset.meta_columns)
    imported = Origin("imported")
    drafts = []
    for item in dataset.items:
        solutions = list(item.solutions)
        while len(solutions) > room(layout) and not solutions[-1].strip():  # an empty cell the file has no column for
            solutions.pop()
        if (refused := solutions_refused(layout, len(solutions))) is not None:
            raise StageError(
                f"{path}: row {item.row + 1} ({item.id}) has {len(solutions)} solutions, but {refused}; "
                f"empty or drop its column {dataset.layout.solutions[len(solutions) - 1]} and import again"
            )
        given = {k: v for k, v in item.meta.items() if k in columns}
        meta = tuple(sorted((given | {k: v for k, v in writer.items() if not given.get(k, "").strip()}).items()))
        drafts.append(Draft(item.prompt, tuple(solutions), item.label, meta, imported))
        texts = len(item.prompt) + sum(map(len, solutions)) + sum(len(k) + len(v) for k, v in meta)
        if 6 * texts + 100 > MAX_VALUE_BYTES:  # JSON writes a character in at most 6 bytes: only a big one is encoded
            check_value(drafts[-1].canonical(), f"{path}: row {item.row + 1} ({item.id}), as a draft,")
    return DraftsFile(drafts, tuple(c for c in dataset.meta_columns if c not in columns))


# --------------------------------------------------------- correction rate


def _text(fields: dict[str, str]) -> str:
    return "\n".join(fields[name] for name in TEXT_FIELDS if name in fields)


def _fields_now(item: Item) -> dict[str, str]:
    return {name: field_value(item, name) for name in TEXT_FIELDS[: 1 + len(item.solutions)]}


_FIRST_FIELDS = (
    f"SELECT kind, field, old, new FROM events WHERE item_id = ? AND kind IN ('{NEW_ITEM_KIND}', 'edit')"
    f" ORDER BY {CANONICAL}"
)


_WRITER = f"SELECT annotator FROM events WHERE item_id = ? AND kind = '{NEW_ITEM_KIND}' ORDER BY {CANONICAL} LIMIT 1"


def writer_of(project: Project, item_id: str) -> str | None:
    """Who wrote the item in this workspace: the annotator of its first ``new-item`` event (None for an item the
    file had, or without a workspace). Blind mode does not hide from a writer the gold she typed herself."""
    if project.workspace is None:
        return None
    row = project.workspace.conn.execute(_WRITER, (item_id,)).fetchone()
    return None if row is None else str(row[0])


def first_fields(workspace: Workspace, item_id: str) -> dict[str, str]:
    """The item's text fields at their first recorded state: the fields of its ``new-item`` event, then for
    each field the ``old`` of its first edit (what the corrector started from); fields never edited are absent."""
    first: dict[str, str] = {}
    for kind, name, old, new in workspace.conn.execute(_FIRST_FIELDS, (item_id,)):
        if kind == NEW_ITEM_KIND and new and not first:
            data = json.loads(new)
            first = {"prompt": data["prompt"]} | {f"solution{i}": s for i, s in enumerate(data["solutions"])}
        elif kind == "edit" and name in TEXT_FIELDS:
            first.setdefault(name, old or "")
    return first


def correction_rate(project: Project, item_id: str) -> float:
    """The character edit rate between the item's text at its first recorded state and its text now: 0 when
    untouched, 1 when all of it was rewritten (normalised Levenshtein distance over the goal and solutions)."""
    now = _fields_now(project.item(item_id))
    if project.workspace is None:
        return 0.0
    started = first_fields(project.workspace, item_id)
    before = now | {name: text for name, text in started.items() if name in now}
    return Levenshtein.normalized_distance(_text(before), _text(now))


def correction_rates(project: Project) -> dict[str, float]:
    """Item id → correction rate, for every item in the authoring stages (a recorded stage), in file order."""
    staged = [item_id for item_id in recorded_stages(project) if item_id in project.index]
    return {item_id: correction_rate(project, item_id) for item_id in sorted(staged, key=project.index.__getitem__)}


def stage_line(project: Project, item_id: str) -> str:
    """What the item view says of an item in the authoring stages, with a model's or a file's origin ("" for one the
    file had and nobody staged)."""
    stage = recorded_stages(project).get(item_id)
    if stage is None or item_id not in project.index:
        return ""
    rate = correction_rate(project, item_id)
    origin = origin_of(project, item_id)
    made = f", {origin.describe()}" if origin.machine or origin.kind == "imported" else ""
    return f"stage {stage}{made}" + (f", corrected {rate:.0%}" if rate else "")


@dataclass(frozen=True, slots=True)
class CorrectionSummary:
    """How much the items of a translate-then-correct set were corrected."""

    items: int
    corrected: int  # items with any correction
    mean: float
    heavy: float  # share of items corrected more than HEAVY_CORRECTION


def correction_summary(rates: dict[str, float]) -> CorrectionSummary | None:
    """The summary the card shows (None: no item in the authoring stages)."""
    if not rates:
        return None
    values = list(rates.values())
    heavy = sum(v > HEAVY_CORRECTION for v in values) / len(values)
    return CorrectionSummary(len(values), sum(v > 0 for v in values), fmean(values), heavy)
