"""Extra questions a round asks per item besides the gold label, their answers, decided values and agreement.

A round file declares them as ``[[question]]`` tables (``question_from_table``): an id, the text shown, a kind
(``yes/no``, ``choice`` with ``options``, ``number`` with ``min``/``max`` — a whole-number scale, ordinal —
``text``, or a kind a project registered: ``core/round/question_kinds/``, one module per kind) and a decision
policy. Everything that differs by kind (its keys, the answers it takes, its agreement, how the TUI asks it) is
the kind object's; this module asks it and never names a kind. An answer is one ``answer`` event: ``field`` the question id, ``new`` the
answer ("" withdraws it), ``old`` the annotator's answer before, so undo brings it back. Each annotator has one
current answer per item and question: the latest in the log's canonical order, as for flags.

Policies (``decide``; a kind lists those that fit it): ``any-yes`` / ``all-yes`` (yes/no), ``majority`` (an answer more than half of those who
answered gave), ``unanimous`` (every answer the same), ``median`` (numbers: the lower median, so it stays on the
scale) and ``none`` (text: no decided value, only the answers).
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piqa_tui.core.round.question_kinds.kind import (
    POLICY_NAMES,
    QUESTION_KINDS,
    Question,
    QuestionError,
    is_text,
    question_kind,
)
from piqa_tui.core.votes.agreement import (
    Measure,
    VoteTable,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    percent_unanimous,
)
from piqa_tui.core.votes.exchange import ANSWER, answer_key, latest_by_time
from piqa_tui.core.workspace.log import Change, Part, Workspace
from piqa_tui.core.workspace.project import Project

if TYPE_CHECKING:
    import numpy as np
else:
    from piqa_tui.core.numeric import np  # imported on its first use: core/numeric.py

ANSWER_KIND = ANSWER  # the event kind
COMMON_KEYS = ("id", "text", "kind")  # every question's keys before its kind's own; ``policy`` after them
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")


def question_keys() -> tuple[str, ...]:
    """Every key a ``[[question]]`` table may hold: the common ones and each registered kind's own."""
    own = (key for kind in QUESTION_KINDS for key in kind.keys)
    return (*COMMON_KEYS, *dict.fromkeys(own), "policy")


# ------------------------------------------------------------------------- declaring


def question_from_table(entry: object, place: str) -> Question:
    """A ``[[question]]`` table checked into a ``Question``; ``QuestionError`` names ``place`` and the problem."""
    if not isinstance(entry, Mapping):
        raise QuestionError(f'{place}: a question is not a table; write [[question]] then id = "…"')
    keys = question_keys()
    unknown = sorted(set(entry) - set(keys))
    if unknown:
        raise QuestionError(f"{place}: unknown key {unknown[0]!r} in a question; the keys are {', '.join(keys)}")
    qid = entry.get("id")
    if not isinstance(qid, str) or not _ID.match(qid):
        raise QuestionError(
            f"{place}: question id {str(qid)[:40]!r} should be a letter then letters, digits or _ (it names columns)"
        )
    text = entry.get("text")
    if not is_text(text):
        raise QuestionError(f'{place}: question {qid!r} needs text = "…" (one line, the question shown)')
    named = entry.get("kind")
    kind = question_kind(named) if isinstance(named, str) else None
    if kind is None:
        names = ", ".join(QUESTION_KINDS.names())
        raise QuestionError(f"{place}: question {qid!r} kind = {str(named)[:20]!r} should be one of {names}")
    policy = entry.get("policy", kind.default_policy)
    if policy not in kind.policies:
        fits = ", ".join(p for p in POLICY_NAMES if p in kind.policies)
        raise QuestionError(
            f"{place}: question {qid!r} policy = {str(policy)[:20]!r} does not fit {kind.name}; use {fits}"
        )
    for other in QUESTION_KINDS:  # a key of another kind's: say whose it is
        if any(key in entry and key not in kind.keys for key in other.keys):
            raise QuestionError(
                f"{place}: question {qid!r} is {kind.name}: "
                f"{' and '.join(other.keys)} belong to a {other.name} question"
            )
    return Question(qid, text, kind.name, str(policy), *kind.parameters(entry, qid, place))


