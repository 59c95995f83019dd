"""Per-item scores and what they add up to: acc, acc_norm, margins, groups.

Scoring follows lm-evaluation-harness's multiple-choice log-likelihood: each
solution becomes a continuation of one shared context, the backend returns the
summed log-probability of the continuation's tokens, ``acc`` picks the highest
sum, ``acc_norm`` the highest sum divided by the solution's length in
characters and ``acc_bytes`` the highest sum divided by its length in UTF-8
bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.templates import DEFAULT_TEMPLATE, Template

# --------------------------------------------------------------------------- results


_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(..., ensure_ascii=False) without a new encoder a call


def item_content_hash(item: Item) -> str:
    """Hash of what scoring reads from an item: prompt, question and solutions."""
    payload = _ENCODER.encode([item.prompt, item.question, list(item.solutions)])
    return hashlib.sha256(payload.encode()).hexdigest()


def _argmax(values: Sequence[float]) -> int:
    # First maximum wins, as numpy.argmax does in lm-evaluation-harness.
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


@dataclass(frozen=True, slots=True)
class ItemScore:
    """A model's verdict on one item: every solution's log-likelihood and what follows."""

    item_id: str
    logliks: tuple[float, ...]
    n_tokens: tuple[int, ...]
    norm_lengths: tuple[int, ...]
    label: int | None = None
    template: str = DEFAULT_TEMPLATE
    cached: bool = field(default=False, compare=False)
    byte_lengths: tuple[int, ...] = ()  # UTF-8 bytes per solution (acc_bytes); () falls back to norm_lengths

    @classmethod
    def build(
        cls, item: Item, template: Template, scores: Sequence[ContinuationScore], cached: bool = False
    ) -> ItemScore:
        return cls(
            item_id=item.id,
            logliks=tuple(float(s.loglik) for s in scores),
            n_tokens=tuple(int(s.n_tokens) for s in scores),
            norm_lengths=template.norm_lengths(item),
            label=item.label,
            template=template.name,
            cached=cached,
            byte_lengths=template.byte_lengths(item),
        )

    @property
    def normalised(self) -> tuple[float, ...]:
        """Log-likelihood per character of solution (lm-evaluation-harness ``acc_norm``)."""
        return tuple(ll / n for ll, n in zip(self.logliks, self.norm_lengths))

    @property
    def normalised_bytes(self) -> tuple[float, ...]:
        """Log-likelihood per UTF-8 byte of solution (lm-evaluation-harness ``acc_bytes``)."""
        return tuple(ll / n for ll, n in zip(self.logliks, self.byte_lengths or self.norm_lengths))

    @property
    def prediction(self) -> int:
        return _argmax(self.logliks)

    @property
    def prediction_norm(self) -> int:
        return _argmax(self.normalised)

    @property
    def prediction_bytes(self) -> int:
        return _argmax(self.normalised_bytes)

    @property
    def margin(self) -> float:
        """Best minus second-best log-likelihood: how sure the model is (0 = a tie)."""
        best, second = sorted(self.logliks, reverse=True)[:2]
        return best - second

    @property
    def correct(self) -> bool | None:
        return None if self.label is None else self.prediction == self.label

    @property
    def correct_norm(self) -> bool | None:
        return None if self.label is None else self.prediction_norm == self.label

    @property
    def correct_bytes(self) -> bool | None:
        return None if self.label is None else self.prediction_bytes == self.label

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record for per-item results files."""
        return {
            "id": self.item_id,
            "template": self.template,
            "label": self.label,
            "logliks": list(self.logliks),
            "n_tokens": list(self.n_tokens),
            "normalised": list(self.normalised),
            "normalised_bytes": list(self.normalised_bytes),
            "prediction": self.prediction,
            "prediction_norm": self.prediction_norm,
            "prediction_bytes": self.prediction_bytes,
            "margin": self.margin,
            "correct": self.correct,
            "correct_norm": self.correct_norm,
            "correct_bytes": self.correct_bytes,
        }


def _accuracy(scores: Sequence[ItemScore]) -> dict[str, object]:
    labelled = [s for s in scores if s.label is not None]
    n = len(labelled)
    return {
        "n": n,
        "n_unlabelled": len(scores) - n,
        # Undefined without labelled items: None, never 0.
        "acc": sum(bool(s.correct) for s in labelled) / n if n else None,
        "acc_norm": sum(bool(s.correct_norm) for s in labelled) / n if n else None,
        "acc_bytes": sum(bool(s.correct_bytes) for s in labelled) / n if n else None,
        "mean_margin": sum(s.margin for s in scores) / len(scores) if scores else None,
    }


def summarise(scores: Iterable[ItemScore], groups: Mapping[str, str | None] | None = None) -> dict[str, object]:
    """``acc``, ``acc_norm``, ``acc_bytes``, ``n`` (labelled items), ``n_unlabelled``, ``mean_margin``.

    With ``groups`` (item id -> group value, e.g. a metadata column's) the
    result also has ``"groups": {value: {same keys}}``, values sorted; items
    without a value fall in ``"(none)"``.
    """
    scores = list(scores)
    summary = _accuracy(scores)
    if groups is not None:
        buckets: dict[str, list[ItemScore]] = {}
        for s in scores:
            value = groups.get(s.item_id)
            buckets.setdefault(value if value not in (None, "") else "(none)", []).append(s)
        summary["groups"] = {k: _accuracy(buckets[k]) for k in sorted(buckets)}
    return summary


def with_label(score: ItemScore, label: int | None) -> ItemScore:
    """The same score judged against another label (e.g. the votes' majority)."""
    return replace(score, label=label)
