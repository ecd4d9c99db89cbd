"""The `judging run` stage: load submissions, measure signals, judge, append to the run store.

The runner wires the parts: the sources fed in as claims (`feed`), the work items and their input
hashes (`plan`), the claims in flight (`inflight`), the judges' calls (`call`), the bounded
producer and consumer (`schedule`), panel lines (`lines.Panels`) and the consensus fact of the
second pass (`audit`). A rerun over the same `--out` resumes: work whose inputs are unchanged is
skipped. One bad claim is recorded as an error line and never stops the batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

from judging.consensus import run_consensus
from judging.errors import JudgingError, RunStopped
from judging.intake import (
    Registry,
    load_registry,
)
from judging.judges import Budget
from judging.models import Judgment, NotAddressed
from judging.rubrics import Rubric, RubricLibrary, resolve_rubric
from judging.run.audit import ConsensusFacts, reads_consensus
from judging.run.call import Calls
from judging.run.estimate import estimate_items
from judging.run.feed import Batch, Feed, StoredClaims, check_sources
from judging.run.inflight import InFlight
from judging.run.integrity import write_run_integrity
from judging.run.lines import Panels, WorkItem
from judging.run.memory import items_in_flight
from judging.run.plan import Plan
from judging.run.request import Estimate, RunRequest, RunResult, invocation, record_end
from judging.run.reruns import RerunFacts
from judging.run.schedule import schedule
from judging.rundir import (
    RunPaths,
    RunStore,
    drift_report,
    line_key,
    read_not_addressed,
    utc_now,
    write_drift,
    write_not_addressed,
)


class Runner:
    """One invocation of `judging run`.

    `prepare` resolves everything the run needs before any run file is opened for writing: the
    rubrics, the registry, the judges, the local sources, and the endpoint of every LLM judge
    (`Calls.preflight`). A problem there is one line and changes nothing: no folder is made for
    a new run, and an existing run only gains the refused invocation in run.json."""

    def __init__(self, request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                 ):
        self.request = request
        self.on_progress = on_progress
        self.rubrics: list[Rubric] = []
        self.registry: Registry | None = None
        self.calls: Calls | None = None
        """Set once `prepare` has resolved everything; the judges' endpoints are checked then
        unless `check_endpoints=False` (the estimate, which sends nothing)."""
        # The measuring pool and cache need no run file: made here (a test may give its pool);
        # the store is given when the run directory is opened.
        self.inflight = InFlight(request, None, prompt_images=False)

    @property
    def budget(self) -> Budget | None:
        return self.calls.budget if self.calls is not None else None

    def prepare(self, *, check_endpoints: bool = True) -> None:
        """Resolve the run's inputs (see the class); idempotent."""
        if self.calls is not None:
            return
        request = self.request
        try:
            self.rubrics = request_rubrics(request)
            self.registry = load_registry(request.registry) if request.registry else None
            check_sources(request, self.registry)  # a typo'd source, before anything is written
            calls = Calls(request, run_id="", measure=lambda claim: self.inflight.measure(claim),
                          consensus_fact=lambda claim: self.facts.fact(claim))
            if check_endpoints:
                calls.preflight()
        except JudgingError as exc:
            refuse(request, self.rubrics, exc)
            raise
        self.calls = calls

    def _open(self) -> None:
        """Open (or make) the run directory and the parts that read and write it."""
        request, calls = self.request, self.calls
        assert calls is not None
        self.store = RunStore.open(request.out)
        self.store.set_shard(request.shard)
        calls.run_id = self.store.info.run_id
        self.facts = ConsensusFacts(self.store)
        calls.rerun_facts = reruns = RerunFacts(self.store)
        self.inflight.store = self.store
        self.inflight.prompt_images = request.llm.images and any(
            j.model is not None for j in calls.judges)
        self.feed = Feed(request, self.store, extractor=calls.extractor)
        self.plan = Plan(calls.judges, request.samples, request.swap,
                         request.measure.as_settings(), self.facts.fact,
                         rerun_facts=reruns.facts)

    async def run(self) -> RunResult:
        self.prepare()
        self._open()
        request, store, calls = self.request, self.store, self.calls
        assert calls is not None
        result = RunResult(root=store.root, run_id=store.info.run_id)
        rubrics, registry = self.rubrics, self.registry
        record = invocation(request, rubrics, calls.judges)
        store.info.invocations.append(record)
        store.write_info()
        # Rubrics that read the consensus of a registry claim's reproductions (the
        # falsification audit) are judged after every other line, on that consensus.
        later = [r for r in rubrics if reads_consensus(r)]
        stored = StoredClaims(store, request, later)
        try:
            await self._judge_all(self.feed.submissions(registry, result),
                                  [r for r in rubrics if r not in later], result)
            # Pairs written as they are found, only their counts kept (`run/memory.py`): the
            # consensus and later stages read integrity.json one pair at a time. The claims
            # are read once for the check, the consensus and the second pass (`StoredClaims`).
            result.integrity_pairs.update(write_run_integrity(store, stored.claims()))
            if later:
                self.facts.begin_second_pass(stored.reproductions)
                await self._judge_all(stored.batches(), later, result, stored=True)
            if registry is not None:  # without a registry, what is not addressed is unknown
                write_not_addressed(store.root, merged_not_addressed(
                    read_not_addressed(store.root), result))
            if (failed := calls.breaker.all_failed()) is not None:
                result.source_errors.append(failed)
            record.status = "failed" if result.source_errors else "finished"
        except RunStopped as exc:
            record.status = "failed"
            result.source_errors.append(str(exc))
            raise
        except BaseException:
            record.status = "interrupted"
            raise
        finally:
            await self.aclose()
            store.close()
            record_end(record, result, store.iter_latest_heads(), self.inflight.stats)
            store.write_info()
        # The consensus side file follows the judgments it is computed from: review push and the
        # report read it as written, so a run that adds claims must not leave it stale.
        run_consensus(store.root, store=store,
                      reproductions=stored.reproductions if stored.read else None)
        # What the endpoints said served the calls: a model or build that changed mid-run is
        # flagged on the lines it served, which calibrations made on the first do not trust.
        result.drift = drift_report(store)
        write_drift(store.root, result.drift)
        return result

    async def _judge_all(self, batches: Iterator[Batch], rubrics: list[Rubric],
                         result: RunResult, *, stored: bool = False) -> None:
        """Judge batch after batch (`schedule`), appending lines as calls finish. Memory stays
        flat in the size of the run (`memory`): at most `ahead` work items are in flight, a
        claim's measurement is dropped once its last line is written (`inflight`), and a panel's
        line is written as soon as its members' lines are (`Panels`)."""
        store, panels = self.store, Panels(self.store)
        progress = {"done": 0, "total": 0}

        def write(line: Judgment, counted: bool = True) -> None:
            store.append(line)
            result.written += 1
            if counted:  # panel lines are not in the progress total
                progress["done"] += 1
                if self.on_progress is not None:
                    self.on_progress(progress["done"], progress["total"])

        def prepare(batch: Batch) -> list[WorkItem]:
            claims, problems = batch
            if not stored:  # (the second pass reads the claims this run recorded)
                store.record_claims(claims)
            items = self.plan.items(claims, rubrics)
            pending_problems = [j for j in problems if not store.has(line_key(j))]
            pending = [item for item in items if not store.has(item.key)]
            result.skipped += len(items) - len(pending) + len(problems) - len(pending_problems)
            progress["total"] += len(pending) + len(pending_problems)
            for line in pending_problems:
                write(line)
            for line in panels.add(items, pending):  # every member done before: resume
                write(line, counted=False)
            self.inflight.expect(pending)
            return pending

        def finish(item: WorkItem, line: Judgment) -> None:
            write(line)
            self.inflight.written(item)
            for panel in panels.written(item, line):
                write(panel, counted=False)

        # What a run may hold in flight is named in `memory`.
        ahead = items_in_flight(self.request.concurrency, self.inflight.pool.workers)
        assert self.calls is not None
        await schedule(batches, prepare=prepare, call=self.calls.line, finish=finish,
                       ahead=ahead)

    async def aclose(self) -> None:
        if self.calls is not None:
            await self.calls.aclose()
        await self.inflight.aclose()

    async def estimate(self) -> list[Estimate]:
        """What the pending work would cost, per judge (`estimate_items`); nothing is sent."""
        self.prepare(check_endpoints=False)
        self._open()
        assert self.calls is not None
        self.inflight.record = False  # measure (figures are needed to build requests), record
        # nothing
        if self.calls.extractor is not None:
            self.calls.extractor.dry_run = True  # cached extraction answers only; count the rest
        registry, rubrics = self.registry, self.rubrics
        if any(reads_consensus(r) for r in rubrics) and self.store.claim_count():
            # The audit's inputs hold the consensus of the lines already judged: as a run
            # would see it after its first pass (new claims may still change it).
            self.facts.read_judged()
        rows = await estimate_items(self._pending_items(registry, rubrics), calls=self.calls)
        extract = self.calls.extract_estimate()
        if extract is not None:
            rows["extract"] = extract
        return list(rows.values())

    def _pending_items(self, registry: Registry | None, rubrics: list[Rubric]
                       ) -> Iterator[WorkItem]:
        """The work items not done yet, submission by submission; a claim's measurement is
        dropped once its items have been seen."""
        result = RunResult(root=self.store.root, run_id=self.store.info.run_id)
        for claims, _ in self.feed.submissions(registry, result):
            for claim in claims:
                for item in self.plan.items([claim], rubrics):
                    if not self.store.has(item.key):
                        yield item
                self.inflight.drop(claim.key)


