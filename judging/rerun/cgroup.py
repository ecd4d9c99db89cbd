"""Memory and processes bounded over a sandbox's whole process tree: a control group made for
one sandboxed process, a child of judging's own cgroup, removed when it ends.

RLIMIT_AS bounds one process's address space; what a process tree keeps in the kernel (tmpfs
files, memfd, System V shared memory, inodes and dentries) is bounded by none of the rlimits. A
memory cgroup charges all of them (measured here, cgroup v1 on 6.18: 30 memfd of 60 MiB, 20
shm segments of 100 MiB and 300,000 empty files were each stopped at a 256 MiB limit by the
cgroup's OOM kill), and a pids cgroup counts the tree's processes and threads whatever their
uid.

- cgroup v1 (memory and pids hierarchies mounted read-write, as root): a child of the process's
  own memory cgroup and of its own pids cgroup, `memory.limit_in_bytes` (and
  `memory.memsw.limit_in_bytes` where swap is accounted) and `pids.max`;
- cgroup v2 (a unified hierarchy whose own cgroup delegates memory and pids to its children):
  `memory.max`, `memory.swap.max`, `pids.max`.

Limits are made only under the process's own cgroup (never elsewhere in the hierarchy). Where
none can be made (not root and nothing delegated, no memory controller), `TreeLimits.make`
says why and the sandbox bounds memory per process only.

Hand-written: no maintained Python library creates v1 and v2 cgroups without a daemon (systemd)
or root-only tools (libcgroup's cgexec); these are a few file writes.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from judging.models import RerunLimits

MIB = 1024 * 1024
#: Processes of ours in the tree besides the script's (bubblewrap, its pid 1, the boot and inner
#: shells, `times` and `head` after the command): the pids limit is the organizer's plus these.
OWN_PROCESSES = 8
#: How long a finished sandbox's processes get to leave the cgroup before it is removed (the
#: kernel tears down a pid namespace asynchronously), in steps.
REMOVE_STEPS = 50
REMOVE_STEP_S = 0.1
_counter = itertools.count()


def _mounts() -> dict[str, tuple[Path, str]]:
    """Controller ("memory", "pids", "" for v2) -> (mount point, the mount's root in the
    hierarchy), from /proc/self/mountinfo."""
    found: dict[str, tuple[Path, str]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, extra = before.split(), after.split()
        if len(fields) < 5 or len(extra) < 3:
            continue
        kind, options = extra[0], set(extra[2].split(","))
        if "rw" not in fields[5].split(","):  # the mount's own options: read-only is no use
            continue
        if kind == "cgroup2":
            found.setdefault("", (Path(fields[4]), fields[3]))
        elif kind == "cgroup":
            for controller in ("memory", "pids"):
                if controller in options:
                    found.setdefault(controller, (Path(fields[4]), fields[3]))
    return found


def _own_paths() -> dict[str, str]:
    """Controller ("memory", "pids", "" for v2) -> this process's cgroup path in it."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _own_folder(controller: str) -> Path | None:
    mount = _mounts().get(controller)
    path = _own_paths().get(controller)
    if mount is None or path is None:
        return None
    point, root = mount
    relative = os.path.relpath(path, root)
    if relative.startswith(".."):  # our cgroup is outside what this namespace sees
        return None
    folder = point / relative if relative != "." else point
    return folder if folder.is_dir() else None


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _counter_in(path: Path, name: str) -> int:
    """A "name value" counter of a cgroup file (memory.oom_control, memory.events)."""
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0