def checked_questions(questions: Iterable[Question], place: str) -> tuple[Question, ...]:
    """The questions, refusing an id given twice."""
    found = tuple(questions)
    ids = [q.id for q in found]
    twice = next((i for i in ids if ids.count(i) > 1), None)
    if twice is not None:
        raise QuestionError(f"{place}: question id {twice!r} is declared twice; give each question its own id")
    return found


# ------------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class Answers:
    """Every current answer: question id → item id → annotator → answer (withdrawn answers left out)."""

    by_question: dict[str, dict[str, dict[str, str]]]

    def of(self, question: str, item_id: str) -> dict[str, str]:
        """The item's answers to one question, by annotator in name order."""
        found = self.by_question.get(question, {}).get(item_id, {})
        return {name: found[name] for name in sorted(found)}

    def mine(self, question: str, item_id: str, annotator: str) -> str:
        return self.by_question.get(question, {}).get(item_id, {}).get(annotator, "")


def answers_in_force(workspace: Workspace | None) -> Answers:
    """The answers the workspace's ``answer`` events leave standing: the latest by time per annotator, item and
    question (``latest_by_time``), held in the order of (item id, annotator), which is the same on every machine
    whatever order the events arrived in (the figures are sums over the items in this order)."""
    latest: dict[str, dict[str, dict[str, str]]] = {}
    events = workspace.events(kinds=[ANSWER_KIND]) if workspace is not None else []
    for event in sorted(latest_by_time(events, answer_key), key=answer_key):
        if event.item_id is None or not event.field:
            continue
        by_item = latest.setdefault(event.field, {}).setdefault(event.item_id, {})
        if event.new:
            by_item[event.annotator] = event.new
        else:
            by_item.pop(event.annotator, None)
    return Answers(latest)


def project_answers(project: Project) -> Answers:
    """The answers as the project has replayed the log (read again only when new events were applied)."""
    if project.workspace is None:
        return Answers({})
    workspace = project.workspace
    return project.memo.get(project_answers, lambda: answers_in_force(workspace))


def answer_part(project: Project, item_id: str, question: Question, raw: str) -> Part | None:
    """The ``answer`` change that sets the project's annotator's answer (None: it already stands)."""
    value = question.answer(raw)
    before = project_answers(project).mine(question.id, item_id, project.annotator)
    if value == before:
        return None
    return Part(ANSWER_KIND, (Change(item_id, question.id, before or None, value),))


def record_answer(project: Project, item_id: str, question: Question, raw: str) -> str:
    """Record the project's annotator's answer (one undoable action); returns the answer as stored."""
    project.item(item_id)
    part = answer_part(project, item_id, question, raw)
    if part is not None:
        project.record([part])
    return question.answer(raw)


# ------------------------------------------------------------------------- decisions


def decide(question: Question, answers: Iterable[str]) -> str:
    """The value ``question``'s policy decides from an item's answers ("" when it decides none)."""
    given = [a for a in answers if a]
    if not given or question.policy == "none":
        return ""
    if question.policy == "any-yes":
        return "yes" if "yes" in given else "no"
    if question.policy == "all-yes":
        return "yes" if all(a == "yes" for a in given) else "no"
    if question.policy == "median":
        return str(statistics.median_low(int(a) for a in given))
    top, count = Counter(given).most_common(1)[0]
    if question.policy == "unanimous":
        return top if count == len(given) else ""
    return top if 2 * count > len(given) else ""  # majority: more than half of those who answered


# ------------------------------------------------------------------------- agreement


@dataclass(frozen=True, slots=True)
class QuestionAgreement:
    """Agreement on one question: the statistics that fit its kind, by name, and how many items had 2+ answers."""

    question: Question
    level: str  # nominal, ordinal, or "none" for free text
    measures: dict[str, Measure]
    items: int
    answers: int

    def to_json(self) -> dict[str, object]:
        return {
            "question": self.question.id,
            "kind": self.question.kind,
            "level": self.level,
            "items": self.items,
            "answers": self.answers,
            "measures": {name: {"value": m.value, "reason": m.reason, "n": m.n} for name, m in self.measures.items()},
        }


