"""How many cores this process may use: the CPUs it may run on, capped by a CPU quota where one is set.

A container or a systemd slice often gives a process a share of a bigger
machine: ``docker run --cpus 2`` on a 64-core server leaves the affinity at 64
CPUs and sets a quota of two CPUs' time per period (cgroup v2 ``cpu.max``, v1
``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``). Sizing thread pools from the
affinity alone there starts 64 threads on two cores' time: llama.cpp's threads
wait for each other at every operation, so each throttled thread stalls the
rest. The quota counts in whole cores, rounded down (at least one), as Go's
automaxprocs does: a thread without a whole core's time is the one that stalls.

The parsers take the texts the kernel writes as arguments, so they are tested
on other machines' files without those machines; :func:`usable_cores` reads
this machine's.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import PurePosixPath

CGROUP_ROOT = "/sys/fs/cgroup"


def affinity_cores() -> int:
    """The CPUs this process may run on (its affinity; the machine's count where there is no such call)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def quota_v2(cpu_max: str) -> float | None:
    """Cores' worth of CPU time a cgroup v2 ``cpu.max`` allows (``"200000 100000"`` → 2.0); None: no limit."""
    fields = cpu_max.split()
    if not fields or fields[0] == "max":
        return None
    try:
        quota = int(fields[0])
        period = int(fields[1]) if len(fields) > 1 else 100_000
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def quota_v1(quota_us: str, period_us: str) -> float | None:
    """The same from cgroup v1's ``cpu.cfs_quota_us`` and ``cpu.cfs_period_us`` (a quota of -1: no limit)."""
    try:
        quota, period = int(quota_us.strip()), int(period_us.strip())
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def cpu_cgroup_dirs(proc_cgroup: str, mountinfo: str) -> list[tuple[str, int]]:
    """The folders that hold this process's CPU limits, innermost first, each with its cgroup version.

    ``proc_cgroup`` is ``/proc/self/cgroup`` (``ID:CONTROLLERS:PATH`` lines), ``mountinfo`` is
    ``/proc/self/mountinfo``. A limit set on a parent cgroup holds for its children too, so every folder from
    the process's cgroup up to the mount point is listed. A cgroup namespace's root (a container's) is the
    mount's root: the path is taken relative to it.
    """
    paths: dict[int, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        ident, controllers, path = parts
        if ident == "0" and controllers == "":
            paths.setdefault(2, path)
        elif "cpu" in controllers.split(","):
            paths[1] = path
    found: list[tuple[str, int]] = []
    for line in mountinfo.splitlines():
        before, sep, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        fstype, options = tail[0], tail[2].split(",")
        version = 2 if fstype == "cgroup2" else 1 if fstype == "cgroup" and "cpu" in options else 0
        if version == 0 or version not in paths:
            continue
        root, mount = PurePosixPath(fields[3]), PurePosixPath(fields[4])
        cgroup = PurePosixPath(paths.pop(version))
        relative = cgroup.relative_to(root) if cgroup.is_relative_to(root) else PurePosixPath()
        here = mount / relative
        while True:
            found.append((str(here), version))
            if here == mount:
                break
            here = here.parent
    return found


def quota_cores(dirs: list[tuple[str, int]], read: Callable[[str], str | None]) -> float | None:
    """The tightest CPU quota among ``dirs`` (``cpu_cgroup_dirs``), read with ``read(path)`` (None: no such
    file); None when none sets one."""
    limits = []
    for folder, version in dirs:
        if version == 2:
            text = read(f"{folder}/cpu.max")
            limit = quota_v2(text) if text is not None else None
        else:
            quota, period = read(f"{folder}/cpu.cfs_quota_us"), read(f"{folder}/cpu.cfs_period_us")
            limit = quota_v1(quota, period) if quota is not None and period is not None else None
        if limit is not None:
            limits.append(limit)
    return min(limits) if limits else None


def cores_for(affinity: int, quota: float | None) -> int:
    """Whole cores a process may keep busy: its affinity, capped by the quota rounded down, at least one."""
    if quota is None:
        return max(1, affinity)
    return max(1, min(affinity, math.floor(quota + 1e-9)))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def cpu_quota() -> float | None:
    """This process's CPU quota in cores' worth of time (None: none set, or not Linux)."""
    proc_cgroup, mountinfo = _read("/proc/self/cgroup"), _read("/proc/self/mountinfo")
    if proc_cgroup is None or mountinfo is None:
        return None
    return quota_cores(cpu_cgroup_dirs(proc_cgroup, mountinfo), _read)


def usable_cores() -> int:
    """The cores this process may keep busy: what every thread count of the program starts from."""
    return cores_for(affinity_cores(), cpu_quota())
