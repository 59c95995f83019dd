"""A dataset file read faithfully: its rows, columns, layout and items.

Reading keeps every raw value and the file's own conventions (delimiter, line
ending, label spelling), so that writing an unmodified dataset gives back the
same rows, columns and values (``writing`` does that).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.core import strict_json
from piqa_tui.core.dataset.input_file import (
    MAX_FIELD_CHARS,
    MAX_JSON_DEPTH,
    check_regular_file,
    json_depth,
    read_checked,
    read_input,
    regular_file_status,
)
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.labels import LabelCodec, detect_codec
from piqa_tui.core.dataset.layout import Layout, detect_layout
from piqa_tui.core.dataset.shapes.kind import FLAT, shape_of
from piqa_tui.core.errors import InputError, os_error_reason
from piqa_tui.core.gcpause import gc_paused
from piqa_tui.core.strict_json import JsonRuleError

if TYPE_CHECKING:
    import polars as pl  # imported when a Parquet file is read, not before

EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
LABELS_SUFFIX = "-labels.lst"


@dataclass
class Dataset:
    """A loaded dataset: raw rows (dicts in column order) plus the items read from them."""

    path: Path
    format: str
    columns: list[str]
    rows: Sequence[dict[str, object]]  # Records for TSV/CSV
    layout: Layout
    codec: LabelCodec
    items: list[Item]
    sha256: str
    size: int
    newline: str = "\n"  # the rows' line ending
    final_newline: bool = True
    schema: pl.Schema | None = None  # for Parquet round trips
    raw_ids: list[str] | None = field(default=None, repr=False)
    raw_lines: list[str] | None = field(default=None, repr=False)  # JSONL: each row's line as read
    ascii_json: bool = False  # JSONL written with \\uXXXX escapes (as json.dumps does by default)
    shape: str = FLAT  # a nested shape's name (core/dataset/shapes/): its rows read flat and written back nested
    stamp: tuple[int, int] | None = None  # (mtime in ns, size) of the file as read: see ``SourceFile``
    header_newline: str | None = None  # the first line's ending, where it differs from the rows'

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def meta_columns(self) -> list[str]:
        """Columns the program does not interpret, in file order."""
        roles = self.layout.role_columns
        return [c for c in self.columns if c not in roles]


def file_digest(path: Path) -> tuple[str, int]:
    """SHA-256 and size of a file, to tell whether it changed underneath a workspace."""
    check_regular_file(path, "dataset")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the dataset: {os_error_reason(exc)}; check its permissions") from None
    return digest.hexdigest(), size


def detect_format(path: Path) -> str:
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown file type '{path.suffix}'; use .tsv, .csv, .jsonl or .parquet")
    if fmt == "jsonl" and os.path.lexists(labels_path(path)):
        return "piqa"
    return fmt


def source_files(dataset: Dataset) -> list[Path]:
    """The files the dataset was read from (a PIQA dataset: its .jsonl and its labels file)."""
    return [dataset.path, labels_path(dataset.path)] if dataset.format == "piqa" else [dataset.path]


def labels_path(path: Path) -> Path:
    """PIQA's line-aligned label file: ``valid.jsonl`` -> ``valid-labels.lst``."""
    return path.with_name(path.stem + LABELS_SUFFIX)


@dataclass(frozen=True, eq=False)
class SourceFile:
    """A dataset file as read: its bytes, the format its name says, and the fingerprint a workspace keeps.

    ``read_source`` checks the path once and reads it once; everything that
    opening a dataset needs (parsing, the SHA-256 a workspace is bound to)
    comes from these bytes, never from reading the file again.
    """

    path: Path
    format: str
    data: bytes
    stamp: tuple[int, int]  # (mtime in ns, size) as checked before reading: a cheap first test for a later change
    identity: tuple[int, int] = (0, 0)  # (device, inode) from the same stat: "is this path the dataset?" needs no other

    @property
    def size(self) -> int:
        return len(self.data)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def read_source(path: str | os.PathLike[str]) -> SourceFile:
    """Check a dataset file (one stat) and read it (one read); InputError with a one-line message on bad input.

    A FIFO, a device or a folder is refused before it is opened, so it never hangs the program.
    """
    path = Path(path)
    try:
        status = regular_file_status(path, "dataset")
    except InputError:
        if not os.path.lexists(path):
            raise InputError(f"{path}: no such file; check the path") from None
        raise
    fmt = detect_format(path)
    data = read_checked(path, status.st_size, "dataset")
    if not data:
        raise InputError(f"{path}: the file is empty; nothing to load")
    return SourceFile(path, fmt, data, (status.st_mtime_ns, status.st_size), (status.st_dev, status.st_ino))


