"""A dataset file read faithfully: its rows, columns, layout and items.

Reading keeps every raw value and the file's own conventions (delimiter, line
ending, label spelling), so that writing an unmodified dataset gives back the
same rows, columns and values. Writing is atomic: temp file, fsync, rename.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

from piqa_tui.core.dataset.input_file import (
    MAX_FIELD_CHARS,
    MAX_JSON_DEPTH,
    check_regular_file,
    json_depth,
    read_input,
)
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.labels import LabelCodec, detect_codec
from piqa_tui.core.dataset.layout import Layout, detect_layout
from piqa_tui.core.dataset.nested import SHAPE, flatten, is_nested_culture, nest
from piqa_tui.core.errors import ExportError, InputError, os_error_reason
from piqa_tui.core.gcpause import gc_paused

FORMATS = ("tsv", "csv", "jsonl", "parquet", "piqa")
_EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
LABELS_SUFFIX = "-labels.lst"
# Cells beginning with these run as formulas in Excel, LibreOffice and Google Sheets (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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
    newline: str = "\n"
    final_newline: bool = True
    schema: object = None  # polars schema, for Parquet round trips
    raw_ids: list[str] | None = field(default=None, repr=False)
    raw_lines: list[str] | None = field(default=None, repr=False)  # JSONL: each row's line as read
    ascii_json: bool = False  # JSONL written with \\uXXXX escapes (as json.dumps does by default)
    shape: str | None = None  # nested.SHAPE: ArabCulture's nested JSONL, read flat and written back nested

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
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown file type '{path.suffix}'; use .tsv, .csv, .jsonl or .parquet")
    if fmt == "jsonl" and os.path.lexists(labels_path(path)):
        return "piqa"
    return fmt


def labels_path(path: Path) -> Path:
    """PIQA's line-aligned label file: ``valid.jsonl`` -> ``valid-labels.lst``."""
    return path.with_name(path.stem + LABELS_SUFFIX)


@gc_paused()
def load_dataset(
    path: str | os.PathLike[str],
    mapping: dict[str, str] | None = None,
    derived_ids: list[str] | None = None,
) -> Dataset:
    """Read any supported dataset file; raise InputError with a one-line message on bad input."""
    path = Path(path)
    if not os.path.lexists(path):
        raise InputError(f"{path}: no such file; check the path")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a dataset file (.tsv, .csv, .jsonl, .parquet)")
    fmt = detect_format(path)
    check_regular_file(path, "dataset")
    sha, size = file_digest(path)
    if size == 0:
        raise InputError(f"{path}: the file is empty; nothing to load")
    newline, final_newline = "\n", True
    text = None if fmt == "parquet" else _text(path)
    if text is not None:
        newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1] else "\n"
        final_newline = text.endswith("\n")
    columns, rows, schema, raw_lines, shape = _columns_and_rows(path, fmt, text)
    layout = detect_layout(columns, mapping, source=str(path))
    if fmt == "piqa" and layout.label is None:
        layout = _with_labels_file(layout, path)
        labels = _read_labels_file(labels_path(path), len(rows))
        label_values: list[object] = labels
    else:
        label_values = column_values(rows, layout.label) if layout.label else [None] * len(rows)
    codec, labels = detect_codec(label_values, layout.label_base, str(path))
    dataset = Dataset(path, fmt, columns, rows, layout, codec, [], sha, size, newline, final_newline, schema)
    if fmt in ("jsonl", "piqa"):
        dataset.raw_lines = raw_lines
        dataset.shape = shape
        dataset.ascii_json = text.isascii() and "\\u" in text
    dataset.items = build_items(dataset, labels, derived_ids)
    return dataset


def _text(path: Path) -> str:
    """The decoded text of a text-format dataset file; InputError when it holds nothing."""
    text = decode(read_input(path, "dataset"), path)
    if not text.strip():
        raise InputError(f"{path}: the file is empty; nothing to load")
    return text


