"""Batch correction: a model corrects machine-made items, and each change it makes becomes a pending suggestion.

The Indic team's second step (translate, then a second model corrects, then people correct the rest): the items
of a stage (``draft``) whose origin is a model's (translated or drafted) are each shown to a model with the
machine's text, the source it was translated from (its origin's ``source_…`` fields) and a few earlier
corrections people made to machine text in this workspace — the machine's first text beside the text people
made of it (``core.round.stages.first_fields``), the same origin kind first, then the most alike by the
character 3-gram measure of ``core.authoring.examples``. The answer never reaches the item: each field it
changes is a pending suggestion (``core.workspace.suggestions``) with the run's provenance (its run id among the
parameters), recorded one action per batch, that a person takes change by change.

An item that already has a correction suggestion (``correct`` job: a batch run's or the TUI's ``w``, pending or
decided) is not planned again; a resumed run skips the items it answered, those with a suggestion and those
whose answer changed nothing (kept in the workspace's meta, ``job-unchanged:RUN``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from piqa_tui.core import strict_json
from piqa_tui.core.authoring.examples import similar_items
from piqa_tui.core.authoring.job_templates import JobTemplate
from piqa_tui.core.authoring.runs import Slot
from piqa_tui.core.authoring.suggesting import NONE_SHOWN, SuggestError, Target, proposals
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import InputError
from piqa_tui.core.generation.protocol import STOP_CANCELLED, GenerationResult
from piqa_tui.core.round.origin import MACHINE_KINDS, origin_of, project_origins
from piqa_tui.core.round.stages import first_fields, stage_of
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import NewSuggestion, record_suggestions, suggestions

CORRECT_JOB = "correct"
DEFAULT_STAGES = ("draft",)
DEFAULT_ORIGINS = MACHINE_KINDS
UNCHANGED_META = "job-unchanged:"
RUN_PARAM = "run"  # the provenance parameter naming the run a suggestion came from


@dataclass(frozen=True)
class Correction:
    """A person's correction of machine text: the item as people left it, its origin kind, the machine's first
    text (goal and solutions) and the source it was translated from."""

    item: Item
    kind: str
    machine: Item
    source: tuple[tuple[str, str], ...]


@dataclass
class CorrectionOutcome:
    """One batch's answers: slots answered, suggestions recorded and on how many items, items left as they were,
    and one line per answer that did not fit."""

    answered: int = 0
    suggestions: int = 0
    items: int = 0
    unchanged: int = 0
    failed: list[str] = field(default_factory=list)


def corrected_items(project: Project) -> set[str]:
    """The items that have a suggestion of the ``correct`` job, pending or decided."""
    return {s.item_id for s in suggestions(project) if s.provenance.get("job") == CORRECT_JOB}


def correction_targets(
    project: Project,
    stages: Sequence[str] = DEFAULT_STAGES,
    origins: Sequence[str] = DEFAULT_ORIGINS,
    ids: Sequence[str] = (),
    limit: int | None = None,
) -> list[Item]:
    """The items to correct, in file order: at one of ``stages``, of one of ``origins``, among ``ids`` when
    given, and not corrected before; InputError (one line) for an unknown id or when none is left."""
    unknown = [item_id for item_id in ids if item_id not in project.index]
    if unknown:
        raise InputError(f"--ids: no item {unknown[0]!r} in {project.dataset.path.name}")
    asked = corrected_items(project)
    wanted = set(ids)
    found = [
        item
        for item in project.items
        if (not wanted or item.id in wanted)
        and item.id not in asked
        and stage_of(project, item.id) in stages
        and origin_of(project, item.id).kind in origins
    ]
    if not found:
        raise InputError(
            f"no items to correct in {project.dataset.path.name}: none at stage {'/'.join(stages)} of origin "
            f"{'/'.join(origins)} without a correction suggestion already (see --stage, --origin, --ids)"
        )
    return found[:limit] if limit else found


def correction_slot(item: Item) -> Slot:
    """The slot that asks for one item's correction (its key the item's id)."""
    return Slot(item.id, dict(item.meta), {"item": item.id})


def human_corrections(project: Project) -> list[Correction]:
    """Every item of a model's origin whose text people have changed since the model wrote it."""
    if project.workspace is None:
        return []
    found = []
    for item_id, origin in project_origins(project).items():
        if not origin.machine or item_id not in project.index:
            continue
        item = project.item(item_id)
        first = first_fields(project.workspace, item_id)
        prompt = first.get("prompt", item.prompt)
        solutions = tuple(first.get(f"solution{k}", text) for k, text in enumerate(item.solutions))
        if (prompt, solutions) != (item.prompt, item.solutions):
            found.append(
                Correction(item, origin.kind, item.with_changes(prompt=prompt, solutions=solutions), origin.source)
            )
    return found