HEAD_BYTES = 256 * 1024  # a large file's first rows: a few hundred PIQA items, read and parsed in milliseconds
CUTTABLE = ("tsv", "csv", "jsonl")  # formats whose first lines are a dataset of their own
HEAD_CUTS = 4  # line ends tried, from the last one in the head back


def read_head(
    path: str | os.PathLike[str], mapping: dict[str, str] | None = None, head_bytes: int = HEAD_BYTES
) -> Dataset | None:
    """The first rows of a large dataset file, as a dataset of their own (what a screen can show while the whole
    file is read); None when the file is small, its format cannot be cut at a line (Parquet, a PIQA labels file,
    UTF-16) or its head does not parse: the whole read then says what is wrong. The last row read is dropped,
    as the cut may have fallen inside it (a quoted value over several lines)."""
    path = Path(path)
    try:
        status = regular_file_status(path, "dataset")
        fmt = detect_format(path)
        if fmt not in CUTTABLE or status.st_size <= 4 * head_bytes:
            return None
        data = read_checked(path, status.st_size, "dataset", limit=head_bytes)
    except InputError:
        return None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _looks_like_utf16(data):
        return None
    dataset = None
    for _ in range(HEAD_CUTS):  # a CSV cut inside a quoted value over lines does not parse: cut a line earlier
        data = data[: data.rfind(b"\n") + 1]
        try:
            dataset = parse_dataset(SourceFile(path, fmt, data, (status.st_mtime_ns, status.st_size)), mapping)
            break
        except InputError:
            data = data[:-1]
    if dataset is None or len(dataset.items) < 2:
        return None
    rows = dataset.rows
    if isinstance(rows, Records):
        del rows.records[-1]
    elif isinstance(rows, list):
        del rows[-1]
    for cut in (dataset.items, dataset.raw_ids, dataset.raw_lines):
        if cut:
            del cut[-1]
    return dataset


def load_dataset(path: str | os.PathLike[str], mapping: dict[str, str] | None = None) -> Dataset:
    """Read any supported dataset file; raise InputError with a one-line message on bad input."""
    return parse_dataset(read_source(path), mapping)


@gc_paused()
def parse_dataset(source: SourceFile, mapping: dict[str, str] | None = None) -> Dataset:
    """The dataset in ``source``'s bytes: rows, layout, labels and items (ids: see ``build_items``)."""
    path, fmt = source.path, source.format
    newline, final_newline, header_newline = "\n", True, None
    text = None if fmt == "parquet" else _text(source)
    if text is not None:
        header_newline, newline = line_endings(text)
        final_newline = text.endswith("\n")
    columns, rows, schema, raw_lines, shape = _columns_and_rows(source, text)
    layout = detect_layout(columns, mapping, source=str(path))
    label_values: list[object]
    if fmt == "piqa" and layout.label is None:
        layout = _with_labels_file(layout, path)
        label_values = _read_labels_file(labels_path(path), len(rows))
    else:
        label_values = column_values(rows, layout.label) if layout.label else [None] * len(rows)
    codec, labels = detect_codec(label_values, layout.label_base, str(path))
    dataset = Dataset(
        path, fmt, columns, rows, layout, codec, [], source.sha256, source.size, newline, final_newline, schema
    )
    dataset.stamp = source.stamp
    dataset.header_newline = header_newline if header_newline != newline else None
    if text is not None and fmt in ("jsonl", "piqa"):
        dataset.raw_lines = raw_lines
        dataset.shape = shape or FLAT
        dataset.ascii_json = text.isascii() and "\\u" in text
    dataset.items = build_items(dataset, labels)
    return dataset


