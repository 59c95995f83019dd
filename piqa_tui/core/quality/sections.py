"""The label audit's sections as ``piqa-tui audit`` prints them: each ``to_json() -> dict`` and ``lines() -> list[str]``.

A section's JSON is one key of the audit's object ("annotators", "labels_in_doubt"); its lines start
with its heading. The lines hold annotator names and item ids as recorded: the command makes them
terminal-safe when it prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

from piqa_tui.core.quality.annotators import BREAK_SECONDS, STAMPED_SECONDS, AnnotatorFigures, Span
from piqa_tui.core.quality.artifacts import ArtifactReport
from piqa_tui.core.quality.audit import LabelAudit
from piqa_tui.core.quality.doubt import DOUBT_BELOW
from piqa_tui.core.text.graphemes import cell_width

DEFAULT_TOP = 20


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _drift(first: Span, last: Span) -> str:
    if not first.votes:
        return "—"
    return f"{_pct(first.with_consensus)}→{_pct(last.with_consensus)}"


@dataclass(frozen=True)
class AnnotatorsSection:
    """Per annotator: accuracy, competence, agreement, speed and drift, and why to talk to them."""

    audit: LabelAudit

    def to_json(self) -> dict[str, object]:
        return {
            "annotators": {
                "break_seconds": BREAK_SECONDS,
                "note": self.audit.note,
                "rows": [figures.to_json() for figures in self.audit.annotators],
            }
        }

    def lines(self) -> list[str]:
        out = ["annotators"]
        if self.audit.note:
            return [*out, f"  {self.audit.note}"]
        width = max([9, *(cell_width(f.name) for f in self.audit.annotators)])
        out.append(
            f"  {'annotator':<{width}}  votes  accuracy  competence  weight  majority  gold  votes/h  s/item  drift"
        )
        out += [self._row(f, width) for f in self.audit.annotators]
        out += [f"  {f.name}: {flag}" for f in self.audit.annotators for flag in f.flags]
        out.append(
            "  accuracy: Dawid–Skene; competence: MACE; weight: CROWDLAB; drift: agreement with the consensus, "
            f"first → last quarter; gaps over {BREAK_SECONDS // 60} min are breaks"
        )
        if any(f.overall.untimed for f in self.audit.annotators):
            out.append(
                f"  untimed: votes imported without times (stamped under {STAMPED_SECONDS:g} s apart) give no pace; "
                "import a votes file with a time column for one"
            )
        return out

    @staticmethod
    def _row(f: AnnotatorFigures, width: int) -> str:
        o = f.overall
        return (
            f"  {f.name}{' ' * (width - cell_width(f.name))}  {f.votes:>5}  {f.accuracy:>8.2f}  {f.competence:>10.2f}  {_num(f.weight):>6}"
            f"  {_pct(o.with_majority):>8}  {_pct(o.with_gold):>4}  {'untimed' if o.untimed else _num(o.votes_per_hour, 0):>7}"
            f"  {_num(o.median_seconds, 0):>6}  {_drift(f.first, f.last)}"
        )


@dataclass(frozen=True)
class DoubtSection:
    """The labels most likely wrong, lowest score first, each with its reason."""

    audit: LabelAudit
    top: int = DEFAULT_TOP

    def to_json(self) -> dict[str, object]:
        return {"labels_in_doubt": self.audit.to_json(self.top)}

    def lines(self) -> list[str]:
        audit = self.audit
        models = len(audit.evidence.models)
        heading = (
            f"labels in doubt: {audit.in_doubt_count} of {audit.scored} scored labels "
            f"(score below {DOUBT_BELOW}; {models} model run{'s' if models != 1 else ''} used)"
        )
        if audit.note:
            return [heading, f"  {audit.note}"]
        shown = audit.ranked(self.top)
        out = [heading + (f", the {len(shown)} lowest:" if shown else "")]
        for doubt in shown:
            out.append(f"  {doubt.item_id}  {doubt.which} {doubt.label + 1}  score {doubt.score:.2f}  {doubt.reason}")
        return out


def audit_sections(audit: LabelAudit, top: int = DEFAULT_TOP) -> list[AnnotatorsSection | DoubtSection]:
    """The sections ``piqa-tui audit`` prints from the label audit, in order."""
    return [AnnotatorsSection(audit), DoubtSection(audit, top)]


@dataclass(frozen=True)
class ArtifactsSection:
    """The annotation artifacts (``artifacts.ArtifactReport``) as the audit's section "artifacts"."""

    report: ArtifactReport

    def to_json(self) -> dict[str, object]:
        return {"artifacts": self.report.to_json()}

    def lines(self) -> list[str]:
        return self.report.lines()  # its first line names it