def request_rubrics(request: RunRequest) -> list[Rubric]:
    """The rubrics a run judges: those named, else the newest published of each."""
    library = RubricLibrary(request.rubrics_dir) if request.rubrics_dir else RubricLibrary()
    if not request.rubrics:
        return library.defaults()
    return [resolve_rubric(spec, library) for spec in request.rubrics]


def merged_not_addressed(before: list[NotAddressed], result: RunResult) -> list[NotAddressed]:
    """not_addressed.jsonl from complete inputs: the records of the submissions this invocation
    loaded are replaced by theirs; those of submissions it did not load (a source that failed,
    another shard's, a submission judged by an earlier invocation only) are kept."""
    loaded = result.loaded
    return [*(r for r in before if r.submission_id not in loaded), *result.not_addressed]


def refuse(request: RunRequest, rubrics: list[Rubric], exc: JudgingError) -> None:
    """An invocation that cannot start: recorded, failed with its reason, in an existing run's
    run.json (nothing else is touched); a run directory that does not exist is not made."""
    if not RunPaths(request.out).run_json.is_file():
        return
    try:
        store = RunStore.open(request.out, create=False)
    except JudgingError:
        return  # not a run directory we can record in: the error says enough
    refused = invocation(request, rubrics, [])
    refused.judges = list(request.judges)
    refused.status, refused.ended_at, refused.errors = "failed", utc_now(), [str(exc)]
    store.info.invocations.append(refused)
    store.write_info()
    store.close()


def run_judging(request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                ) -> RunResult:
    return asyncio.run(Runner(request, on_progress=on_progress).run())
