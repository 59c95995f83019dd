"""``manifest.json``: what a release folder holds, machine-readable, and where it came from.

Keys: ``piqa_tui_release`` (the format version; it marks the folder as a release), ``name`` (the folder's),
``made`` (time, who, piqa-tui's version), ``dataset`` (the source file's name, format and SHA-256),
``workspace`` (its id and the state of its log: events, last clock and time, SHA-256 of the events —
``Workspace.log_state``), ``options`` (every option the release was written with), ``columns`` (as written,
in order), ``label_column``, ``splits`` (per split: items, items per label value, files), ``protocol`` (the
guidelines and round files and the SHA-256 of the text the workspace recorded), ``tasks`` (the
lm-evaluation-harness tasks in ``tasks/``: task name, template, file; their checksums are under ``files``) and ``files`` (every other file: bytes and SHA-256).
Written with sorted keys, so the same release gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from piqa_tui.core.dataset.reading import as_text
from piqa_tui.core.release.folder import FORMAT_VERSION, MANIFEST, RELEASE_MARK, SplitFiles


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_files(folder: Path) -> dict[str, dict[str, object]]:
    """Every file of the folder but the manifest, by its ``/``-separated path: bytes and SHA-256."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if name != MANIFEST:
            found[name] = {"bytes": path.stat().st_size, "sha256": file_sha256(path)}
    return found


def label_counts(values: Sequence[object]) -> dict[str, int]:
    """Items per label value as the file writes it (text), in sorted order."""
    return dict(sorted(Counter(as_text(v) for v in values).items()))  # a NaN counts as missing, never "nan"


def manifest(
    folder: Path,
    head: Mapping[str, object],
    columns: Sequence[str],
    label_column: str | None,
    splits: Sequence[tuple[SplitFiles, Sequence[object]]],
    tasks: Sequence[Mapping[str, str]] = (),
) -> dict[str, object]:
    """The manifest of the files now in ``folder``; ``head`` gives name, made, dataset, workspace, options and
    protocol; ``splits`` each split's files with its label values as written."""
    return {
        RELEASE_MARK: FORMAT_VERSION,
        **head,
        "columns": list(columns),
        "label_column": label_column,
        "splits": {
            files.name: {"items": files.items, "labels": label_counts(labels), "files": files.files()}
            for files, labels in splits
        },
        "tasks": [dict(task) for task in tasks],
        "files": folder_files(folder),
    }


def manifest_text(found: Mapping[str, object]) -> str:
    return json.dumps(found, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False) + "\n"