def line_endings(text: str) -> tuple[str, str]:
    """The first line's ending and the rows' (the last line's, or the one before it when the file has no final
    newline), each "\\r\\n" or "\\n": an export of an untouched file keeps both, even where they differ."""
    first = text.find("\n")
    header = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    if text.endswith("\n"):
        rows = "\r\n" if text.endswith("\r\n") else "\n"
    elif (last := text.rfind("\n")) > first:
        rows = "\r\n" if text[last - 1] == "\r" else "\n"
    else:
        rows = header
    return header, rows


def _text(source: SourceFile) -> str:
    """The decoded text of a text-format dataset file; InputError when it holds nothing."""
    text = decode(source.data, source.path)
    if not text.strip():
        raise InputError(f"{source.path}: the file is empty; nothing to load")
    return text


def _columns_and_rows(
    source: SourceFile, text: str | None
) -> tuple[list[str], Sequence[dict[str, object]], pl.Schema | None, list[str] | None, str | None]:
    """The header and rows of a file, its Parquet schema (or None), its raw JSON lines (or None) and its shape.

    The shape is the name of the registered nested shape that recognises the rows (core/dataset/shapes/), whose
    rows are read as flat columns; else None (flat).
    """
    path, fmt = source.path, source.format
    if fmt == "parquet":
        columns, rows, schema = _read_parquet(source)
        return columns, rows, schema, None, None
    assert text is not None
    if fmt in ("jsonl", "piqa"):
        columns, rows, raw_lines = _read_jsonl(text, path)
        shape = shape_of(rows, fmt)
        if shape.name != FLAT:
            rows = [shape.flatten(row) for row in rows]
            return list(dict.fromkeys(key for row in rows for key in row)), rows, None, raw_lines, shape.name
        return columns, rows, None, raw_lines, None
    columns, records = _read_delimited(text, path, "\t" if fmt == "tsv" else ",")
    return columns, records, None, None, None


def peek_rows(path: str | os.PathLike[str], limit: int = 5) -> tuple[list[str], list[dict[str, object]]]:
    """The header and the first ``limit`` rows of a dataset file, read before any layout is known.

    What the TUI's column-mapping dialog previews; bad input raises
    ``InputError`` as ``load_dataset`` does.
    """
    source = read_source(path)
    columns, rows, _, _, _ = _columns_and_rows(source, None if source.format == "parquet" else _text(source))
    return columns, [dict(rows[i]) for i in range(min(limit, len(rows)))]


def preview_items(columns: list[str], rows: list[dict[str, object]], mapping: dict[str, str]) -> list[Item]:
    """``rows`` read as items under ``mapping``: what a mapping would make of the first rows.

    Raises ``LayoutError`` or ``InputError`` (one line each) when the mapping
    cannot be applied, e.g. a label that the chosen base cannot read.
    """
    layout = detect_layout(columns, mapping, source="mapping")
    values: list[object] = column_values(rows, layout.label) if layout.label else [None] * len(rows)
    codec, labels = detect_codec(values, layout.label_base, "mapping")
    dataset = Dataset(Path("preview"), "tsv", columns, rows, layout, codec, [], "", 0)
    return build_items(dataset, labels)


def _with_labels_file(layout: Layout, path: Path) -> Layout:
    from dataclasses import replace

    return replace(layout, labels_file=labels_path(path).name)


def decode(data: bytes, path: Path) -> str:
    """Text of a file in UTF-8 (BOM optional) or UTF-16 with BOM; InputError otherwise."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) or _looks_like_utf32(data):
        raise InputError(f"{path}: UTF-32 is not supported; save it as UTF-8")
    if data.startswith(codecs.BOM_UTF8):
        data, encoding = data[len(codecs.BOM_UTF8) :], "utf-8"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
        if _looks_like_utf16(data):
            raise InputError(f"{path}: looks like UTF-16 without a byte-order mark; re-save the file as UTF-8")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}: not valid {encoding.upper()} at line {line} (byte {exc.start}); re-save the file as UTF-8"
        ) from None
    if "\r" in text and "\n" not in text and "\r" in text.rstrip("\r"):  # one such line end is a row too
        raise InputError(
            f"{path}: lines end with carriage returns only (old Mac line endings); re-save the file with LF or CRLF line endings"
        )
    return text


def _looks_like_utf16(data: bytes) -> bool:
    """Text in UTF-16 without a BOM: most of the first kilobyte's odd or even bytes are NUL."""
    head = data[:1024]
    if len(head) < 4 or b"\x00" not in head:
        return False
    half = len(head) // 2
    return head[1::2].count(0) > half * 0.6 or head[0::2].count(0) > half * 0.6


