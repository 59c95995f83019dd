"""Classify items into a closed set of values for a metadata column, by the log-likelihood of each value.

No text is generated and nothing is parsed: each item becomes one scoring request (``ScoreRequest``) whose
context shows the item and names the column, and whose continuations are the values (`` value``); the scoring
backend (the local GGUF model in its own process, or a server with prompt log-probabilities) sums each value's
token log-probabilities, exactly as ``score`` does for solutions, and the value with the highest log-likelihood
per character (lm-evaluation-harness's ``acc_norm``, so a long value is not penalised for its length) is the
model's choice; a tie goes to the value listed first. The same model, values and items give the same choices.

The choices are recorded as suggestions (``core/workspace/suggestions``) a person accepts or rejects, one action
per chunk of items, with their provenance (the model file's SHA-256 or the server, the prompt's hash, the values);
an interrupted run keeps its finished chunks, and the next run with the same model, column and values skips the
items that already have its suggestion.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.generation.protocol import ModelSource, Provenance, text_sha256
from piqa_tui.core.scoring.backend import ContinuationScore, ModelBackend, ScoreRequest
from piqa_tui.core.scoring.batch_layout import MAX_SOLUTIONS
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.state import field_value
from piqa_tui.core.workspace.suggestions import NewSuggestion, Suggestion, record_suggestions, suggestions

JOB = "classify"
NORMALISE = "per-character"  # the log-likelihood divided by the value's length in characters (acc_norm)
PROMPT = "{prompt}\n{solutions}\n{column}:"  # the context each value continues
PROMPT_NAME = "classify-builtin"
CHUNK = 16  # items per scoring call and per recorded action


class ClassifyError(PiqaError):
    """A classification that cannot run (one line)."""


@dataclass(frozen=True, slots=True)
class ClassifyJob:
    """Which column, which values (at least two, each once), which items (None: those whose column is empty or
    holds none of the values)."""

    column: str
    values: tuple[str, ...]
    every_item: bool = False

    @property
    def field(self) -> str:
        return f"meta:{self.column}"

    def check(self, project: Project) -> None:
        if self.column not in project.dataset.meta_columns:
            known = ", ".join(project.dataset.meta_columns) or "none"
            raise ClassifyError(f"the dataset has no column {self.column!r}; its metadata columns are {known}")
        if len(self.values) < 2 or len(set(self.values)) != len(self.values) or not all(v.strip() for v in self.values):
            raise ClassifyError("give at least two different, non-empty values to choose from")


@dataclass(frozen=True, slots=True)
class Choice:
    """The model's value for one item, and every value's normalised log-likelihood (in the job's order)."""

    item_id: str
    value: str
    scores: tuple[float, ...]


def requests_for(item: Item, job: ClassifyJob) -> list[ScoreRequest]:
    """The item as scoring requests: its text and the column's name as context, the values as continuations, at
    most ``MAX_SOLUTIONS`` a request (the scoring layout's bound; more values: more requests on one context)."""
    solutions = "\n".join(f"{k + 1}. {s}" for k, s in enumerate(item.solutions))
    context = PROMPT.format(prompt=item.prompt, solutions=solutions, column=job.column)
    values = [f" {v}" for v in job.values]
    return [ScoreRequest(context, tuple(values[k : k + MAX_SOLUTIONS])) for k in range(0, len(values), MAX_SOLUTIONS)]


def score_items(backend: ModelBackend, items: Sequence[Item], job: ClassifyJob) -> list[list[ContinuationScore]]:
    """Every value's score for each item, in the job's order (one ``score`` call for all of them)."""
    asked = [requests_for(item, job) for item in items]
    answers = iter(backend.score([r for requests in asked for r in requests]))
    return [[score for _ in requests for score in next(answers)] for requests in asked]


def choose(item_id: str, job: ClassifyJob, scored: Sequence[ContinuationScore]) -> Choice:
    """The value with the highest log-likelihood per character (the first such when tied)."""
    normalised = tuple(s.loglik / max(1, len(v)) for s, v in zip(scored, job.values))
    best = max(range(len(normalised)), key=lambda k: (normalised[k], -k))
    return Choice(item_id, job.values[best], normalised)


def provenance(job: ClassifyJob, source: ModelSource, by: str) -> Provenance:
    """The run's provenance; its parameters carry the run's key (``run_key``), which a resumed run looks for."""
    params = {"column": job.column, "values": list(job.values), "normalise": NORMALISE, "run": run_key(job, source)}
    return Provenance.now(source, by, JOB, template=PROMPT_NAME, template_sha256=text_sha256(PROMPT), params=params)


def run_key(job: ClassifyJob, source: ModelSource) -> str:
    """What makes two runs the same: the model, the column, the values and the prompt."""
    parts = [source.model, source.sha256, source.server, job.column, *job.values, PROMPT]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def source_of(info: dict[str, object]) -> ModelSource:
    """The scoring backend's model as provenance names it: a local file with its SHA-256, or a server's model."""
    path = info.get("path")
    if isinstance(path, str) and path:
        digest = hashlib.sha256()
        with Path(path).open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        return ModelSource(Path(path).name, sha256=digest.hexdigest(), backend="local")
    return ModelSource(
        str(info.get("model", "")), server=str(info.get("url", "")), backend=str(info.get("backend", ""))
    )


def to_classify(project: Project, job: ClassifyJob, key: str) -> list[Item]:
    """The items this run still has to classify: chosen by the job, less those this same run already suggested."""
    done = {s.item_id for s in _of_run(project, job, key)}
    chosen = []
    for item in project.items:
        if item.id in done:
            continue
        if job.every_item or field_value(item, job.field) not in job.values:
            chosen.append(item)
    return chosen


def _of_run(project: Project, job: ClassifyJob, key: str) -> list[Suggestion]:
    """The suggestions a run with this key recorded for the job's column."""
    found = []
    for s in suggestions(project):
        params = s.provenance.get("params")
        if s.field == job.field and isinstance(params, dict) and params.get("run") == key:
            found.append(s)
    return found


@dataclass
class ClassifyOutcome:
    """What a run did: items classified, suggestions recorded (where the model's value differs from the
    column's), items it agreed with, and the items skipped because an earlier run already classified them."""

    classified: int = 0
    suggested: int = 0
    agreed: int = 0
    skipped: int = 0
    cancelled: bool = False


def classify(
    project: Project,
    backend: ModelBackend,
    job: ClassifyJob,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    limit: int | None = None,
) -> ClassifyOutcome:
    """Classify the job's items (the first ``limit`` still to do) with ``backend`` and record the choices as
    suggestions (see the module)."""
    job.check(project)
    source = source_of(backend.describe())
    key = run_key(job, source)
    note_json = provenance(job, source, project.annotator).to_json()
    items = to_classify(project, job, key)[:limit]
    outcome = ClassifyOutcome(skipped=len(_of_run(project, job, key)))
    for start in range(0, len(items), CHUNK):
        if cancel is not None and cancel.is_set():
            outcome.cancelled = True
            break
        chunk = items[start : start + CHUNK]
        scored = score_items(backend, chunk, job)
        choices = [choose(item.id, job, s) for item, s in zip(chunk, scored)]
        new = [
            NewSuggestion(c.item_id, job.field, c.value, note_json)
            for c, item in zip(choices, chunk)
            if field_value(item, job.field) != c.value
        ]
        record_suggestions(project, new)
        outcome.classified += len(chunk)
        outcome.suggested += len(new)
        outcome.agreed += len(chunk) - len(new)
        if progress is not None:
            progress(start + len(chunk), len(items))
    return outcome