def _columns_and_rows(
    path: Path, fmt: str, text: str | None
) -> tuple[list[str], Sequence[dict[str, object]], object, list[str] | None, str | None]:
    """The header and rows of a file, its Parquet schema (or None), its raw JSON lines (or None) and its shape.

    The shape is ``nested.SHAPE`` for ArabCulture's nested JSONL, read as flat columns; else None.
    """
    if fmt == "parquet":
        columns, rows, schema = _read_parquet(path)
        return columns, rows, schema, None, None
    assert text is not None
    if fmt in ("jsonl", "piqa"):
        columns, rows, raw_lines = _read_jsonl(text, path)
        if fmt == "jsonl" and is_nested_culture(rows):
            rows = [flatten(row) for row in rows]
            return list(dict.fromkeys(key for row in rows for key in row)), rows, None, raw_lines, SHAPE
        return columns, rows, None, raw_lines, None
    columns, records = _read_delimited(text, path, "\t" if fmt == "tsv" else ",")
    return columns, records, None, None, None


def peek_rows(path: str | os.PathLike[str], limit: int = 5) -> tuple[list[str], list[dict[str, object]]]:
    """The header and the first ``limit`` rows of a dataset file, read before any layout is known.

    What the TUI's column-mapping dialog previews; bad input raises
    ``InputError`` as ``load_dataset`` does.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file; check the path")
    fmt = detect_format(path)
    columns, rows, _, _, _ = _columns_and_rows(path, fmt, None if fmt == "parquet" else _text(path))
    return columns, [dict(rows[i]) for i in range(min(limit, len(rows)))]


def preview_items(columns: list[str], rows: list[dict[str, object]], mapping: dict[str, str]) -> list[Item]:
    """``rows`` read as items under ``mapping``: what a mapping would make of the first rows.

    Raises ``LayoutError`` or ``InputError`` (one line each) when the mapping
    cannot be applied, e.g. a label that the chosen base cannot read.
    """
    layout = detect_layout(columns, mapping, source="mapping")
    values = column_values(rows, layout.label) if layout.label else [None] * len(rows)
    codec, labels = detect_codec(values, layout.label_base, "mapping")
    dataset = Dataset(Path("preview"), "tsv", columns, rows, layout, codec, [], "", 0)
    return build_items(dataset, labels, None)


def _with_labels_file(layout: Layout, path: Path) -> Layout:
    from dataclasses import replace

    return replace(layout, labels_file=labels_path(path).name)


def decode(data: bytes, path: Path) -> str:
    """Text of a file in UTF-8 (BOM optional) or UTF-16 with BOM; InputError otherwise."""
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
    if "\r" in text and "\n" not in text and text.count("\r") > 1:
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
        ragged = [
            (line_numbers[i] if line_numbers else i + 1, len(rec)) for i, rec in enumerate(records) if len(rec) != width
        ]
        shown = ", ".join(f"line {line} has {n}" for line, n in ragged[:5])
        more = f" and {len(ragged) - 5} more lines" if len(ragged) > 5 else ""
        raise InputError(f"{path}: ragged rows: the header has {width} fields but {shown}{more}; fix those lines")
    del records[0]
    _check_delimited_sizes(text, header, records, path, line_numbers)
    return header, Records(header, records)


def _check_delimited_sizes(
    text: str, header: list[str], records: list[list[str]], path: Path, line_numbers: list[int] | None
) -> None:
    """InputError for a value longer than ``MAX_FIELD_CHARS``; the cells are looked at only in a file that long."""
    if len(text) <= MAX_FIELD_CHARS:
        return
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
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where} is not valid JSON ({exc.msg}); fix that line") from None
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


def _read_parquet(path: Path) -> tuple[list[str], list[dict[str, object]], object]:
    import polars as pl

    try:
        frame = pl.read_parquet(io.BytesIO(read_input(path, "dataset")))
    except InputError:
        raise
    except Exception as exc:  # polars raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable Parquet file ({type(exc).__name__}); check the file") from None
    return list(frame.columns), frame.to_dicts(), frame.schema


def _read_labels_file(path: Path, n_rows: int) -> list[object]:
    text = decode(read_input(path, "label file"), path)
    labels: list[object] = text.split("\n")
    if labels and labels[-1] == "":
        labels.pop()
    labels = [str(v).strip() for v in labels]
    if len(labels) != n_rows:
        raise InputError(
            f"{path}: has {len(labels)} labels but the .jsonl has {n_rows} items; they must be line-aligned"
        )
    return labels


def as_text(value: object) -> str:
    """A raw value as the text the curator sees ("" for missing)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
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


