"""The vote exchange file: what ``votes export`` writes, so that another machine derives the same decisions.

One row per vote event and per adjudication event (``kind``: ``vote`` or
``adjudication``), long format: ``item_id, annotator, choice, time, solution,
text, kind, reason``. ``solution`` is the key of the text chosen and ``text``
the text itself, so the row names the text, never only a position: on the
other machine a vote or an adjudication follows that text to wherever it
stands, and counts for nothing when it is not there (stale, or set aside).

The answers to a round's extra questions travel in a file of their own
(``export_answers`` / ``import_answers``): ``item_id, annotator, question,
answer, time``, one row per answer event, in the same three formats.

Every value reads back exactly as written, whatever it holds:

* TSV is not quoted; a backslash, tab, line feed or carriage return inside a
  value is written ``\\\\``, ``\\t``, ``\\n``, ``\\r`` (the escapes of
  PostgreSQL's text format), and the reader undoes exactly those four;
* CSV quotes every value as RFC 4180 says (Python's minimal quoting leaves a lone
  carriage return bare, and a reader ends the row there);
* JSONL escapes U+2028, U+2029 and U+0085 besides what JSON escapes, so no
  reader that splits lines on them (``str.splitlines`` does) cuts a record.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core import strict_json
from piqa_tui.core.dataset.atomic import atomic_write
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.strict_json import JsonRuleError
from piqa_tui.core.workspace.event_rules import RULES, check_time
from piqa_tui.core.workspace.limits import check_value
from piqa_tui.core.workspace.log import Event
from piqa_tui.core.workspace.project import Project, made_on
from piqa_tui.core.workspace.vote_targets import Adjudication, solution_key

VOTE_COLUMNS = ("item_id", "annotator", "choice", "time", "solution", "text", "kind", "reason", "made_on")
VOTE, ADJUDICATION = "vote", "adjudication"  # the kinds of row
WITHDRAWN = "withdrawn"  # a withdrawal in a file (the log stores it as an empty choice)
MADE_ON_NONE = "none"  # an adjudication made while none was in force ("": not recorded, as in older files)

_TSV_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_TSV_UNESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
_TSV_SPECIAL = re.compile(r"[\\\t\n\r]")
_TSV_ESCAPED = re.compile(r"\\[\\tnr]")
_JSON_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_JSON_BREAK = re.compile("[\u2028\u2029\x85]")

Row = tuple[str, str, str, str, str, str, str, str, str]


def tsv_escape(value: str) -> str:
    """A value as one TSV cell: backslash, tab, line feed and carriage return escaped."""
    return _TSV_SPECIAL.sub(lambda m: _TSV_ESCAPES[m.group()], value) if _TSV_SPECIAL.search(value) else value


def tsv_unescape(cell: str) -> str:
    """The value a TSV cell holds (the inverse of ``tsv_escape``); any other backslash stays as it is."""
    return _TSV_ESCAPED.sub(lambda m: _TSV_UNESCAPES[m.group()], cell) if "\\" in cell else cell


def extra_cells(cells: list[str], width: int) -> str:
    """Why a row with more cells than the header's ``width`` cannot be read ("" when those cells are empty:
    a trailing tab or comma loses nothing): no column says what the rest of its cells are."""
    beyond = [cell for cell in cells[width:] if cell.strip()]
    if not beyond:
        return ""
    shown = beyond[0] if len(beyond[0]) <= 40 else beyond[0][:40] + "…"
    return (
        f"{len(cells)} cells where the header has {width}: {shown!r} is under no column; "
        "remove it, or name its column in the header"
    )


def json_line(record: dict[str, str]) -> str:
    """One JSON object on one line, whatever line separators its values hold."""
    text = json.dumps(record, ensure_ascii=False)
    return _JSON_BREAK.sub(lambda m: _JSON_BREAKS[m.group()], text) + "\n"


# ------------------------------------------------------------------ texts


@dataclass
class HeldTexts:
    """The solution texts an item has held in this workspace (the file as read, the log's, the current ones), by
    key: what tells a vote cast on a text edited since (held here once) from one cast on a text this copy never
    had (an edit made elsewhere that no votes file carries)."""

    project: Project
    _known: dict[str, dict[str, str]] = field(default_factory=dict)
    _logged: dict[str, list[str]] | None = None

    def _log_texts(self, item_id: str) -> list[str]:
        if self._logged is None:
            self._logged = defaultdict(list)
            history = self.project.replay.history
            for (logged_item, _), value in history.before.items():
                self._logged[logged_item].append(value)
            for (logged_item, _), changes in history.changes.items():
                self._logged[logged_item] += [value for _, value in changes]
        return self._logged.get(item_id, [])

    def by_key(self, item_id: str, key: str) -> str | None:
        """The text of this item whose key is ``key``; None when no text here has it."""
        if item_id not in self._known:
            pos = self.project.index.get(item_id)
            read = self.project.dataset.items
            texts = (
                []
                if pos is None
                else [*self.project.items[pos].solutions, *(read[pos].solutions if pos < len(read) else ())]
            )  # an item the log added has no text as read
            self._known[item_id] = {solution_key(t): t for t in (*self._log_texts(item_id), *texts)}
        return self._known[item_id].get(key)

    def held(self, item_id: str, text: str) -> bool:
        """Whether this item ever held ``text`` here (now, as read, or at some point of the log)."""
        return self.by_key(item_id, solution_key(text)) is not None

    def at(self, item_id: str, choice: str, time: str) -> str | None:
        """The text at position ``choice`` at ``time`` (for an event recorded without its text); None if none."""
        pos = self.project.index.get(item_id)
        if pos is None or not choice.isdecimal() or int(choice) >= len(self.project.items[pos].solutions):
            return None
        current = self.project.items[pos].solutions[int(choice)]
        return self.project.replay.history.text_at(item_id, f"solution{choice}", time, current)


def texts_held(project: Project, adjudications: dict[str, Adjudication]) -> dict[str, bool]:
    """Per item, whether the solution text its adjudication chose was ever held in this copy: an adjudication set
    aside is then one whose text was "edited since"; one whose text never was here came by file from a copy
    whose edit has not arrived ("never held here"). Every screen and command that says why uses this."""
    texts = HeldTexts(project)
    return {item_id: a.text is None or texts.held(item_id, a.text) for item_id, a in adjudications.items()}


def _file_choice(choice: str) -> str:
    return choice if choice else WITHDRAWN


def _vote_row(texts: HeldTexts, item_id: str, annotator: str, choice: str, time: str, key: str) -> Row:
    """A vote as a row, with the text it was cast on (found by its key, or by its position at its time)."""
    text = None
    if choice.isdecimal():
        text = texts.by_key(item_id, key) if key else texts.at(item_id, choice, time)
        key = key or (solution_key(text) if text is not None else "")
    else:
        key = ""
    return (item_id, annotator, _file_choice(choice), time, key, text or "", VOTE, "", "")


def _adjudication_row(texts: HeldTexts, event: Event) -> Row:
    """An adjudication event as a row, with the text it chose (recorded, or derived from the log for an old one)."""
    item_id, choice = event.item_id or "", event.new or ""
    text = event.old if event.old is not None or not choice else texts.at(item_id, choice, event.time)
    key = solution_key(text) if text is not None and choice else ""
    base = made_on(event.field)
    on = "" if base is None else base or MADE_ON_NONE
    return (
        item_id,
        event.annotator,
        _file_choice(choice),
        event.time,
        key,
        text or "",
        ADJUDICATION,
        event.note or "",
        on,
    )


def latest_by_time(events: Iterable[Event], key: Callable[[Event], Hashable]) -> list[Event]:
    """The event in force per ``key``: the latest by time, a tie going to the later in the log's order.

    By time, not by the log's order alone: an event brought in a file is stamped with a clock of the machine
    that imported it, so the log's order of two events can differ between machines (and put an older answer
    after a newer one) while their times do not."""
    latest: dict[Hashable, Event] = {}
    for event in events:
        if (current := latest.get(k := key(event))) is None or current.time <= event.time:
            latest[k] = event
    return list(latest.values())


def _latest(events: list[Event]) -> list[Event]:
    """The adjudication event in force per item."""
    return latest_by_time(events, lambda e: e.item_id or "")


def answer_key(event: Event) -> tuple[str, str, str]:
    """What one answer in force is kept per: (item, annotator, question)."""
    return (event.item_id or "", event.annotator, event.field or "")


def export_rows(project: Project, current_only: bool = False) -> list[Row]:
    """Every vote and adjudication event (or only the current vote per item and annotator and the adjudication
    event in force per item, withdrawals included), each with the text it chose, by time."""
    workspace = project.workspace
    if workspace is None:
        raise PiqaError("exporting votes needs a workspace")
    texts = HeldTexts(project)
    if current_only:
        rows = [
            _vote_row(texts, item_id, vote.annotator, vote.cast, vote.time, vote.key)
            for item_id, by_annotator in project.state.votes.items()
            for vote in by_annotator.values()
        ]
    else:
        rows = [
            _vote_row(texts, e.item_id or "", e.annotator, e.new or "", e.time, e.old or "")
            for e in workspace.events(kinds=["vote"])
        ]
    adjudications = workspace.events(kinds=["adjudicate"])
    rows += [_adjudication_row(texts, e) for e in (_latest(adjudications) if current_only else adjudications)]
    rows.sort(key=lambda r: (r[3], r[0], r[1]))  # stable: events of one instant keep their log order
    return rows


def export_votes(project: Project, path: str | Path, current_only: bool = False) -> int:
    """Write the votes and adjudications (``export_rows``) to ``path``, atomically; returns how many rows."""
    path = Path(path)
    rows = export_rows(project, current_only)
    atomic_write(path, votes_text(path, rows))
    return len(rows)


def votes_text(path: Path, rows: list[Row]) -> str:
    """The rows as the file ``path`` names by its extension (.tsv, .tab, .csv, .jsonl, .ndjson)."""
    return table_text(path, VOTE_COLUMNS, rows)


# ------------------------------------------------------------------ what a votes file leaves behind

# What the log's events of each kind are called when a votes file leaves them behind, in the order they are
# named; a kind not listed is named as it is. Votes and adjudications travel; answers travel with --answers.
_LEFT_OUT_NAMES = {
    "edit": "edits",
    "swap": "swaps",
    "undo": "undone or redone edits",
    "new-item": "new items",
    "order": "shuffle orders",
    "flag": "flags",
    "note": "notes",
    "dedup": "duplicate decisions",
    "answer": "answers (give --answers)",
    "round": "round declarations",
    "stage": "stage moves",
    "assign": "assignments",
    "guidelines": "guidelines",
    "ask": "questions to the lead",
    "reply": "replies",
    "release-id": "release ids",
    "release": "recorded releases",
}
WHOLE_RECORD = "piqa-tui workspace merge or piqa-tui sync carry the whole record"


def left_out(project: Project, answers: bool = False) -> dict[str, int]:
    """What this workspace's log holds that a votes file (with an answers file when ``answers``) does not carry,
    counted per kind of record, named as ``left_out_line`` names them ({} when it carries everything).

    Edits are counted per action, a swap (an action whose solution fields trade their texts) apart from the
    others; an undo or redo marker counts where it takes an edit back or again (a vote's undo is a vote event,
    and travels). Every other event kind counts per event: a new item, a shuffle order, a flag, a note..."""
    workspace = project.workspace
    if workspace is None:
        return {}
    carried = {VOTE, "adjudicate", *((ANSWER,) if answers else ())}
    counts: dict[str, int] = defaultdict(int)
    actions: dict[int, list[tuple[str, str | None, str | None]]] = defaultdict(list)
    markers: list[int] = []
    kinds = [kind for kind in RULES if kind not in carried]  # every kind the log can hold (``event_rules``)
    for kind, action, item_id, name, old, new in workspace.event_fields(kinds, "action, item_id, field, old, new"):
        if kind == "edit":
            actions[action].append((name or "", old, new))
        elif kind in ("undo", "redo"):
            if item_id is None:
                markers.append(action)  # the marker: its action is the one it undoes or redoes
        else:
            counts[kind] += 1
    for changes in actions.values():
        counts["swap" if _is_swap(changes) else "edit"] += 1
    counts["undo"] = sum(1 for action in markers if action in actions)
    ordered = {kind: counts[kind] for kind in _LEFT_OUT_NAMES if counts.get(kind)}
    return ordered | {kind: n for kind, n in sorted(counts.items()) if n and kind not in ordered}


def _is_swap(changes: list[tuple[str, str | None, str | None]]) -> bool:
    """Whether an edit action trades solution texts among its fields (a swap or a reorder), nothing else."""
    texts = [(old or "", new or "") for name, old, new in changes if name.startswith("solution")]
    return (
        len(texts) >= 2 and sorted(o for o, _ in texts) == sorted(n for _, n in texts) and any(o != n for o, n in texts)
    )


def left_out_line(path: str | Path, found: dict[str, int]) -> str:
    """One line: what the file at ``path`` does not carry of the record, and what does ("" when nothing)."""
    if not found:
        return ""
    named = ", ".join(f"{_LEFT_OUT_NAMES.get(kind, kind)} {n}" for kind, n in found.items())
    return f"{path} does not carry what this workspace's log holds besides votes: {named}; {WHOLE_RECORD}"


# ------------------------------------------------------------------ answers to extra questions

ANSWER = "answer"  # the event kind of an answer to a round's extra question (core/round/questions.py)
ANSWER_COLUMNS = ("item_id", "annotator", "question", "answer", "time")
AnswerRow = tuple[str, str, str, str, str]


@dataclass(frozen=True, slots=True)
class AnswersImport:
    """What an answers file brought: rows read (bad lines included), new answers recorded, and the rejected
    lines (line, reason); the rest were recorded here already, or are older than the answer that stands."""

    read: int
    new: int
    bad: list[tuple[int, str]]

    @property
    def known(self) -> int:
        """Rows that changed nothing: recorded already, or older than the answer here."""
        return self.read - self.new - len(self.bad)


def answer_rows(project: Project, current_only: bool = False) -> list[AnswerRow]:
    """Every answer event (or only each annotator's current answer per item and question, withdrawals
    included), by time; an empty answer is a withdrawal."""
    if project.workspace is None:
        raise PiqaError("exporting answers needs a workspace")
    events = project.workspace.events(kinds=[ANSWER])
    if current_only:
        events = latest_by_time(events, answer_key)
    rows = [(e.item_id or "", e.annotator, e.field or "", e.new or "", e.time) for e in events if e.item_id]
    return sorted(rows, key=lambda r: r[4])  # stable: answers of one instant keep their log order


def export_answers(project: Project, path: str | Path, current_only: bool = False) -> int:
    """Write the answers (``answer_rows``) to ``path`` as the votes file of the same extension; how many rows."""
    path = Path(path)
    rows = answer_rows(project, current_only)
    atomic_write(path, table_text(path, ANSWER_COLUMNS, rows))
    return len(rows)


def table_text(path: Path, columns: tuple[str, ...], rows: list) -> str:
    """Rows under ``columns`` as the file ``path`` names by its extension (.tsv, .tab, .csv, .jsonl, .ndjson)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "".join(json_line(dict(zip(columns, r))) for r in rows)
    if suffix in (".tsv", ".tab"):
        return "".join("\t".join(map(tsv_escape, r)) + "\n" for r in [columns, *rows])
    if suffix != ".csv":
        raise PiqaError(f"{path}: unknown votes file type '{suffix}'; use .tsv, .csv or .jsonl")
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)  # minimal quoting misses a lone CR
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


