"""Every model and template scored for a project, read back from the workspace's score cache.

The cache keys scores by (model identity, template key, item content), so the
results of every model ever scored stay in the workspace. ``model_results``
lists each (model, template) pair with its scores for the items as they are
now (an item edited since its scoring has no score until scored again): the
TUI's results screen, the curators' model queues and the dataset card read
them from here.

Pairs scored before the ``model_runs`` listing existed are found in the
scores themselves; their template is recognised by its key among the known
ones (built-in and the config's), and one that is not known is listed with
no scores rather than guessed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.cache import SOLUTION_ONLY, ScoreCache
from piqa_tui.core.scoring.results import ItemScore, item_content_hash
from piqa_tui.core.scoring.templates import Template, shipped_templates


@dataclass(frozen=True)
class StoredRun:
    """One (model, template) pair the workspace holds scores for."""

    model: str  # the cache's model key (file name, size, hash; or served:NAME)
    model_name: str  # for display
    template_key: str
    template: Template | None  # None: scored with a template whose text is not known here
    n_scores: int  # cached scores, for any version of the items
    first_scored: float  # seconds since the epoch

    @property
    def template_name(self) -> str:
        return (
            self.template.name
            if self.template is not None
            else (self.template_key.rpartition(":")[0] or self.template_key)
        )

    @property
    def baseline(self) -> bool:
        """A solution-only baseline run (the solutions without the prompt)."""
        return self.template_name.endswith(SOLUTION_ONLY)

    @property
    def label(self) -> str:
        """``model · template``: how tables and the per-item file name the run."""
        return f"{self.model_name} · {self.template_name}"


def _model_name(model: str) -> str:
    """A model as people name it, from its cache key: the GGUF file name, or the served model's name."""
    return model.removeprefix("served:") if model.startswith("served:") else model.split(":")[0]


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def _known_by_key(known: Mapping[str, Template]) -> dict[str, Template]:
    """Every known template and its solution-only variant, by cache key."""
    out: dict[str, Template] = {}
    for template in known.values():
        for variant in (template, template.solution_only()):
            out[variant.key] = variant
    return out


def _template_from_spec(spec: str, key: str, known: dict[str, Template]) -> Template | None:
    """A known template with the run's key, else the one the run recorded (its own fields), else None."""
    if key in known:
        return known[key]
    try:
        template = Template(**json.loads(spec))
        return template if template.key == key else None
    except (TypeError, ValueError, AttributeError, PiqaError):
        return None  # fields of another version, or ones JSON cannot hold (metadata rules): not guessed


def runs_stamp(conn: sqlite3.Connection) -> tuple[int, float]:
    """Changes whenever a run is recorded or scored further (``model_runs``: its count and latest update):
    the app's cue that another process (``piqa-tui score``) stored scores while it was open."""
    if not _has_table(conn, "model_runs"):
        return (0, 0.0)
    count, last = conn.execute("SELECT count(*), coalesce(max(updated_at), 0) FROM model_runs").fetchone()
    return int(count), float(last)


def stored_runs(conn: sqlite3.Connection, known: Mapping[str, Template] | None = None) -> list[StoredRun]:
    """Every (model, template) pair with cached scores, the first scored first (no table is made: a
    workspace opened read-only can be read); ``known`` templates by name, the shipped ones by default."""
    if not _has_table(conn, "model_scores"):
        return []
    query = "SELECT model, template, model_name, template_spec FROM model_runs"
    records = (
        {(model, key): (name, spec) for model, key, name, spec in conn.execute(query)}
        if _has_table(conn, "model_runs")
        else {}
    )
    by_key = _known_by_key(shipped_templates() if known is None else known)
    runs = []
    for model, key, count, first in conn.execute(
        "SELECT model, template, count(*), min(scored_at) FROM model_scores GROUP BY model, template"
    ):
        name, spec = records.get((model, key), (_model_name(model), "{}"))
        runs.append(StoredRun(model, name, key, _template_from_spec(spec, key, by_key), count, first))
    return sorted(runs, key=lambda run: (run.first_scored, run.model, run.template_key))


def stored_scores(conn: sqlite3.Connection, run: StoredRun, items: Sequence[Item]) -> list[ItemScore]:
    """The run's scores of ``items`` as they are now, in item order (items without one are left out)."""
    if run.template is None:
        return []
    hashes = [item_content_hash(item) for item in items]
    found = ScoreCache(conn, create=False).lookup(run.model, run.template_key, hashes)
    out = []
    for item, item_hash in zip(items, hashes):
        scores = found.get(item_hash)
        if scores is not None and len(scores) == len(item.solutions):
            out.append(ItemScore.build(item, run.template, scores, cached=True))
    return out


def model_results(
    conn: sqlite3.Connection,
    items: Sequence[Item],
    known: Mapping[str, Template] | None = None,
    *,
    baselines: bool = False,
) -> list[tuple[StoredRun, list[ItemScore]]]:
    """Every model and template scored for the project, with its scores of ``items`` (solution-only
    baselines only when ``baselines``); runs whose template is unknown here come with no scores."""
    return [(run, stored_scores(conn, run, items)) for run in stored_runs(conn, known) if baselines or not run.baseline]