def _looks_like_utf32(data: bytes) -> bool:
    """Text in UTF-32 without a BOM: in most 4-byte units of the first kilobyte, three bytes are NUL."""
    head = data[: 1024 - 1024 % 4]
    units = [head[i : i + 4] for i in range(0, len(head) - len(head) % 4, 4)]
    if len(units) < 2:
        return False
    wide = sum(unit[1:] == b"\x00\x00\x00" or unit[:3] == b"\x00\x00\x00" for unit in units)
    return wide > len(units) * 0.6


class Records(Sequence):
    """The rows of a TSV/CSV file as lists of cells, seen as dicts (column -> text) one at a time.

    Reading 100,000 rows into dicts costs more than the rest of the load;
    the loader reads columns from the lists directly and writers get dicts.
    """

    __slots__ = ("header", "records", "_position")

    def __init__(self, header: list[str], records: list[list[str]]) -> None:
        self.header = header
        self.records = records
        self._position = {name: k for k, name in enumerate(header)}

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index):  # noqa: ANN001, ANN204 (int or slice, as a list)
        if isinstance(index, slice):
            return [dict(zip(self.header, rec)) for rec in self.records[index]]
        return dict(zip(self.header, self.records[index]))

    def column(self, name: str) -> list[str]:
        k = self._position[name]
        return [rec[k] for rec in self.records]

    def getter(self, names: list[str]) -> Callable[[list[str]], tuple[str, ...]]:
        """A C-level function from a record to the cells of ``names``, as a tuple."""
        positions = [self._position[name] for name in names]
        if len(positions) == 1:
            k = positions[0]
            return lambda rec: (rec[k],)
        return itemgetter(*positions)


def column_values(rows: Sequence[dict[str, object]], name: str) -> list[object]:
    """Every row's value in column ``name`` (None where a JSON row lacks it)."""
    if isinstance(rows, Records):
        return rows.column(name)  # type: ignore[return-value]
    return [row.get(name) for row in rows]


def _refuse_bare_returns(lines: list[str], path: Path) -> None:
    """A carriage return alone inside a line (an old Mac line end beside LF ones) is why its rows look ragged: say so."""
    for number, line in enumerate(lines, 1):
        if "\r" in (line[:-1] if line.endswith("\r") else line):
            raise InputError(
                f"{path}: line {number} holds a carriage return (CR) alone where a line ends: the file mixes line "
                "endings; save it with LF or CRLF line endings throughout"
            )


def _read_delimited(text: str, path: Path, delimiter: str) -> tuple[list[str], Records]:
    """Rows of a TSV (no quoting: quote characters are literal) or CSV (RFC 4180 quoting)."""
    line_numbers: list[int] | None = None  # None: record i is line i + 1
    if delimiter == "\t":
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if "\r" in text:
            records = [line[:-1].split("\t") if line.endswith("\r") else line.split("\t") for line in lines]
        else:
            records = [line.split("\t") for line in lines]
    else:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        line_numbers = []
        records = []
        try:
            for rec in reader:
                records.append(rec)
                line_numbers.append(reader.line_num)
        except csv.Error as exc:
            raise InputError(f"{path}: CSV error at line {reader.line_num}: {exc}; fix the quoting there") from None
    while records and records[-1] in ([], [""]):
        records.pop()  # blank lines at the very end are not rows
    if not records:
        raise InputError(f"{path}: the file is empty; nothing to load")
    header = records[0]
    if len(set(header)) != len(header):
        dup = sorted({c for c in header if header.count(c) > 1})
        raise InputError(f"{path}: the header repeats column(s) {', '.join(dup)}; give each column a unique name")
    width = len(header)
    if any(n != width for n in map(len, records)):
        if delimiter == "\t" and "\r" in text:
            _refuse_bare_returns(lines, path)
        ragged = [
            (line_numbers[i] if line_numbers else i + 1, len(rec)) for i, rec in enumerate(records) if len(rec) != width
        ]
        shown = ", ".join(f"line {line} has {n}" for line, n in ragged[:5])
        more = f" and {len(ragged) - 5} more lines" if len(ragged) > 5 else ""
        raise InputError(f"{path}: ragged rows: the header has {width} fields but {shown}{more}; fix those lines")
    del records[0]
    # A TSV cell is never longer than its line: measuring the lines rules out a cell too long, eight times fewer to look at.
    if delimiter != "\t" or max(map(len, lines), default=0) > MAX_FIELD_CHARS:
        _check_delimited_sizes(text, header, records, path, line_numbers)
    return header, Records(header, records)


