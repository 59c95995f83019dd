"""Votes as files: read, import and export the long format that travels between machines.

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
from operator import itemgetter
from pathlib import Path

import numpy as np

from piqa_tui.core.dataset.files import atomic_write, decode
from piqa_tui.core.errors import InputError, PiqaError
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.votes.policy import SKIP
from piqa_tui.core.workspace.project import Project

VOTE_COLUMNS = ("item_id", "annotator", "choice", "time")
_ALIASES = {
    "item_id": ("item_id", "id", "item", "idx"),
    "annotator": ("annotator", "rater", "user", "who"),
    "choice": ("choice", "label", "vote", "answer"),
    "time": ("time", "timestamp", "when", "created_at"),
}


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


_ROLES = ("item_id", "annotator", "choice", "time")


def _read_text(path: Path) -> str:
    if not path.exists():
        raise InputError(f"{path}: no such votes file; check the path")
    text = decode(path.read_bytes(), path)
    if not text.strip():
        raise InputError(f"{path}: the votes file is empty")
    return text


def _tsv_lines(text: str) -> list[str] | None:
    """The lines ``csv.reader`` sees in tab-separated text read without quoting, so that splitting them at tabs
    gives its rows (at a third of its time); None when the text holds what only the csv module treats its way
    (CR line ends, a field over its size limit)."""
    if "\r" in text:
        return None
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    limit = csv.field_size_limit()
    if len(text) >= limit and max(map(len, lines)) >= limit:
        return None
    return lines


def _records(path: Path) -> tuple[list[int], list[list[str]], dict[str, object]]:
    """The votes file's non-blank records: their line numbers, then their item_id, annotator, choice and time
    texts column by column (stripped, "" where absent), and the first record (for the columns it has)."""
    text = _read_text(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}: line {number} is not valid JSON ({exc.msg}); fix that line") from None
        columns = [[_column(record, role) for _, record in records] for role in _ROLES]
        return [number for number, _ in records], columns, records[0][1] if records else {}
    if suffix not in (".tsv", ".csv", ".tab"):
        raise InputError(f"{path}: unknown votes file type '{suffix}'; use .tsv, .csv or .jsonl")
    lines = _tsv_lines(text) if suffix != ".csv" else None
    if lines is not None:
        rows = [line.split("\t") if line else [] for line in lines]
        filled = [bool(line.strip()) for line in lines]  # a cell that is not all spaces (tabs are spaces)
    else:
        delimiter = "," if suffix == ".csv" else "\t"
        quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting))
        filled = [any(cell.strip() for cell in row) for row in rows]
    header = [h.strip().lower() for h in rows[0]]
    if all(filled[1:]):
        numbers, data = list(range(2, len(rows) + 1)), rows[1:]
    else:
        numbers = [number for number, keep in enumerate(filled[1:], 2) if keep]
        data = [rows[number - 1] for number in numbers]
    where = {name: k for k, name in enumerate(header)}  # a repeated name: its last column, as a dict of the row keeps
    indices = [next((where[a] for a in _ALIASES[role] if a in where), None) for role in _ROLES]
    if None not in indices and min(map(len, data), default=0) >= len(header):
        columns = [list(map(str.strip, map(itemgetter(k), data))) for k in indices]
    else:
        columns = [list(column) for column in zip(*(_fields(row, header, indices) for row in data))] or [[], [], [], []]
    return numbers, columns, dict(zip(header, data[0])) if data else {}


def _fields(row: list[str], header: list[str], columns: list[int | None]) -> tuple[str, ...]:
    """A CSV/TSV row's (item_id, annotator, choice, time), as ``_column`` finds them in the row as a dict."""
    if len(row) >= len(header):
        return tuple("" if k is None else row[k].strip() for k in columns)
    record = dict(zip(header, row))  # a short row: the columns it lacks are absent
    return tuple(_column(record, role) for role in _ROLES)


def _column(record: dict[str, object], role: str) -> str:
    for name in _ALIASES[role]:
        if name in record and record[name] is not None:
            return str(record[name]).strip()
    return ""