@dataclass
class AnswerRows:
    """The rows of an answers file, each with its line number, and the lines that are no row (line, reason)."""

    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    bad: list[tuple[int, str]] = field(default_factory=list)

    def add(self, line: int, row: dict[str, str]) -> None:
        """A row, or a bad line when it lacks a column of ``ANSWER_COLUMNS``."""
        missing = [c for c in ANSWER_COLUMNS if c not in row]
        if missing:
            self.bad.append((line, f"no {', '.join(repr(c) for c in missing)}; every row has {_ANSWER_LIST}"))
        else:
            self.rows.append((line, row))

    def add_cells(self, line: int, header: list[str], cells: list[str]) -> None:
        """A TSV or CSV row: a bad line when it has more cells than the header (not empty ones) or fewer."""
        if not any(cell.strip() for cell in cells):
            return  # a blank line
        if beyond := extra_cells(cells, len(header)):
            self.bad.append((line, beyond))
        elif len(cells) < len(header):
            lacking = ", ".join(repr(c) for c in header[len(cells) :])
            self.bad.append((line, f"{len(cells)} cells where the header has {len(header)}: no {lacking}"))
        else:
            self.add(line, dict(zip(header, cells)))


_ANSWER_LIST = ", ".join(ANSWER_COLUMNS)


