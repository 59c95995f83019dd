"""How often people kept what a model wrote, per job and model: the progress report's and the card's kept rates.

Two kinds of machine words are counted, each per job kind and model:

* **suggestions** (``suggest`` events: ``classify``, and the ``correct``, ``distractor`` and ``fill`` suggestions
  of the TUI's w, z and t keys), decided in the suggestion store: an ``accept`` is *kept* (the model's value
  reached the item as it was), an ``amend`` is *changed* (part of it was taken: some of its word changes, or a
  value the person edited before keeping it), a ``reject`` is *turned down*, and a suggestion nobody decided (or
  whose decision was undone) is *open*;
* **drafted and translated items** (the ``draft`` and ``translate`` jobs; their origin names the model): an item
  still at ``draft`` or ``review`` is *open*; one that went on to validation (or done) is reviewed, *kept* when
  its goal and solutions are the model's words exactly (correction rate 0) and *changed* otherwise. piqa-tui has
  no way to throw an item away, so none is turned down: a draft nobody wants stays open.

The **kept rate** is kept / reviewed (reviewed = kept + changed + turned down): the share of the model's words
that people took whole. A suggestion taken only in part counts as changed, not as kept, so the rate never
credits the model with words people rewrote; the changed count says how often the model helped in part. This is
the rate ``classify --report`` gives (``KeptRate.kept_share``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from piqa_tui.core.round.origin import project_origins
from piqa_tui.core.round.stages import BEFORE_VALIDATION, correction_rate, recorded_stages
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import PENDING, Suggestion, suggestions

# The order rows are shown in: suggestions on items first, then the jobs that write whole items.
JOB_ORDER = ("classify", "correct", "distractor", "fill", "translate", "draft")
_ITEM_JOBS = {"drafted": "draft", "translated": "translate"}  # an origin's kind → the job that made it
_STATUS = {"accept": "kept", "amend": "changed", "reject": "turned_down", PENDING: "open"}
UNNAMED = "(unnamed)"  # a model or job the record does not name


@dataclass(frozen=True, slots=True)
class KeptRow:
    """One job's and model's machine words and what people did with them."""

    job: str
    model: str
    kept: int = 0
    changed: int = 0
    turned_down: int = 0
    open: int = 0

    @property
    def made(self) -> int:
        return self.reviewed + self.open

    @property
    def reviewed(self) -> int:
        return self.kept + self.changed + self.turned_down

    @property
    def rate(self) -> float | None:
        """kept / reviewed; None before anything was reviewed."""
        return self.kept / self.reviewed if self.reviewed else None

    def rate_text(self) -> str:
        """``60%``, or ``—`` before any review."""
        return "—" if self.rate is None else f"{self.rate:.0%}"

    def counts_text(self) -> str:
        """``10 made, 6 reviewed: 3 kept, 1 changed, 2 turned down; 4 open``."""
        return (
            f"{self.made} made, {self.reviewed} reviewed: {self.kept} kept, {self.changed} changed, "
            f"{self.turned_down} turned down; {self.open} open"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "job": self.job,
            "model": self.model,
            "made": self.made,
            "reviewed": self.reviewed,
            "kept": self.kept,
            "changed": self.changed,
            "turned_down": self.turned_down,
            "open": self.open,
            "kept_rate": self.rate,
        }


def kept_rows(project: Project) -> list[KeptRow]:
    """Every job's and model's row, suggestions then drafted and translated items (empty when a model wrote
    nothing in this workspace)."""
    return _ordered(suggestion_rows(project) + item_rows(project))


def suggestion_rows(project: Project, item_ids: Collection[str] | None = None) -> list[KeptRow]:
    """The rows of the suggestions recorded on ``item_ids`` (default: every item)."""
    found = [s for s in suggestions(project) if item_ids is None or s.item_id in item_ids]
    return _ordered(_counted((_job_of(s), s.model or UNNAMED, _STATUS.get(s.status, "open")) for s in found))


def item_rows(project: Project) -> list[KeptRow]:
    """The rows of the items a model drafted or translated, by where each stands now (see the module's text)."""
    stages = recorded_stages(project)
    decisions = []
    for item_id, origin in project_origins(project).items():
        job = _ITEM_JOBS.get(origin.kind)
        if job is None or item_id not in project.index:
            continue
        if stages.get(item_id, BEFORE_VALIDATION[0]) in BEFORE_VALIDATION:
            status = "open"
        else:
            status = "changed" if correction_rate(project, item_id) > 0 else "kept"
        decisions.append((job, origin.model or UNNAMED, status))
    return _ordered(_counted(decisions))


def _job_of(s: Suggestion) -> str:
    job = s.provenance.get("job")
    return job if isinstance(job, str) and job else UNNAMED


def _counted(decisions: Iterable[tuple[str, str, str]]) -> list[KeptRow]:
    """(job, model, what became of one unit) → a row per job and model."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for job, model, status in decisions:
        counts.setdefault((job, model), Counter())[status] += 1
    return [
        KeptRow(job, model, c["kept"], c["changed"], c["turned_down"], c["open"]) for (job, model), c in counts.items()
    ]


def _ordered(rows: list[KeptRow]) -> list[KeptRow]:
    """By job (``JOB_ORDER``, others after), then model."""
    rank = {job: n for n, job in enumerate(JOB_ORDER)}
    return sorted(rows, key=lambda row: (rank.get(row.job, len(JOB_ORDER)), row.job, row.model))