def _check_delimited_sizes(
    text: str, header: list[str], records: list[list[str]], path: Path, line_numbers: list[int] | None
) -> None:
    """InputError for a value longer than ``MAX_FIELD_CHARS``; the cells are looked at only in a file that long."""
    if len(text) <= MAX_FIELD_CHARS or max(map(len, chain.from_iterable(records)), default=0) <= MAX_FIELD_CHARS:
        return  # the longest value, found in C: most long files have none too long
    for k, rec in enumerate(records):
        if sum(map(len, rec)) > MAX_FIELD_CHARS:
            line = line_numbers[k + 1] if line_numbers else k + 2
            _check_field_sizes(zip(header, rec), f"{path}: line {line}")


def _read_jsonl(text: str, path: Path) -> tuple[list[str], list[dict[str, object]], list[str]]:
    rows: list[dict[str, object]] = []
    raw_lines: list[str] = []
    columns: dict[str, None] = {}
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            if any(rest.strip() for rest in lines[number:]):
                raise InputError(f"{path}: line {number} is blank; remove it or put an item there")
            break
        record = _json_record(line, path, number)
        columns.update(dict.fromkeys(record))
        rows.append(record)
        raw_lines.append(line.removesuffix("\r"))
    return list(columns), rows, raw_lines


def _json_record(line: str, path: Path, number: int) -> dict[str, object]:
    """One JSONL line as an object, or InputError naming the line and what is wrong with it."""
    where = f"{path}: line {number}"
    try:
        record = strict_json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where} is not valid JSON ({exc.msg}); fix that line") from None
    except JsonRuleError as exc:  # a repeated key (which value is the item's?), NaN or Infinity
        raise InputError(f"{where} {exc}; fix that line") from None
    except RecursionError:
        raise InputError(f"{where} nests JSON lists or objects too deeply; flatten that value") from None
    except ValueError:  # Python refuses to read integers of more than 4,300 digits
        raise InputError(f"{where} has a number of more than 4,300 digits; write it as a quoted string") from None
    if not isinstance(record, dict):
        raise InputError(f"{where} is not a JSON object; each line must be one item")
    if line.count("[") + line.count("{") > MAX_JSON_DEPTH and json_depth(record) > MAX_JSON_DEPTH:
        raise InputError(f"{where} nests JSON lists or objects more than {MAX_JSON_DEPTH} deep; flatten that value")
    if "\\u" in line.lower() and _has_surrogate(record):
        raise InputError(
            f"{where} holds a lone surrogate escape (such as \\ud800), which is not a character; fix that value"
        )
    if len(line) > MAX_FIELD_CHARS:
        _check_field_sizes(record.items(), where)
    return record


def _has_surrogate(record: dict[str, object]) -> bool:
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_field_sizes(cells: Iterable[tuple[str, object]], where: str) -> None:
    """InputError when one value is longer than ``MAX_FIELD_CHARS`` (only asked of long lines)."""
    for column, value in cells:
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            raise InputError(
                f"{where}, column '{column}': {len(value):,} characters is more than the {MAX_FIELD_CHARS:,} "
                "a value may have; shorten it"
            )


def _read_parquet(source: SourceFile) -> tuple[list[str], list[dict[str, object]], pl.Schema]:
    import polars as pl

    path = source.path
    try:
        frame = pl.read_parquet(io.BytesIO(source.data))
    except Exception as exc:  # polars raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable Parquet file ({type(exc).__name__}); check the file") from None
    return list(frame.columns), frame.to_dicts(), frame.schema


