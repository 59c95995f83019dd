"""The check before a release is published: the card and the manifest claim only what the files hold.

Everything is read back from the files just written — the card's YAML, the manifest, each Parquet and text
file — never taken from the variables that wrote them: the splits the card's ``configs`` name are the files
present, its ``dataset_info`` row counts and features are each file's rows and columns, the manifest's counts
per split and label are the files' and its checksums are the files'. The first disagreement is one line
(``ReleaseError``) and the release is not published.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from piqa_tui.core.release.folder import CARD, ReleaseError, read_manifest
from piqa_tui.core.release.manifest import folder_files, label_counts
from piqa_tui.core.text.terminal_safe import terminal_safe

CARD_COLUMNS = 100  # the columns the card's Data Fields table lists (``render.card.CARD_COLUMNS``)


def front_matter(card: str) -> dict[str, object]:
    """The YAML between the card's first two ``---`` lines (empty when it has none)."""
    if not card.startswith("---\n"):
        return {}
    end = card.find("\n---\n", 4)
    found = yaml.safe_load(card[4 : end + 1]) if end > 0 else None
    return found if isinstance(found, dict) else {}


def read_table(path: Path) -> tuple[list[str], list[dict[str, object]]]:
    """The columns and rows of a written data file, read as a reader of its format reads it."""
    if path.suffix == ".parquet":
        import polars as pl

        frame = pl.read_parquet(path)
        return list(frame.columns), frame.to_dicts()
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        return list(dict.fromkeys(key for row in rows for key in row)), rows
    tsv = path.suffix == ".tsv"
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter="\t" if tsv else ",",
        quoting=csv.QUOTE_NONE if tsv else csv.QUOTE_MINIMAL,
    )
    header, *cells = list(reader)
    return header, [dict(zip(header, line)) for line in cells]


def verify_release(folder: Path) -> None:
    """ReleaseError (one line) at the first claim of the card or manifest that the files do not bear out."""
    text = (folder / CARD).read_text(encoding="utf-8")
    card = front_matter(text)
    found = read_manifest(folder)
    if found is None:
        raise ReleaseError(f"{folder}: the manifest was not written; nothing is published")
    splits = found["splits"]
    assert isinstance(splits, dict)
    named = _card_splits(card)
    counts = _card_counts(card)
    if set(named) != set(splits) or set(counts) != set(splits):
        raise ReleaseError(
            f"the card names the splits {sorted(named)} but the files hold {sorted(splits)}; nothing is published"
        )
    features = _card_features(card)
    for name, entry in splits.items():
        _check_split(folder, name, entry, named[name], counts[name], features, found)
    _check_card_tables(text, {name: int(str(entry["items"])) for name, entry in splits.items()}, features)
    listed, present = found["files"], folder_files(folder)
    assert isinstance(listed, dict)
    if listed != present:
        wrong = sorted(set(listed) ^ set(present)) or sorted(k for k in present if listed.get(k) != present[k])
        raise ReleaseError(
            f"the manifest's checksums do not match the folder's files ({wrong[0]}); nothing is published"
        )


def _check_split(
    folder: Path,
    name: str,
    entry: Mapping[str, object],
    path: str,
    rows: int,
    features: list[str],
    found: Mapping[str, object],
) -> None:
    files = entry["files"]
    assert isinstance(files, list)
    if path != files[0]:
        raise ReleaseError(
            f"the card loads split {name} from {path}, the manifest from {files[0]}; nothing is published"
        )
    label = found.get("label_column")
    for file in files[:2]:  # the Parquet file the card names, and the text file beside it
        if not (folder / file).is_file():
            raise ReleaseError(f"the card names {file}, which was not written; nothing is published")
        columns, data = read_table(folder / file)
        if len(data) != rows or len(data) != entry["items"]:
            raise ReleaseError(
                f"{file} holds {len(data)} rows, the card says {rows} and the manifest {entry['items']}; "
                "nothing is published"
            )
        if columns != features or columns != found["columns"]:
            raise ReleaseError(f"{file}'s columns are not the ones the card lists; nothing is published")
        if isinstance(label, str) and label_counts([row.get(label) for row in data]) != entry["labels"]:
            raise ReleaseError(f"{file}'s labels are not counted as the manifest counts them; nothing is published")
    for file in files[2:]:  # the Global PIQA TSV: the split's rows again
        with (folder / file).open(encoding="utf-8", newline="") as handle:
            held = sum(1 for _ in csv.reader(handle, delimiter="\t")) - 1
        if held != rows:
            raise ReleaseError(f"{file} holds {held} rows, the card says {rows}; nothing is published")


def _check_card_tables(text: str, rows: Mapping[str, int], columns: list[str]) -> None:
    """The card's Markdown says what its YAML says: the items per split of its Data Splits table, and the
    columns of its Data Fields table (the first ``CARD_COLUMNS``)."""
    table = {cells[0]: cells[1] for cells in markdown_rows(text, "### Data Splits") if len(cells) > 1}
    if table != {name: str(n) for name, n in rows.items()}:
        raise ReleaseError(
            f"the card's Data Splits table says {table}, the files hold {dict(rows)}; nothing is published"
        )
    listed = [_code(cells[0]) for cells in markdown_rows(text, "### Data Fields")]
    if listed != [terminal_safe(" ".join(c.split())) for c in columns[:CARD_COLUMNS]]:
        raise ReleaseError(
            "the card's Data Fields table does not list the columns the files hold; nothing is published"
        )


def markdown_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading`` (its header and rule left out), unescaped."""
    lines = text.splitlines()
    start = lines.index(heading) if heading in lines else len(lines)
    found = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("| "):
            found.append([cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
        elif found:
            break
    return found[2:]


def _code(cell: str) -> str:
    """The text of an inline-code cell (``inline_code``'s fence and padding taken off)."""
    ticks = len(cell) - len(cell.lstrip("`"))
    inner = cell[ticks : len(cell) - ticks] if ticks else cell
    return inner[1:-1] if inner.startswith(" `") or inner.endswith("` ") else inner


def _card_splits(card: Mapping[str, object]) -> dict[str, str]:
    """Split → the file the card's ``configs`` load it from."""
    configs = card.get("configs")
    first = configs[0] if isinstance(configs, list) and configs and isinstance(configs[0], dict) else {}
    files = first.get("data_files") if isinstance(first, dict) else None
    return {str(f["split"]): str(f["path"]) for f in files or [] if isinstance(f, dict)}


def _card_counts(card: Mapping[str, object]) -> dict[str, int]:
    """Split → the rows the card's ``dataset_info`` says it has."""
    info = card.get("dataset_info")
    splits = info.get("splits") if isinstance(info, dict) else None
    return {str(s["name"]): int(s["num_examples"]) for s in splits or [] if isinstance(s, dict)}


def _card_features(card: Mapping[str, object]) -> list[str]:
    info = card.get("dataset_info")
    features = info.get("features") if isinstance(info, dict) else None
    return [str(f["name"]) for f in features or [] if isinstance(f, dict)]
