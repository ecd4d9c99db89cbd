"""The one Ray lifecycle: start a Ray on this machine or connect to a cluster, ship each job's
folder to its node as a tar archive (put in the object store once per folder), run the jobs as
tasks, collect each value and the folder it sends back as they finish, and shut down a Ray
started here. `judging run --engine ray` (shards) and `judging rerun --engine ray` (claims'
scripts) both run on it.

No scheduler of our own: Ray places, runs and retries the tasks (`MAX_RETRIES`, for a task whose
worker or node died). Every node needs this package installed (the same image or venv): Ray runs
a job by importing its function's module.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.errors import JudgingError

#: Ray retries a task whose worker or node died this many times (the callers' tasks resume).
MAX_RETRIES = 2


class EngineError(JudgingError):
    """The engine is not installed or the cluster cannot be reached."""


@dataclass
class RemoteJob:
    """One task: `fn(scratch, *args, **kwargs)` on a node, in a temporary folder of its own."""

    fn: Callable[..., Any]
    """A module-level function (Ray imports it by name on the node)."""
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    ship: Path | None = None
    """A folder of this machine sent to the node, unpacked at scratch/<ship_as>."""
    ship_as: str = "in"
    send_back: str | None = None
    """A folder of scratch sent back when the task ends (when it holds anything)."""
    back_bytes: int | None = None
    """The most the folder sent back may hold (bytes of its files; None: no bound)."""
    cpus: float = 1
    prefix: str = "judging-task-"
    """The name of the task's temporary folder begins with this (a run records its paths)."""
    tag: Any = None
    """The caller's own: what the job is for."""


@dataclass
class RemoteResult:
    job: RemoteJob
    value: Any = None
    failure: BaseException | None = None
    """What failed the task after Ray's retries (the value is then None)."""
    archive: bytes = b""

    def unpack_into(self, target: Path) -> bool:
        """Unpack the folder the task sent back at `target` (files, folders and hard links
        between its files, at most the job's `back_bytes`); whether there was one. Raises
        EngineError for an archive that holds anything else."""
        if not self.archive:
            return False
        unpack_tree(self.archive, target, symlinks=False, max_bytes=self.job.back_bytes)
        return True


#: Members of an archive unpacked at most: more than a sandbox's scratch folder holds (262,144
#: files at the default --disk), fewer than a flood of empty files that keeps a host busy.
MAX_MEMBERS = 1_000_000


