"""A fresh cgroup with a CPU quota, to run a command as a container's ``--cpus`` would (tests and benchmarks).

Root on Linux with a writable CPU controller (cgroup v1 ``cpu``, or v2 with ``cpu`` enabled for the
children of this process's cgroup) can make one; elsewhere :func:`quota_cgroup` yields None.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from piqa_tui.core.cores import cpu_cgroup_dirs

PERIOD_US = 100_000


def _limit(folder: Path, version: int, cores: float) -> bool:
    """Set a quota of ``cores`` cores on ``folder``; False when the controller's files are not there."""
    quota = str(max(1000, round(cores * PERIOD_US)))
    try:
        if version == 2:
            (folder / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (folder / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (folder / "cpu.cfs_quota_us").write_text(quota)
    except OSError:
        return False
    return True


@contextmanager
def quota_cgroup(cores: float) -> Iterator[Callable[[], None] | None]:
    """A new cgroup allowing ``cores`` cores' worth of CPU time, removed afterwards; yields a ``preexec_fn`` that
    moves the process started with it into the cgroup (None: no cgroup can be made here)."""
    try:
        dirs = cpu_cgroup_dirs(Path("/proc/self/cgroup").read_text(), Path("/proc/self/mountinfo").read_text())
    except OSError:
        dirs = []
    innermost = {version: Path(folder) for folder, version in reversed(dirs)}
    for version, parent in sorted(innermost.items()):
        folder = parent / f"piqa-quota-{uuid.uuid4().hex[:8]}"
        try:
            folder.mkdir()
        except OSError:
            continue
        try:
            if not _limit(folder, version, cores):
                continue
            procs = folder / "cgroup.procs"

            def enter(procs: Path = procs) -> None:
                procs.write_text(str(os.getpid()))

            yield enter
            return
        finally:
            folder.rmdir()  # its processes have ended: a cgroup with none is removed by rmdir
    yield None
