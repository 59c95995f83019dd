"""Votes as files: read and import the files that carry votes between machines and teams.

Two shapes are read, as TSV, CSV, JSONL or Parquet:

* **long**: one vote a line, ``item_id, annotator, choice`` and optionally ``time``
  (and what ``votes export`` writes besides, see ``exchange``: ``solution``, the key
  of the text chosen, ``text``, the text itself, and ``kind`` and ``reason``, which
  carry adjudications; a file with a ``kind`` column is read exactly as written,
  other files have the spaces around their values trimmed);
* **wide**: an id column and one column per annotator (a spreadsheet); an empty
  cell is no vote; an optional ``time`` column applies to the whole row.

Without a time column the votes count in file order: they are stamped with
the import time, one microsecond apart. Times are real instants (ISO 8601,
with or without an offset; none means UTC) and are stored in one canonical
UTC form, so the log compares instants, never the texts people wrote.

Importing merges without loss (every vote is an event; the latest per
annotator and item counts), re-importing a timed file changes nothing (a vote
or an adjudication is identified by item, annotator, time and choice), and
every bad line is reported with its line number and reason while the good
lines are imported. A vote or adjudication that names a text this dataset no
longer has is recorded and counts for nothing (stale, set aside). No value in
a votes file ends in an internal error.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import repeat
from operator import itemgetter
from pathlib import Path

import numpy as np

from piqa_tui.core import strict_json
from piqa_tui.core.dataset.input_file import lines_ended, read_input
from piqa_tui.core.errors import InputError, PiqaError
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.strict_json import JsonRuleError
from piqa_tui.core.votes.exchange import (
    ADJUDICATION,
    MADE_ON_NONE,
    VOTE,
    WITHDRAWN,
    HeldTexts,
    extra_cells,
    tsv_unescape,
)
from piqa_tui.core.votes.policy import SKIP
from piqa_tui.core.workspace.event_rules import YEARS, canonical_time, check_not_future, latest_time
from piqa_tui.core.workspace.log import now
from piqa_tui.core.workspace.project import Project, decision_field
from piqa_tui.core.workspace.vote_targets import solution_key

_ALIASES = {
    "item_id": ("item_id", "id", "item", "idx"),
    "annotator": ("annotator", "rater", "user", "who"),
    "choice": ("choice", "label", "vote", "answer"),
    "time": ("time", "timestamp", "when", "created_at"),
    "solution": ("solution", "solution_key"),
    "text": ("text", "solution_text"),
    "kind": ("kind",),
    "reason": ("reason",),
    "made_on": ("made_on",),
}
_LONG_ONLY = (
    "text",
    "kind",
    "reason",
    "made_on",
)  # roles of a long file only: in a wide file such a column is an annotator
_SHOWN = 40  # characters of a bad value quoted in a reason


@dataclass(frozen=True)
class BadVote:
    line: int
    reason: str
    unit: str = "line"  # "row" in a Parquet file

    def __str__(self) -> str:
        return f"{self.unit} {self.line}: {self.reason}"


@dataclass(frozen=True)
class ImportResult:
    read: int  # rows read: votes, adjudications and bad lines
    new: int  # votes and adjudications not recorded before
    bad: list[BadVote]
    shape: str = "long"  # or "wide"
    stamped: str | None = None  # the import time given to a file without a time column
    adjudications: int = 0  # adjudication rows read (good ones)
    new_adjudications: int = 0
    annotators: frozenset[str] = frozenset()  # who cast the file's good votes and adjudications
    lacking: Lacking | None = None  # what the file's votes and adjudications were cast on that this copy lacks


@dataclass(frozen=True)
class Lacking:
    """The file's votes in force (the latest per item and annotator in the file) and adjudications (the latest
    per item) whose solution text is none of the item's texts here: ``edited_*`` name a text this copy held once
    and edited since (stale, as everywhere), ``unheld_*`` one it never had (an edit made on another machine,
    which no votes file carries): those count for nothing here until that edit arrives."""

    edited_votes: int = 0
    unheld_votes: int = 0
    edited_adjudications: tuple[str, ...] = ()  # item ids
    unheld_adjudications: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "votes_on_texts_edited_since": self.edited_votes,
            "votes_on_texts_never_held_here": self.unheld_votes,
            "adjudications_on_texts_edited_since": list(self.edited_adjudications),
            "adjudications_on_texts_never_held_here": list(self.unheld_adjudications),
        }


@dataclass(frozen=True)
class FileVotes:
    """The good votes of a file, as ``(item_id, annotator, choice, time, solution key or None)``, its good
    adjudications (``Adjudicated``) and its bad lines."""

    votes: list[tuple[str, str, str, str, str | None]]
    bad: list[BadVote]
    read: int
    shape: str
    stamped: str | None
    adjudications: list[Adjudicated] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Adjudicated:
    """An adjudication row: the chosen solution (``choice``: an index as text, "" withdrawn) and its text
    (None: not given, the solution at ``choice`` when it is replayed)."""

    item_id: str
    annotator: str
    choice: str
    time: str
    text: str | None
    reason: str
    made_on: str | None = None  # the mark of the adjudication it was made on ("" none; None: not recorded)


# ------------------------------------------------------------------ values


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"… ({len(text)} characters)"


def as_text(value: object) -> str | None:
    """A cell as text; None for no value (empty, JSON null, NaN). Numbers that are whole print as integers."""
    if type(value) is str:  # the usual case: a TSV/CSV cell
        return value.strip() or None
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)[:200]
    text = str(value).strip()
    return text or None


_SURROGATE = re.compile("[\udc80-\udcff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_bad_bytes(text: str) -> bool:
    """Whether the text holds bytes that were not UTF-8 (kept as lone surrogates when decoding): ASCII text, or text
    that encodes as UTF-8, holds no surrogate (both asked in C, before the slower search)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.search(text) is not None
    return False


