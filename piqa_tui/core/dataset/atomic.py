"""Replacing a file atomically: a temp file beside the target, fsynced, renamed over it.

A kill or a full disk part-way leaves the old file whole and no temp file
behind; the folder is fsynced after the rename so the new name survives a
power cut. Every file the program writes (datasets, labels, votes, cards,
score tables) goes through here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from piqa_tui.core.errors import ExportError, os_error_reason


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
def replacing(out: Path) -> Iterator[Path]:
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
    fsync_dir(out.parent)


def atomic_write(out: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to a temp file beside ``out``, fsync it, and rename it over ``out``."""
    out = Path(out)
    check_target(out)
    with replacing(out) as tmp:
        # A name that is not valid UTF-8 (a card names its file) is written \udcff, never a crash halfway.
        with open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, out.stat().st_mode & 0o7777 if out.exists() else default_file_mode())


def default_file_mode() -> int:
    """The mode a new file gets under the process umask (os.umask can only be read by setting it)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