def nearest_corrections(pool: Sequence[Correction], item: Item, kind: str, k: int) -> list[Correction]:
    """Up to ``k`` corrections for ``item`` (of origin ``kind``): the same origin kind first, then the others,
    each group most alike first (shared metadata, then the machine texts' character 3-grams)."""
    others = [c for c in pool if c.item.id != item.id]
    wanted = dict(item.meta) | {f"\0text{n}": text for n, text in enumerate((item.prompt, *item.solutions))}
    chosen: list[Correction] = []
    for group in ([c for c in others if c.kind == kind], [c for c in others if c.kind != kind]):
        by_id = {c.item.id: c for c in group}
        nearest = similar_items([c.machine for c in group], wanted, k - len(chosen))
        chosen += [by_id[found.id] for found in nearest]
    return chosen


def shown_item(prompt: str, solutions: Iterable[str]) -> str:
    """``Goal: …`` then ``Solutions:`` and the numbered solutions, as a correction prompt shows a text."""
    numbered = "\n".join(f"{n}. {text}" for n, text in enumerate(solutions, 1))
    return f"Goal: {prompt}\nSolutions:\n{numbered}"


def shown_source(source: Sequence[tuple[str, str]]) -> str:
    """The text an item was translated from (its origin's fields), or ``(none)`` for one that has none."""
    fields = dict(source)
    if "prompt" not in fields:
        return NONE_SHOWN
    solutions = [text for name, text in sorted(fields.items()) if name.startswith("solution")]
    return shown_item(fields["prompt"], solutions)


class CorrectionValues:
    """A correction run's placeholder values for each item: its text, its source, people's nearest corrections."""

    def __init__(self, project: Project, template: JobTemplate) -> None:
        self.project = project
        self.template = template
        self.pool = human_corrections(project) if template.examples else []

    def item(self, slot: Slot) -> Item:
        """The slot's item as it is now (a person may have edited it since the run was planned)."""
        return self.project.item(slot.key)

    def values(self, slot: Slot) -> dict[str, str]:
        item = self.item(slot)
        origin = origin_of(self.project, item.id)
        found = nearest_corrections(self.pool, item, origin.kind, self.template.examples)
        shown = [
            self.template.show_example(
                {
                    "machine": shown_item(c.machine.prompt, c.machine.solutions),
                    "corrected": shown_item(c.item.prompt, c.item.solutions),
                    "source": shown_source(c.source),
                }
            )
            for c in found
        ]
        examples = "\n\n".join(shown) or NONE_SHOWN
        texts = "\n".join(f"{n}. {text}" for n, text in enumerate(item.solutions, 1))
        return {"goal": item.prompt, "solutions": texts, "source": shown_source(origin.source), "examples": examples}


def record_corrections(
    project: Project,
    run_id: str,
    template: JobTemplate,
    provenance: str,
    slots: Sequence[Slot],
    results: Sequence[GenerationResult],
) -> CorrectionOutcome:
    """Record one batch's answers as pending suggestions (one action) and note the items left unchanged."""
    outcome = CorrectionOutcome()
    made: list[NewSuggestion] = []
    unchanged: list[str] = []
    for slot, result in zip(slots, results):
        if result.stop == STOP_CANCELLED:
            continue
        outcome.answered += 1
        try:
            if not result.ok:
                raise SuggestError(result.error or f"the answer stopped ({result.stop})")
            found = proposals(template, Target(project.item(slot.key)), result.data)
        except (SuggestError, KeyError) as exc:
            outcome.failed.append(f"{slot.name()}: {exc}")
            continue
        if not found:
            unchanged.append(slot.key)
        made += [NewSuggestion(slot.key, p.field, p.new, provenance) for p in found]
        outcome.items += bool(found)
    outcome.suggestions = record_suggestions(project, made)
    outcome.unchanged = len(unchanged)
    _note_unchanged(project, run_id, unchanged)
    return outcome


def _note_unchanged(project: Project, run_id: str, keys: list[str]) -> None:
    if keys and project.workspace is not None:
        known = sorted(unchanged_keys(project, run_id) | set(keys))
        project.workspace.set_meta({UNCHANGED_META + run_id: strict_json.dumps(known, ensure_ascii=False)[0]})


def unchanged_keys(project: Project, run_id: str) -> set[str]:
    """The items of run ``run_id`` whose answer changed nothing."""
    text = project.workspace.get_meta(UNCHANGED_META + run_id) if project.workspace is not None else None
    return set(json.loads(text)) if text else set()


def answered_keys(project: Project, run_id: str) -> set[str]:
    """The items run ``run_id`` has answered: those it made a suggestion for, and those it left unchanged."""
    made = set()
    for s in suggestions(project):
        params = s.provenance.get("params")
        if isinstance(params, Mapping) and params.get(RUN_PARAM) == run_id:
            made.add(s.item_id)
    return made | unchanged_keys(project, run_id)