# The two shapes _PLAIN_UTC matches ("d" a digit), as the lowest and highest byte allowed at each place.
_PLAIN_UTC_SHAPES = {
    len(shape): tuple(np.array([ord(digit if c == "d" else c) for c in shape], np.uint8) for digit in "09")
    for shape in ("dddd-dd-ddTdd:dd:ddZ", "dddd-dd-ddTdd:dd:dd.ddddddZ")
}


def _canonical_times(values: list[str]) -> list[str | None]:
    """``canonical_time`` of each value (None where it raises ValueError); a column of plain UTC times
    of one width, the usual export, is checked in one numpy pass."""
    width = len(values[0]) if values else 0
    if width in _PLAIN_UTC_SHAPES and set(map(len, values)) == {width} and (joined := "".join(values)).isascii():
        low, high = _PLAIN_UTC_SHAPES[width]
        grid = np.frombuffer(joined.encode("ascii"), np.uint8).reshape(len(values), width)
        if bool(((grid >= low) & (grid <= high)).all()):
            return list(values) if width == 27 else [v[:-1] + ".000000Z" for v in values]
    out: list[str | None] = []
    for value in values:
        try:
            out.append(canonical_time(value))
        except ValueError:
            out.append(None)
    return out


def _all_good(project: Project, columns: list[list[str]], times: list[str | None],
              digits: dict[str, int]) -> list[tuple[str, str, str, str]] | None:
    """The votes when every line is good in the usual way (known item, an annotator, a digit in range, a time),
    checked column-wise; None when some line is not, or is unusual (the line-by-line check decides then)."""
    item_ids, annotators, choices, _ = columns
    positions = list(map(project.index.get, item_ids))
    codes = list(map(digits.get, choices))
    if None in positions or "" in annotators or None in codes or None in times:
        return None
    n = np.fromiter((len(i.solutions) for i in project.items), np.int64, len(project.items))
    if not bool((np.array(codes, np.int64) < n[np.array(positions, np.int64)]).all()):
        return None
    return list(zip(item_ids, annotators, choices, times))  # type: ignore[arg-type]


@gc_paused()  # a row list and a tuple per line, no cycles: collections would only slow the read
def read_votes(project: Project, path: str | Path) -> tuple[list[tuple[str, str, str, str]], list[BadVote]]:
    """The valid votes of a file and the lines that are not, each with its reason."""
    path = Path(path)
    numbers, columns, first = _records(path)
    if numbers and not (columns[0][0] and columns[1][0]):
        found = ", ".join(map(str, first.keys()))
        raise InputError(f"{path}: a votes file needs columns item_id, annotator, choice, time (found: {found})")
    times = _canonical_times(columns[3])
    index, items = project.index, project.items
    digits = {str(k): k for k in range(10)}
    if numbers and (good := _all_good(project, columns, times, digits)) is not None:
        return good, []
    good = []
    bad: list[BadVote] = []
    for number, item_id, annotator, choice, when, time in zip(numbers, *columns, times):
        pos = index.get(item_id)
        if pos is None:
            bad.append(BadVote(number, f"unknown item id '{item_id}'"))
            continue
        if not annotator:
            bad.append(BadVote(number, "no annotator"))
            continue
        n = len(items[pos].solutions)
        if (k := digits.get(choice)) is not None and k < n:
            pass  # the usual case: one digit, in range, already in its stored form
        elif choice.lower() in (SKIP, "unsure"):
            choice = SKIP
        elif not (choice.isdigit() and int(choice) < n):
            bad.append(BadVote(number, f"choice '{choice}' is impossible for item '{item_id}' (0-{n - 1} or 'skip')"))
            continue
        else:
            choice = str(int(choice))
        if time is None:
            bad.append(BadVote(number, f"time '{when}' is not an ISO 8601 time"))
            continue
        good.append((item_id, annotator, choice, time))
    return good, bad


def import_votes(project: Project, path: str | Path, *, refresh: bool = True) -> ImportResult:
    """Merge a votes file into the workspace; the valid lines are imported, the bad ones reported.

    ``refresh=False`` leaves ``project.state`` as it was, for a caller done with the project (the CLI).
    """
    good, bad = read_votes(project, path)
    workspace = project.workspace
    if workspace is None:
        raise PiqaError("importing votes needs a workspace")
    new = workspace.insert_votes(good, note=f"imported from {Path(path).name}")
    if refresh:
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
