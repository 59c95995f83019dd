"""A sync batch: some of one machine's events, written once as an immutable compressed file, read back checked.

A batch is what one machine adds to the team's repository (``core.sync.exchange``): a gzip stream of two JSON
lines, a header (format, the dataset's path in the repository, the machine, the local sequence numbers it spans,
how many events, the shared settings) and the events column by column. Columns compress far better than rows: the
same annotator, kind and field repeat, times are stored as what differs from the time before, global ids and clocks
as differences from the number before (a vote costs some 20 bytes on disk instead of some 300 as a JSON row). An action that names an event of
the batch names it by its row; one that names an earlier event (an undo of work shared before) names its global id.

Reading is hostile-input reading: the file's size, the decompressed size and the number of events are bounded,
every column is checked to be what this program writes (lengths, types, indexes in range) before any event is
made, and anything else is one ``BatchRefused`` line naming the file. The events themselves are judged afterwards
by the gate, as a workspace file's are (``merge.merge_rows``).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from piqa_tui.core.dataset.atomic import default_file_mode
from piqa_tui.core.errors import InputError

FORMAT = "piqa-tui batch"
VERSION = 1
SUFFIX = ".piqa.gz"
NAME = re.compile(r"^([0-9]{1,18})-([0-9]{1,18})\.piqa\.gz$")  # <first>-<last>: local sequence numbers
MAX_FILE_BYTES = 64 * 2**20  # a batch file on disk
MAX_RAW_BYTES = 512 * 2**20  # its two lines, decompressed
MAX_EVENTS = 500_000  # in one batch (the writer splits at BATCH_EVENTS)
BATCH_EVENTS = 200_000
_UID = re.compile(r"^[0-9a-f]{32}$")  # this program's ids: a writer's 16 hex digits and a count's 16
_TEXT_COLUMNS = ("annotator", "kind", "item_id", "field", "old", "new", "note")


class BatchRefused(InputError):
    """A batch file that is not one this program writes (corrupt, truncated, forged, too large): nothing applied."""


@dataclass(frozen=True)
class Header:
    """What a batch says of itself; the reader checks it against the file's name and place."""

    dataset: str  # the dataset file's path in the repository, with "/"
    machine: str
    first: int
    last: int
    events: int
    settings: dict[str, str]

    def name(self) -> str:
        return f"{self.first}-{self.last}{SUFFIX}"


@dataclass(frozen=True)
class Batch:
    """A batch read back: its header, its rows as the merge takes them (``seq`` is the row's number, from 1) and the
    global ids of the earlier events its actions name (row number -> id)."""

    header: Header
    rows: list[tuple]
    outside: dict[int, str]


# ------------------------------------------------------------------ writing


def encode(header: Header, rows: Sequence[tuple], actions: dict[int, str]) -> bytes:
    """The batch file's bytes. ``rows`` are the log's (seq, time, annotator, kind, item_id, field, old, new, action,
    note, uid, clock) in sequence order; ``actions`` gives the global id of each action they name that is not among
    them."""
    seqs = [row[0] for row in rows]
    position = {seq: n for n, seq in enumerate(seqs, start=1)}
    columns: dict[str, object] = {"seq": _deltas(seqs)}
    columns["time"] = _front_coded(row[1] for row in rows)
    for n, name in zip((2, 3, 4, 5, 6, 7, 9), ("annotator", "kind", "item_id", "field", "old", "new", "note")):
        columns[name] = _dictionary(row[n] for row in rows)
    uids = [row[10] for row in rows]
    if all(isinstance(uid, str) and _UID.match(uid) for uid in uids):
        columns["uid"] = {
            "writer": _dictionary(uid[:16] for uid in uids),
            "count": _deltas(int(u[16:], 16) for u in uids),
        }
    else:
        columns["uid"] = {"raw": uids}
    columns["clock"] = _deltas(row[11] for row in rows)
    columns["action"] = [_action_ref(row[8], n, position, actions) for n, row in enumerate(rows, start=1)]
    head = {
        "format": FORMAT,
        "version": VERSION,
        "dataset": header.dataset,
        "machine": header.machine,
        "first": header.first,
        "last": header.last,
        "events": header.events,
        "settings": header.settings,
    }
    text = _json(head) + "\n" + _json(columns) + "\n"
    return gzip.compress(text.encode("utf-8", "surrogatepass"), compresslevel=6, mtime=0)


