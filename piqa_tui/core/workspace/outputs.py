"""Where an output may be written: never over what the work lives in, over anything else only when asked.

Every command that writes a file (dataset export, votes export, card, scores,
workspace backup) asks here first. The source dataset (and PIQA's labels file
beside it), the workspace and its ``-wal`` / ``-shm`` / ``-journal`` files are
refused outright: writing there would destroy the work. Any other existing file
is replaced only with ``--force`` (CLI) or a yes (TUI). Saving the edits over
the dataset is not an export and does not come here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from piqa_tui.core.errors import ExistingOutput, OutputRefused

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


def same_file(a: Path, b: Path) -> bool:
    """The same file: by inode when both exist (hard links, symlinks, other spellings), else by resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.abspath(a)).resolve() == Path(os.path.abspath(b)).resolve()


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
