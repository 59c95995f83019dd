"""Suggestions on one item: what to ask the model, and its answer as word-level changes of the item's fields.

Three jobs (``prompt_templates/jobs/``): ``correct`` (language and spelling of the goal and solutions),
``distractor`` (a wrong solution differing from the right one by a word or two; it replaces the item's first
wrong solution, so it needs the item's gold label, a person's), ``fill`` (the text of an empty translation
column, from the field it translates). The answer becomes one ``Proposal`` per field it would change, each a
list of ``WordChange``s the person takes or leaves one by one; only the fields that differ are proposed.

Suggestions recorded earlier (a batch job's, a colleague's brought by merge or sync) are reviewed the same way:
``stored_review`` shows each text field's newest pending suggestion as changes of the field's text now, and
``decide_stored`` records the decisions on those suggestions as one action.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from piqa_tui.core.authoring.job_templates import JobTemplate
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.generation.protocol import ChatTurn, GenerationRequest
from piqa_tui.core.text.characters import nfc
from piqa_tui.core.text.word_changes import WordChange, apply_changes, word_changes
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.state import field_value
from piqa_tui.core.workspace.suggestions import (
    Decision,
    NewSuggestion,
    Suggestion,
    accept,
    pending,
    pending_by_item,
    record_suggestions,
    reject,
    review,
)

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


@dataclass(frozen=True)
class StoredReview:
    """The pending suggestions of one item shown for review: one proposal per field (its newest suggestion, as
    changes of the field's text now) and the suggestion each proposal stands for."""

    proposals: list[Proposal]
    ids: list[str]  # the suggestion of each proposal, in the same order
    older: int  # pending suggestions left for a later review (older ones on the same fields)
    moved: list[str]  # fields whose text changed since their suggestion was made
    same: list[str]  # ids of suggestions whose value the field already holds (kept as they are on enter)

    def note(self) -> str:
        """What the dialog's status line adds: fields that changed since, suggestions left for later."""
        said = []
        if self.moved:
            said.append(f"{', '.join(self.moved)} changed since the suggestion: shown against the text now")
        if self.same:
            said.append(f"{len(self.same)} already in the field{'s' * (len(self.same) != 1)} (kept on enter)")
        if self.older:
            said.append(f"{self.older} older suggestion{'s' * (self.older != 1)} pending after this")
        return "; ".join(said)


def _field_order(field: str) -> tuple[int, int, str]:
    if field == "prompt":
        return (0, 0, "")
    if field.startswith("solution") and field[8:].isdigit():
        return (1, int(field[8:]), "")
    return (2, 0, field)


def stored_review(project: Project, item: Item, text_field: Callable[[str], bool]) -> StoredReview:
    """The item's pending suggestions on the fields ``text_field`` accepts, newest per field, as proposals
    against the fields' current text."""
    newest: dict[str, Suggestion] = {}
    older = 0
    for s in pending_by_item(project).get(item.id, []):
        if not text_field(s.field):
            continue
        older += s.field in newest
        newest[s.field] = s  # canonical order: the last is the newest
    found, ids, moved, same = [], [], [], []
    for field in sorted(newest, key=_field_order):
        s = newest[field]
        old = field_value(item, field)
        changes = tuple(word_changes(old, s.value))
        if not changes:
            same.append(s.id)
            continue
        found.append(Proposal(field, old, s.value, changes))
        ids.append(s.id)
        if s.was is not None and s.was != old:
            moved.append(field)
    return StoredReview(found, ids, older, moved, same)


def decide_stored(project: Project, shown: StoredReview, taken: list[set[int]]) -> Decided:
    """Record the person's decision on each reviewed suggestion as one action (one undo): all its changes taken
    is an accept, some an amend with that text, none a reject; a suggestion the field already matches is kept."""
    decisions = [Decision(sid, True) for sid in shown.same]
    changed, rejected = [], 0
    for proposal, sid, accepted in zip(shown.proposals, shown.ids, taken):
        if not accepted:
            decisions.append(Decision(sid, False))
            rejected += 1
        elif len(accepted) == len(proposal.changes):
            decisions.append(Decision(sid, True))
            changed.append(proposal.field)
        else:
            decisions.append(Decision(sid, True, proposal.result(accepted)))
            changed.append(proposal.field)
    review(project, decisions)
    return Decided(changed, rejected)
