"""A release folder on disk: what it holds, when one may be written, and the atomic swap that writes it.

The folder holds ``README.md`` (the card), ``manifest.json`` (see ``core.release.manifest``), ``data/`` (one
Parquet file and one text file per split), ``guidelines.md`` and ``round.json`` (the protocol it was made
under, when the workspace records them) and, on request, ``global-piqa/`` (Global PIQA-style TSV per split).
``tasks/`` holds the lm-evaluation-harness tasks (``core.release.tasks``).

A folder is a piqa-tui release when its ``manifest.json`` says so (``RELEASE_MARK``). A path that exists and is
not a release (a file, or a folder with anything in it) is refused; a release is replaced only with ``--force``,
and only when it holds nothing but its own files (a ``.git`` of a clone, or a note, is never removed with it).
Either way the new release is built in a hidden folder beside the target and renamed over it once complete
and checked, so a reader sees the old release or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from piqa_tui.core.dataset.atomic import fsync_dir
from piqa_tui.core.errors import ExportError

RELEASE_MARK = "piqa_tui_release"  # the manifest key that makes a folder a piqa-tui release; its value: format version
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CARD = "README.md"
DATA = "data"
GUIDELINES = "guidelines.md"
ROUND = "round.json"
GLOBAL_PIQA = "global-piqa"
TASKS = "tasks"  # the lm-evaluation-harness tasks (core.release.tasks)


class ReleaseError(ExportError):
    """A release folder cannot be written there, or would not hold what its card says: one line, nothing written."""


@dataclass(frozen=True)
class SplitFiles:
    """A split's name, its item count and its files, relative to the folder (``/`` separated, as the card names
    them)."""

    name: str
    items: int
    parquet: str
    text: str
    global_piqa: str | None = None
    num_bytes: int = 0  # in Arrow memory, as ``datasets`` counts it (``core.release.features``)

    def files(self) -> list[str]:
        return [self.parquet, self.text, *([self.global_piqa] if self.global_piqa else [])]


def split_files(name: str, items: int, text_format: str, global_piqa: bool) -> SplitFiles:
    """Where split ``name``'s files go: ``data/NAME.parquet``, ``data/NAME.<text format>``, ``global-piqa/NAME.tsv``."""
    gp = f"{GLOBAL_PIQA}/{name}.tsv" if global_piqa else None
    return SplitFiles(name, items, f"{DATA}/{name}.parquet", f"{DATA}/{name}.{text_format}", gp)


def read_manifest(folder: Path) -> dict[str, object] | None:
    """The folder's manifest when it is a piqa-tui release, else None."""
    try:
        found = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and RELEASE_MARK in found else None


def check_target(folder: Path, force: bool, protected: Iterable[Path]) -> None:
    """Refuse (one line) a target that is not a release, a release without ``force``, or one holding a
    protected file (the dataset, its workspace). Nothing is written."""
    for path in protected:
        if path.exists() and folder.resolve() in path.resolve().parents:
            raise ReleaseError(f"{folder} holds {path.name}, which a release would replace; choose another folder")
    if not folder.exists() and not folder.is_symlink():
        if not folder.parent.is_dir():
            raise ReleaseError(f"{folder.parent} is not a folder; make it first, or choose another place")
        return
    if folder.is_symlink() or not folder.is_dir():
        raise ReleaseError(f"{folder} exists and is not a folder; choose another name for the release")
    if not any(folder.iterdir()):
        return  # an empty folder, made for the release
    manifest = read_manifest(folder)
    if manifest is None:
        raise ReleaseError(
            f"{folder} exists and is not a piqa-tui release (no {MANIFEST} of one); choose another folder"
        )
    files = manifest.get("files")
    listed = set(files) if isinstance(files, dict) else set()
    foreign = sorted(
        name
        for path in folder.rglob("*")
        if (path.is_file() or path.is_symlink())
        and (name := path.relative_to(folder).as_posix()) not in listed
        and name != MANIFEST
    )
    if foreign:  # a git clone of the dataset's repository, or the team's own notes: never removed with the release
        raise ReleaseError(
            f"{folder} holds {foreign[0]}, which is not part of its release; write the release to a folder of its "
            "own and copy its files where they go"
        )
    if not force:
        made = manifest.get("made") if isinstance(manifest.get("made"), dict) else {}
        when = f" (made {made.get('time')})" if isinstance(made, dict) and made.get("time") else ""
        raise ReleaseError(
            f"{folder} is already a release{when}: pass --force to replace it, or give the new release another name"
        )


@contextmanager
def staged(folder: Path) -> Iterator[Path]:
    """A hidden folder beside ``folder`` to build the release in; removed if the build fails."""
    temp = folder.parent / f".{folder.name}.building-{secrets.token_hex(4)}"
    temp.mkdir()
    try:
        yield temp
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def publish(temp: Path, folder: Path) -> None:
    """Put the built release ``temp`` in ``folder``'s place: the old release (or empty folder) is moved aside,
    the new one renamed in, then the old one removed."""
    old = None
    if folder.exists():
        old = folder.parent / f".{folder.name}.old-{secrets.token_hex(4)}"
        os.replace(folder, old)
    try:
        os.replace(temp, folder)
    except OSError:
        if old is not None:
            os.replace(old, folder)
        shutil.rmtree(temp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    fsync_dir(folder.parent)
