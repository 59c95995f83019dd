"""Writing a dataset back: the items' current values in the file's own conventions, in any format.

An unmodified dataset gives back the same rows, columns and values (JSONL
rows nobody touched are copied as read, spacing and escapes included); a
spreadsheet export can escape cells that would run as formulas. Every file
is replaced atomically (``atomic``).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Collection, Iterable
from pathlib import Path

from piqa_tui.core import strict_json
from piqa_tui.core.dataset.atomic import atomic_write, check_target, replacing
from piqa_tui.core.dataset.capacity import refuse_overflow
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import EXTENSIONS, Dataset, as_text, labels_path
from piqa_tui.core.dataset.shapes.kind import DatasetShape, dataset_shape
from piqa_tui.core.errors import ExportError
from piqa_tui.core.strict_json import non_finite

FORMATS = ("tsv", "csv", "jsonl", "parquet", "piqa")
# Cells beginning with these run as formulas in Excel, LibreOffice and Google Sheets (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def output_format(path: Path, requested: str | None) -> str:
    if requested:
        if requested not in FORMATS:
            raise ExportError(f"unknown format '{requested}'; use one of {', '.join(FORMATS)}")
        return requested
    fmt = EXTENSIONS.get(path.suffix.lower())
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


def current_rows(dataset: Dataset, items: Iterable[Item]) -> list[dict[str, object]]:
    """Raw rows with the items' current values written back into their columns."""
    layout = dataset.layout
    rows = []
    for item in items:
        if item.row >= len(dataset.rows):  # an item written in the workspace: a row of its own
            rows.append(added_row(dataset, item))
            continue
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


def added_row(dataset: Dataset, item: Item) -> dict[str, object]:
    """The row of an item the file did not have (written in the workspace): its fields, other columns empty."""
    layout = dataset.layout
    row: dict[str, object] = dict.fromkeys(dataset.columns, "")
    row.update((column, value) for column, value in item.meta.items() if column in row)
    if layout.id:
        row[layout.id] = item.id
    row[layout.prompt] = item.prompt
    row.update(zip(layout.solutions, item.solutions))
    if layout.label:
        row[layout.label] = dataset.codec.encode(item.label, "")
    return row


def write_dataset(
    dataset: Dataset,
    items: list[Item],
    out: str | os.PathLike[str],
    fmt: str | None = None,
    extra_columns: dict[str, list[object]] | None = None,
    escape_formulas: bool = False,
    drop_columns: Collection[str] = (),
    flat: bool = False,
) -> list[Path]:
    """Write ``items`` (current values) to ``out`` atomically; returns the files written.

    ``escape_formulas`` (CSV and TSV only) prefixes a ``'`` to cells a spreadsheet would run as a formula.
    ``drop_columns`` are left out; ``flat`` writes JSON Lines one key per column, whatever the dataset's shape
    (a release's text file, read as the Parquet file beside it).
    """
    out = Path(out)
    fmt = _export_format(dataset, out, fmt)
    refuse_overflow(dataset.layout, items, out.name)  # never a solution dropped without a word
    check_target(out)
    columns, rows = output_table(dataset, items, extra_columns, drop_columns)
    copied = not (extra_columns or drop_columns or flat)  # rows nobody touched may be copied as read
    written = [out]
    if fmt == "parquet":
        _write_parquet(dataset, columns, rows, out)
        return written
    newline = dataset.newline if dataset.format != "parquet" else "\n"
    if fmt == "piqa":
        labels = [dataset.codec.encode(item.label, "") for item in items]
        if dataset.layout.label:
            columns = [c for c in columns if c != dataset.layout.label]
        text = _jsonl_text(dataset, items, rows, columns, newline, verbatim=copied and not dataset.layout.label)
        lst = newline.join(str(v) for v in labels) + (newline if labels else "")
        atomic_write(out, text)
        atomic_write(labels_path(out), lst)
        written.append(labels_path(out))
        return written
    if fmt == "jsonl":
        # A nested shape's rows go back nested (core/dataset/shapes/); rows nobody touched are copied verbatim anyway.
        text = _jsonl_text(
            dataset,
            items,
            rows,
            columns,
            newline,
            verbatim=copied,
            shape=None if flat else dataset_shape(dataset.shape),
        )
    else:
        text = _delimited_text(
            rows, columns, "\t" if fmt == "tsv" else ",", newline, out, escape_formulas, _header_newline(dataset, fmt)
        )
    if fmt == "jsonl" and (first := _header_newline(dataset, fmt)) != newline and newline in text:
        end = text.index(newline)  # a JSON line holds no raw line break, so its first one ends the first row
        text = text[:end] + first + text[end + len(newline) :]
    if not dataset.final_newline and dataset.format == fmt and text.endswith(newline):
        text = text[: -len(newline)]
    atomic_write(out, text)
    return written