def build_items(dataset: Dataset, labels: list[int | None], derived_ids: list[str] | None) -> list[Item]:
    """Items for every row; ids from the id column, else ``derived_ids``, else ``r<row>``."""
    layout = dataset.layout
    rows = dataset.rows
    if layout.id:
        values = column_values(rows, layout.id)
        raw_ids = values if isinstance(rows, Records) else [as_text(v) for v in values]  # type: ignore[assignment]
    elif derived_ids is not None:
        raw_ids = list(derived_ids)
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


# --------------------------------------------------------------------- writing


def output_format(path: Path, requested: str | None) -> str:
    if requested:
        if requested not in FORMATS:
            raise ExportError(f"unknown format '{requested}'; use one of {', '.join(FORMATS)}")
        return requested
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise ExportError(f"{path}: cannot tell the format from '{path.suffix}'; use .tsv, .csv, .jsonl or .parquet")
    return fmt


def _export_format(dataset: Dataset, out: Path, fmt: str | None) -> str:
    """The format written to ``out``: asked for, else PIQA's pair when a PIQA dataset goes to .jsonl, else the extension's."""
    return output_format(out, fmt or ("piqa" if dataset.format == "piqa" and out.suffix == ".jsonl" else None))


def output_files(dataset: Dataset, out: Path, fmt: str | None = None) -> list[Path]:
    """The files ``write_dataset`` would write for ``out``: the file, and PIQA's labels file beside it
    (just ``out`` when its format is unknown: writing reports that)."""
    try:
        return [out, labels_path(out)] if _export_format(dataset, out, fmt) == "piqa" else [out]
    except ExportError:
        return [out]


def source_files(dataset: Dataset) -> list[Path]:
    """The files the dataset was read from (a PIQA dataset: its .jsonl and its labels file)."""
    return [dataset.path, labels_path(dataset.path)] if dataset.format == "piqa" else [dataset.path]


def current_rows(dataset: Dataset, items: Iterable[Item]) -> list[dict[str, object]]:
    """Raw rows with the items' current values written back into their columns."""
    layout = dataset.layout
    rows = []
    for item in items:
        original = dataset.rows[item.row]
        old = dataset.items[item.row]
        row = dict(original)
        if item.prompt != old.prompt:
            row[layout.prompt] = item.prompt
        for col, new, was in zip(layout.solutions, item.solutions, old.solutions):
            if new != was:
                row[col] = new
        if item.label != old.label and layout.label:
            row[layout.label] = dataset.codec.encode(item.label, original.get(layout.label))
        for col, value in item.meta.items():
            if value != old.meta.get(col):
                row[col] = value
        rows.append(row)
    return rows