def read_answer_rows(path: Path) -> AnswerRows:
    """The rows of an answers file (written by ``export_answers``), with their line numbers, and its lines that
    are no row, each with the reason (a cell under no column, a cell missing, a line that is not a JSON object
    or repeats a key); ``PiqaError`` when the file cannot be read or its header lacks a column or has one that
    an answers file does not. A line ends at LF, CRLF or CR."""
    from piqa_tui.core.dataset.input_file import lines_ended, read_input

    try:
        text = read_input(path, "answers file").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PiqaError(f"{path}: not UTF-8 text (byte {exc.start}); save the answers file as UTF-8") from None
    suffix = path.suffix.lower()
    found = AnswerRows()
    if suffix in (".jsonl", ".ndjson"):
        for n, line in enumerate(lines_ended(text).split("\n"), 1):
            if line.strip():
                _add_json_row(found, n, line)
        return found
    if suffix in (".tsv", ".tab"):
        lines = lines_ended(text).split("\n")
        header = _answers_header(path, [tsv_unescape(c) for c in lines[0].split("\t")])
        for n, line in enumerate(lines[1:], 2):
            found.add_cells(n, header, [tsv_unescape(c) for c in line.split("\t")])
        return found
    if suffix != ".csv":
        raise PiqaError(f"{path}: unknown answers file type '{suffix}'; use .tsv, .csv or .jsonl")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = _answers_header(path, next(reader, []))
        while (start := reader.line_num + 1) and (cells := next(reader, None)) is not None:
            found.add_cells(start, header, cells)
    except csv.Error as exc:
        raise PiqaError(f"{path}: line {reader.line_num} is not readable CSV ({exc}); fix its quoting") from None
    return found