def _printable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape, so that it can be printed."""
    return text.encode("utf-8", "backslashreplace").decode() if _ANY_SURROGATE.search(text) else text


def _whole(text: str, what: str) -> str:
    """``text`` unless it holds a lone surrogate (JSON's ``\\ud800``), which is not a character and cannot be stored."""
    if (found := _ANY_SURROGATE.search(text)) is not None:
        raise ValueError(
            f"{what} '{_shown(_printable(text))}' holds a lone surrogate "
            f"(\\u{ord(found.group()):04x}), which is not a character; fix that value"
        )
    return text


def _cell(row: dict[str, object], column: str | None, exact: bool) -> str | None:
    """A cell as text (``as_text``), untrimmed when ``exact``; None for no value."""
    value = row.get(column) if column else None
    if exact and type(value) is str:
        return value or None
    return as_text(value)


_DIGITS = re.compile(r"[0-9]{1,4}")


def parse_choice(text: str, n_solutions: int, item_id: str) -> str:
    """A choice as stored: a 0-based index, 'skip' or '' (withdrawn); ValueError saying why it is impossible."""
    word = text.lower()
    if word in (SKIP, "unsure"):
        return SKIP
    if word in (WITHDRAWN, "withdraw"):
        return ""
    if _DIGITS.fullmatch(text) and int(text) < n_solutions:
        return str(int(text))
    raise ValueError(
        f"choice '{_shown(text)}' is impossible for item '{_shown(item_id)}' "
        f"(vote files number solutions from 0: 0-{n_solutions - 1}, skip or {WITHDRAWN})"
    )


# ------------------------------------------------------------------ tables


@dataclass
class _Table:
    """A votes file as rows, each with its line (or row) number, and the lines that could not be read.

    TSV and CSV rows are kept as lists of cells (``cells``), JSONL and Parquet ones as column → value
    dicts (``records``); ``rows()`` gives dicts for both.
    """

    header: list[str]
    numbers: list[int] = field(default_factory=list)
    cells: list[list[str]] = field(default_factory=list)
    records: list[dict[str, object]] = field(default_factory=list)
    bad: list[BadVote] = field(default_factory=list)
    unit: str = "line"
    columns: list[list[str]] | None = None  # a usual TSV, kept column-wise instead of ``cells``: no row lacks a cell

    def rows(self) -> Iterator[tuple[int, dict[str, object]]]:
        header = self.header
        cells: Iterable[Iterable[str]] = self.cells if self.columns is None else zip(*self.columns)
        rows: Iterable[dict[str, object]] = self.records or (dict(zip(header, row)) for row in cells)
        return zip(self.numbers, rows)

    def column(self, k: int) -> list[str]:
        """The values of column ``k`` of the TSV/CSV rows, stripped."""
        values = self.columns[k] if self.columns is not None else map(itemgetter(k), self.cells)
        return list(map(str.strip, values))

    def narrower_than(self, width: int) -> bool:
        """Whether some TSV/CSV row has fewer than ``width`` cells."""
        return self.columns is None and min(map(len, self.cells), default=0) < width


_NOT_UTF8 = "not UTF-8 text (a byte of another encoding); re-save the file as UTF-8"


def _decoded(path: Path) -> str:
    """The file's text; bytes that are not UTF-8 are kept as lone surrogates, so their lines can be reported alone."""
    if not os.path.lexists(path):
        raise InputError(f"{path}: no such votes file; check the path")
    data = read_input(path, "votes file")  # a FIFO, a device or a folder is one line, never a hang
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError(f"{path}: not valid UTF-16 text; re-save the file as UTF-8") from None
    text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8", "surrogateescape")
    if not text.strip():
        raise InputError(f"{path}: the votes file is empty")
    return text


def _header(path: Path, cells: list[str]) -> list[str]:
    header = [cell.strip() for cell in cells]
    if _has_bad_bytes("".join(header)):
        raise InputError(f"{path}: line 1 (the header) is not UTF-8 text; re-save the file as UTF-8")
    repeated = sorted({h for h in header if h and [c.lower() for c in header].count(h.lower()) > 1})
    if repeated:  # which of two "choice" columns is the vote? refuse to guess
        raise InputError(f"{path}: the header repeats column(s) {', '.join(repeated)}; give each column a unique name")
    return header


def _add_rows(table: _Table, rows: Iterable[tuple[int, list[str]]], checked: bool) -> None:
    """Add TSV/CSV rows, leaving out blank ones; unless ``checked`` (the text is all UTF-8), a row holding
    bytes that are not UTF-8 is a bad line, and so is a row with more cells than the header (not empty ones)."""
    width = len(table.header)
    for number, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        if not checked and _has_bad_bytes("".join(cells)):
            table.bad.append(BadVote(number, _NOT_UTF8))
            continue
        if len(cells) > width and (beyond := extra_cells(cells, width)):
            table.bad.append(BadVote(number, beyond))
            continue
        table.numbers.append(number)
        table.cells.append(cells)


def _read_tsv(path: Path, text: str) -> _Table:
    """Tab-separated, without quoting: a line is a row (so no field size limit, no quote can swallow lines)."""
    lines = text.split("\n")
    table = _Table(_header(path, [tsv_unescape(cell) for cell in lines[0].rstrip("\r").split("\t")]))
    body = lines[1:]
    while body and not body[-1].strip():
        body.pop()  # blank lines at the end: no rows, and no number of a row after them changes
    checked = not _has_bad_bytes(text)
    width = len(table.header)
    tabs = set(map(str.count, body, repeat("\t")))
    usual = checked and "\\" not in text and all(map(str.strip, body)) and max(tabs, default=0) < width
    if usual:  # the usual file: nothing to unescape or skip, no row wider than the header
        table.numbers = list(range(2, len(body) + 2))
        if tabs == {width - 1}:  # a full grid: one split, sliced into columns
            cells = "\t".join(body).split("\t")
            table.columns = [cells[k::width] for k in range(width)]
        else:
            table.cells = [line.split("\t") for line in body]
        return table
    rows = ([tsv_unescape(cell) for cell in line.split("\t")] for line in body)
    _add_rows(table, enumerate(rows, 2), checked)
    return table


def _read_csv(path: Path, text: str) -> _Table:
    csv.field_size_limit(1 << 30)  # a huge cell is a bad value to report, not a reason to stop reading
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        table = _Table(_header(path, next(reader, [])))
        rows: list[tuple[int, list[str]]] = []
        while True:
            start = reader.line_num + 1
            cells = next(reader, None)
            if cells is None:
                _add_rows(table, rows, not _has_bad_bytes(text))
                return table
            rows.append((start, cells))
    except csv.Error as exc:
        raise InputError(f"{path}: line {reader.line_num} is not readable CSV ({exc}); fix its quoting") from None


def _read_jsonl(path: Path, text: str) -> _Table:
    table = _Table([])
    names: dict[str, None] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if _has_bad_bytes(line):
            table.bad.append(BadVote(number, _NOT_UTF8))
            continue
        try:
            record = strict_json.loads(line)
        except JsonRuleError as exc:  # a repeated key (which is the vote?), NaN or Infinity
            table.bad.append(BadVote(number, str(exc)))
            continue
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, a number of over 4,300 digits, deep nesting
            table.bad.append(BadVote(number, f"not valid JSON ({_shown(getattr(exc, 'msg', str(exc)))})"))
            continue
        if not isinstance(record, dict):
            table.bad.append(BadVote(number, f"not a JSON object ({type(record).__name__}); write one object a line"))
            continue
        names.update(dict.fromkeys(map(str, record)))
        table.numbers.append(number)
        table.records.append({str(k): v for k, v in record.items()})
    table.header = list(names)
    return table


def _read_parquet(path: Path) -> _Table:
    import polars as pl

    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - polars raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable Parquet file ({type(exc).__name__}); check the file") from None
    records = frame.to_dicts()
    return _Table(list(frame.columns), list(range(1, len(records) + 1)), records=records, unit="row")


def _read_table(path: Path) -> _Table:
    """Any votes file as a table (the extension says the format)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        if not path.is_file():
            raise InputError(f"{path}: no such votes file; check the path")
        return _read_parquet(path)
    if suffix not in (".tsv", ".tab", ".csv", ".jsonl", ".ndjson"):
        raise InputError(f"{path}: unknown votes file type '{suffix}'; use .tsv, .csv, .jsonl or .parquet")
    text = _decoded(path)
    if suffix != ".csv":  # the csv module ends a line at CR, LF or CRLF already
        text = lines_ended(text)
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path, text)
    return _read_csv(path, text) if suffix == ".csv" else _read_tsv(path, text)


# ------------------------------------------------------------------ votes

_KEY = re.compile(r"[0-9a-f]{16}")
Vote = tuple[str, str, str, str, "str | None"]


def _roles(header: list[str]) -> dict[str, str]:
    """Which column plays each role (item_id, annotator, choice, time, solution, text, kind, reason), by name,
    case aside."""
    by_name = {name.lower(): name for name in reversed(header)}  # a repeated name: its first column
    return {role: by_name[alias] for role, aliases in _ALIASES.items() for alias in aliases[::-1] if alias in by_name}


@dataclass(frozen=True)
class _Reading:
    """How the rows of one file are read: the column of each role, whether values are taken exactly as
    written (a file ``votes export`` wrote), and the clock of a file without times."""

    roles: dict[str, str]
    exact: bool
    clock: _Clock | None

    def cell(self, row: dict[str, object], role: str) -> str | None:
        return _cell(row, self.roles.get(role), self.exact)


class _Clock:
    """The times of a file without a time column: the import time, one microsecond later per vote (file order)."""

    def __init__(self) -> None:
        self.start = now()
        self._second = datetime.strptime(self.start[:19], "%Y-%m-%dT%H:%M:%S")
        self._micro = int(self.start[20:26])

    def next(self) -> str:
        if self._micro > 999_999:  # formatting a datetime per vote would cost more than the rest of the line
            self._second += timedelta(seconds=1)
            self._micro = 0
        self._micro += 1
        return f"{self._second:%Y-%m-%dT%H:%M:%S}.{self._micro - 1:06d}Z"


def _item(project: Project, value: str | None) -> tuple[str, int]:
    """(item id, its number of solutions); ValueError when the dataset has no such item."""
    if value is None:
        raise ValueError("no item id")
    pos = project.index.get(value)
    if pos is None and value.strip() != value:
        pos = project.index.get(value := value.strip())
    if pos is None:
        raise ValueError(f"unknown item id '{_shown(_whole(value, 'item id'))}'")
    return value, len(project.items[pos].solutions)


def _time(row: dict[str, object], column: str | None, clock: _Clock | None) -> str:
    if clock is not None:
        return clock.next()
    text = as_text(row.get(column or ""))
    if text is None:
        raise ValueError("no time (leave the whole time column out to count votes in file order)")
    time = canonical_time(text)
    check_not_future(time, text)  # the log's rule for every time (event_rules): not in the far future either
    return time


def _key(reading: _Reading, row: dict[str, object]) -> str | None:
    """The solution key of a row: that of its text when it has one (checked against its key), else its key."""
    text = reading.cell(row, "text")
    key = as_text(row.get(reading.roles.get("solution", "")))
    if key is not None and not _KEY.fullmatch(key):
        raise ValueError(f"solution '{_shown(key)}' is not a solution key (16 hex digits, as votes export writes)")
    if text is None:
        return key
    from_text = solution_key(_whole(text, "text"))
    if key is not None and key != from_text:
        raise ValueError(f"solution key {key} is not the key of the text given ({from_text}); which one was meant?")
    return from_text


def _choice(reading: _Reading, row: dict[str, object], item_id: str, n: int) -> str:
    choice = reading.cell(row, "choice")
    if choice is None:
        raise ValueError(f"no choice (0-{n - 1}, skip, or {WITHDRAWN} to withdraw a vote)")
    return parse_choice(choice, n, item_id)


def _long_row(project: Project, row: dict[str, object], reading: _Reading) -> Vote | Adjudicated:
    """One line of a long file as a vote or an adjudication; ValueError with the reason when it is neither."""
    item_id, n = _item(project, reading.cell(row, "item_id"))
    annotator = reading.cell(row, "annotator")
    if annotator is None:
        raise ValueError("no annotator")
    _whole(annotator, "annotator")
    kind = (reading.cell(row, "kind") or VOTE).strip().lower()
    if kind not in (VOTE, ADJUDICATION):
        raise ValueError(f"kind '{_shown(kind)}' is unknown; use {VOTE} or {ADJUDICATION}")
    stored = _choice(reading, row, item_id, n)
    key = _key(reading, row) if stored.isdecimal() else None
    time = _time(row, reading.roles.get("time"), reading.clock)
    if kind == VOTE:
        return item_id, annotator, stored, time, key
    return _adjudicated(project, reading, row, (item_id, annotator, stored, time, key))


def _adjudicated(project: Project, reading: _Reading, row: dict[str, object], vote: Vote) -> Adjudicated:
    """An adjudication row (read as a vote so far): the text it chose, found by its key when not given."""
    item_id, annotator, choice, time, key = vote
    if choice == SKIP:
        raise ValueError(f"an adjudication chooses a solution (0-9) or is {WITHDRAWN}, never unsure")
    text = reading.cell(row, "text")
    if key is not None and text is None:
        solutions = project.item(item_id).solutions
        text = next((t for t in solutions if solution_key(t) == key), None)
        if text is None:
            raise ValueError(f"solution key {key} names no solution of item '{_shown(item_id)}' here; give its text")
    reason = _whole(reading.cell(row, "reason") or "", "reason")
    return Adjudicated(item_id, annotator, choice, time, text if choice else None, reason, _made_on(reading, row))


def _made_on(reading: _Reading, row: dict[str, object]) -> str | None:
    """The ``made_on`` cell of an adjudication row: a mark, ``none``, or empty (not recorded: older files)."""
    cell = (reading.cell(row, "made_on") or "").strip()
    if not cell:
        return None
    if cell == MADE_ON_NONE:
        return ""
    if not _KEY.fullmatch(cell):
        raise ValueError(f"made_on '{_shown(cell)}' is no adjudication's mark; leave it empty, or write {MADE_ON_NONE}")
    return cell


def _wide_votes(
    project: Project, row: dict[str, object], reading: _Reading, annotators: list[str]
) -> tuple[list[Vote], list[str]]:
    """The votes of one row of a wide file (an empty cell is no vote) and the reasons of its bad cells."""
    item_id, n = _item(project, reading.cell(row, "item_id"))
    cells = [(name, text) for name in annotators if (text := as_text(row.get(name))) is not None]
    clock = reading.clock
    row_time = _time(row, reading.roles.get("time"), None) if clock is None and cells else ""
    votes: list[Vote] = []
    reasons: list[str] = []
    for name, text in cells:
        try:
            choice = parse_choice(text, n, item_id)
            votes.append((item_id, _whole(name, "annotator"), choice, row_time or _time(row, None, clock), None))
        except ValueError as exc:
            reasons.append(f"column '{_shown(_printable(name))}': {exc}")
    return votes, reasons


def _shape(path: Path, header: list[str], roles: dict[str, str]) -> tuple[str, list[str]]:
    """'long' or 'wide', and for wide the annotator columns; InputError when the file is neither."""
    if "item_id" in roles and "annotator" in roles and "choice" in roles:
        return "long", []
    if "item_id" in roles and "annotator" not in roles and "choice" not in roles:
        used = {roles["item_id"], roles.get("time")}
        annotators = [name for name in header if name not in used and name]
        if annotators:
            return "wide", annotators
    found = ", ".join(_shown(_printable(name)) for name in header) or "nothing"
    raise InputError(
        f"{path}: a votes file needs columns item_id, annotator, choice (long), or an id column and one "
        f"column per annotator (wide); found: {found}"
    )


def _usual_long(project: Project, table: _Table, roles: dict[str, str]) -> list[Vote] | None:
    """The votes of a long TSV/CSV file with times when every line is good in the usual way (a known item, an
    annotator, a solution number in range, a plain UTC time), checked column-wise; None when some line is not,
    or is unusual (the line-by-line reading decides then, and says why)."""
    width = len(table.header)
    if table.bad or table.records or "time" not in roles or table.narrower_than(width):
        return None
    where = {name: k for k, name in reversed(list(enumerate(table.header)))}
    columns = [table.column(where[roles[role]]) for role in ("item_id", "annotator", "choice")]
    item_ids, annotators, choices = columns
    positions = list(map(project.index.get, item_ids))
    digits = {str(k): k for k in range(10)}
    codes = list(map(digits.get, choices))
    if None in positions or "" in annotators or None in codes or {"solution", "text", "kind"} & roles.keys():
        return None
    n = np.fromiter((len(i.solutions) for i in project.items), np.int64, len(project.items))
    if not bool((np.array(codes, np.int64) < n[np.array(positions, np.int64)]).all()):
        return None
    times = _usual_times(table.column(where[roles["time"]]))
    return None if times is None else list(zip(item_ids, annotators, choices, times, repeat(None)))


def _usual_times(values: list[str]) -> list[str] | None:
    """``canonical_time`` of plain UTC times of one width (``…T09:14:03Z``), checked column-wise: digits where
    digits go, real dates, hours, minutes and seconds in range; None otherwise."""
    width = len(values[0]) if values else 0
    if width not in (20, 27) or set(map(len, values)) != {width} or not (joined := "".join(values)).isascii():
        return None
    grid = np.frombuffer(joined.encode("ascii"), np.uint8).reshape(len(values), width)
    shape = np.frombuffer(("dddd-dd-ddTdd:dd:dd" + (".ddddddZ" if width == 27 else "Z")).encode(), np.uint8)
    digit = shape == ord("d")
    if not bool(
        (((grid >= ord("0")) & (grid <= ord("9"))) | ~digit).all() and (grid[:, ~digit] == shape[~digit]).all()
    ):
        return None
    number = (grid[:, [11, 14, 17]] - ord("0")).astype(np.int64) * 10 + (grid[:, [12, 15, 18]] - ord("0"))
    if not bool((number <= np.array([23, 59, 59])).all()):
        return None
    if not _real_dates(grid[:, :10]):
        return None
    times = values if width == 27 else joined.replace("Z", ".000000Z\n").split("\n")[:-1]  # Z ends each value only
    return times if max(times) <= latest_time() else None  # one in the far future: the line-by-line reading says so


_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)


def _real_dates(grid: np.ndarray) -> bool:
    """Whether every row of ``grid`` (ASCII ``dddd-dd-dd``, digits already checked) is a real date in ``YEARS``:
    what ``date.fromisoformat`` accepts (a month 1-12, a day within it, 29 February in leap years), column-wise."""
    digits = (grid[:, [0, 1, 2, 3, 5, 6, 8, 9]] - ord("0")).astype(np.int64)
    year = digits[:, 0] * 1000 + digits[:, 1] * 100 + digits[:, 2] * 10 + digits[:, 3]
    month, day = digits[:, 4] * 10 + digits[:, 5], digits[:, 6] * 10 + digits[:, 7]
    if not bool(((month >= 1) & (month <= 12) & (year >= YEARS[0]) & (year <= YEARS[1]) & (day >= 1)).all()):
        return False
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    return bool((day <= _MONTH_DAYS[month] + ((month == 2) & leap)).all())


@gc_paused()  # a dict and a tuple per line, no cycles: collections would only slow the read
def read_votes(project: Project, path: str | Path) -> FileVotes:
    """The valid votes and adjudications of a file and the lines that are neither, each with its reason."""
    path = Path(path)
    table = _read_table(path)
    if not table.header and table.bad:  # a JSON Lines file none of whose lines is an object
        raise InputError(f"{path}: not one line is readable; {table.bad[0]}")
    roles = _roles(table.header)
    shape, annotators = _shape(path, table.header, roles)
    if shape == "long" and (usual := _usual_long(project, table, roles)) is not None:
        return FileVotes(usual, [], len(usual), shape, None)
    if shape == "wide":
        roles = {role: column for role, column in roles.items() if role not in _LONG_ONLY}
    reading = _Reading(roles, "kind" in roles, None if "time" in roles else _Clock())
    votes: list[Vote] = []
    adjudications: list[Adjudicated] = []
    bad = list(table.bad)
    for number, row in table.rows():
        try:
            if shape == "long":
                found = _long_row(project, row, reading)
                if isinstance(found, Adjudicated):
                    adjudications.append(found)
                else:
                    votes.append(found)
                continue
            wide, reasons = _wide_votes(project, row, reading, annotators)
        except ValueError as exc:
            bad.append(BadVote(number, _printable(str(exc)), table.unit))
            continue
        votes += wide
        bad += [BadVote(number, _printable(reason), table.unit) for reason in reasons]
    bad.sort(key=lambda b: b.line)
    read = len(votes) + len(adjudications) + len(bad)
    stamped = reading.clock.start if reading.clock else None
    return FileVotes(votes, bad, read, shape, stamped, adjudications)


def import_votes(project: Project, path: str | Path, *, refresh: bool = True) -> ImportResult:
    """Merge a votes file into the workspace; the valid lines are imported, the bad ones reported.

    ``refresh=False`` leaves ``project.state`` as it was, for a caller done with the project (the CLI).
    """
    found = read_votes(project, path)
    workspace = project.workspace
    if workspace is None:
        raise PiqaError("importing votes needs a workspace")
    new = workspace.insert_votes(found.votes, note=f"imported from {Path(path).name}")
    decided = [
        (a.item_id, a.annotator, a.choice, a.time, a.text, a.reason, decision_field(a.made_on))
        for a in found.adjudications
    ]
    new_decided = workspace.insert_adjudications(decided) if decided else 0
    if refresh:
        project.refresh()
    names = frozenset(map(itemgetter(1), found.votes)) | {a.annotator for a in found.adjudications}
    return ImportResult(
        found.read,
        new + new_decided,
        found.bad,
        found.shape,
        found.stamped,
        len(decided),
        new_decided,
        names,
        lacking(project, found),
    )


def lacking(project: Project, found: FileVotes) -> Lacking:
    """What the file's votes in force and adjudications were cast on that this copy's items do not hold now,
    told apart by whether the text was ever held here (``HeldTexts``: the file as read, the log's solution
    history, the current texts). Only rows that name their text (a key or a text) can say; a vote that names a
    position only follows the text that stood there here."""
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for item_id, annotator, choice, time, key in found.votes:
        if key is not None and choice.isdecimal():
            if (item_id, annotator) not in latest or latest[(item_id, annotator)][0] <= time:
                latest[(item_id, annotator)] = (time, key)
    decided: dict[str, Adjudicated] = {}
    for adjudication in found.adjudications:
        if adjudication.item_id not in decided or decided[adjudication.item_id].time <= adjudication.time:
            decided[adjudication.item_id] = adjudication
    if not latest and not decided:
        return Lacking()
    held = HeldTexts(project)
    current: dict[str, set[str]] = {}

    def now_held(item_id: str) -> set[str]:
        if item_id not in current:
            current[item_id] = set(map(solution_key, project.item(item_id).solutions))
        return current[item_id]

    votes = {"edited": 0, "unheld": 0}
    for (item_id, _), (_, key) in latest.items():
        if key not in now_held(item_id):
            votes["edited" if held.by_key(item_id, key) is not None else "unheld"] += 1
    edited: list[str] = []
    unheld: list[str] = []
    for item_id, adjudication in decided.items():
        text = adjudication.text
        if text is not None and solution_key(text) not in now_held(item_id):
            (edited if held.held(item_id, text) else unheld).append(item_id)
    order = project.index.get
    return Lacking(
        votes["edited"],
        votes["unheld"],
        tuple(sorted(edited, key=lambda i: order(i, 0))),
        tuple(sorted(unheld, key=lambda i: order(i, 0))),
    )
