"""Where each item began — in the file, typed in, imported, drafted or translated by a model — and how much
people changed the machine's words.

An item the log added carries its origin in its ``new-item`` event (the ``origin`` table of the event's JSON;
none is ``written``, as every item typed before origins were recorded). An edit, a merge, a sync or a save
never touches that event, so the origin stays the item's whatever happens to its text; the correction rate
(``core.round.stages``: its text at that first state against its text now) says how much people changed it.
A drafted or translated item names the model, the template and the run that made it (and carries the run's whole
provenance, so it travels with the item through a merge or a sync), and a translation keeps
its source beside it (``source_id``, ``source_prompt``, ``source_solution0`` …), the side-by-side columns a
post-editor works from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from piqa_tui.core.workspace.event_rules import ORIGIN_KINDS
from piqa_tui.core.workspace.log import Workspace
from piqa_tui.core.workspace.project import NEW_ITEM_KIND, Project

FILE = "file"  # an item the dataset file held: no ``new-item`` event
WRITTEN = "written"
MACHINE_KINDS = ("drafted", "translated")  # the origins whose first words a model wrote
_NAMED = ("kind", "model", "template", "run", "key")
_PROVENANCE = "provenance"


@dataclass(frozen=True, slots=True)
class Origin:
    """One item's origin: its kind and, for a model's item, the model, template, run and the run's slot (``key``:
    which request made it, so a resumed run skips it); ``source`` the fields of the item it was translated from."""

    kind: str = WRITTEN
    model: str = ""
    template: str = ""
    run: str = ""
    key: str = ""
    source: tuple[tuple[str, str], ...] = ()
    provenance: str = ""  # the run's provenance as JSON (model file and hash or server, parameters, seed, who, when)

    def to_json(self) -> dict[str, str]:
        """The table a ``new-item`` event records (empty parts left out)."""
        named = {name: getattr(self, name) for name in _NAMED if getattr(self, name)}
        told = {_PROVENANCE: self.provenance} if self.provenance else {}
        return named | told | {f"source_{name}": text for name, text in self.source}

    @classmethod
    def from_json(cls, data: Mapping[str, str]) -> Origin:
        """The origin a recorded table describes (unknown keys ignored: a newer writer's additions)."""
        source = tuple((k.removeprefix("source_"), v) for k, v in sorted(data.items()) if k.startswith("source_"))
        kind = data.get("kind", WRITTEN)
        named = {name: data.get(name, "") for name in _NAMED[1:]}
        return cls(
            kind if kind in ORIGIN_KINDS else WRITTEN, **named, source=source, provenance=data.get(_PROVENANCE, "")
        )

    @property
    def machine(self) -> bool:
        """Whether a model wrote the item's first words."""
        return self.kind in MACHINE_KINDS

    def describe(self) -> str:
        """``drafted by MODEL``, ``imported``, ``file``: what the item view, exports and reports show."""
        return f"{self.kind} by {self.model}" if self.machine and self.model else self.kind


def origins_in_force(workspace: Workspace) -> dict[str, Origin]:
    """Item id → origin, for every item a ``new-item`` event added and no undo withdrew (latest event wins)."""
    found: dict[str, Origin] = {}
    for _, item_id, new in workspace.event_fields([NEW_ITEM_KIND], "item_id, new"):
        if not new:
            found.pop(item_id, None)
            continue
        data = json.loads(new).get("origin")
        found[item_id] = Origin.from_json(data) if isinstance(data, dict) else Origin()
    return found


def project_origins(project: Project) -> dict[str, Origin]:
    """The origins of the items the log added, read again only when the log moved."""
    workspace = project.workspace
    if workspace is None:
        return {}
    return project.memo.get(project_origins, lambda: origins_in_force(workspace))


def origin_of(project: Project, item_id: str) -> Origin:
    """The item's origin (``file`` for one the dataset file held)."""
    return project_origins(project).get(item_id, Origin(FILE))


@dataclass(frozen=True, slots=True)
class OriginCorrection:
    """How much people changed the items of one origin (kind and model): the card's and ``stage``'s rows."""

    origin: str  # Origin.describe()
    items: int
    corrected: int
    mean: float


def correction_by_origin(project: Project, rates: Mapping[str, float]) -> list[OriginCorrection]:
    """``rates`` (item id → correction rate) grouped by origin and model, most items first."""
    groups: dict[str, list[float]] = {}
    for item_id, rate in rates.items():
        groups.setdefault(origin_of(project, item_id).describe(), []).append(rate)
    rows = [OriginCorrection(name, len(v), sum(r > 0 for r in v), fmean(v)) for name, v in groups.items()]
    return sorted(rows, key=lambda row: (-row.items, row.origin))


def origin_columns(project: Project, item_ids: Sequence[str]) -> dict[str, list[str]]:
    """The columns an export adds with ``--origin-columns``: ``origin`` (the kind), ``origin_model`` and, when any
    item is a translation, its source beside it (``source_id``, ``source_goal``, ``source_sol1`` …)."""
    found = [origin_of(project, item_id) for item_id in item_ids]
    columns: dict[str, list[str]] = {"origin": [o.kind for o in found], "origin_model": [o.model for o in found]}
    sources = [dict(o.source) for o in found]
    width = max((sum(k.startswith("solution") for k in s) for s in sources), default=0)
    if any(sources):
        columns["source_id"] = [s.get("id", "") for s in sources]
        columns["source_goal"] = [s.get("prompt", "") for s in sources]
        for n in range(width):
            columns[f"source_sol{n + 1}"] = [s.get(f"solution{n}", "") for s in sources]
    return columns
