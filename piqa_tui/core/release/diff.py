"""What changed between two release folders: items added and removed, labels, texts and metadata changed.

A release is read from its files (``manifest.json`` and each split's Parquet file), so two folders on disk compare
as well as two releases rebuilt from the workspace. The manifest names the label column and (from this version)
the id, prompt and solution columns (``layout``); an older manifest's id column is ``id`` (else the first
column) and its other columns count as metadata. Which split an item is in counts as its metadata (``split``).
The release's own metadata (its options, columns, guidelines, card name and licence) is compared too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.dataset.reading import as_text
from piqa_tui.core.release.folder import CARD, ReleaseError, read_manifest

SPLIT = "split"  # the pseudo-column naming the split an item is in


@dataclass(frozen=True)
class FieldChange:
    """One value of one item (or of the release, ``item`` "") that differs: before and after."""

    item: str
    field: str
    old: str
    new: str
    why: tuple[str, ...] = ()  # for a label: the votes and decisions behind the change

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {"item": self.item, "field": self.field, "old": self.old, "new": self.new}
        return found | ({"why": list(self.why)} if self.why else {})


@dataclass(frozen=True)
class ReleaseTable:
    """A release as its files hold it: rows by id, and which columns are the label, texts and metadata."""

    name: str
    manifest: dict[str, object]
    rows: dict[str, dict[str, str]]
    label: str | None
    texts: tuple[str, ...]
    card: dict[str, str]  # pretty_name and license from the card's front matter


@dataclass
class ReleaseDiff:
    """What changed from release ``old`` to release ``new``."""

    old: str
    new: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    labels: list[FieldChange] = field(default_factory=list)
    texts: list[FieldChange] = field(default_factory=list)
    meta: list[FieldChange] = field(default_factory=list)
    release: list[FieldChange] = field(default_factory=list)  # the release's own metadata

    def to_json(self) -> dict[str, object]:
        return {
            "old": self.old,
            "new": self.new,
            "added": self.added,
            "removed": self.removed,
            "labels": [c.to_json() for c in self.labels],
            "texts": [c.to_json() for c in self.texts],
            "metadata": [c.to_json() for c in self.meta],
            "release": [c.to_json() for c in self.release],
        }

    def summary(self) -> str:
        """One line: how many of each kind of change."""
        counts = [
            (len(self.added), "item added", "items added"),
            (len(self.removed), "item removed", "items removed"),
            (len(self.labels), "label changed", "labels changed"),
            (len({c.item for c in self.texts}), "item's text corrected", "items' texts corrected"),
            (len({c.item for c in self.meta}), "item's metadata changed", "items' metadata changed"),
            (len(self.release), "release setting changed", "release settings changed"),
        ]
        return ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts)


def read_release(folder: Path, draft: dict[str, object] | None = None) -> ReleaseTable:
    """The release in ``folder`` (``draft``: its manifest, for a release being written); one line when it is not
    a release."""
    import polars as pl

    from piqa_tui.core.release.verify import front_matter

    manifest = draft if draft is not None else read_manifest(folder) if folder.is_dir() else None
    if manifest is None:
        raise ReleaseError(f"{folder} is not a piqa-tui release (no manifest.json of one)")
    columns = [str(c) for c in _list(manifest.get("columns"))]
    layout = manifest.get("layout") if isinstance(manifest.get("layout"), dict) else {}
    assert isinstance(layout, dict)
    id_column = str(layout.get("id") or ("id" if "id" in columns else columns[0] if columns else "id"))
    texts = tuple(str(c) for c in [layout.get("prompt"), *_list(layout.get("solutions"))] if c)
    rows: dict[str, dict[str, str]] = {}
    splits = manifest.get("splits") if isinstance(manifest.get("splits"), dict) else {}
    assert isinstance(splits, dict)
    for split, entry in splits.items():
        parquet = next((f for f in _list(entry.get("files")) if str(f).endswith(".parquet")), None)
        if parquet is None:
            continue
        for row in pl.read_parquet(folder / str(parquet)).to_dicts():
            values = {str(k): as_text(v) for k, v in row.items()}  # a NaN is missing, as the dataset reads it
            rows[values.get(id_column, "")] = values | {SPLIT: str(split)}
    try:
        card = front_matter((folder / CARD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        card = {}  # none yet (a release being written) or unreadable
    shown = {k: str(card.get(k, "")) for k in ("pretty_name", "license")} if isinstance(card, dict) else {}
    label = manifest.get("label_column")
    return ReleaseTable(
        str(manifest.get("name", folder.name)), manifest, rows, str(label) if label else None, texts, shown
    )


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def dataset_of(table: ReleaseTable) -> str:
    source = table.manifest.get("dataset")
    return str(source.get("file", "")) if isinstance(source, dict) else ""


def diff_releases(old: ReleaseTable, new: ReleaseTable) -> ReleaseDiff:
    """What changed from ``old`` to ``new``; refused (one line) for releases of two datasets."""
    if dataset_of(old) != dataset_of(new):
        raise ReleaseError(
            f"{old.name} is a release of {dataset_of(old) or 'an unknown dataset'} and {new.name} of "
            f"{dataset_of(new) or 'an unknown dataset'}: a diff compares two releases of one dataset"
        )
    found = ReleaseDiff(old.name, new.name)
    found.added = [i for i in new.rows if i not in old.rows]
    found.removed = [i for i in old.rows if i not in new.rows]
    id_columns = {_id_column(old), _id_column(new)}
    for item, after in new.rows.items():
        before = old.rows.get(item)
        if before is None:
            continue
        for column in dict.fromkeys([*before, *after]):
            was, now = before.get(column, ""), after.get(column, "")
            if was == now or column in id_columns:
                continue
            change = FieldChange(item, column, was, now)
            if column == new.label:
                found.labels.append(change)
            elif column in new.texts:
                found.texts.append(change)
            else:
                found.meta.append(change)
    found.release = release_changes(old, new)
    return found


def _id_column(table: ReleaseTable) -> str:
    layout = table.manifest.get("layout")
    return str(layout.get("id")) if isinstance(layout, dict) and layout.get("id") else "id"


def release_changes(old: ReleaseTable, new: ReleaseTable) -> list[FieldChange]:
    """The release's own metadata that differs: its options, columns, guidelines, the card's name and licence."""
    pairs: list[tuple[str, object, object]] = [
        ("columns", old.manifest.get("columns"), new.manifest.get("columns")),
        ("guidelines", _guidelines(old), _guidelines(new)),
    ]
    if old.card and new.card:  # a release being written has no card yet: its card is not compared
        pairs += [(f"card {key}", old.card.get(key), new.card.get(key)) for key in ("pretty_name", "license")]
    before = old.manifest.get("options") if isinstance(old.manifest.get("options"), dict) else {}
    after = new.manifest.get("options") if isinstance(new.manifest.get("options"), dict) else {}
    assert isinstance(before, dict) and isinstance(after, dict)
    pairs += [(f"option {key}", before.get(key), after.get(key)) for key in sorted({*before, *after})]
    return [FieldChange("", name, _text(a), _text(b)) for name, a, b in pairs if a != b]


def _guidelines(table: ReleaseTable) -> object:
    protocol = table.manifest.get("protocol")
    found = protocol.get("guidelines") if isinstance(protocol, dict) else None
    return found.get("sha256") if isinstance(found, dict) else None


def _text(value: object) -> str:
    return "" if value is None else value if isinstance(value, str) else repr(value)


def changelog(diff: ReleaseDiff, previous: str, made: str) -> list[str]:
    """The card's short changelog against the previous release (its name and when it was made)."""
    first = f"Changes since the previous release, `{previous}` (made {made}): {diff.summary()}."
    flipped = ", ".join(f"`{c.item}` {c.old or 'none'} → {c.new or 'none'}" for c in diff.labels[:10])
    more = f" and {len(diff.labels) - 10} more" if len(diff.labels) > 10 else ""
    lines = [first]
    if flipped:
        lines.append(f"Labels changed: {flipped}{more}.")
    lines.append(
        f"`piqa-tui release diff {previous} {diff.new}`, run on the two release folders, lists every change; "
        "with the team's workspace (`--dataset`) it names the votes and decisions behind each label change."
    )
    return lines
