"""The cores the program's thread counts start from: the CPU affinity, capped by a CPU quota (core/cores.py).

The parsers read other machines' /proc and cgroup texts given as strings; one test makes a real cgroup with a
one-core quota (as ``docker run --cpus 1`` does) and runs a fresh interpreter in it, where every thread count of
the program (lexical dedup, llama.cpp scoring and its adaptive thread rule, torch under sentence-transformers)
must come out as one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from piqa_tui.core.cores import cores_for, cpu_cgroup_dirs, quota_cores, quota_v1, quota_v2
from tests.cgroup_quota import quota_cgroup


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max 100000\n", None),
        ("200000 100000\n", 2.0),
        ("150000 100000", 1.5),
        ("50000 100000", 0.5),
        ("100000", 1.0),  # the period left out: the kernel's default
        ("", None),
        ("garbage here", None),
        ("0 100000", None),
    ],
)
def test_cgroup_v2_cpu_max(text: str, expected: float | None) -> None:
    assert quota_v2(text) == expected


@pytest.mark.parametrize(
    ("quota", "period", "expected"),
    [("-1\n", "100000\n", None), ("200000\n", "100000\n", 2.0), ("25000", "50000", 0.5), ("x", "100000", None)],
)
def test_cgroup_v1_cfs_quota(quota: str, period: str, expected: float | None) -> None:
    assert quota_v1(quota, period) == expected


@pytest.mark.parametrize(
    ("affinity", "quota", "expected"),
    [
        (2, None, 2),  # no quota: the affinity
        (64, 2.0, 2),  # docker --cpus 2 on a 64-core server
        (64, 1.5, 1),  # a part core is not a core: rounded down
        (2, 0.5, 1),  # at least one
        (2, 4.0, 2),  # a quota above the CPUs one may run on does not add any
        (8, 3.0000000001, 3),
        (8, 2.9999999999, 3),  # the division's float error does not lose a core
    ],
)
def test_cores_for(affinity: int, quota: float | None, expected: int) -> None:
    assert cores_for(affinity, quota) == expected


HYBRID_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""


def test_cgroup_folders_v1_and_v2_side_by_side() -> None:
    """This development machine's layout: v1 controllers with an empty v2 hierarchy beside them."""
    cgroup = "4:memory:/process_api/7500\n2:cpuacct:/\n1:cpu:/jobs/build\n0::/\n"
    assert cpu_cgroup_dirs(cgroup, HYBRID_MOUNTS) == [
        ("/sys/fs/cgroup/cpu/jobs/build", 1),
        ("/sys/fs/cgroup/cpu/jobs", 1),
        ("/sys/fs/cgroup/cpu", 1),
        ("/sys/fs/cgroup/unified", 2),
    ]


def test_cgroup_folders_v2_systemd_session() -> None:
    """A desktop's unified hierarchy: a limit on the user's slice holds for the session under it."""
    mounts = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    cgroup = "0::/user.slice/user-1000.slice/session-3.scope\n"
    folders = cpu_cgroup_dirs(cgroup, mounts)
    assert folders == [
        ("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope", 2),
        ("/sys/fs/cgroup/user.slice/user-1000.slice", 2),
        ("/sys/fs/cgroup/user.slice", 2),
        ("/sys/fs/cgroup", 2),
    ]
    files = {"/sys/fs/cgroup/user.slice/user-1000.slice/cpu.max": "300000 100000\n", "/sys/fs/cgroup/cpu.max": "max"}
    assert quota_cores(folders, files.get) == 3.0


def test_cgroup_folders_docker_v1_without_namespace() -> None:
    """Docker on cgroup v1 without a cgroup namespace: /proc/self/cgroup names the container's path, which is
    also the mount's root, so the limits are at the mount point itself."""
    mounts = "700 690 0:31 /docker/ab12 /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
    cgroup = "3:cpu,cpuacct:/docker/ab12\n1:name=systemd:/docker/ab12\n"
    folders = cpu_cgroup_dirs(cgroup, mounts)
    assert folders == [("/sys/fs/cgroup/cpu,cpuacct", 1)]
    files = {
        "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "150000\n",
        "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
    }
    assert quota_cores(folders, files.get) == 1.5


def test_no_cgroup_no_quota() -> None:
    """Where /proc says nothing of cgroups (an odd kernel, a sandbox), nothing caps the affinity."""
    assert cpu_cgroup_dirs("", "") == []
    assert quota_cores([], {}.get) is None
    assert quota_cores([("/sys/fs/cgroup", 2)], {"/sys/fs/cgroup/cpu.max": "max 100000"}.get) is None


THREAD_COUNTS = """
import json, os
from piqa_tui.core import cores
from piqa_tui.core.dedup.lexical import workers
from piqa_tui.core.scoring.llama import LlamaBackend
from piqa_tui.core.scoring.machine import FreeCores
from piqa_tui.core.dedup.semantic import SentenceTransformerEmbedder
import torch
SentenceTransformerEmbedder.packaged()._load()  # what loading the semantic model does to torch's threads
print(json.dumps({
    "affinity": cores.affinity_cores(), "quota": cores.cpu_quota(), "usable": cores.usable_cores(),
    "lexical": workers(), "llama": LlamaBackend("model.gguf").n_threads, "adaptive_cap": FreeCores().cap,
    "torch": torch.get_num_threads(),
}))
"""


def _thread_counts(preexec_fn=None) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", THREAD_COUNTS], capture_output=True, text=True, check=True, preexec_fn=preexec_fn
    )
    return json.loads(done.stdout)


def test_every_thread_count_follows_a_real_quota() -> None:
    """A fresh interpreter in a cgroup with one core's quota on a machine whose affinity gives more: every
    thread count of the program is one (the affinity alone would give all the CPUs)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs a machine with at least two CPUs to run on")
    free = _thread_counts()
    assert free["usable"] == free["lexical"] == free["llama"] == free["adaptive_cap"] == free["affinity"]
    assert free["torch"] >= 1  # torch's own count (its physical cores): left as it is without a quota
    with quota_cgroup(1.0) as enter:
        if enter is None:
            pytest.skip("no cgroup with a CPU quota can be made here (needs root and a writable cpu controller)")
        held = _thread_counts(enter)
    assert held["affinity"] == free["affinity"] >= 2
    assert held["quota"] == 1.0
    assert held["usable"] == held["lexical"] == held["llama"] == held["adaptive_cap"] == held["torch"] == 1