def question_agreement(question: Question, by_item: Mapping[str, Mapping[str, str]]) -> QuestionAgreement:
    """Agreement on ``question`` from its answers (item → annotator → answer): nominal κ, α, AC1 and the share
    unanimous at the nominal level (yes/no, choice); ordinal α and AC2 (ordinal weights) at the ordinal level (a
    number scale); none for a kind without a level (free text). The kind's ``categories`` code the answers."""
    answers = sum(len(a) for a in by_item.values())
    multi = sum(1 for a in by_item.values() if len(a) >= 2)
    level = question.form.level
    if level == "none":
        return QuestionAgreement(question, "none", {}, multi, answers)
    codes = {value: n for n, value in enumerate(question.categories)}
    triples = [
        (item, name, codes[value]) for item, named in by_item.items() for name, value in named.items() if value in codes
    ]
    table = VoteTable.from_votes(triples, len(codes))
    if level == "ordinal":
        measures = {
            "krippendorff_alpha_ordinal": ordinal_alpha(table),
            "gwet_ac2_ordinal": gwet_ac2(table, "ordinal"),
            "percent_unanimous": percent_unanimous(table),
        }
        return QuestionAgreement(question, "ordinal", measures, multi, answers)
    measures = {
        "fleiss_kappa": fleiss_kappa(table).measure,
        "krippendorff_alpha": krippendorff_alpha(table),
        "gwet_ac1": gwet_ac1(table),
        "percent_unanimous": percent_unanimous(table),
    }
    return QuestionAgreement(question, "nominal", measures, multi, answers)


def ordinal_alpha(table: VoteTable) -> Measure:
    """Krippendorff's α with the ordinal metric, from the coincidence matrix of the items with 2+ answers
    (categories 0..q-1 in scale order; a category nobody used adds nothing)."""
    q = table.n_categories
    counts = np.zeros((len(table.items), q))
    np.add.at(counts, (table.item, table.choice), 1)
    m = counts.sum(axis=1)
    pairable = m >= 2
    if not pairable.any():
        return Measure.undefined("no item has answers from two annotators")
    c, m = counts[pairable], m[pairable]
    coincidence = (c[:, :, None] * c[:, None, :] - np.einsum("ij,jk->ijk", c, np.eye(q))) / (m - 1)[:, None, None]
    o = coincidence.sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    cumulative = np.concatenate(([0.0], np.cumsum(n_c)))
    low, high = np.minimum.outer(np.arange(q), np.arange(q)), np.maximum.outer(np.arange(q), np.arange(q))
    delta = (cumulative[high + 1] - cumulative[low] - (n_c[low] + n_c[high]) / 2) ** 2
    expected = float(n_c @ delta @ n_c)
    if expected == 0:
        return Measure.undefined("every answer is the same: α undefined", int(pairable.sum()))
    return Measure(1.0 - (n - 1) * float((o * delta).sum()) / expected, None, int(pairable.sum()))


def questions_agreement(questions: Iterable[Question], answers: Answers) -> list[QuestionAgreement]:
    """Agreement on each question, in the round's order."""
    return [question_agreement(q, answers.by_question.get(q.id, {})) for q in questions]


# ------------------------------------------------------------------------- release columns


def question_columns(questions: Iterable[Question], answers: Answers, item_ids: Iterable[str]) -> dict[str, list[str]]:
    """The release's columns per question: ``<id>_votes``, the item's answers as a JSON list (in annotator name
    order, names left out), and ``<id>``, the value its policy decides ("" where it decides none)."""
    ids = list(item_ids)
    columns: dict[str, list[str]] = {}
    for question in questions:
        given = [[a for a in answers.of(question.id, item_id).values() if question.takes(a)] for item_id in ids]
        columns[f"{question.id}_votes"] = [json.dumps(a, ensure_ascii=False) for a in given]
        if question.policy != "none":
            columns[question.id] = [decide(question, a) for a in given]
    return columns
