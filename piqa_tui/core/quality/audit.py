"""The label audit of a project: annotator reliability and the labels in doubt, computed together once.

``audit_labels`` reads the evidence (``evidence``), fits Dawid–Skene and MACE (``reliability``),
scores every label with CROWDLAB (``crowdlab``, ``doubt``) and works out each annotator's figures
(``annotators``). ``piqa-tui audit``, ``agree --json``, the dataset card and the TUI's "doubt" queue
all read a :class:`LabelAudit`; none recomputes a part of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from piqa_tui.core.quality.annotators import AnnotatorFigures, annotator_figures
from piqa_tui.core.quality.crowdlab import Crowdlab, ModelProbabilities, crowdlab
from piqa_tui.core.quality.doubt import DOUBT_BELOW, Doubt, doubts, examined_labels
from piqa_tui.core.quality.evidence import Evidence, read_evidence
from piqa_tui.core.quality.reliability import DawidSkene, Mace, dawid_skene, mace
from piqa_tui.core.scoring.templates import Template
from piqa_tui.core.votes.policy import Policy
from piqa_tui.core.workspace.project import Project

NO_OVERLAP = "no item has two or more votes: reliability and labels in doubt need annotators who share items"


@dataclass(frozen=True, eq=False)
class LabelAudit:
    """What the votes, the annotators' reliabilities and the models say about the labels."""

    evidence: Evidence
    ids: list[str]  # per voted item
    dawid_skene: DawidSkene | None  # None: nothing to fit (see ``note``)
    mace: Mace | None
    crowdlab: Crowdlab | None
    annotators: list[AnnotatorFigures]
    note: str | None = None

    @cached_property
    def _examined(self) -> tuple[np.ndarray, np.ndarray]:
        if self.crowdlab is None:
            empty = np.zeros(0)
            return empty.astype(np.int64), empty
        return examined_labels(self.evidence.gold, self.evidence.decided, self.crowdlab.posterior)

    @property
    def scored(self) -> int:
        """Items with a label to score (a gold or a decided label, and votes)."""
        return int((self._examined[0] >= 0).sum())

    @property
    def in_doubt_count(self) -> int:
        """Labels in doubt: scored items whose weaker label scores below ``DOUBT_BELOW``."""
        return int((self._examined[1] < DOUBT_BELOW).sum())

    def summary_json(self) -> dict[str, object]:
        """The figures that frame the labels in doubt: threshold, labels scored and in doubt, model runs used."""
        return {
            "threshold": DOUBT_BELOW,
            "scored": self.scored,
            "count": self.in_doubt_count,
            "models": [m.name for m in self.evidence.models],
            "note": self.note,
        }

    def to_json(self, limit: int | None = None) -> dict[str, object]:
        """The labels in doubt (``limit``: the lowest that many), each with CROWDLAB's and Dawid–Skene's
        posteriors (how sure, when fitted)."""
        return {**self.summary_json(), "items": [self._item_json(doubt) for doubt in self.ranked(limit)]}

    def _item_json(self, doubt: Doubt) -> dict[str, object]:
        found = doubt.to_json()
        sure = self.sureness(doubt.item_id)
        if sure is not None:
            found["dawid_skene"] = {"posterior": [round(p, 4) for p in sure[0]], "sure": round(sure[1], 4)}
        return found

    def ranked(self, limit: int | None = None) -> list[Doubt]:
        """The labels in doubt, lowest score first (``limit``: the lowest that many), with their reasons."""
        if self.crowdlab is None:
            return []
        wanted = self.in_doubt_count if limit is None else min(limit, self.in_doubt_count)
        e = self.evidence
        return doubts(e.table, self.ids, e.gold, e.decided, self.crowdlab, e.models, wanted)

    @cached_property
    def by_id(self) -> dict[str, Doubt]:
        """The labels in doubt, by item id."""
        return {doubt.item_id: doubt for doubt in self.ranked()}

    def sureness(self, item_id: str) -> tuple[tuple[float, ...], float] | None:
        """Dawid–Skene's posterior per solution for a voted item, and how sure it is (its largest value)."""
        if self.dawid_skene is None or item_id not in self._rows:
            return None
        row = self.dawid_skene.posterior[self._rows[item_id]]
        return tuple(float(p) for p in row), float(row.max())

    @cached_property
    def _rows(self) -> dict[str, int]:
        return {item_id: r for r, item_id in enumerate(self.ids)}


def audit_labels(
    project: Project,
    policy: Policy | None = None,
    known: Mapping[str, Template] | None = None,
    annotators: bool = True,
    models: list[ModelProbabilities] | None = None,
) -> LabelAudit:
    """The label audit of ``project``'s current votes, labels and stored model scores; it changes nothing.

    Without ``annotators`` only the labels are scored (no Dawid–Skene, MACE or per-annotator figures,
    no vote times read): what ``agree --json`` and the TUI's queue need, at a third of the cost. ``models``:
    the stored runs' probabilities already read (``evidence.every_item_models``).
    """
    evidence = read_evidence(project, policy, known, times=annotators, models=models)
    table = evidence.table
    ids = [project.items[p].id for p in evidence.positions.tolist()]
    if not table.n_votes or not (table.raters > 1).any():
        return LabelAudit(evidence, ids, None, None, None, [], NO_OVERLAP)
    found = crowdlab(table, evidence.models)
    if not annotators:
        return LabelAudit(evidence, ids, None, None, found, [])
    ds, competence = dawid_skene(table), mace(table)
    weights = None if found is None else found.annotator_weight
    figures = annotator_figures(table, evidence.seconds, evidence.gold, ds, competence, weights)
    return LabelAudit(evidence, ids, ds, competence, found, figures)