def _answers_header(path: Path, header: list[str]) -> list[str]:
    """The header of a TSV or CSV answers file; ``PiqaError`` when it lacks a column or has one of no meaning."""
    missing = next((c for c in ANSWER_COLUMNS if c not in header), None)
    if missing is not None:
        raise PiqaError(f"{path}: no '{missing}' column; an answers file has {_ANSWER_LIST}")
    unknown = next((c for c in header if c not in ANSWER_COLUMNS), None)
    if unknown is not None:
        raise PiqaError(f"{path}: unknown column {unknown[:40]!r}; an answers file has {_ANSWER_LIST}, no other")
    if len(set(header)) != len(header):
        twice = next(c for c in header if header.count(c) > 1)
        raise PiqaError(f"{path}: the header repeats column '{twice}'; give each column once")
    return header


def import_answers(project: Project, path: str | Path, check: Callable[[str, str, str], str]) -> AnswersImport:
    """Record the answers of a file the workspace lacks; ``check(annotator, question, answer)`` returns the
    answer as the round stores it or raises ``PiqaError`` (the row is then rejected with its reason), as the
    file's lines that are no row are (``read_answer_rows``).

    An answer counts where it is newer than the annotator's latest answer to that question on that item here,
    so importing a file twice, or an older copy, changes nothing; the rest are recorded in time order."""
    workspace = project.workspace
    if workspace is None:
        raise PiqaError("importing answers needs a workspace")
    found = read_answer_rows(Path(path))
    latest: dict[tuple[str, str, str], str] = {}
    for event in workspace.events(kinds=[ANSWER]):
        key = (event.item_id or "", event.annotator, event.field or "")
        latest[key] = max(latest.get(key, ""), event.time)
    bad = list(found.bad)
    new: list[tuple[str, str, str, str, str]] = []
    for line, row in sorted(found.rows, key=lambda r: r[1]["time"]):
        try:
            item_id, annotator, question, time = row["item_id"], row["annotator"], row["question"], row["time"]
            if item_id not in project.index or not annotator.strip():
                raise PiqaError(f"no item '{item_id}' in this dataset" if annotator.strip() else "no annotator")
            try:
                check_time(time)  # the log's rule for every time (``event_rules``), as for votes and merges
            except ValueError as exc:
                raise PiqaError(str(exc)) from None
            answer = check(annotator, question, row["answer"])
            check_value(answer, "the answer")  # the row is rejected, as the log would refuse it whole
        except PiqaError as exc:
            bad.append((line, str(exc)))
            continue
        if time > latest.get((item_id, annotator, question), ""):
            latest[(item_id, annotator, question)] = time
            new.append((time, annotator, item_id, question, answer))
    if new:
        workspace.insert_events(ANSWER, new, note=f"imported from {Path(path).name}")
    return AnswersImport(len(found.rows) + len(found.bad), len(new), sorted(bad))


def _add_json_row(found: AnswerRows, line: int, text: str) -> None:
    """One JSON Lines record as a row of texts, or a bad line: not a JSON object, a repeated key, a key that an
    answers file does not have, or a column missing (``AnswerRows.add``)."""
    try:
        row = strict_json.loads(text)
    except JsonRuleError as exc:
        found.bad.append((line, str(exc)))
        return
    except (ValueError, RecursionError):
        row = None
    if not isinstance(row, dict):
        found.bad.append((line, "not a JSON object; an answers file has one object per line"))
        return
    unknown = next((str(k) for k in row if k not in ANSWER_COLUMNS), None)
    if unknown is not None:
        found.bad.append((line, f"unknown key {unknown[:40]!r}; a row has {_ANSWER_LIST}, no other"))
        return
    found.add(line, {str(k): "" if v is None else str(v) for k, v in row.items()})
