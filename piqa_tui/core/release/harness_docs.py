"""The release's documents for lm-evaluation-harness: copied verbatim into a release as ``tasks/release_docs.py``.

Every task YAML of a release names ``load`` as its ``custom_dataset`` (``!function release_docs.load``), so
the harness reads the release's own Parquet files, found beside this file (``../data/…``) from any working
directory and offline, and sees each item the way piqa-tui scores it: ``id``, ``prompt``, ``question`` (""
when the dataset has none), ``solutions`` (every solution column, in order), ``label`` (the 0-based index of
the right solution, decoded as piqa-tui decodes the dataset's label column) and ``meta`` (every other column,
as text). Items with no label are left out: no accuracy can be taken on them. This file imports nothing from
piqa-tui (a stranger's harness has no piqa-tui installed): only the ``datasets`` library the harness needs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

INTEGER = re.compile(r"^\s*(-?[0-9]{1,6})(\.0+)?\s*$", re.ASCII)


def as_text(value: object) -> str:
    """A value as piqa-tui shows it: "" for missing (None, or a float column's NaN), JSON for a list or mapping,
    else ``str``."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    return str(value)


def label_index(raw: object, label: dict[str, Any]) -> int | None:
    """The 0-based index a label value names (``label``: kind ``number`` with ``base``, or ``letter`` with
    ``letters``), None when it is empty or unreadable."""
    if raw is None or isinstance(raw, bool) or (isinstance(raw, str) and not raw.strip()):
        return None
    if label["kind"] == "letter":
        text = str(raw).strip().upper()
        letters = str(label["letters"])
        return letters.index(text) if len(text) == 1 and text in letters else None
    if isinstance(raw, float) and raw.is_integer():
        return int(raw) - int(label["base"])
    if isinstance(raw, int):
        return raw - int(label["base"])
    match = INTEGER.match(str(raw))
    return int(match.group(1)) - int(label["base"]) if match else None


def doc(row: dict[str, Any], columns: dict[str, Any]) -> dict[str, Any] | None:
    """One item as the tasks render it (see the module docstring); None when it has no label."""
    label = label_index(row.get(columns["label"]["column"]), columns["label"])
    if label is None:
        return None
    found = {
        "id": as_text(row.get(columns["id"])) if columns.get("id") else "",
        "prompt": as_text(row.get(columns["prompt"])),
        "question": as_text(row.get(columns["question"])) if columns.get("question") else "",
        "solutions": [as_text(row.get(c)) for c in columns["solutions"]],
        "label": label,
    }
    if columns["meta"]:  # Arrow holds no struct without fields
        found["meta"] = {c: as_text(row.get(c)) for c in columns["meta"]}
    return found


def load(files: list[str], columns: dict[str, Any], split: str = "test", **_: Any) -> Any:
    """The release's items (``files``: its Parquet files, relative to the release folder) as one split."""
    import datasets  # type: ignore[import-untyped]

    root = Path(__file__).resolve().parent.parent
    rows: list[dict[str, Any]] = []
    for name in files:
        table = datasets.Dataset.from_parquet(str(root / name))
        rows += [found for row in table if (found := doc(dict(row), columns)) is not None]
    return datasets.DatasetDict({split: datasets.Dataset.from_list(rows)})
