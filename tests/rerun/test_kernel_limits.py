"""Limits that hold over a whole process tree and over what it keeps in the kernel (issue 38, row
12): memfd, detached System V shared memory and a flood of empty files, under `--memory 256
--disk 64`, are stopped by the run's cgroup or refused by the tmpfs's file bound; the cgroup's
peak stays within the limit, nothing is left in the host's IPC namespace, and every record says
how memory was bounded. Real bubblewrap and uv, as root (the cgroup is made under judging's own;
skipped with the reason where none can be made)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from judging.models import RerunStatus
from judging.rerun.cgroup import probe
from judging.rerun.sandbox import DEFAULT_LIMITS
from judging.rundir import read_reruns
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim

LIMIT_MB = 256
PRINT_NUMBER = 'print(json.dumps({"top1": 93.8}))\n'

HOSTILE = {
    # 30 x 60 MiB of anonymous files: write() needs no address space (RLIMIT_AS never sees it)
    "memfd": """
import json, os
keep = []
for i in range(30):
    fd = os.memfd_create(f"m{i}")
    with open(fd, "wb", closefd=False) as handle:
        for _ in range(60):
            handle.write(b"x" * (1 << 20))
    keep.append(fd)
""" + PRINT_NUMBER,
    # 20 x 100 MiB of System V shared memory, each detached at once (no address space kept)
    "shm": """
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
for i in range(20):
    sid = libc.shmget(0, 100 << 20, 0o1000 | 0o600)
    assert sid >= 0, ctypes.get_errno()
    address = libc.shmat(sid, None, 0)
    ctypes.memset(address, 1, 100 << 20)
    libc.shmdt(address)
""" + PRINT_NUMBER,
    # 300,000 empty files in /tmp: kernel memory (inodes, dentries), no bytes
    "files": """
import json, os
os.makedirs("/tmp/flood")
for i in range(300000):
    open(f"/tmp/flood/{i}", "w").close()
""" + PRINT_NUMBER,
    # the same in /dev/shm, which no --size bounded before
    "dev_shm": """
import json
for i in range(12):
    with open(f"/dev/shm/blob{i}", "wb") as handle:
        for _ in range(60):
            handle.write(b"x" * (1 << 20))
""" + PRINT_NUMBER,
    # 16 processes of 100 MiB each, every one within its own address-space limit; the parent
    # does not look at how they ended
    "forks": """
import json, os, time
children = []
for i in range(16):
    pid = os.fork()
    if pid == 0:
        block = bytearray(100 << 20)
        for j in range(0, len(block), 4096):
            block[j] = 1
        time.sleep(3)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
""" + PRINT_NUMBER,
    "honest": "import json, iniconfig\n" + PRINT_NUMBER,
}


def _host_shm_segments() -> int:
    out = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith("0x"))


@pytest.fixture(scope="module")
def kernel_run(tmp_path_factory: pytest.TempPathFactory, env_cache: Path):
    need_sandbox()
    missing = probe(DEFAULT_LIMITS)
    if missing is not None:
        pytest.skip(f"this machine cannot make a cgroup for judging: {missing}")
    from tests.conftest import SubmissionBuilder
    root = tmp_path_factory.mktemp("kernel")
    builder = SubmissionBuilder(root / "subs" / "hostile", "attacker/sub", "paper-1")
    builder.file("requirements.txt", "iniconfig==2.0.0\n")
    for name, body in HOSTILE.items():
        script_claim(builder, f"paper-1/{name}", f"k_{name}.py", body)
    builder.write()
    run = judged_run(root / "subs", root / "run")
    segments = _host_shm_segments()
    output = judging("rerun", str(run), "--env-cache", str(env_cache), "--timeout", "60",
                     "--memory", str(LIMIT_MB), "--disk", "64")
    return run, output, segments


def _record(run: Path, name: str):
    return read_reruns(run)[f"attacker/sub::paper-1/{name}"]


def test_memfd_shm_and_dev_shm_are_killed_at_the_tree_memory_limit(kernel_run) -> None:
    run, output, _ = kernel_run
    for name in ("memfd", "shm", "dev_shm"):
        record = _record(run, name)
        assert record.status is RerunStatus.failed, (name, record.reason)
        assert record.memory_limit == "process tree"
        if name == "dev_shm":  # bounded in bytes first: /dev/shm is a tmpfs of --disk
            assert "disk limit" in record.reason or "memory limit reached (cgroup)" in \
                record.reason, record.reason
        else:
            assert "memory limit reached (cgroup)" in record.reason, record.reason
        # the host gave the tree no more than the limit (the cgroup's own peak)
        assert record.memory_peak_mb is not None and record.memory_peak_mb <= LIMIT_MB, \
            record.memory_peak_mb
    assert "memory limit reached (cgroup)" in output


def test_a_flood_of_empty_files_is_refused_by_the_tmpfs_file_bound(kernel_run) -> None:
    run, _, _ = kernel_run
    record = _record(run, "files")
    assert record.status is RerunStatus.failed, record.reason
    assert "No space left on device" in (record.stderr_tail or "") or \
        "memory limit reached (cgroup)" in record.reason, record.reason
    assert record.memory_peak_mb is not None and record.memory_peak_mb <= LIMIT_MB


def test_shared_memory_dies_with_the_sandbox_and_the_honest_claim_runs(kernel_run) -> None:
    run, output, segments = kernel_run
    assert _host_shm_segments() <= segments  # its own IPC namespace: nothing left on the host
    honest = _record(run, "honest")
    assert honest.status is RerunStatus.reproduced, honest.reason
    assert honest.memory_limit == "process tree" and honest.memory_peak_mb
    assert "memory per process tree" in (honest.sandbox or "")
    assert "limits: memory and processes bounded over each run's whole process tree" in output
    # no cgroup of ours is left behind (the rerun ran in this process; other judging processes
    # on the machine have theirs)
    for controller in ("memory", "pids"):
        assert not list(Path("/sys/fs/cgroup", controller).rglob(f"judging-{os.getpid()}-*"))


def test_memory_summed_over_processes_and_a_kill_is_said_even_when_it_exits_0(kernel_run) -> None:
    run, _, _ = kernel_run
    record = _record(run, "forks")
    assert record.memory_peak_mb is not None and record.memory_peak_mb <= LIMIT_MB
    assert "killed at the memory limit (cgroup, 256 MiB)" in record.reason, record.reason


def test_cgroups_left_by_a_killed_rerun_are_swept_by_the_next() -> None:
    """A `judging rerun` ended by SIGTERM never removes its cgroups: the next one does, and
    leaves a live process's alone."""
    from judging.rerun.cgroup import TreeLimits, _own_folder
    missing = probe(DEFAULT_LIMITS)
    if missing is not None:
        pytest.skip(f"this machine cannot make a cgroup for judging: {missing}")
    gone = subprocess.Popen(["/bin/true"])
    gone.wait()
    memory = _own_folder("memory")
    assert memory is not None
    stale = memory / f"judging-{gone.pid}-0"
    live = memory / f"judging-{os.getpid()}-999999"
    stale.mkdir()
    live.mkdir()
    try:
        made = TreeLimits.make(DEFAULT_LIMITS)
        assert not isinstance(made, str), made
        made.remove()
        assert not stale.exists()
        assert live.exists()
    finally:
        for folder in (stale, live):
            if folder.exists():
                folder.rmdir()
