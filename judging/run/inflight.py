"""The claims in flight: one measurement per claim however many work items ask for it, made
once (from the measurement cache, else in the measuring pool; a figure pair with the same
content as one being measured waits for it, then reads the cache), with the prompt images LLM
judges show read once, and both dropped after the claim's last line is written."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable

from judging.hashing import slug
from judging.judges import hold_images, read_images, release_images
from judging.models import ClaimInput, ClaimKey, ClaimKind, Fingerprint
from judging.run.lines import WorkItem
from judging.run.measure import Measurement, measure_claim, measurement_key
from judging.run.pool import MeasurementCache, MeasurePool, MeasureStats
from judging.run.request import RunRequest
from judging.rundir import RunPaths, RunStore


class InFlight:
    """Measurements of the claims in flight, the prompt images held for them, and the work
    items of each claim not written yet."""

    def __init__(self, request: RunRequest, store: RunStore | None, *, prompt_images: bool):
        self.options = request.measure
        self.store: RunStore = store  # type: ignore[assignment]
        """The run directory's store (set when the run opens it, before the first measure)."""
        self.pool = MeasurePool(request.measure_workers, timeout=request.measure_timeout)
        self.cache = MeasurementCache(request.measure_cache or RunPaths(request.out).measurements)
        self.stats = MeasureStats()
        self.prompt_images = prompt_images
        """LLM judges show the figures: each claim's are read once, off the event loop."""
        self.record = True
        """Record each figure's fingerprint (not while estimating)."""
        self._measurements: dict[ClaimKey, asyncio.Future[Measurement]] = {}
        self._measuring: dict[str, asyncio.Future[None]] = {}
        """Measurement keys being measured: an identical figure pair waits, then reads the
        cache."""
        self._images: dict[ClaimKey, list] = {}
        self._left: Counter[ClaimKey] = Counter()

    async def measure(self, claim: ClaimInput) -> Measurement:
        """A claim's measurement, made once per run however many items ask for it."""
        future = self._measurements.get(claim.key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._measurements[claim.key] = future
            try:
                measurement = await self._measure_once(claim)
            except Exception as exc:  # recorded on every line of this claim, batch goes on
                future.set_exception(exc)
                future.exception()  # retrieved here: the claim's other items may not ask
                raise
            if self.prompt_images and measurement.images:
                try:
                    read = await asyncio.to_thread(read_images, measurement.images)
                except OSError:
                    read = []  # read again when a prompt is built, which reports the error
                self._images[claim.key] = hold_images(read)
            future.set_result(measurement)
            if measurement.fingerprint is not None and self.record:
                self.store.record_fingerprint(Fingerprint(claim=claim.key,
                                                          phash=measurement.fingerprint))
        return await future

    async def _measure_once(self, claim: ClaimInput) -> Measurement:
        """From the measurement cache, else in the pool; other claims' signals (numbers) cost
        microseconds and are computed here."""
        # Only figure claims have a key (their files' hashes, made in a thread): a number
        # claim's signals are made here at once, with no hop to a thread and back per claim.
        key = None if claim.claim.kind is not ClaimKind.figure else \
            await asyncio.to_thread(measurement_key, claim, self.options)
        if key is None:
            return measure_claim(claim, options=self.options)
        while (measuring := self._measuring.get(key)) is not None:
            await asyncio.wait([measuring])  # the same content is being measured: wait for it
        self._measuring[key] = done = asyncio.get_running_loop().create_future()
        try:
            root = self.store.root
            out_dir = self.store.paths.diffs / slug(str(claim.key))
            hit = await asyncio.to_thread(self.cache.get, key, out_dir=out_dir, run_root=root)
            if hit is not None:
                self.stats.cached += 1
                return hit
            measurement = await self.pool.measure(claim, self.options, run_root=root,
                                                  out_dir=out_dir, cache_root=self.cache.root,
                                                  key=key)
            self.stats.measured += 1
            self.stats.cpu_s += measurement.cpu_s
            return measurement
        finally:
            del self._measuring[key]
            done.set_result(None)

    def expect(self, items: Iterable[WorkItem]) -> None:
        """Work items of claims to be judged now: their claims stay in flight until written."""
        for item in items:
            self._left[item.claim.key] += 1

    def written(self, item: WorkItem) -> None:
        """An item's line was written: its claim leaves with its last one."""
        key = item.claim.key
        self._left[key] -= 1
        if self._left[key] <= 0:
            del self._left[key]
            self.drop(key)

    def drop(self, key: ClaimKey) -> None:
        """A claim's measurement and prompt images."""
        self._measurements.pop(key, None)
        release_images(self._images.pop(key, ()))

    async def aclose(self) -> None:
        for key in list(self._images):  # claims left in flight (an error, an interrupt)
            self.drop(key)
        await asyncio.to_thread(self.pool.shutdown)
        self.stats.workers_died = self.pool.died
        self.stats.timed_out = self.pool.timed_out
        self.stats.pools_replaced = self.pool.replaced
