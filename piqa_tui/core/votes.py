"""Votes as files, and the decisions and agreement that votes lead to.

Votes travel between machines in long format — one vote a line with
``item_id, annotator, choice, time`` — as TSV, CSV or JSONL. Importing merges
without loss (every vote is an event; the latest per annotator and item
counts) and re-importing the same file changes nothing (a vote is identified by
item, annotator, time and choice). Lines that name an unknown item or an
impossible choice are reported with their line number, never dropped silently.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .agreement import AgreementBreakdown, AgreementReport, VoteTable, agreement_by, agreement_report
from .dataset import atomic_write, decode
from .decision import Decision, Policy, Status
from .errors import InputError, PiqaError
from .project import Project

SKIP = "skip"
VOTE_COLUMNS = ("item_id", "annotator", "choice", "time")
_ALIASES = {
    "item_id": ("item_id", "id", "item", "idx"),
    "annotator": ("annotator", "rater", "user", "who"),
    "choice": ("choice", "label", "vote", "answer"),
    "time": ("time", "timestamp", "when", "created_at"),
}
POLICY_KEY = "decision_policy"


@dataclass(frozen=True)
class BadVote:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class ImportResult:
    read: int
    new: int
    bad: list[BadVote]


_PLAIN_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$")


def canonical_time(value: str) -> str:
    """An ISO 8601 time in the log's form (UTC, microseconds, Z); ValueError when unreadable."""
    value = value.strip()
    if _PLAIN_UTC.match(value):  # the common case, without a datetime round trip
        return value if len(value) == 27 else value[:-1] + ".000000Z"
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _read_records(path: Path) -> list[tuple[int, dict[str, object]]]:
    if not path.exists():
        raise InputError(f"{path}: no such votes file; check the path")
    text = decode(path.read_bytes(), path)
    if not text.strip():
        raise InputError(f"{path}: the votes file is empty")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}: line {number} is not valid JSON ({exc.msg}); fix that line") from None
        return records
    if suffix not in (".tsv", ".csv", ".tab"):
        raise InputError(f"{path}: unknown votes file type '{suffix}'; use .tsv, .csv or .jsonl")
    delimiter = "," if suffix == ".csv" else "\t"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL)
    rows = list(reader)
    header = [h.strip().lower() for h in rows[0]]
    return [(number, dict(zip(header, row))) for number, row in enumerate(rows[1:], 2) if any(cell.strip() for cell in row)]


def _column(record: dict[str, object], role: str) -> str:
    for name in _ALIASES[role]:
        if name in record and record[name] is not None:
            return str(record[name]).strip()
    return ""


def read_votes(project: Project, path: str | Path) -> tuple[list[tuple[str, str, str, str]], list[BadVote]]:
    """The valid votes of a file and the lines that are not, each with its reason."""
    path = Path(path)
    records = _read_records(path)
    if records and not all(_column(records[0][1], role) or role == "time" for role in ("item_id", "annotator")):
        found = ", ".join(map(str, records[0][1].keys()))
        raise InputError(f"{path}: a votes file needs columns item_id, annotator, choice, time (found: {found})")
    good: list[tuple[str, str, str, str]] = []
    bad: list[BadVote] = []
    for number, record in records:
        item_id, annotator = _column(record, "item_id"), _column(record, "annotator")
        choice, when = _column(record, "choice"), _column(record, "time")
        pos = project.index.get(item_id)
        if pos is None:
            bad.append(BadVote(number, f"unknown item id '{item_id}'"))
            continue
        if not annotator:
            bad.append(BadVote(number, "no annotator"))
            continue
        n = len(project.items[pos].solutions)
        if choice.lower() in (SKIP, "unsure"):
            choice = SKIP
        elif not (choice.isdigit() and int(choice) < n):
            bad.append(BadVote(number, f"choice '{choice}' is impossible for item '{item_id}' (0-{n - 1} or 'skip')"))
            continue
        try:
            good.append((item_id, annotator, str(int(choice)) if choice != SKIP else SKIP, canonical_time(when)))
        except ValueError:
            bad.append(BadVote(number, f"time '{when}' is not an ISO 8601 time"))
    return good, bad


def import_votes(project: Project, path: str | Path) -> ImportResult:
    """Merge a votes file into the workspace; the valid lines are imported, the bad ones reported."""
    good, bad = read_votes(project, path)
    workspace = project.workspace
    if workspace is None:
        raise PiqaError("importing votes needs a workspace")
    new = workspace.insert_votes(good, note=f"imported from {Path(path).name}")
    project.refresh()
    return ImportResult(len(good) + len(bad), new, bad)


def export_votes(project: Project, path: str | Path, current_only: bool = False) -> int:
    """Write every vote event (or only the current vote per item and annotator) in long format."""
    path = Path(path)
    if current_only:
        rows = [
            (item_id, vote.annotator, vote.choice, vote.time)
            for item_id, by_annotator in project.state.votes.items()
            for vote in by_annotator.values()
            if vote.choice != ""
        ]
    else:
        assert project.workspace is not None
        rows = [(e.item_id or "", e.annotator, e.new or "", e.time) for e in project.workspace.events(kinds=["vote"])]
    rows.sort(key=lambda r: (r[3], r[0], r[1]))
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        text = "".join(json.dumps(dict(zip(VOTE_COLUMNS, r)), ensure_ascii=False) + "\n" for r in rows)
    elif suffix in (".tsv", ".csv", ".tab"):
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, delimiter="," if suffix == ".csv" else "\t", lineterminator="\n")
        writer.writerow(VOTE_COLUMNS)
        writer.writerows(rows)
        text = buffer.getvalue()
    else:
        raise PiqaError(f"{path}: unknown votes file type '{suffix}'; use .tsv, .csv or .jsonl")
    atomic_write(path, text)
    return len(rows)