def pack_tree(root: Path) -> bytes:
    """A folder as a gzipped tar archive (held in memory: Ray's object store carries bytes).
    Links are stored as links, never followed."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(root, arcname=".")
    return buffer.getvalue()


def unpack_tree(data: bytes, target: Path, *, symlinks: bool = True,
                max_bytes: int | None = None) -> None:
    """Unpack an archive at `target`: only folders, regular files, hard links between its files
    and (with `symlinks`) symbolic links, kept as they are and never followed: nothing is
    written outside `target`. Raises EngineError, naming the member, for anything else."""
    target.mkdir(parents=True, exist_ok=True)
    members = _Members(symlinks=symlinks, max_bytes=max_bytes)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            archive.extractall(target, filter=members)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise EngineError(f"an archive was refused: {exc}") from exc


class _Members:
    """The extraction filter of our archives. Hand-written because tarfile's "data" filter
    checks names with `os.path.realpath`, which gives up on a path longer than PATH_MAX: on the
    Python this package runs (3.11.7; fixed in 3.11.13, CVE-2025-4517) a chain of links makes
    it pass a link that leaves the target and then write through it. Here every check is on
    the names alone: a name is relative with no `..`, no member is written at or under the name
    of a link the archive made, a hard link names a file the archive already wrote, and
    nothing else (devices, FIFOs, sparse or unknown kinds) is unpacked."""

    def __init__(self, *, symlinks: bool, max_bytes: int | None):
        self.symlinks = symlinks
        self.max_bytes = max_bytes
        self.seen: set[str] = set()
        self.link_names: set[str] = set()
        self.files: set[str] = set()
        self.total = 0

    def __call__(self, member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
        name = self._name(member, member.name, new=True)
        if len(self.seen) >= MAX_MEMBERS:
            raise tarfile.FilterError(f"more than {MAX_MEMBERS:,} members")
        self.seen.add(name)
        owner = {"uid": None, "gid": None, "uname": None, "gname": None}
        if member.isdir():
            return member.replace(name=name, mode=0o755, **owner, deep=False)
        if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
            self.total += member.size
            if self.max_bytes is not None and self.total > self.max_bytes:
                raise tarfile.FilterError(f"its files add up to more than {self.max_bytes:,} "
                                          f"bytes")
            self.files.add(name)
            mode = 0o755 if (member.mode or 0) & 0o100 else 0o644
            return member.replace(name=name, mode=mode, **owner, deep=False)
        if self.symlinks and member.issym():
            self.link_names.add(name)
            return member.replace(name=name, mode=None, **owner, deep=False)
        if member.islnk():
            linked = self._name(member, member.linkname, new=False)
            if linked not in self.files:
                raise tarfile.FilterError(f"{member.name!r} links to no file of the archive")
            return member.replace(name=name, linkname=linked, mode=None, **owner, deep=False)
        raise tarfile.FilterError(f"{member.name!r} is not a file or a folder")

    def _name(self, member: tarfile.TarInfo, text: str, *, new: bool) -> str:
        """`text` (a member's name, `new`, or its hard link's) as a relative name: refused when
        absolute, holding `..`, at or under a link of the archive, or (`new`) written before."""
        if text.startswith("/") or ".." in text.split("/") or "\0" in text:
            raise tarfile.FilterError(f"{member.name!r} leaves the folder")
        name = posixpath.normpath(text)
        if new and name in self.seen:
            raise tarfile.FilterError(f"{member.name!r} is in the archive twice")
        parts = name.split("/")
        if any("/".join(parts[:i]) in self.link_names for i in range(1, len(parts) + 1)):
            raise tarfile.FilterError(f"{member.name!r} is written through a link")
        return name


def on_node(fn: Callable[..., Any], shipped: bytes | None, ship_as: str, send_back: str | None,
            prefix: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, bytes]:
    """The task Ray runs: the job's function in a temporary folder holding what was shipped;
    its value and the folder it sends back (a tar archive, b"" when empty)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        scratch = Path(tmp)
        if shipped is not None:
            unpack_tree(shipped, scratch / ship_as)
        value = fn(scratch, *args, **kwargs)
        back = scratch / send_back if send_back is not None else None
        if back is None or not back.is_dir() or not any(back.iterdir()):
            return value, b""
        return value, pack_tree(back)


def _import_ray():
    try:
        import ray
    except ImportError:
        raise EngineError("the Ray engine is an optional extra: pip install 'judging[cluster]' "
                          "(on the driver and on every node)") from None
    return ray


@contextmanager
def ray_session(address: str | None) -> Iterator[Any]:
    """Ray, connected to the cluster at `address` (or started on this machine when None, with no
    dashboard); shut down on leaving when it was started here."""
    ray = _import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        try:
            ray.init(address=address, log_to_driver=False,
                     **({} if address else {"include_dashboard": False}))
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise EngineError(f"cannot reach the Ray cluster at {address}: {exc}") from exc
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def run_on_ray(jobs: Iterable[RemoteJob | None], on_done: Callable[[RemoteResult], None], *,
               address: str | None) -> None:
    """Run the jobs as Ray tasks; `on_done` is told each result as its task ends (in the order
    they end). `jobs` is read as the tasks are submitted: a caller may refuse one (a budget)
    before it is made, or give None to wait for a task in flight to end (told to `on_done`)
    before it is asked for the next (a budget that gets back what that task did not spend)."""
    with ray_session(address) as ray:
        task = ray.remote(max_retries=MAX_RETRIES)(on_node)
        archives: dict[Path, Any] = {}
        pending: dict[Any, RemoteJob] = {}

        def collect_one() -> None:
            ready, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(ready[0])
            try:
                value, archive = ray.get(ready[0])
            except Exception as exc:  # the task failed after Ray's retries: the caller records it
                on_done(RemoteResult(job, failure=exc))
            else:
                on_done(RemoteResult(job, value=value, archive=archive))

        for job in jobs:
            if job is None:
                if not pending:  # nothing can end: a caller's bug, not a wait without end
                    raise EngineError("asked to wait with no task in flight")
                collect_one()
                continue
            shipped = None
            if job.ship is not None:
                if job.ship not in archives:
                    archives[job.ship] = ray.put(pack_tree(job.ship))
                shipped = archives[job.ship]
            ref = task.options(num_cpus=job.cpus).remote(job.fn, shipped, job.ship_as,
                                                         job.send_back, job.prefix, job.args,
                                                         job.kwargs)
            pending[ref] = job
        while pending:
            collect_one()