def write_batch(folder: Path, data: bytes, name: str) -> Path:
    """Write ``data`` as ``folder/name`` atomically (a temporary file renamed into place, fsynced): a kill leaves
    the batch whole or absent, never half written under its name."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, default_file_mode())
        os.replace(tmp, folder / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return folder / name


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _front_coded(values: Iterable[str]) -> dict[str, list]:
    """Texts that share beginnings with the one before (times in order): how many characters each shares, and the
    rest."""
    shared, rest, before = [], [], ""
    for value in values:
        k = 0
        limit = min(len(value), len(before))
        while k < limit and value[k] == before[k]:
            k += 1
        shared.append(k)
        rest.append(value[k:])
        before = value
    return {"shared": shared, "rest": rest}


def _deltas(values: Iterable[int]) -> list[int]:
    out, before = [], 0
    for value in values:
        out.append(value - before)
        before = value
    return out


def _dictionary(values: Iterable[str | None]) -> dict[str, list]:
    """A column as its distinct values (first seen first) and each row's index among them."""
    index: dict[str | None, int] = {}
    rows = [index.setdefault(value, len(index)) for value in values]
    return {"values": list(index), "rows": _deltas(rows)}


def _action_ref(action: int | None, n: int, position: dict[int, int], outside: dict[int, str]) -> int | str | None:
    """An event's action: None, the difference to the row it names (0: itself, the action's first event), or the
    global id of an earlier event."""
    if action is None:
        return None
    if action in position:
        return n - position[action]
    return outside.get(action)


# ------------------------------------------------------------------ reading


def read_batch(path: Path) -> tuple[Header, bytes]:
    """The header of the batch at ``path`` and its bytes, both bounded; ``BatchRefused`` for a file that is too
    large, not gzip, truncated or whose header is not one this program writes."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise _refused(path, f"it is {size} bytes, over the {MAX_FILE_BYTES} a batch may be")
        raw = path.read_bytes()
    except OSError as exc:
        raise _refused(path, f"it cannot be read ({exc.strerror})") from None
    text = _decompressed(path, raw)
    head, _, body = text.partition(b"\n")
    return _header(path, _loaded(path, head)), body


def decode(path: Path, header: Header, body: bytes) -> Batch:
    """The events of a batch whose header was read (``read_batch``), every column checked first."""
    columns = _loaded(path, body)
    if not isinstance(columns, dict):
        raise _refused(path, "its events are not the columns this program writes")
    try:
        rows, outside = _rows(columns, header.events)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        raise _refused(path, f"its events are not the columns this program writes ({type(exc).__name__})") from None
    return Batch(header, rows, outside)


def _decompressed(path: Path, raw: bytes) -> bytes:
    """The batch's text, at most ``MAX_RAW_BYTES`` of it (a small file that inflates to gigabytes is refused)."""
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip
    try:
        text = inflate.decompress(raw, MAX_RAW_BYTES + 1)
    except zlib.error as exc:
        raise _refused(path, f"it is not a gzip file or is damaged ({exc})") from None
    if len(text) > MAX_RAW_BYTES:
        raise _refused(path, f"it inflates to over {MAX_RAW_BYTES} bytes")
    if not inflate.eof:
        raise _refused(path, "it is truncated (its compressed stream ends early)")
    if inflate.unused_data:
        raise _refused(path, "it has bytes after its compressed stream")
    return text


