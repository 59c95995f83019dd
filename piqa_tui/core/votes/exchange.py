"""The vote exchange file: what ``votes export`` writes, so that another machine derives the same decisions.

One row per vote event and per adjudication event (``kind``: ``vote`` or
``adjudication``), long format: ``item_id, annotator, choice, time, solution,
text, kind, reason``. ``solution`` is the key of the text chosen and ``text``
the text itself, so the row names the text, never only a position: on the
other machine a vote or an adjudication follows that text to wherever it
stands, and counts for nothing when it is not there (stale, or set aside).

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
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.dataset.atomic import atomic_write
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.workspace.log import Event
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import solution_key

VOTE_COLUMNS = ("item_id", "annotator", "choice", "time", "solution", "text", "kind", "reason")
VOTE, ADJUDICATION = "vote", "adjudication"  # the kinds of row
WITHDRAWN = "withdrawn"  # a withdrawal in a file (the log stores it as an empty choice)

_TSV_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_TSV_UNESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
_TSV_SPECIAL = re.compile(r"[\\\t\n\r]")
_TSV_ESCAPED = re.compile(r"\\[\\tnr]")
_JSON_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_JSON_BREAK = re.compile("[\u2028\u2029\x85]")

Row = tuple[str, str, str, str, str, str, str, str]


def tsv_escape(value: str) -> str:
    """A value as one TSV cell: backslash, tab, line feed and carriage return escaped."""
    return _TSV_SPECIAL.sub(lambda m: _TSV_ESCAPES[m.group()], value) if _TSV_SPECIAL.search(value) else value


def tsv_unescape(cell: str) -> str:
    """The value a TSV cell holds (the inverse of ``tsv_escape``); any other backslash stays as it is."""
    return _TSV_ESCAPED.sub(lambda m: _TSV_UNESCAPES[m.group()], cell) if "\\" in cell else cell


def json_line(record: dict[str, str]) -> str:
    """One JSON object on one line, whatever line separators its values hold."""
    text = json.dumps(record, ensure_ascii=False)
    return _JSON_BREAK.sub(lambda m: _JSON_BREAKS[m.group()], text) + "\n"


# ------------------------------------------------------------------ texts


@dataclass
class _Texts:
    """The solution texts an item has held in this workspace (the file's, the log's, the current ones), by key."""

    project: Project
    _known: dict[str, dict[str, str]] = field(default_factory=dict)
    _logged: dict[str, list[str]] | None = None

    def _log_texts(self, item_id: str) -> list[str]:
        if self._logged is None:
            self._logged = defaultdict(list)
            history = self.project.history
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

    def at(self, item_id: str, choice: str, time: str) -> str | None:
        """The text at position ``choice`` at ``time`` (for an event recorded without its text); None if none."""
        pos = self.project.index.get(item_id)
        if pos is None or not choice.isdigit() or int(choice) >= len(self.project.items[pos].solutions):
            return None
        current = self.project.items[pos].solutions[int(choice)]
        return self.project.history.text_at(item_id, f"solution{choice}", time, current)


def _file_choice(choice: str) -> str:
    return choice if choice else WITHDRAWN


def _vote_row(texts: _Texts, item_id: str, annotator: str, choice: str, time: str, key: str) -> Row:
    """A vote as a row, with the text it was cast on (found by its key, or by its position at its time)."""
    text = None
    if choice.isdigit():
        text = texts.by_key(item_id, key) if key else texts.at(item_id, choice, time)
        key = key or (solution_key(text) if text is not None else "")
    else:
        key = ""
    return (item_id, annotator, _file_choice(choice), time, key, text or "", VOTE, "")


def _adjudication_row(texts: _Texts, event: Event) -> Row:
    """An adjudication event as a row, with the text it chose (recorded, or derived from the log for an old one)."""
    item_id, choice = event.item_id or "", event.new or ""
    text = event.old if event.old is not None or not choice else texts.at(item_id, choice, event.time)
    key = solution_key(text) if text is not None and choice else ""
    return (item_id, event.annotator, _file_choice(choice), event.time, key, text or "", ADJUDICATION, event.note or "")


def _latest(events: list[Event]) -> list[Event]:
    """The adjudication event in force per item: the latest by time, a tie going to the later in the log."""
    latest: dict[str, Event] = {}
    for event in events:
        if (current := latest.get(event.item_id or "")) is None or current.time <= event.time:
            latest[event.item_id or ""] = event
    return list(latest.values())


def export_rows(project: Project, current_only: bool = False) -> list[Row]:
    """Every vote and adjudication event (or only the current vote per item and annotator and the adjudication
    event in force per item, withdrawals included), each with the text it chose, by time."""
    workspace = project.workspace
    if workspace is None:
        raise PiqaError("exporting votes needs a workspace")
    texts = _Texts(project)
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
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "".join(json_line(dict(zip(VOTE_COLUMNS, r))) for r in rows)
    if suffix in (".tsv", ".tab"):
        return "".join("\t".join(map(tsv_escape, r)) + "\n" for r in [VOTE_COLUMNS, *rows])
    if suffix != ".csv":
        raise PiqaError(f"{path}: unknown votes file type '{suffix}'; use .tsv, .csv or .jsonl")
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)  # minimal quoting misses a lone CR
    writer.writerow(VOTE_COLUMNS)
    writer.writerows(rows)
    return buffer.getvalue()
