"""Where an output may be written: never over what the work lives in, over anything else only when asked.

Every command that writes a file (dataset export, votes export, card, scores,
workspace backup, the TUI's exports) asks here first, and a test walks the code
to prove it (tests/test_outputs.py). The source dataset (and PIQA's labels file
beside it), the workspace named with ``--workspace`` *and* the dataset's own
default workspace, and their ``-wal`` / ``-shm`` / ``-journal`` files are refused
outright, even with ``--force``: writing there would destroy the work. A
workspace backup knows its dataset too: the one the workspace is bound to and
the one its name says (``data.tsv.piqa.sqlite`` belongs to ``data.tsv``). Any
other existing file is replaced only with ``--force`` (CLI) or a yes (TUI).
Saving the edits over the dataset is not an export and does not come here.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from piqa_tui.core.dataset.reading import LABELS_SUFFIX, labels_path
from piqa_tui.core.errors import ExistingOutput, OutputRefused
from piqa_tui.core.workspace.log import WORKSPACE_SUFFIX, default_location, file_uri, user_location

WORKSPACE_COMPANIONS = ("-wal", "-shm", "-journal")


def workspace_files(path: Path) -> dict[Path, str]:
    """The workspace file and the files SQLite keeps beside it, with what each is called in a refusal."""
    files = {path: "the workspace"}
    files.update(
        {
            path.with_name(path.name + suffix): f"the workspace's {suffix[1:].upper()} file"
            for suffix in WORKSPACE_COMPANIONS
        }
    )
    return files


def dataset_protected_files(dataset_files: Iterable[Path], workspace: Path | None) -> dict[Path, str]:
    """What no output of a command on a dataset may replace: its files, the workspace it was opened with,
    and the workspace it has by default (``--workspace`` elsewhere does not make that one fair game)."""
    files = list(dataset_files)
    protected = {path: "the source dataset (save the edits with ctrl+s in the TUI)" for path in files}
    for workspace_path in [*([workspace] if workspace is not None else []), *default_workspaces(files[:1])]:
        for path, what in workspace_files(workspace_path).items():
            protected.setdefault(path, what)
    return protected


def workspace_protected_files(workspace: Path) -> dict[Path, str]:
    """What a backup of ``workspace`` may not replace: the workspace, its companions, and its dataset."""
    protected = workspace_files(workspace)
    for dataset in owning_datasets(workspace):
        what = "the dataset this workspace belongs to"
        protected.setdefault(dataset, what)
        if dataset.suffix.lower() == ".jsonl":
            protected.setdefault(labels_path(dataset), what)
        for path, name in workspace_files(dataset.with_name(dataset.name + WORKSPACE_SUFFIX)).items():
            protected.setdefault(path, name)
    return protected


def check_workspace_path(dataset: Path, workspace: Path, identity: tuple[int, int] | None = None) -> None:
    """``OutputRefused`` when ``--workspace`` names the dataset (or its labels file): SQLite would write there,
    and a "not a database" answer would advise moving the dataset aside. ``identity`` is the dataset's
    (device, inode) when the caller has stat'ed it already, so the dataset is not stat'ed again."""
    if identity is not None:
        try:
            info = os.stat(workspace)
            if (info.st_dev, info.st_ino) == identity:
                raise OutputRefused(_not_a_workspace(dataset, workspace))
        except OSError:
            pass
    for source in (labels_path(dataset),) if identity is not None else (dataset, labels_path(dataset)):
        if same_file(workspace, source):
            raise OutputRefused(_not_a_workspace(dataset, workspace))


def _not_a_workspace(dataset: Path, workspace: Path) -> str:
    return (
        f"{workspace} is the dataset's own file, not a workspace; give --workspace another file name "
        f"(the default is {dataset.name}{WORKSPACE_SUFFIX})"
    )


def default_workspaces(dataset_files: Iterable[Path]) -> list[Path]:
    """Where a dataset's workspace lives when ``--workspace`` is not given: beside it, or under the user folder."""
    found = []
    for dataset in dataset_files:
        found.append(dataset.with_name(dataset.name + WORKSPACE_SUFFIX))
        try:
            found.extend({default_location(Path(dataset)), user_location(Path(dataset))})
        except (OSError, RuntimeError, ValueError):  # a path that cannot be resolved has no other place
            continue
    return found


def owning_datasets(workspace: Path) -> list[Path]:
    """The dataset a workspace belongs to: by its name (given and resolved) and by the binding stored in it."""
    names = [workspace]
    try:
        names.append(workspace.resolve())
    except (OSError, RuntimeError):
        pass
    found = [p.with_name(p.name[: -len(WORKSPACE_SUFFIX)]) for p in names if p.name.endswith(WORKSPACE_SUFFIX)]
    bound = _bound_dataset(workspace)
    if bound is not None:
        found.append(bound)
    return [p for p in found if p.name and not p.name.endswith(LABELS_SUFFIX)]


def _bound_dataset(workspace: Path) -> Path | None:
    """The dataset path recorded in the workspace's ``meta`` table, read without writing or locking."""
    try:
        if not stat.S_ISREG(os.stat(workspace).st_mode):  # a FIFO would block the open
            return None
        conn = sqlite3.connect(f"{file_uri(workspace)}?mode=ro", uri=True, timeout=1.0)
    except (sqlite3.Error, OSError, ValueError):
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'dataset_path'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return Path(row[0]) if row and isinstance(row[0], str) and row[0] else None


def same_file(a: Path, b: Path) -> bool:
    """The same file: by inode when both exist (hard links, symlinks, other spellings), else by resolved path."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        try:
            return Path(os.path.abspath(a)).resolve() == Path(os.path.abspath(b)).resolve()
        except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL: not one of our files
            return False


def check_outputs(outputs: Iterable[Path], protected: Mapping[Path, str], replace: bool) -> None:
    """Raise ``OutputRefused`` for an output on a protected file, ``ExistingOutput`` for one that exists
    (unless ``replace``); nothing has been written when either is raised."""
    outputs = [Path(out).expanduser() for out in outputs]
    for out in outputs:
        for path, what in protected.items():
            if same_file(out, path):
                raise OutputRefused(f"{out} is {what}: writing there would destroy it; choose another file name")
    if not replace:
        for out in outputs:
            if out.exists():
                raise ExistingOutput(f"{out} already exists: pass --force to replace it, or choose another file name")