def write_dataset(
    dataset: Dataset,
    items: list[Item],
    out: str | os.PathLike[str],
    fmt: str | None = None,
    extra_columns: dict[str, list[object]] | None = None,
    escape_formulas: bool = False,
) -> list[Path]:
    """Write ``items`` (current values) to ``out`` atomically; returns the files written.

    ``escape_formulas`` (CSV and TSV only) prefixes a ``'`` to cells a spreadsheet would run as a formula.
    """
    out = Path(out)
    fmt = _export_format(dataset, out, fmt)
    check_target(out)
    columns, rows = output_table(dataset, items, extra_columns)
    written = [out]
    if fmt == "parquet":
        _write_parquet(dataset, columns, rows, out)
        return written
    newline = dataset.newline if dataset.format != "parquet" else "\n"
    if fmt == "piqa":
        labels = [dataset.codec.encode(item.label, "") for item in items]
        if dataset.layout.label:
            columns = [c for c in columns if c != dataset.layout.label]
        text = _jsonl_text(
            dataset, items, rows, columns, newline, verbatim=not extra_columns and not dataset.layout.label
        )
        lst = newline.join(str(v) for v in labels) + (newline if labels else "")
        atomic_write(out, text)
        atomic_write(labels_path(out), lst)
        written.append(labels_path(out))
        return written
    if fmt == "jsonl":
        # ArabCulture's nested rows go back nested (nested.py); rows nobody touched are copied verbatim anyway.
        text = _jsonl_text(
            dataset, items, rows, columns, newline, verbatim=not extra_columns, nested=dataset.shape == SHAPE
        )
    else:
        text = _delimited_text(rows, columns, "\t" if fmt == "tsv" else ",", newline, out, escape_formulas)
    if not dataset.final_newline and dataset.format == fmt and text.endswith(newline):
        text = text[: -len(newline)]
    atomic_write(out, text)
    return written


def _jsonl_text(
    dataset: Dataset,
    items: list[Item],
    rows: list[dict[str, object]],
    columns: list[str],
    newline: str,
    verbatim: bool,
    nested: bool = False,
) -> str:
    """JSON lines; rows nobody touched are copied as they were read, spacing and escapes included."""
    raw = dataset.raw_lines if verbatim else None
    lines = []
    for item, row in zip(items, rows):
        if raw is not None and item == dataset.items[item.row] and item.meta == dataset.items[item.row].meta:
            lines.append(raw[item.row])
            continue
        record = {c: row[c] for c in columns if c in row}
        if nested:
            record = nest(record)
        lines.append(json.dumps(record, ensure_ascii=dataset.ascii_json, default=_json_value))
    return "".join(line + newline for line in lines)


def _json_value(value: object) -> object:
    """A Parquet value JSON has no type for: dates and times as ISO 8601 text, decimals as text."""
    import datetime
    import decimal

    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (datetime.timedelta, decimal.Decimal)):
        return str(value)
    raise ExportError(f"a value of type {type(value).__name__} cannot be written as JSON; export to .parquet instead")


def output_table(
    dataset: Dataset, items: list[Item], extra_columns: dict[str, list[object]] | None = None
) -> tuple[list[str], list[dict[str, object]]]:
    """The columns and rows an export writes: the items' current values, then ``extra_columns``."""
    rows = current_rows(dataset, items)
    columns = list(dataset.columns)
    for name, values in (extra_columns or {}).items():
        if name not in columns:
            columns.append(name)
        for row, value in zip(rows, values):
            row[name] = value
    return columns, rows


def formula_like(value: str) -> bool:
    """Whether a spreadsheet would read ``value`` as a formula: it begins with = + - or @ and is not a plain number."""
    return value[:1] in FORMULA_STARTS and value != "" and _PLAIN_NUMBER.fullmatch(value) is None


def formula_cells(columns: list[str], rows: list[dict[str, object]]) -> int:
    """How many cells of a CSV/TSV export a spreadsheet would run as formulas."""
    return sum(formula_like(as_text(row.get(c))) for row in rows for c in columns)


def _escaped(value: str, escape_formulas: bool) -> str:
    return "'" + value if escape_formulas and formula_like(value) else value