def _header_newline(dataset: Dataset, fmt: str) -> str:
    """The first line's ending in an export: the source's own where it differs from its rows' and the format is kept."""
    same = dataset.format == fmt
    return dataset.header_newline if same and dataset.header_newline else dataset.newline


def _jsonl_text(
    dataset: Dataset,
    items: list[Item],
    rows: list[dict[str, object]],
    columns: list[str],
    newline: str,
    verbatim: bool,
    shape: DatasetShape | None = None,
) -> str:
    """JSON lines; rows nobody touched are copied as they were read, spacing and escapes included. A NaN or
    infinite number (a Parquet float) is written null, as JSON has no such number (``null_cells`` counts them)."""
    raw = dataset.raw_lines if verbatim else None
    lines = []
    for item, row in zip(items, rows):
        if (
            raw is not None
            and item.row < len(raw)
            and item == dataset.items[item.row]
            and item.meta == dataset.items[item.row].meta
        ):
            lines.append(raw[item.row])
            continue
        record = {c: row[c] for c in columns if c in row}
        if shape is not None:
            record = shape.nest(record)
        lines.append(strict_json.dumps(record, ensure_ascii=dataset.ascii_json, default=_json_value)[0])
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
    dataset: Dataset,
    items: list[Item],
    extra_columns: dict[str, list[object]] | None = None,
    drop_columns: Collection[str] = (),
) -> tuple[list[str], list[dict[str, object]]]:
    """The columns and rows an export writes: the items' current values, then ``extra_columns``, without
    ``drop_columns``."""
    rows = current_rows(dataset, items)
    columns = list(dataset.columns)
    for name, values in (extra_columns or {}).items():
        if name not in columns:
            columns.append(name)
        for row, value in zip(rows, values):
            row[name] = value
    return [c for c in columns if c not in drop_columns], rows


def null_cells(columns: list[str], rows: list[dict[str, object]]) -> int:
    """How many values of a JSON Lines export are NaN or infinite numbers, which it writes as null."""
    return sum(non_finite(row.get(c)) for row in rows for c in columns)


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
    header_newline: str | None = None,
) -> str:
    """CSV or TSV text; the header line ends with ``header_newline`` (default: ``newline``), the rows with ``newline``."""
    first = header_newline or newline
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
        return lines[0] + first + "".join(line + newline for line in lines[1:])
    header = [_escaped(c, escape_formulas) for c in columns]
    cells = [[_escaped(as_text(row.get(c)), escape_formulas) for c in columns] for row in rows]
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator=first).writerow(header)
    csv.writer(buffer, lineterminator=newline).writerows(cells)
    text = buffer.getvalue()
    if "\r" in text and newline == "\n":  # a value may hold a CR that minimal quoting left bare: quote it
        text = _csv_line(header, first) + "".join(_csv_line(line, newline) for line in cells)
    return text


def _csv_line(cells: list[str], end: str) -> str:
    """One CSV row ending in ``end``, a value quoted when it holds a CR or an LF whatever ``end`` is.

    Python's minimal quoting quotes a value holding a character of the line terminator only: with LF line
    ends a lone CR is written bare, and every reader (this one too) ends the row there. Written with CRLF
    terminators, both are quoted; the terminator is then swapped for ``end``.
    """
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)
    return buffer.getvalue()[:-2] + end


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
    with replacing(out) as tmp, open(tmp, "wb") as fh:  # a file object: a name not valid UTF-8 works too
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
