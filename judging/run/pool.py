"""Measurement off the event loop: figure claims are measured in a process pool (every core, one
pool per run), and measurements are cached by content so that a figure pair is measured once.

The pool is pebble's `ProcessPool`, started lazily (a run with no figure to measure starts no
process) from a forkserver that has imported the measuring code once, so that workers start in
milliseconds and no worker is forked from a process running threads. A measurement that raises
is that claim's error. A worker that dies (killed for memory, a crash in a native library) costs
only the claim it was measuring (`MeasureWorkerDied`), and a claim whose measurement outlasts the
timeout has its worker stopped (`MeasureTimedOut`): pebble replaces the worker and the batch goes
on, where concurrent.futures would break the whole executor and cannot stop a running task.

The cache (`MeasurementCache`) is a directory of one JSON entry per measurement key
(`measurement_key`: file contents, measured claim fields, options, the measuring code) plus the
entry's reviewer images; a hit copies the images into the run's diffs/ and measures nothing.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pebble import ProcessExpired, ProcessPool
from pydantic import Field, ValidationError

from judging.atomic import write_text_atomic
from judging.errors import JudgingError, RunStopped
from judging.models import Artifacts, ChartTrace, ClaimInput, Flag, Signal, VersionedModel
from judging.run.measure import Measurement, MeasureOptions, measure_claim
from judging.rundir import claim_images

log = logging.getLogger(__name__)

MEASUREMENT_SCHEMA = "judging.measurement/1"


class MeasureWorkerDied(JudgingError):
    """The measuring process died while it measured this claim (a rerun measures it again)."""


class MeasureTimedOut(MeasureWorkerDied):
    """Measuring this claim outlasted the pool's timeout; its process was stopped."""


class MeasuringUnavailable(RunStopped):
    """Measuring processes cannot start here (pools break before measuring anything: a broken
    native library, no memory for a worker): the run stops instead of recording the same failure
    on every figure claim; a rerun resumes where it stopped."""


#: Pools in a row that may break before measuring a single claim before the run is stopped:
#: one is a worker lost at a bad moment, several in a row are workers that cannot start.
MAX_BARREN_POOLS = 3


#: Seconds one claim's measurement may take before its process is stopped: a 1600x1200 pair
#: takes about a second, so this is a hang (a pathological image), not a slow claim.
DEFAULT_MEASURE_TIMEOUT = 300.0