def _loaded(path: Path, line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _refused(path, "it is not the JSON this program writes") from None


def _header(path: Path, head: object) -> Header:
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise _refused(path, "it is not a piqa-tui batch (no header)")
    if head.get("version") != VERSION:
        raise _refused(path, f"it is a batch of version {str(head.get('version'))[:20]}; update piqa-tui to read it")
    dataset, machine, settings = head.get("dataset"), head.get("machine"), head.get("settings")
    first, last, events = head.get("first"), head.get("last"), head.get("events")
    if not (isinstance(dataset, str) and isinstance(machine, str) and isinstance(settings, dict)):
        raise _refused(path, "its header is not the one this program writes")
    if not all(type(n) is int and n >= 0 for n in (first, last, events)):
        raise _refused(path, "its header's numbers are not the ones this program writes")
    assert isinstance(first, int) and isinstance(last, int) and isinstance(events, int)
    if events > MAX_EVENTS:
        raise _refused(path, f"it holds {events} events, over the {MAX_EVENTS} a batch may hold")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in settings.items()):
        raise _refused(path, "its settings are not texts")
    return Header(dataset, machine, first, last, events, dict(settings))


def _rows(columns: dict, count: int) -> tuple[list[tuple], dict[int, str]]:
    """Rebuild the rows; any column of another length or type raises (the caller names the file)."""
    seqs = _summed(columns["seq"], count)
    times = _unfronted(columns["time"], count)
    text = {name: _undictionary(columns[name], count) for name in _TEXT_COLUMNS}
    uid = columns["uid"]
    if "raw" in uid:
        uids = _texts(uid["raw"], count)
    else:
        writers = _undictionary(uid["writer"], count)
        uids = [f"{w}{c:016x}" for w, c in zip(writers, _summed(uid["count"], count), strict=True)]
        if not all(isinstance(u, str) and _UID.match(u) for u in uids):
            raise ValueError("uid")
    clocks = _summed(columns["clock"], count)
    actions, outside = _actions(columns["action"], count)
    rows = [
        (n, times[i], text["annotator"][i], text["kind"][i], text["item_id"][i], text["field"][i], text["old"][i])
        + (text["new"][i], actions[i], text["note"][i], uids[i], clocks[i])
        for i, n in enumerate(range(1, count + 1))
    ]
    if seqs != sorted(set(seqs)):
        raise ValueError("seq")
    return rows, outside


def _summed(deltas: object, count: int) -> list[int]:
    if not isinstance(deltas, list) or len(deltas) != count or not {type(d) for d in deltas} <= {int}:
        raise ValueError("numbers")
    return list(accumulate(deltas))


def _texts(values: object, count: int) -> list:
    if not isinstance(values, list) or len(values) != count:
        raise ValueError("texts")
    return values  # the gate judges each value's type


def _undictionary(column: dict, count: int) -> list[str | None]:
    values = column["values"]
    if not isinstance(values, list) or not all(v is None or isinstance(v, str) for v in values):
        raise ValueError("values")
    indexes = _summed(column["rows"], count)
    if indexes and not (0 <= min(indexes) and max(indexes) < len(values)):
        raise IndexError("index")
    return list(map(values.__getitem__, indexes))


def _unfronted(column: dict, count: int) -> list[str]:
    shared, rest = column["shared"], column["rest"]
    if not (isinstance(shared, list) and isinstance(rest, list) and len(shared) == len(rest) == count):
        raise ValueError("front coding")
    if not {type(k) for k in shared} <= {int} or not {type(r) for r in rest} <= {str}:
        raise TypeError("front coding")
    out, before = [], ""
    for k, tail in zip(shared, rest, strict=True):
        if not 0 <= k <= len(before):
            raise IndexError("front coding")
        before = before[:k] + tail
        out.append(before)
    return out


def _actions(refs: object, count: int) -> tuple[list[int | None], dict[int, str]]:
    """Each row's action as a row number; one naming an earlier event gets a number past the rows, kept in
    ``outside`` with that event's global id."""
    if not isinstance(refs, list) or len(refs) != count:
        raise ValueError("action")
    actions: list[int | None] = []
    outside: dict[int, str] = {}
    for n, ref in enumerate(refs, start=1):
        if ref is None:
            actions.append(None)
        elif type(ref) is int and 0 <= ref < n:
            actions.append(n - ref)
        elif isinstance(ref, str) and 0 < len(ref) <= 200:
            outside[count + n] = ref
            actions.append(count + n)
        else:
            raise ValueError("action")
    return actions, outside


def _refused(path: Path, reason: str) -> BatchRefused:
    return BatchRefused(f"{path}: refused, nothing of it was applied: {reason}")
