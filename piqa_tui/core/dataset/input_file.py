"""Reading a file a user handed us: only a regular file, only so much of it, every failure one line.

A FIFO, ``/dev/zero``, a socket or a folder given as a dataset, a label file,
a votes file or the config would hang the program or fill its memory; a
symlink loop or a file without read permission would end in a traceback.
The kernel's files under ``/proc`` and ``/sys`` call themselves regular files
of size 0, yet a read of one may block for ever (``/proc/kmsg``): they are
refused too, and a read opens without blocking (``O_NONBLOCK``) in case one
slips through another mount. ``read_input`` checks what the path is before
opening it and turns every ``OSError`` into an ``InputError`` that names the
file and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from piqa_tui.core.errors import InputError, os_error_reason

MAX_INPUT_BYTES = 2 * 1024**3  # 2 GiB: far beyond any dataset, short of filling memory
MAX_FIELD_CHARS = 16 * 1024**2  # one value longer than this is not text a curator can read
MAX_JSON_DEPTH = 64  # nested JSON deeper than this is not a dataset row
KERNEL_FILE_SYSTEMS = ("/proc", "/sys")  # files the kernel makes up on each read, not data saved on disk


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular_file(path: Path, what: str = "file") -> int:
    """The size of ``path`` if it is a regular file we may read; InputError (one line) otherwise."""
    return regular_file_status(path, what).st_size


def regular_file_status(path: Path, what: str = "file") -> os.stat_result:
    """``os.stat`` of ``path`` if it is a regular file we may read; InputError (one line) otherwise."""
    try:
        info = os.stat(path)  # follows symlinks: a link to /dev/zero is a device
    except OSError as exc:
        hint = "check the path" if exc.errno in (errno.ENOENT, errno.ENOTDIR) else "fix the path or the link"
        raise InputError(f"{path}: cannot read the {what}: {os_error_reason(exc)}; {hint}") from None
    except ValueError:  # a NUL byte in the name
        raise InputError(f"{path!r}: not a usable file name") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path}: is a folder, not a {what}; give the {what} itself")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: {_kind(info.st_mode)}, not a regular file; give a {what} saved on disk")
    if _kernel_file(path, info):
        raise InputError(f"{path}: a file the kernel makes up (/proc, /sys), not a {what}; give a {what} saved on disk")
    if info.st_size > MAX_INPUT_BYTES:
        raise InputError(
            f"{path}: {info.st_size:,} bytes is more than the {MAX_INPUT_BYTES:,} a {what} may have; split it"
        )
    return info


def _kernel_file(path: Path, info: os.stat_result) -> bool:
    """Whether ``path`` lies on /proc or /sys: by its real path, or by its device (another mount of them)."""
    real = os.path.realpath(path)
    for root in KERNEL_FILE_SYSTEMS:
        if real == root or real.startswith(root + "/"):
            return True
        try:  # only a mounted /proc: an unmounted one is a plain folder on the disk the data is on
            if os.path.ismount(root) and os.stat(root).st_dev == info.st_dev:
                return True
        except OSError:
            continue
    return False


def read_input(path: Path, what: str = "file") -> bytes:
    """The bytes of a regular file, or InputError naming ``path`` and what to do."""
    return read_checked(path, check_regular_file(path, what), what)


def read_checked(path: Path, size: int, what: str = "file", limit: int | None = None) -> bytes:
    """The bytes of ``path``, already found a regular file of ``size`` bytes by ``check_regular_file``
    (only its first ``limit`` bytes when given)."""
    try:  # O_NONBLOCK: a file that was swapped for a FIFO after the check fails instead of waiting
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC), "rb") as fh:
            data = fh.read(MAX_INPUT_BYTES + 1 if limit is None else limit)
        if data is None:  # nothing to read yet from something that only waits: not a file on disk
            raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {os_error_reason(exc)}; check its permissions") from None
    if len(data) > max(size, MAX_INPUT_BYTES):  # it grew while we read it
        raise InputError(f"{path}: the {what} is larger than {MAX_INPUT_BYTES:,} bytes; split it")
    return data


def lines_ended(text: str) -> str:
    """``text`` with every line ending made LF: CRLF, and CR alone (old Mac files), end a line as LF does.

    For the files whose values never hold a raw line break (TSV exchange files escape it, JSON escapes it),
    so that a file saved with CR line ends reads as its lines, never as one line (and no rows). The dataset
    reader refuses such a file instead: it writes the file back, and would not keep its line ends.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def json_depth(value: object) -> int:
    """How deeply ``value`` nests lists and objects (0 for a scalar), without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            break
    return deepest