class CachedMeasurement(VersionedModel):
    """One cached measurement (`<cache>/<ab>/<key>.json`; its images in `<cache>/<ab>/<key>/`)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.measurement/1"] = Field(default=MEASUREMENT_SCHEMA, alias="schema")
    key: str
    signals: dict[str, Signal] = Field(default_factory=dict)
    flags: list[Flag] = Field(default_factory=list)
    figure_error: str | None = None
    fingerprint: str | None = None
    images: list[str] = Field(default_factory=list)
    """Names (published, reproduced, diff, overlay) of the images stored with the entry."""
    cpu_s: float = 0.0
    """What measuring it cost, in CPU seconds."""
    chart_trace: ChartTrace | None = None
    """The chart reading trace (an optional field: entries written before it have none)."""


def _link_or_copy(source: Path, target: Path) -> None:
    """`target` becomes a hard link to `source` (a copy across file systems), atomically: a
    reader sees the old file or the new one. Images are written by rename (atomic.py), never in
    place, so a linked file never changes under the other name."""
    if target.exists() and os.path.samefile(source, target):
        return  # already that file (a rerun, a second claim with the same figures)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.link")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)
    # rename() does nothing when both names are links to one file (POSIX): then the temporary
    # name is still there, and is removed.
    tmp.unlink(missing_ok=True)


class MeasurementCache:
    """Measurements by measurement key, on disk (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = root

    def _paths(self, key: str) -> tuple[Path, Path]:
        digest = key.split(":", 1)[-1]
        folder = self.root / digest[:2]
        return folder / f"{digest}.json", folder / digest

    def get(self, key: str, *, out_dir: Path | None, run_root: Path | None
            ) -> Measurement | None:
        """The cached measurement, its images linked into `out_dir`; None on a miss (or an
        entry that is unreadable or lost an image: it is measured again)."""
        entry_path, images_dir = self._paths(key)
        try:
            entry = CachedMeasurement.from_file(entry_path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError, ValidationError) as exc:
            log.warning("ignoring an unreadable measurement cache entry %s (%s)", entry_path, exc)
            return None
        if entry.key != key:
            return None
        measurement = Measurement(signals=dict(entry.signals), flags=list(entry.flags),
                                  figure_error=entry.figure_error, fingerprint=entry.fingerprint,
                                  cached=True, chart_trace=entry.chart_trace)
        if entry.images and out_dir is not None and run_root is not None:
            paths = {name: path for name, path in claim_images(out_dir).items()
                     if name in entry.images}
            try:
                out_dir.mkdir(parents=True, exist_ok=True)
                for path in paths.values():
                    _link_or_copy(images_dir / path.name, path)
            except OSError as exc:
                log.warning("measurement cache entry %s lost its images (%s)", entry_path, exc)
                return None
            measurement.images = paths
            measurement.artifacts = Artifacts(**{k: p.relative_to(run_root).as_posix()
                                                 for k, p in paths.items()})
        return measurement

    def put(self, key: str, measurement: Measurement) -> None:
        """Store a measurement (its images first, the entry last: an entry on disk is whole)."""
        entry_path, images_dir = self._paths(key)
        images_dir.mkdir(parents=True, exist_ok=True)
        for path in measurement.images.values():
            _link_or_copy(path, images_dir / path.name)
        entry = CachedMeasurement(key=key, signals=measurement.signals, flags=measurement.flags,
                                  figure_error=measurement.figure_error,
                                  fingerprint=measurement.fingerprint,
                                  images=sorted(measurement.images), cpu_s=measurement.cpu_s,
                                  chart_trace=measurement.chart_trace)
        write_text_atomic(entry_path, entry.model_dump_json(by_alias=True))


def measure_and_store(claim: ClaimInput, options: MeasureOptions, run_root: Path | None,
                      out_dir: Path | None, cache_root: Path | None, key: str | None
                      ) -> Measurement:
    """One claim's measurement, timed in CPU seconds and stored in the cache (in a worker)."""
    started = time.process_time()
    measurement = measure_claim(claim, options=options, run_root=run_root, out_dir=out_dir)
    measurement.cpu_s = time.process_time() - started
    if cache_root is not None and key is not None:
        try:
            MeasurementCache(cache_root).put(key, measurement)
        except OSError as exc:  # a full or read-only cache costs a re-measure, never the claim
            log.warning("could not cache the measurement of %s (%s)", claim.key, exc)
    return measurement


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _context() -> multiprocessing.context.BaseContext:
    """A forkserver that imported the measuring code once (workers then start in milliseconds),
    where the platform has one; else spawn. Never a plain fork of this process, which runs the
    event loop's threads."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # worker_start: a worker that fails before running our code says so in one line.
        # scipy.signal: the copy check's Hann window imports it on first use (the scheduling
        # process never does), so it is imported once here, not once per worker.
        context.set_forkserver_preload(["judging.run.worker_start", "judging.run.pool",
                                        "scipy.signal"])
        return context
    return multiprocessing.get_context("spawn")


@dataclass
class MeasureStats:
    """What measurement cost in one run (recorded in run.json's invocation counts)."""

    measured: int = 0
    """Figure claims measured (in the pool)."""
    cached: int = 0
    """Figure claims read from the measurement cache."""
    cpu_s: float = 0.0
    """CPU seconds of the measurements made."""
    workers_died: int = 0
    timed_out: int = 0
    """Claims whose measurement outlasted the timeout."""
    pools_replaced: int = 0
    """Measuring pools that broke or wedged and were replaced (their claims measured again)."""


MeasureTask = Callable[[ClaimInput, MeasureOptions, Path | None, Path | None, Path | None,
                        str | None], Measurement]


class _PoolLost(Exception):
    """The pool a claim was scheduled in broke or wedged before the claim's answer came back."""


#: Seconds between two looks at the pool's health while a claim is measured in it.
HEALTH_CHECK_S = 1.0
#: Slack over the timeout before a pool that finishes nothing is called wedged (dispatch,
#: pickling, a busy machine).
WEDGE_GRACE_S = 30.0


@dataclass
class _Generation:
    """One pebble pool and what the watch knows of it."""

    pool: ProcessPool
    held: int = 0
    """Claims scheduled in it and not yet answered."""
    progress_at: float = field(default_factory=time.monotonic)
    """When it last answered a claim (or was given one while it held none)."""
    finished_a_claim: bool = False
    """A claim came back from it (measured, raised, or lost its worker): its workers started."""


class MeasurePool:
    """The run's measuring processes (`workers` of them; 0: measure in a thread of this process,
    for debugging and profiling). `task` is what a worker runs per claim (`measure_and_store`;
    a test gives one that kills its process); `timeout` the seconds a claim may take (None: no
    limit).

    pebble attributes a dead worker to its claim and stops a claim that outlasts the timeout,
    but its pool can itself break or wedge: a worker killed while it holds the workers' shared
    channel lock, or one lost when no claim is known to be running on it, leaves the claims
    queued behind it unanswered forever (pebble issues #69, #153, #163; reproduced here with a
    worker SIGKILLed under a deep queue). So at most 2 x `workers` claims are in the pool at a
    time (a queued claim then starts within one timeout), each claim's wait looks at the pool's
    health every HEALTH_CHECK_S, and a pool that broke (pebble's status) or answered nothing for
    longer than the timeout (plus WEDGE_GRACE_S) while it held claims is retired and replaced;
    the claims it held are measured again in the new pool, once: a claim that loses a second
    pool is that claim's error. pebble has no hook for this, and no maintained pool both stops
    a hung task and survives a lost worker, hence this hand-written watch. MAX_BARREN_POOLS
    pools in a row that broke before finishing any claim mean workers cannot start at all: every
    claim then raises `MeasuringUnavailable` (the run stops) instead of new pools being started
    for ever. `initializer` runs in each worker as it starts (pebble's)."""

    def __init__(self, workers: int | None = None, *, task: MeasureTask = measure_and_store,
                 timeout: float | None = DEFAULT_MEASURE_TIMEOUT,
                 initializer: Callable[[], object] | None = None):
        self.workers = default_workers() if workers is None else workers
        self.task = task
        self.timeout = timeout
        self.initializer = initializer
        self.barren = 0
        """Pools retired in a row that had finished no claim."""
        self.unavailable: str | None = None
        """Why measuring cannot go on in this run (set after MAX_BARREN_POOLS barren pools)."""
        self._current: _Generation | None = None
        self._slots: asyncio.Semaphore | None = None
        self.died = 0
        """Workers lost while measuring a claim."""
        self.timed_out = 0
        """Workers stopped on a claim that outlasted the timeout."""
        self.replaced = 0
        """Pools retired because they broke or wedged (see the class docstring)."""

    def _get(self) -> _Generation:
        if self._current is None:
            self._current = _Generation(ProcessPool(max_workers=self.workers,
                                                    context=_context(),
                                                    initializer=self.initializer))
        return self._current

    def _wedged(self, generation: _Generation) -> bool:
        if self.timeout is None or generation.held == 0:
            return False
        return time.monotonic() - generation.progress_at > self.timeout + WEDGE_GRACE_S

    def _retire(self, generation: _Generation, why: str) -> None:
        if self._current is not generation:
            return  # another claim of the same pool retired it already
        self._current = None
        self.barren = 0 if generation.finished_a_claim else self.barren + 1
        if self.barren >= MAX_BARREN_POOLS:
            self.unavailable = (
                f"{self.barren} measuring pools in a row broke before measuring any claim (the "
                f"last one {why}): the measuring processes cannot start here; the log above has "
                f"the workers' own error. The run stops; a rerun resumes where it stopped")
            log.error("%s", self.unavailable)
        else:
            self.replaced += 1
            log.error("the measuring pool %s: a new pool measures its claims again", why)
        # Stopped in a thread of its own: a wedged pool's join may never return.
        threading.Thread(target=_stop_quietly, args=(generation.pool,), daemon=True,
                         name="retire-measure-pool").start()

    async def measure(self, claim: ClaimInput, options: MeasureOptions, *,
                      run_root: Path | None, out_dir: Path | None, cache_root: Path | None,
                      key: str | None) -> Measurement:
        args = (claim, options, run_root, out_dir, cache_root, key)
        if self.workers == 0:
            return await asyncio.to_thread(self.task, *args)
        if self._slots is None:
            self._slots = asyncio.Semaphore(2 * self.workers)
        async with self._slots:
            self._check_available()
            try:
                return await self._measure_once(claim, args)
            except _PoolLost:
                pass  # not this claim's doing (as far as anyone knows): once more, in a new pool
            self._check_available()
            try:
                return await self._measure_once(claim, args)
            except _PoolLost as lost:
                raise MeasureWorkerDied(
                    f"the measuring pool broke twice while it held this claim ({lost}): a "
                    f"rerun measures it again") from lost

    def _check_available(self) -> None:
        if self.unavailable is not None:
            raise MeasuringUnavailable(self.unavailable)

    async def _measure_once(self, claim: ClaimInput, args: tuple) -> Measurement:
        generation = self._get()
        try:
            future = generation.pool.schedule(self.task, args=args, timeout=self.timeout)
        except RuntimeError as exc:  # pebble: "Unexpected error within the Pool"
            self._retire(generation, f"refused a claim ({exc})")
            raise _PoolLost(str(exc)) from exc
        if generation.held == 0:
            generation.progress_at = time.monotonic()
        generation.held += 1
        waiting = asyncio.wrap_future(future)
        try:
            # Bounded: the pool answers, breaks, or is wedged after the timeout and the grace.
            while not waiting.done():
                await asyncio.wait({waiting}, timeout=HEALTH_CHECK_S)
                if waiting.done():
                    break
                if not generation.pool.active:
                    why = "broke"
                elif self._wedged(generation):
                    why = (f"answered nothing for {self.timeout:g} + {WEDGE_GRACE_S:g} s while "
                           f"it held claims (wedged)")
                else:
                    continue
                self._retire(generation, why)
                waiting.cancel()
                raise _PoolLost(f"it {why}")
            generation.progress_at = time.monotonic()
            if not isinstance(waiting.exception(), BrokenProcessPool):
                generation.finished_a_claim = True
            return waiting.result()
        except BrokenProcessPool as exc:
            self._retire(generation, f"broke ({exc})")
            raise _PoolLost(f"it broke: {exc}") from exc
        except ProcessExpired as exc:
            self.died += 1
            log.error("the process measuring %s died (exit code %s); a new one measures the "
                      "rest", claim.key, exc.exitcode)
            raise MeasureWorkerDied(
                f"the measuring process died measuring this claim (exit code {exc.exitcode}: "
                f"killed for memory, or a crash in a native image library): a rerun measures it "
                f"again") from exc
        except TimeoutError as exc:  # pebble's timeout: the worker is stopped and replaced
            self.timed_out += 1
            log.error("measuring %s took longer than %g s: its process was stopped", claim.key,
                      self.timeout)
            raise MeasureTimedOut(
                f"measuring this claim took longer than {self.timeout:g} s, so its process was "
                f"stopped (a hung image library?): a rerun measures it again "
                f"(--measure-timeout sets the limit)") from exc
        finally:
            generation.held -= 1

    def shutdown(self, *, wait: bool = True) -> None:
        current, self._current = self._current, None
        self._slots = None
        if current is None:
            return
        pool = current.pool
        if not pool.active:  # broke at the very end: stopped aside, as a retired pool is
            threading.Thread(target=_stop_quietly, args=(pool,), daemon=True,
                             name="retire-measure-pool").start()
            return
        if wait:
            pool.close()  # the scheduled claims finish first
        else:
            pool.stop()
        pool.join()


def _stop_quietly(pool: ProcessPool) -> None:
    """Stop a retired pool (in a daemon thread: pebble's join of a wedged pool may not return)."""
    try:
        pool.stop()
        pool.join(timeout=30)
    except (RuntimeError, OSError, TimeoutError) as exc:
        log.warning("a retired measuring pool did not stop cleanly (%s)", exc)