def _read_labels_file(path: Path, n_rows: int) -> list[object]:
    text = decode(read_input(path, "label file"), path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    labels: list[object] = [line.strip() for line in lines]
    if len(labels) != n_rows:
        raise InputError(
            f"{path}: has {len(labels)} labels but the .jsonl has {n_rows} items; they must be line-aligned"
        )
    return labels


def as_text(value: object) -> str:
    """A raw value as the text the curator sees, and a CSV or TSV export writes ("" for missing).

    A Parquet column's missing value is null, or NaN in a float column (how pandas writes a missing number):
    both are missing, never the text "nan" (a string "nan" stays what it is). A NaN inside a list or object is
    null, as JSON Lines writes it.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value != value:  # NaN, the one value unequal to itself
        return ""
    if isinstance(value, (dict, list)):
        return strict_json.dumps(value, ensure_ascii=False)[0]
    return str(value)


def unique_ids(raw_ids: list[str]) -> list[str]:
    """Ids made unique inside the program (``ID~2`` for a repeat); validate reports repeats.

    The first row with an id keeps it; a repeat gets the first ``ID~N`` (N from 2) that no row of
    the file holds and no repeat took before, so ``x1, x1, x1, x1~2`` becomes ``x1, x1~3, x1~4, x1~2``:
    every row has an id of its own, and an edit recorded under one reaches that row.
    """
    taken = set(raw_ids)
    if len(taken) == len(raw_ids):
        return raw_ids
    seen: set[str] = set()
    next_number: dict[str, int] = {}
    unique = []
    for raw in raw_ids:
        if raw not in seen:
            seen.add(raw)
            unique.append(raw)
            continue
        number = next_number.get(raw, 2)
        while f"{raw}~{number}" in taken:
            number += 1
        next_number[raw] = number + 1
        taken.add(f"{raw}~{number}")
        unique.append(f"{raw}~{number}")
    return unique


def reassign_ids(dataset: Dataset, derived_ids: list[str]) -> None:
    """Give a dataset without an id column the ids a workspace keeps for its rows, without reading the file again.

    The items keep everything but their ids, so a workspace's ids reach re-sorted rows.
    """
    dataset.raw_ids = list(derived_ids)
    dataset.items = [
        Item(new_id, item.prompt, item.solutions, item.label, item.row, item.meta, item.question)
        for item, new_id in zip(dataset.items, unique_ids(dataset.raw_ids), strict=True)
    ]


def build_items(dataset: Dataset, labels: list[int | None]) -> list[Item]:
    """Items for every row; ids from the id column, else ``r<row>`` (a workspace's own: ``reassign_ids``)."""
    layout = dataset.layout
    rows = dataset.rows
    if layout.id:
        raw_ids = rows.column(layout.id) if isinstance(rows, Records) else [as_text(row.get(layout.id)) for row in rows]
    else:
        raw_ids = [f"r{n}" for n in range(1, len(rows) + 1)]
    dataset.raw_ids = raw_ids
    ids = unique_ids(raw_ids)
    meta_cols = dataset.meta_columns
    columns = [layout.prompt, *layout.solutions, *meta_cols]
    n_sol = len(layout.solutions)
    question = layout.question
    if isinstance(rows, Records):
        # Every value is text and every row has every column: read them with one C-level getter.
        take = rows.getter(columns)
        question_at = rows.getter([question]) if question else None
        return [
            Item(
                ids[row_no],
                values[0],
                values[1 : 1 + n_sol],
                labels[row_no],
                row_no,
                dict(zip(meta_cols, values[1 + n_sol :])),
                question_at(rec)[0] if question_at else None,
            )
            for row_no, (rec, values) in enumerate(zip(rows.records, map(take, rows.records)))
        ]
    return [
        Item(
            ids[row_no],
            as_text(row.get(layout.prompt)),
            tuple(as_text(row.get(c)) for c in layout.solutions),
            labels[row_no],
            row_no,
            {c: as_text(row.get(c)) for c in meta_cols},
            as_text(row.get(question)) if question else None,
        )
        for row_no, row in enumerate(rows)
    ]
