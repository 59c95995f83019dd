"""Suggestions on one item: what to ask the model, and its answer as word-level changes of the item's fields.

Three jobs (``prompt_templates/jobs/``): ``correct`` (language and spelling of the goal and solutions),
``distractor`` (a wrong solution differing from the right one by a word or two; it replaces the item's first
wrong solution, so it needs the item's gold label, a person's), ``fill`` (the text of an empty translation
column, from the field it translates). The answer becomes one ``Proposal`` per field it would change, each a
list of ``WordChange``s the person takes or leaves one by one; only the fields that differ are proposed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from piqa_tui.core.authoring.job_templates import JobTemplate
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.generation.protocol import ChatTurn, GenerationRequest
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.text.word_changes import WordChange, apply_changes, word_changes
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.state import field_value
from piqa_tui.core.workspace.suggestions import NewSuggestion, accept, pending, record_suggestions, reject

SUGGEST_JOBS = ("correct", "distractor", "fill")
NONE_SHOWN = "(none)"


class SuggestError(PiqaError):
    """A suggestion that cannot be asked for or read (one line)."""


@dataclass(frozen=True)
class Target:
    """What a suggestion is for: the item, and for ``fill`` the empty column (``meta:COLUMN``) and the field it
    translates."""

    item: Item
    column: str = ""
    source_field: str = "prompt"


@dataclass(frozen=True)
class Proposal:
    """The model's new text for one field, as changes of the text the field holds."""

    field: str
    old: str
    new: str
    changes: tuple[WordChange, ...]

    def result(self, accepted: set[int]) -> str:
        """The field's text with the changes at ``accepted`` taken."""
        return apply_changes(self.old, list(self.changes), accepted)


def right_solution(item: Item) -> int:
    """The gold label, a person's; SuggestError when the item has none yet."""
    if item.label is None:
        raise SuggestError(f"item {item.id} has no gold label yet: a distractor must know the right solution")
    return item.label


def wrong_solution(item: Item) -> int:
    """The solution a distractor replaces: the first that is not the gold label."""
    right = right_solution(item)
    return next(k for k in range(len(item.solutions)) if k != right)


def suggestion_request(template: JobTemplate, target: Target, language: str) -> GenerationRequest:
    """The one request a suggestion makes: the template rendered on the item."""
    item = target.item
    values = {"goal": item.prompt, "solutions": "\n".join(f"{n}. {s}" for n, s in enumerate(item.solutions, 1))}
    values |= {"language": language}
    if template.job == "correct":  # the batch job's source and earlier corrections; one item's suggestion shows none
        values |= {"source": NONE_SHOWN, "examples": NONE_SHOWN}
    if template.job == "distractor":
        values["solution"] = item.solutions[right_solution(item)]
    if template.job == "fill":
        values |= {"column": target.column.removeprefix("meta:"), "text": field_value(item, target.source_field)}
    try:
        system, user = template.render(values, item.meta)
    except PiqaError as exc:
        raise SuggestError(str(exc)) from None
    turns = ((ChatTurn("system", system),) if system.strip() else ()) + (ChatTurn("user", user),)
    count = len(item.solutions) if template.job == "correct" else None
    return GenerationRequest(turns, template.schema_for(count), template.max_tokens, template.temperature, key=item.id)


def proposals(template: JobTemplate, target: Target, data: object) -> list[Proposal]:
    """The fields the answer ``data`` would change, each as word changes; SuggestError when it cannot be read."""
    if not isinstance(data, Mapping):
        raise SuggestError("the model's answer is not a JSON object")
    item = target.item
    wanted = _wanted(template.job, target, data)
    found = []
    for field, text in wanted.items():
        if not isinstance(text, str):
            raise SuggestError(f"the model's answer for {field} is not text")
        old, new = field_value(item, field), nfc(text.strip())
        if new and new != old:
            found.append(Proposal(field, old, new, tuple(word_changes(old, new))))
    return [p for p in found if p.changes]


def _wanted(job: str, target: Target, data: Mapping[str, object]) -> dict[str, object]:
    item = target.item
    if job == "correct":
        solutions = data.get("solutions")
        if not isinstance(solutions, list) or len(solutions) != len(item.solutions):
            raise SuggestError(f"the correction does not give the item's {len(item.solutions)} solutions")
        return {"prompt": data.get("goal")} | {f"solution{k}": s for k, s in enumerate(solutions)}
    if job == "distractor":
        return {f"solution{wrong_solution(item)}": data.get("solution")}
    return {target.column: data.get("text")}


@dataclass(frozen=True)
class Decided:
    """What one decision wrote: how many fields took changes and how many suggestions were left whole."""

    changed: list[str]  # the fields written
    rejected: int


def decide(project: Project, item_id: str, found: list[Proposal], taken: list[set[int]], provenance: str) -> Decided:
    """Record the proposals as suggestions (with their provenance) and the person's decision on each: all its
    changes taken is an accept, some an amend (the field gets the text with those changes only), none a reject.
    An accepted field is an ordinary edit naming the suggestion (``core.workspace.suggestions``)."""
    record_suggestions(project, [NewSuggestion(item_id, p.field, p.new, provenance) for p in found])
    changed, rejected = [], 0
    for proposal, accepted in zip(found, taken):
        suggestion = pending(project, item_id, proposal.field)[-1]
        if not accepted:
            reject(project, suggestion.id)
            rejected += 1
            continue
        accept(project, suggestion.id, proposal.result(accepted))
        changed.append(proposal.field)
    return Decided(changed, rejected)