# ------------------------------------------------------------------ decisions


def parse_policy(spec: str) -> Policy:
    """``majority:2/3``, ``majority:2/3:min=2``, ``unanimity:4`` → Policy."""
    parts = spec.strip().lower().split(":")
    try:
        extra = {k: int(v) for k, v in (p.split("=") for p in parts[2:])} if len(parts) > 2 else {}
        if parts[0] == "majority":
            k, n = (int(x) for x in (parts[1] if len(parts) > 1 else "2/3").split("/"))
            return Policy.majority(k, n, extra.get("min"))
        if parts[0] == "unanimity":
            return Policy.unanimity(int(parts[1]) if len(parts) > 1 else 4, extra.get("min"))
    except ValueError as exc:
        raise PiqaError(f"bad policy '{spec}' ({exc}); use majority:K/N, unanimity:N, optionally :min=M") from None
    raise PiqaError(f"bad policy '{spec}'; use majority:K/N (e.g. majority:2/3) or unanimity:N (e.g. unanimity:4)")


def policy_spec(policy: Policy) -> str:
    base = f"majority:{policy.k}/{policy.n}" if policy.kind == "majority" else f"unanimity:{policy.n}"
    return base + (f":min={policy.min_votes}" if policy.min_votes else "")


def project_policy(project: Project) -> Policy:
    """The dataset's decision policy, kept in its workspace (default: majority 2 of 3)."""
    spec = project.workspace.get_meta(POLICY_KEY) if project.workspace else None
    return parse_policy(spec) if spec else Policy.majority(2, 3)


def set_project_policy(project: Project, policy: Policy) -> None:
    if project.workspace is None:
        raise PiqaError("setting a policy needs a workspace")
    project.workspace.set_meta({POLICY_KEY: policy_spec(policy)})


def choices(project: Project, item_id: str) -> dict[str, int]:
    """Each annotator's current vote on an item, as a solution index (skips and withdrawals left out)."""
    return {a: int(v.choice) for a, v in project.state.votes.get(item_id, {}).items() if v.choice.isdigit()}


def decide(project: Project, item_id: str, policy: Policy) -> Decision:
    adjudicated = project.state.adjudications.get(item_id)
    return policy.decide(choices(project, item_id).values(), int(adjudicated[0]) if adjudicated else None)


def decisions(project: Project, policy: Policy | None = None) -> dict[str, Decision]:
    policy = policy or project_policy(project)
    return {item.id: decide(project, item.id, policy) for item in project.items}


def vote_triples(project: Project) -> list[tuple[str, str, int]]:
    """(item, annotator, choice) for every current vote, as the agreement functions take them."""
    return [(item_id, a, c) for item_id in project.state.votes for a, c in choices(project, item_id).items()]


def project_agreement(project: Project, by: list[str] | None = None) -> tuple[AgreementReport, dict[str, AgreementBreakdown]]:
    """The agreement report of the recorded votes, overall and broken down by categorical columns."""
    n_categories = max((len(i.solutions) for i in project.items), default=2)
    votes = VoteTable.from_votes(vote_triples(project), n_categories)  # encoded once for every breakdown
    gold = {item.id: item.label for item in project.items}
    report = agreement_report(votes, n_categories=n_categories, gold=gold)
    breakdowns = {}
    for column in by or []:
        group = {item.id: item.meta.get(column, "") for item in project.items}
        breakdowns[column] = agreement_by(votes, group, n_categories=n_categories, gold=gold, column=column)
    return report, breakdowns


def status_counts(found: dict[str, Decision]) -> dict[str, int]:
    counts = {status.value: 0 for status in Status}
    for decision in found.values():
        counts[decision.status.value] += 1
    return counts


# ------------------------------------------------------------ what annotators see

FLAG_REASONS: dict[str, str] = {
    "ungrammatical": "the text is not grammatical in its language or dialect",
    "culturally-wrong": "the situation or answer does not fit the culture",
    "both-correct": "both solutions work",
    "both-wrong": "neither solution works",
    "offensive": "offensive or harmful content",
    "duplicate": "repeats another item",
    "remove": "flagged for removal from the release",
}


def has_voted(project: Project, item_id: str, annotator: str | None = None) -> bool:
    """Whether the annotator has a current vote (a choice or 'skip') on the item."""
    vote = project.state.votes.get(item_id, {}).get(annotator or project.annotator)
    return vote is not None and vote.choice != ""


def may_see_answers(project: Project, item_id: str, reviewer: bool) -> bool:
    """Blind mode: gold and others' votes stay hidden until this annotator has voted (reviewers see all)."""
    return reviewer or has_voted(project, item_id)


def status_queue(project: Project, status: Status, policy: Policy | None = None) -> list[str]:
    """Ids of the items with a given decision status, in file order (a TUI queue)."""
    found = decisions(project, policy)
    return [item.id for item in project.items if found[item.id].status is status]
