"""Running a draft, translate or correct job: requests in parallel sequences, answers checked, drafts recorded as they come.

The slots still to do (``core.authoring.runs``) go to the backend ``batch`` at a time through
``generate_many``, which writes them as parallel sequences (of one llama.cpp context: ``--parallel``;
concurrent requests to a server: ``--concurrency``). Each batch's
answers become drafts — the model's goal and solutions, never a label (a draft's label is left to the
validators' votes; a translation keeps its source's label, a person's, with the solutions in the source's
order) — and are recorded as one action at stage ``draft`` with their origin, so a cancel or a crash keeps every
finished batch. An answer that does not fit (the backend's one line, or a translation with another number of
solutions) records nothing and is counted; a draft or translation that nearly copies the dataset or an earlier
draft, lexically or (with an embedder) in meaning, is rejected and counted (``core.authoring.repetition``).
A correct run's answers are recorded as pending suggestions instead, never written into the items
(``core.authoring.correcting``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from piqa_tui.core.authoring.correcting import CORRECT_JOB, CorrectionValues, answered_keys, record_corrections
from piqa_tui.core.authoring.examples import similar_items
from piqa_tui.core.authoring.job_templates import JobTemplate
from piqa_tui.core.authoring.repetition import LEXICAL, SEMANTIC, RepetitionGate
from piqa_tui.core.authoring.runs import JobRun, Slot, done_keys
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.generation.protocol import (
    STOP_CANCELLED,
    ChatTurn,
    GenerationBackend,
    GenerationRequest,
    GenerationResult,
    Provenance,
)
from piqa_tui.core.round.origin import Origin
from piqa_tui.core.round.stages import Draft, StageError, add_items, draft, stage_of
from piqa_tui.core.workspace.project import Project

DEFAULT_BATCH = 8
JOB_KINDS = {"draft": "drafted", "translate": "translated"}  # a job → the origin of the items it makes


@dataclass
class JobProgress:
    """Where a run stands: slots answered of those to do, items recorded, near copies rejected (lexically, and
    in meaning), answers failed."""

    total: int
    done: int = 0
    recorded: int = 0
    rejected_lexical: int = 0
    rejected_semantic: int = 0
    failed: list[str] = field(default_factory=list)  # one line per slot: why its answer recorded nothing
    started: float = field(default_factory=time.monotonic)
    skipped: int = 0  # slots a previous run of the same id had finished
    cancelled: bool = False
    suggestions: int = 0  # a correction run: the suggestions recorded (``recorded`` counts their items)
    unchanged: int = 0  # a correction run: items whose answer changed nothing

    @property
    def rejected(self) -> int:
        """Near copies rejected, both ways."""
        return self.rejected_lexical + self.rejected_semantic

    def eta(self) -> float | None:
        """Seconds left at the pace so far (None before the first batch)."""
        if not self.done:
            return None
        return (time.monotonic() - self.started) / self.done * (self.total - self.done)


@dataclass(frozen=True)
class JobContext:
    """What one run needs besides its plan: the template, the backend, how it is recorded, and the repetition
    check (None: a lexical one over the project's items, at the ``dedup`` threshold)."""

    template: JobTemplate
    backend: GenerationBackend
    provenance: Provenance
    batch: int = DEFAULT_BATCH
    gate: RepetitionGate | None = None


def run_job(
    project: Project,
    run: JobRun,
    context: JobContext,
    cancel: threading.Event | None = None,
    report: Callable[[JobProgress], None] | None = None,
) -> JobProgress:
    """Ask for every slot of ``run`` not yet done and record the drafts; the progress at the end."""
    correcting = run.job == CORRECT_JOB
    done = answered_keys(project, run.run_id) if correcting else done_keys(project, run.run_id)
    todo = [(n, slot) for n, slot in enumerate(run.slots) if slot.key not in done]
    progress = JobProgress(total=len(todo), skipped=len(run.slots) - len(todo))
    gate: RepetitionGate | None = None  # a correction adds no item: there is no near copy to check
    if not correcting:
        gate = context.gate if context.gate is not None else RepetitionGate(project.items)
    prompts = Prompts(project, run, context.template)
    step = max(1, context.batch)
    for start in range(0, len(todo), step):
        if cancel is not None and cancel.is_set():
            break
        chunk = todo[start : start + step]
        requests = [prompts.request(n, slot) for n, slot in chunk]
        results = context.backend.generate_many(requests, cancel=cancel)
        if gate is None:
            _record_corrections(project, run, context, [slot for _, slot in chunk], results, progress)
        else:
            _record(project, run, context, [slot for _, slot in chunk], results, gate, progress)
        if report is not None:
            report(progress)
    progress.cancelled = cancel is not None and cancel.is_set()
    return progress


def _record_corrections(
    project: Project,
    run: JobRun,
    context: JobContext,
    slots: Sequence[Slot],
    results: Sequence[GenerationResult],
    progress: JobProgress,
) -> None:
    """Turn one batch's corrections into pending suggestions (one action); the items are left as they are."""
    provenance = context.provenance.to_json()
    outcome = record_corrections(project, run.run_id, context.template, provenance, slots, results)
    progress.done += outcome.answered
    progress.recorded += outcome.items
    progress.suggestions += outcome.suggestions
    progress.unchanged += outcome.unchanged
    progress.failed += outcome.failed


def _record(
    project: Project,
    run: JobRun,
    context: JobContext,
    slots: Sequence[Slot],
    results: Sequence[GenerationResult],
    gate: RepetitionGate,
    progress: JobProgress,
) -> None:
    """Turn one batch's answers into drafts, drop near copies, record the rest as one action."""
    drafts: list[Draft] = []
    sources: list[Item | None] = []
    for slot, result in zip(slots, results):
        if result.stop == STOP_CANCELLED:
            continue
        progress.done += 1
        try:
            if not result.ok:
                raise StageError(result.error or f"the answer stopped ({result.stop})")
            drafts.append(answer_draft(project, run, context, slot, result.data))
            sources.append(source_item(slot.source))
        except StageError as exc:
            progress.failed.append(f"{slot.name()}: {exc}")
    verdicts = gate.check([d.item() for d in drafts], sources)
    progress.rejected_lexical += verdicts.count(LEXICAL)
    progress.rejected_semantic += verdicts.count(SEMANTIC)
    chosen = [d for d, keep in zip(drafts, verdicts.kept) if keep]
    add_items(project, chosen)
    progress.recorded += len(chosen)


def answer_draft(project: Project, run: JobRun, context: JobContext, slot: Slot, data: object) -> Draft:
    """The draft one answer makes, with its origin; StageError (one line) when the answer cannot be one."""
    if not isinstance(data, Mapping) or not isinstance(data.get("goal"), str):
        raise StageError("the answer has no text goal")
    solutions = data.get("solutions")
    if not isinstance(solutions, list) or not all(isinstance(s, str) for s in solutions):
        raise StageError("the answer's solutions are not a list of texts")
    columns = set(project.dataset.meta_columns)
    source = slot.source
    label = None
    meta = {k: v for k, v in slot.meta.items() if k in columns}
    if run.job == "translate":
        wanted = source.get("solutions")
        count = len(wanted) if isinstance(wanted, list) else 0
        if len(solutions) != count:
            raise StageError(f"the translation has {len(solutions)} solutions, the source {count}")
        given = source.get("label")
        label = given if isinstance(given, int) else None
    origin = Origin(
        JOB_KINDS[run.job],
        model=context.provenance.source.model,
        template=context.template.name,
        run=run.run_id,
        key=slot.key,
        source=source_fields(source),
        provenance=context.provenance.to_json(),
    )
    made = draft(data["goal"], solutions, label, meta)
    return Draft(made.prompt, made.solutions, made.label, made.meta, origin)


def source_item(source: Mapping[str, object]) -> Item | None:
    """The item a translation translates, as its slot holds it (None for a draft, which has none)."""
    if not source:
        return None
    solutions = source.get("solutions")
    texts = tuple(str(s) for s in solutions) if isinstance(solutions, list) else ()
    return Item(str(source.get("id", "")), str(source.get("prompt", "")), texts, None, 0)


def source_fields(source: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """A translation's source as the origin keeps it: its id, goal and solutions (``solution0`` …)."""
    if not source:
        return ()
    solutions = source.get("solutions")
    texts = [str(s) for s in solutions] if isinstance(solutions, list) else []
    found = [("id", str(source.get("id", ""))), ("prompt", str(source.get("prompt", "")))]
    return tuple(found + [(f"solution{i}", text) for i, text in enumerate(texts)])


class Prompts:
    """The request for each slot: the template rendered for it (a draft's examples retrieved once per metadata)."""

    def __init__(self, project: Project, run: JobRun, template: JobTemplate) -> None:
        self.run = run
        self.template = template
        self.examples: dict[tuple[tuple[str, str], ...], str] = {}
        drafting = template.examples and run.job == "draft"
        kept = [item for item in project.items if stage_of(project, item.id) != "draft"] if drafting else []
        self.pool: list[Item] = kept
        self.corrections = CorrectionValues(project, template) if run.job == CORRECT_JOB else None

    def request(self, index: int, slot: Slot) -> GenerationRequest:
        values = self.values(slot)
        system, user = self.template.render(values, slot.meta)
        turns = ((ChatTurn("system", system),) if system.strip() else ()) + (ChatTurn("user", user),)
        return GenerationRequest(
            messages=turns,
            schema=self.template.schema_for(self.solutions(slot)),
            max_tokens=self.run.max_tokens,
            temperature=self.run.temperature,
            seed=self.run.seed + index,
            key=slot.key,
        )

    def solutions(self, slot: Slot) -> int | None:
        """How many solutions the answer must have: a translation's source's count (a draft: the template's)."""
        if self.corrections is not None:
            return len(self.corrections.item(slot).solutions)
        solutions = slot.source.get("solutions")
        return len(solutions) if self.run.job == "translate" and isinstance(solutions, list) else None

    def values(self, slot: Slot) -> dict[str, str]:
        """The placeholders' values for one slot."""
        values = {"language": self.run.language}
        if self.corrections is not None:
            return values | self.corrections.values(slot)
        if self.run.job == "draft":
            return values | {"metadata": metadata_line(slot.meta), "examples": self.shown_examples(slot.meta)}
        solutions = slot.source.get("solutions")
        texts = [str(s) for s in solutions] if isinstance(solutions, list) else []
        return values | {"goal": str(slot.source.get("prompt", "")), "solutions": numbered(texts)}

    def shown_examples(self, meta: Mapping[str, str]) -> str:
        key = tuple(sorted(meta.items()))
        if key not in self.examples:
            found = similar_items(self.pool, meta, self.template.examples)
            self.examples[key] = "\n".join(self.template.show_example(example_values(item)) for item in found)
        return self.examples[key]


def example_values(item: Item) -> dict[str, str]:
    """An item's fields as an example template shows them."""
    second = item.solutions[1] if len(item.solutions) > 1 else ""
    return {
        "goal": item.prompt,
        "solution0": item.solutions[0],
        "solution1": second,
        "solutions": numbered(item.solutions),
    }


def numbered(texts: Sequence[str]) -> str:
    """``1. first`` on its own line, then ``2. second`` …"""
    return "\n".join(f"{n}. {text}" for n, text in enumerate(texts, 1))


def metadata_line(meta: Mapping[str, str]) -> str:
    """``category: cooking; country: Morocco``."""
    return "; ".join(f"{column}: {value}" for column, value in meta.items()) or "any everyday physical task"