@dataclass
class TreeLimits:
    """The cgroup(s) of one sandboxed process tree."""

    folders: list[Path]
    """The cgroups made (v1: memory and pids; v2: one), removed by `remove`."""
    version: int
    memory_bytes: int

    @classmethod
    def make(cls, limits: RerunLimits) -> TreeLimits | str:
        """The cgroup(s) for a tree under `limits`, or why none can be made here."""
        name = f"judging-{os.getpid()}-{next(_counter)}"
        memory, pids = _own_folder("memory"), _own_folder("pids")
        v2 = _own_folder("")
        for folder in (memory, pids, v2):
            if folder is not None:
                sweep_stale(folder)
        if memory is not None and pids is not None:
            return cls._make_v1(memory / name, pids / name, limits)
        if v2 is not None and {"memory", "pids"} <= set(_read(v2 / "cgroup.subtree_control")):
            return cls._make_v2(v2 / name, limits)
        if v2 is not None and memory is None:
            return ("no cgroup can be made: the unified cgroup hierarchy does not delegate "
                    "memory and pids to judging's cgroup (run as root, or in a systemd scope "
                    "with Delegate=yes)")
        return "no cgroup can be made: no writable memory and pids cgroup hierarchy here"

    @classmethod
    def _make_v1(cls, memory: Path, pids: Path, limits: RerunLimits) -> TreeLimits | str:
        size = limits.memory_mb * MIB
        made: list[Path] = []
        try:
            for folder in (memory, pids):
                folder.mkdir()
                made.append(folder)
            _write(memory / "memory.limit_in_bytes", str(size))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # swap counts too
                _write(memory / "memory.memsw.limit_in_bytes", str(size))
            _write(pids / "pids.max", str(limits.processes + OWN_PROCESSES))
        except OSError as exc:
            cls(made, 1, size).remove()
            return (f"no cgroup can be made ({exc.strerror or exc} at {exc.filename}): not "
                    f"root, or the cgroup v1 hierarchy is read-only")
        return cls(made, 1, size)

    @classmethod
    def _make_v2(cls, folder: Path, limits: RerunLimits) -> TreeLimits | str:
        size = limits.memory_mb * MIB
        try:
            folder.mkdir()
        except OSError as exc:
            return f"no cgroup can be made ({exc.strerror or exc} at {exc.filename})"
        made = cls([folder], 2, size)
        try:
            _write(folder / "memory.max", str(size))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(limits.processes + OWN_PROCESSES))
        except OSError as exc:
            made.remove()
            return f"no cgroup can be made ({exc.strerror or exc} at {exc.filename})"
        return made

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to enter every cgroup of the tree."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv`, started inside the cgroups: a shell enters them, then execs the command, so
        that nothing of it runs outside (a failed write stops it with exit code 125)."""
        script = ('for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; '
                  'shift; done; shift; exec "$@"')
        return ["/bin/sh", "-c", script, "judging-cgroup", *self.procs_files, "--", *argv]

    @property
    def memory_folder(self) -> Path:
        return self.folders[0]

    def oom_kills(self) -> int:
        """Processes the kernel killed at the memory limit."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        return _counter_in(self.memory_folder / name, "oom_kill")

    def peak_bytes(self) -> int | None:
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        try:
            return int((self.memory_folder / name).read_text().strip())
        except (OSError, ValueError):
            return None

    def describe(self) -> str:
        return f"cgroup v{self.version}"

    def remove(self) -> None:
        """Kill whatever is left in the cgroups and remove them (their charges go to the
        parent)."""
        for folder in self.folders:
            for _ in range(REMOVE_STEPS):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy: processes still leaving
                    for pid in _read(folder / "cgroup.procs"):
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except (ProcessLookupError, ValueError):
                            pass
                    time.sleep(REMOVE_STEP_S)


_STALE_NAME = re.compile(r"judging-(\d+)-\d+")


def sweep_stale(parent: Path) -> list[Path]:
    """Remove the empty cgroups of judging processes that are gone (a `judging rerun` ended by
    SIGTERM or SIGKILL never reached `remove`); a cgroup still holding processes, or one of a
    live judging process, is left alone. Returns those removed."""
    removed = []
    try:
        children = [child for child in parent.iterdir() if child.is_dir()]
    except OSError:
        return removed
    for child in children:
        match = _STALE_NAME.fullmatch(child.name)
        if match is None or _alive(int(match[1])):
            continue
        try:
            child.rmdir()  # fails (EBUSY) while a process is in it: then it is left
        except OSError:
            continue
        removed.append(child)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _read(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def probe(limits: RerunLimits) -> str | None:
    """None when a cgroup can be made here (made and removed at once), else why not."""
    made = TreeLimits.make(limits)
    if isinstance(made, str):
        return made
    made.remove()
    return None