def _delimited_text(
    rows: list[dict[str, object]],
    columns: list[str],
    delimiter: str,
    newline: str,
    out: Path,
    escape_formulas: bool = False,
) -> str:
    if delimiter == "\t":
        lines = ["\t".join(_escaped(c, escape_formulas) for c in columns)]
        for number, row in enumerate(rows, 2):
            values = [_escaped(as_text(row.get(c)), escape_formulas) for c in columns]
            for col, value in zip(columns, values):
                if "\t" in value or "\n" in value or "\r" in value:
                    raise ExportError(
                        f"{out}: line {number}, column '{col}' holds a tab or line break, which TSV cannot store; "
                        "edit the text or export to .csv/.jsonl"
                    )
            lines.append("\t".join(values))
        return "".join(line + newline for line in lines)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=newline)
    writer.writerow([_escaped(c, escape_formulas) for c in columns])
    writer.writerows([_escaped(as_text(row.get(c)), escape_formulas) for c in columns] for row in rows)
    return buffer.getvalue()


def _write_parquet(dataset: Dataset, columns: list[str], rows: list[dict[str, object]], out: Path) -> None:
    import polars as pl

    schema = dataset.schema if dataset.format == "parquet" and list(dataset.columns) == columns else None
    data = {c: [row.get(c) for row in rows] for c in columns}
    if schema is None:
        _check_one_type_per_column(data, out)
    try:
        frame = pl.DataFrame(data, schema=schema) if schema is not None else pl.DataFrame(data)
    except Exception as exc:  # polars raises several types; its messages run over many lines
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExportError(
            f"{out}: the values cannot be stored as Parquet ({first}); export to .jsonl instead"
        ) from None
    encoded = io.BytesIO()  # polars would report a full disk as a corrupt file: Python's write names it
    frame.write_parquet(encoded)
    with _replacing(out) as tmp, open(tmp, "wb") as fh:  # a file object: a name not valid UTF-8 works too
        fh.write(encoded.getbuffer())
        fh.flush()
        os.fsync(fh.fileno())


def _check_one_type_per_column(data: dict[str, list[object]], out: Path) -> None:
    """ExportError naming the first column whose values mix types (JSONL allows it, Parquet does not)."""
    for column, values in data.items():
        kinds = {
            "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__
            for v in values
            if v is not None
        }
        if len(kinds) > 1:
            raise ExportError(
                f"{out}: column '{column}' mixes value types ({', '.join(sorted(kinds))}), which Parquet cannot store; "
                "export to .jsonl, or make the column one type"
            )


def check_target(out: Path) -> None:
    """ExportError unless ``out`` can be written: its folder exists and is writable, and it is not a folder."""
    folder = out.parent
    if not folder.is_dir():
        what = "does not exist" if not os.path.lexists(folder) else "is not a folder"
        raise ExportError(f"{out}: the folder {folder} {what}; create it or choose another path")
    if out.is_dir():
        raise ExportError(f"{out}: is a folder; give a file name inside it")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ExportError(f"{out}: cannot write in the folder {folder} (permission denied); choose another folder")


def _temp_path(out: Path) -> Path:
    try:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent or ".")
    except OSError as exc:
        raise ExportError(f"{out}: cannot write there: {os_error_reason(exc)}; choose another path") from None
    os.close(fd)
    return Path(name)


@contextmanager
def _replacing(out: Path) -> Iterator[Path]:
    """A temp file beside ``out`` for the caller to fill (and fsync); then renamed over ``out``, or removed."""
    tmp = _temp_path(out)
    try:
        yield tmp
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(
            f"{out}: could not write the file: {os_error_reason(exc)}; nothing was changed there"
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(out.parent)


def atomic_write(out: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to a temp file beside ``out``, fsync it, and rename it over ``out``."""
    out = Path(out)
    check_target(out)
    with _replacing(out) as tmp:
        # A name that is not valid UTF-8 (a card names its file) is written \udcff, never a crash halfway.
        with open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, out.stat().st_mode & 0o7777 if out.exists() else default_file_mode())


def default_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
