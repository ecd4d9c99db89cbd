"""The `judging run` stage: load submissions, measure signals, judge, append to the run store.

A rerun over the same `--out` resumes: work whose inputs are unchanged is skipped. One bad claim is
recorded as an error line and never stops the batch.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from judging.consensus import compute_consensus, run_consensus
from judging.errors import JudgingError, RunStopped
from judging.hashing import content_hash, slug
from judging.intake import (
    LoadedSubmission,
    Registry,
    SourcePlan,
    expand_source,
    load_folder,
    load_registry,
    plan_sources,
)
from judging.judges import (
    AGGREGATION,
    Budget,
    EndpointClient,
    JudgeTask,
    LLMOptions,
    aggregate_panel,
    hold_images,
    make_judge,
    panel_name,
    read_images,
    release_images,
    structured_caller,
)
from judging.models import (
    FIGURE_MATCH_NOT_APPLICABLE,
    AnswerStatus,
    ClaimInput,
    ClaimKey,
    ClaimKind,
    ConsensusReport,
    Fingerprint,
    IntegrityReport,
    Judgment,
    LineStatus,
    NotAddressed,
    Signal,
    SignalStatus,
    SubmissionSource,
)
from judging.rubrics import Rubric, RubricLibrary, resolve_rubric
from judging.rules import CONSENSUS_AGREES
from judging.run.integrity import find_pairs
from judging.run.lines import (
    WorkItem,
    build_judgment,
    claim_fingerprint,
    problem_judgment,
    samples_for,
    unscored_all,
)
from judging.run.measure import Measurement, MeasureOptions, measure_claim, measurement_key
from judging.run.pool import (
    DEFAULT_MEASURE_TIMEOUT,
    MeasurementCache,
    MeasurePool,
    MeasureStats,
    MeasureWorkerDied,
)
from judging.rundir import (
    Identity,
    Invocation,
    LineHead,
    RunStore,
    Shard,
    line_key,
    utc_now,
    write_integrity,
    write_not_addressed,
)
from judging.version import code_version

log = logging.getLogger(__name__)


"""The `judge` of error lines written before any judge ran (a claim that failed to load)."""


@dataclass(frozen=True)
class RunRequest:
    sources: list[str]
    out: Path
    registry: Path | None = None
    rubrics: list[str] = field(default_factory=list)
    """`id@version`, `id` or a YAML path; empty: the newest published version of each rubric."""
    judges: list[str] = field(default_factory=lambda: ["offline"])
    samples: int = 1
    """Answers per LLM judge and claim (the offline judge is deterministic: always 1)."""
    swap: bool = False
    """LLM judges also see figure claims with the figures in swapped order."""
    concurrency: int = 8
    measure: MeasureOptions = field(default_factory=MeasureOptions)
    rubrics_dir: Path | None = None
    llm: LLMOptions = field(default_factory=LLMOptions)
    discover: list[str] = field(default_factory=list)
    """Also judge every Space carrying all these tags (`--discover`)."""
    as_of: datetime | None = None
    """Judge each Hub source at its last commit at or before this (aware) deadline."""
    hf_token: str | None = None
    """Hugging Face token for listings, histories and downloads (never recorded)."""
    extract: str | None = None
    """`openai:MODEL`: an LLM fills the logbook fields the deterministic extractor missed
    (through `llm`'s endpoint, cache and the run's budget)."""
    shard: Shard | None = None
    """`--shard I/N`: judge only the claims whose key falls in this shard (every submission is
    still loaded, to know its claims); recorded in run.json."""
    measure_cache: Path | None = None
    """The measurement cache (`--measure-cache`); None: `measurements/` in the run directory."""
    measure_workers: int | None = None
    """Measuring processes; None: one per core; 0: measure in a thread of this process."""
    measure_timeout: float | None = DEFAULT_MEASURE_TIMEOUT
    """Seconds one claim's measurement may take before its process is stopped (None: no limit)."""


@dataclass
class RunResult:
    root: Path
    run_id: str
    written: int = 0
    skipped: int = 0
    source_errors: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    integrity: IntegrityReport | None = None
    not_addressed: list[NotAddressed] = field(default_factory=list)
    """Registry claims of the submissions' papers that a submission has no claim for."""
    skipped_sources: list[str] = field(default_factory=list)
    """Sources left out on purpose, with the reason (no commit before --as-of)."""
    notes: list[str] = field(default_factory=list)
    """What source planning did (Spaces discovered...)."""
    submissions: dict[str, SubmissionSource] = field(default_factory=dict)
    """Submission id -> the Hub revision judged."""
    measure: MeasureStats = field(default_factory=MeasureStats)
    """Figure claims measured and read from the measurement cache."""

    @property
    def failed(self) -> bool:
        return bool(self.source_errors)


def reads_consensus(rubric: Rubric) -> bool:
    """Whether a rubric's offline answers read `consensus.agrees` (the falsification audit's
    "the other reproductions agree"): it is judged after the consensus of the others."""
    return any(c.offline is not None and (c.offline.rule == "consensus_agrees"
                                          or c.offline.signal == CONSENSUS_AGREES)
               for c in rubric.criteria)


class Runner:
    """One invocation of `judging run`."""

    def __init__(self, request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                 ):
        self.request = request
        self.on_progress = on_progress
        self.store = RunStore.open(request.out)
        self.store.set_shard(request.shard)
        self.library = RubricLibrary(request.rubrics_dir) if request.rubrics_dir else None
        self._measurements: dict[ClaimKey, asyncio.Future[Measurement]] = {}
        """Measurements of the claims in flight (dropped after a claim's last line, _judge_all)."""
        self._measuring: dict[str, asyncio.Future[None]] = {}
        """Measurement keys being measured: an identical figure pair waits, then reads the
        cache."""
        self._images: dict[ClaimKey, list] = {}
        """The prompt images held for the claims in flight (released with their measurement)."""
        self.pool = MeasurePool(request.measure_workers, timeout=request.measure_timeout)
        self.measure_cache = MeasurementCache(request.measure_cache or self.store.paths.measurements)
        self.measure_stats = MeasureStats()
        self._estimating = False
        # The consensus of the first pass, read by the rubrics judged in the second.
        self._consensus: ConsensusReport | None = None
        self._consensus_due = False
        """The second pass has begun and the consensus is not computed yet: it is computed when
        the first claim an audit rubric applies to is met (a run without one reads no lines)."""
        llm = request.llm
        self.budget = Budget(llm.max_cost) if llm.max_cost is not None else None
        # One bound on the calls in flight, shared by every judge of the run (--concurrency).
        self.limiter = asyncio.Semaphore(max(1, request.concurrency))
        # Tasks past their measurement: twice the call bound, so that the next prompts are built
        # while calls are in flight, without building all of a large run's prompts at once.
        self.window = asyncio.Semaphore(2 * max(1, request.concurrency))
        # One HTTP connection pool for every LLM judge of the run, sized to that bound.
        self.endpoint = EndpointClient(llm, connections=request.concurrency)
        # Work items started and not yet written (their claims, measurements and prompts are in
        # memory): the window's items plus as many again and a few per measuring process, so
        # that the pool is never idle while calls wait, bounded so that a run of 36k claims
        # does not hold them all.
        self.ahead = max(64, 4 * max(1, request.concurrency) + 4 * max(1, self.pool.workers))
        self.judges = [make_judge(spec, llm=llm, budget=self.budget, limiter=self.limiter,
                                  endpoint=self.endpoint)
                       for spec in request.judges]
        # LLM judges show the figures: each claim's are read once, off the event loop.
        self._prompt_images = llm.images and any(j.model is not None for j in self.judges)
        # The LLM extractor is built here (judges' client, cache, budget) and injected into the
        # logbook importer, which sits below judges and cannot import it.
        self.extractor = structured_caller(request.extract, llm, budget=self.budget) \
            if request.extract else None

    def _rubrics(self) -> list[Rubric]:
        library = self.library or RubricLibrary()
        if not self.request.rubrics:
            return library.defaults()
        return [resolve_rubric(spec, library) for spec in self.request.rubrics]

    async def _measure(self, claim: ClaimInput) -> Measurement:
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
            if self._prompt_images and measurement.images:
                try:
                    read = await asyncio.to_thread(read_images, measurement.images)
                except OSError:
                    read = []  # read again when a prompt is built, which reports the error
                self._images[claim.key] = hold_images(read)
            future.set_result(measurement)
            if measurement.fingerprint is not None and not self._estimating:
                self.store.record_fingerprint(Fingerprint(claim=claim.key,
                                                          phash=measurement.fingerprint))
        return await future

    async def _measure_once(self, claim: ClaimInput) -> Measurement:
        """From the measurement cache, else in the pool; other claims' signals (numbers) cost
        microseconds and are computed here."""
        options = self.request.measure
        # Only figure claims have a key (their files' hashes, made in a thread): a number
        # claim's signals are made here at once, with no hop to a thread and back per claim.
        key = None if claim.claim.kind is not ClaimKind.figure else \
            await asyncio.to_thread(measurement_key, claim, options)
        if key is None:
            return measure_claim(claim, options=options)
        while (measuring := self._measuring.get(key)) is not None:
            await asyncio.wait([measuring])  # the same content is being measured: wait for it
        self._measuring[key] = done = asyncio.get_running_loop().create_future()
        try:
            root = self.store.root
            out_dir = self.store.diffs_dir / slug(str(claim.key))
            hit = await asyncio.to_thread(self.measure_cache.get, key, out_dir=out_dir,
                                          run_root=root)
            if hit is not None:
                self.measure_stats.cached += 1
                return hit
            measurement = await self.pool.measure(claim, options, run_root=root,
                                                  out_dir=out_dir,
                                                  cache_root=self.measure_cache.root, key=key)
            self.measure_stats.measured += 1
            self.measure_stats.cpu_s += measurement.cpu_s
            return measurement
        finally:
            del self._measuring[key]
            done.set_result(None)

    def _drop_measurement(self, key: ClaimKey) -> None:
        """A claim's measurement and prompt images, once its last line is written."""
        self._measurements.pop(key, None)
        release_images(self._images.pop(key, ()))

    def _error_line(self, item: WorkItem, measurement: Measurement, reason: str, *,
                    final: bool = True) -> Judgment:
        return build_judgment(item, run_id=self.store.info.run_id, measurement=measurement,
                              answers=unscored_all(item.rubric, reason),
                              status=LineStatus.error, reason=reason, final=final)

    async def _judge(self, item: WorkItem) -> Judgment:
        """One judgment line; every failure becomes an error line with its reason."""
        try:
            measurement = await self._measure(item.claim)
        except RunStopped:
            raise  # no figure can be measured here: stop the run (a rerun resumes)
        except MeasureWorkerDied as exc:  # not this claim's fault, maybe: a rerun tries again
            return self._error_line(item, Measurement(), f"signals could not be computed: {exc}",
                                    final=False)
        except Exception as exc:  # recorded on this claim's lines; the batch goes on
            log.exception("measuring %s failed", item.claim.key)
            return self._error_line(item, Measurement(), f"signals could not be computed: "
                                                         f"{type(exc).__name__}: {exc}")
        if item.rubric.applies_to == "figure" and measurement.figure_error:
            return self._error_line(item, measurement,
                                    f"figure cannot be judged: {measurement.figure_error}")
        if reads_consensus(item.rubric):
            # The fact is recorded on the line like any signal (provenance), not in the
            # claim's shared measurement.
            measurement = replace(measurement, signals={
                **measurement.signals, CONSENSUS_AGREES: self._consensus_fact(item.claim)})
        task = JudgeTask(claim=item.claim, rubric=item.rubric, signals=measurement.signals,
                         images=measurement.images, sample=item.sample, swapped=item.swapped)
        async with self.window:
            try:
                result = await item.judge(task)
            except RunStopped:
                raise  # the judge cannot work at all: stop the run
            except JudgingError as exc:
                return self._error_line(item, measurement, str(exc))
            except Exception as exc:  # a judge bug must not sink the batch; it is logged loudly
                log.exception("judge %s failed on %s", item.judge.spec, item.claim.key)
                return self._error_line(item, measurement, f"internal error in judge "
                                        f"{item.judge.spec}: {type(exc).__name__}: {exc}")
        scored = any(a.status is AnswerStatus.scored for a in result.answers)
        reason = None if scored else (result.error or "no criterion could be answered by this "
                                                      "judge")
        return build_judgment(
            item, run_id=self.store.info.run_id, measurement=measurement,
            answers=result.answers, status=LineStatus.scored if scored else LineStatus.unscored,
            reason=reason, final=result.final, settings_used=result.settings_used,
            request_hash=result.request_hash, raw_answer=result.raw_answer, usage=result.usage,
            latency_s=result.latency_s, cost_usd=result.cost_usd, cached=result.cached)

    def _stored_claims(self, batch: int = 200
                       ) -> Iterator[tuple[list[ClaimInput], list[Judgment]]]:
        """The claims this run recorded, in batches (a second pass over the run)."""
        claims: list[ClaimInput] = []
        for claim in self.store.iter_claims():
            shard = self.request.shard
            if shard is None or shard.holds(claim.key):
                claims.append(claim)
            if len(claims) >= batch:
                yield claims, []
                claims = []
        if claims:
            yield claims, []

    def _submissions(self, registry: Registry | None, result: RunResult
                     ) -> Iterator[tuple[list[ClaimInput], list[Judgment]]]:
        """(claims, error lines) per submission, in source order; source errors and the registry
        claims each submission does not address go to `result`."""
        seen_submissions: dict[str, Path] = {}
        run_id = self.store.info.run_id
        download_root = self.store.paths.sources
        plan = self._plan()
        result.source_errors += plan.errors
        result.skipped_sources += plan.skipped
        result.notes += plan.notes
        for planned in plan.sources:
            try:
                folders = expand_source(planned.spec, download_root=download_root,
                                        token=self.request.hf_token)
            except JudgingError as exc:
                result.source_errors.append(str(exc))
                continue
            for folder in folders:
                try:
                    loaded = load_folder(folder, registry=registry,
                                         logbooks_dir=self.store.paths.logbooks,
                                         extractor=self.extractor)
                except JudgingError as exc:
                    result.source_errors.append(str(exc))
                    continue
                except Exception as exc:  # a loader bug must not end the batch: report it
                    log.debug("loading %s failed", folder, exc_info=True)
                    result.source_errors.append(f"{folder}: internal error while loading: "
                                                f"{type(exc).__name__}: {exc}")
                    continue
                sid = loaded.header.submission_id
                if sid in seen_submissions and seen_submissions[sid] != loaded.folder:
                    result.source_errors.append(
                        f"{folder}: submission_id {sid!r} is also used by "
                        f"{seen_submissions[sid]}; skipped")
                    continue
                if sid in seen_submissions:
                    continue
                seen_submissions[sid] = loaded.folder
                shard = self.request.shard
                result.not_addressed += [r for r in not_addressed(loaded, registry)
                                         if shard is None or shard.holds(r.key)]
                claims = [c for c in loaded.claims if shard is None or shard.holds(c.key)]
                problems = [p for p in loaded.problems if shard is None or shard.holds(p.key)]
                if planned.provenance is not None:
                    result.submissions[sid] = planned.provenance
                    claims = [claim.model_copy(update={"source": planned.provenance})
                              for claim in claims]
                yield claims, [problem_judgment(p, run_id=run_id,
                                                       paper_id=loaded.header.paper_id)
                                      for p in problems]

    def _plan(self) -> SourcePlan:
        """The sources given plus the Spaces discovered, pinned to --as-of (Hub calls)."""
        request = self.request
        return plan_sources(request.sources, discover=request.discover, as_of=request.as_of,
                            token=request.hf_token)

    def _load(self, registry: Registry | None, result: RunResult
              ) -> tuple[list[ClaimInput], list[Judgment]]:
        claims: list[ClaimInput] = []
        errors: list[Judgment] = []
        for loaded, problems in self._submissions(registry, result):
            claims += loaded
            errors += problems
        return claims, errors

    def plan(self, claims: list[ClaimInput], rubrics: list[Rubric]) -> list[WorkItem]:
        items = []
        measure_settings = self.request.measure.as_settings()
        for claim in claims:
            # Made when a rubric applies (it hashes the claim's files): the second pass of the
            # audit rubrics meets every claim of the run and applies to few.
            fingerprint = None
            for rubric in rubrics:
                if not rubric.applies_to_claim(claim.claim):
                    continue
                if rubric.applies_to == "figure" and any(
                        f.name == FIGURE_MATCH_NOT_APPLICABLE for f in claim.flags):
                    continue
                if fingerprint is None:
                    fingerprint = claim_fingerprint(claim)
                for judge in self.judges:
                    orders = [False, True] if (self.request.swap and judge.model is not None
                                               and rubric.applies_to == "figure") else [False]
                    for sample in range(samples_for(judge, self.request.samples)):
                        for swapped in orders:
                            inputs = {
                                "claim": fingerprint, "rubric": rubric.content_hash(),
                                "judge": judge.spec, "settings": judge.answer_settings,
                                "template": judge.template_hash(rubric), "sample": sample,
                                "swapped": swapped, "measure": measure_settings}
                            if reads_consensus(rubric):
                                # A consensus that changes (more reproductions judged) is a
                                # new input: the audit is judged again.
                                inputs["consensus"] = self._consensus_fact(claim).model_dump(
                                    mode="json")
                            input_hash = content_hash(inputs)
                            items.append(WorkItem(claim, rubric, judge, sample, swapped,
                                                  input_hash))
        return items

    def panel_lines(self, items: list[WorkItem]) -> list[Judgment]:
        """Aggregate lines for every (claim, rubric) judged by more than one member line."""
        groups: dict[tuple[str, str], list[WorkItem]] = {}
        for item in items:
            groups.setdefault((str(item.claim.key), item.rubric.ref_name), []).append(item)
        lines = []
        for group in groups.values():
            if len(group) < 2:
                continue
            members = [self.store.latest_line(_identity(item)) for item in group]
            present = [m for m in members if m is not None and m.input_hash in
                       {i.input_hash for i in group}]
            if len(present) < 2:
                continue
            first = group[0]
            answers, flags = aggregate_panel(first.rubric, present)
            name = panel_name(present)
            input_hash = content_hash(sorted(m.input_hash + m.status.value for m in present))
            template = {m.provenance.template_hash for m in present}
            scored = any(a.status is AnswerStatus.scored for a in answers)
            measurement = Measurement(signals=present[0].signals, artifacts=present[0].artifacts)
            panel_item = WorkItem(first.claim, first.rubric, first.judge, 0, False, input_hash)
            line = build_judgment(
                panel_item, run_id=self.store.info.run_id, measurement=measurement,
                answers=answers, status=LineStatus.scored if scored else LineStatus.unscored,
                reason=None if scored else "no criterion was answered by the members",
                final=all(m.final for m in present))
            line = line.model_copy(update={
                "judge": name, "flags": [*line.flags, *flags],
                "provenance": line.provenance.model_copy(update={
                    "judge": name, "model": None,
                    "settings": {"members": ", ".join(sorted(f"{m.judge}#{m.sample}"
                                                             f"{'/swapped' if m.swapped else ''}"
                                                             for m in present)),
                                 "aggregation": AGGREGATION},
                    "template_hash": template.pop() if len(template) == 1 else None,
                    "request_hash": None})})
            if not self.store.has(line_key(line)):
                lines.append(line)
        return lines

    async def run(self) -> RunResult:
        request = self.request
        store = self.store
        result = RunResult(root=store.root, run_id=store.info.run_id)
        rubrics = self._rubrics()
        judges = self.judges
        registry = load_registry(request.registry) if request.registry else None
        invocation = Invocation(
            started_at=utc_now(), code_version=code_version(), sources=list(request.sources),
            registry=str(request.registry) if request.registry else None,
            rubrics=[f"{r.ref_name}#{r.content_hash()}" for r in rubrics],
            judges=[j.spec for j in judges],
            options={"samples": request.samples, "swap": request.swap,
                     "concurrency": request.concurrency, "max_cost": request.llm.max_cost,
                     **request.measure.as_settings(),
                     **({"discover": " + ".join(request.discover)} if request.discover else {}),
                     **({"as_of": request.as_of.isoformat()} if request.as_of else {}),
                     **({"extract": request.extract} if request.extract else {})})
        store.info.invocations.append(invocation)
        store.write_info()
        try:
            # Rubrics that read the consensus of a registry claim's reproductions (the
            # falsification audit) are judged after every other line, on that consensus.
            later = [r for r in rubrics if reads_consensus(r)]
            await self._judge_all(registry, [r for r in rubrics if r not in later], result)
            result.integrity = find_pairs(store.fingerprints(), store.iter_claims())
            write_integrity(store.root, result.integrity)
            if later:
                self._consensus_due = True
                await self._judge_all(registry, later, result, stored=True)
            write_not_addressed(store.root, result.not_addressed)
            invocation.status = "failed" if result.source_errors else "finished"
        except RunStopped as exc:
            invocation.status = "failed"
            result.source_errors.append(str(exc))
            raise
        except BaseException:
            invocation.status = "interrupted"
            raise
        finally:
            await self.aclose()
            store.close()
            invocation.ended_at = utc_now()
            invocation.errors = result.source_errors
            invocation.skipped = result.skipped_sources
            invocation.submissions = dict(result.submissions)
            result.counts = summarize(store.iter_latest_heads())
            stats = result.measure = self.measure_stats
            invocation.counts = dict(result.counts) | {
                "written": result.written, "skipped": result.skipped,
                "not_addressed": len(result.not_addressed),
                # what measuring cost: figure claims measured, read from the measurement cache,
                # CPU milliseconds spent, measuring processes that died or were stopped on a
                # claim that outlasted the timeout, pools replaced because they broke
                "measured": stats.measured, "measure_cache_hits": stats.cached,
                "measure_cpu_ms": round(stats.cpu_s * 1000),
                "measure_workers_died": stats.workers_died,
                "measure_timed_out": stats.timed_out,
                "measure_pools_replaced": stats.pools_replaced}
            store.write_info()
        # The consensus side file follows the judgments it is computed from: review push and the
        # report read it as written, so a run that adds claims must not leave it stale.
        run_consensus(store.root, store=store)
        return result

    def _consensus_fact(self, claim: ClaimInput) -> Signal:
        """`consensus.agrees` of a claim: whether its verdict is its registry claim's consensus
        verdict (`judging consensus`), absent with the reason when there is none."""
        if self._consensus_due:
            # No line is written between the first pass and this: the same consensus as one
            # computed when the second pass began.
            self._consensus = compute_consensus(self.store.root, store=self.store)
            self._consensus_due = False
        report = self._consensus
        found = report.of(claim.key) if report is not None else None
        if found is None:
            return Signal(status=SignalStatus.absent,
                          reason="not a registry claim with reproductions judged in this run")
        consensus, _ = found
        agrees = report.agrees(claim.key)
        if agrees is None:
            return Signal(status=SignalStatus.absent,
                          reason=f"no consensus verdict for {consensus.claim_id}: "
                                 f"{consensus.reason}")
        return Signal(value=agrees, reason=f"consensus of {consensus.claim_id}: "
                                           f"{consensus.verdict} (support {consensus.support})")

    async def _judge_all(self, registry: Registry | None, rubrics: list[Rubric],
                         result: RunResult, *, stored: bool = False) -> None:
        """Load submission after submission, starting each one's judge calls at once (loading
        and downloading go on in a thread meanwhile), and append lines as calls finish.

        Memory stays flat in the size of the run: at most `self.ahead` work items are in flight
        (loading the next submission waits for room), a claim's measurement is dropped once its
        last line is written, and a panel's line is written as soon as its members' lines are
        (no list of every work item or judgment is kept)."""
        store = self.store
        finished: asyncio.Queue[asyncio.Task[Judgment] | None] = asyncio.Queue()
        running: set[asyncio.Task[Judgment]] = set()
        ahead = asyncio.Semaphore(self.ahead)
        # Work items not yet written, per claim (its measurement is kept until 0) and per panel
        # group of two or more members (claim, rubric): (items left, the group's items).
        left: Counter[ClaimKey] = Counter()
        groups: dict[tuple[str, str], list] = {}
        item_group: dict[int, tuple[str, str]] = {}
        progress = {"done": 0, "total": 0}

        def write(line: Judgment) -> None:
            store.append(line)
            result.written += 1
            progress["done"] += 1
            self._progress(progress["done"], progress["total"])

        def write_panels(group: list[WorkItem]) -> None:
            for line in self.panel_lines(group):
                store.append(line)
                result.written += 1

        def done(item: WorkItem) -> None:
            left[item.claim.key] -= 1
            if left[item.claim.key] <= 0:
                del left[item.claim.key]
                self._drop_measurement(item.claim.key)
            name = item_group.pop(id(item), None)
            if name is not None:
                group = groups[name]
                group[0] -= 1
                if group[0] == 0:
                    del groups[name]
                    write_panels(group[1])

        async def produce() -> None:
            # stored: the claims this run recorded (a second pass over them), else loaded.
            submissions = self._stored_claims() if stored else \
                self._submissions(registry, result)
            while (batch := await asyncio.to_thread(next, submissions, None)) is not None:
                claims, problems = batch
                if not stored:
                    store.record_claims(claims)
                items = self.plan(claims, rubrics)
                del claims
                pending_problems = [j for j in problems if not store.has(line_key(j))]
                pending = [item for item in items if not store.has(item.key)]
                result.skipped += len(items) - len(pending) + len(problems) \
                    - len(pending_problems)
                progress["total"] += len(pending) + len(pending_problems)
                for line in pending_problems:
                    write(line)
                by_group: dict[tuple[str, str], list[WorkItem]] = {}
                for item in items:
                    by_group.setdefault((str(item.claim.key), item.rubric.ref_name),
                                        []).append(item)
                waiting = {id(item) for item in pending}
                for name, group in by_group.items():
                    if len(group) < 2:
                        continue
                    count = sum(1 for item in group if id(item) in waiting)
                    if count == 0:
                        write_panels(group)  # every member was done before: resume the panel
                        continue
                    groups[name] = [count, group]
                    for item in group:
                        if id(item) in waiting:
                            item_group[id(item)] = name
                del items, by_group
                for item in pending:
                    left[item.claim.key] += 1
                for item in pending:
                    await ahead.acquire()
                    task = asyncio.create_task(self._judge(item))
                    task.item = item  # type: ignore[attr-defined]
                    task.add_done_callback(finished.put_nowait)
                    running.add(task)

        producer = asyncio.create_task(produce())
        producer.add_done_callback(lambda _: finished.put_nowait(None))
        producing = True
        try:
            while producing or running:
                task = await finished.get()
                if task is None:
                    producer.result()  # re-raise a loading failure
                    producing = False
                    continue
                running.discard(task)
                ahead.release()
                write(task.result())
                done(task.item)  # type: ignore[attr-defined]
        except BaseException:
            producer.cancel()
            for task in running:
                task.cancel()
            raise

    async def aclose(self) -> None:
        for key in list(self._images):  # claims left in flight (an error, an interrupt)
            self._drop_measurement(key)
        for judge in self.judges:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()
        await self.endpoint.aclose()
        await asyncio.to_thread(self.pool.shutdown)
        self.measure_stats.workers_died = self.pool.died
        self.measure_stats.timed_out = self.pool.timed_out
        self.measure_stats.pools_replaced = self.pool.replaced

    async def estimate(self) -> list[Estimate]:
        """What the pending work would cost, per judge, without calling any endpoint: claims are
        measured and every request is built exactly as it would be sent, so that answers already
        in the cache are not counted."""
        self._estimating = True  # measure (figures are needed to build requests), record nothing
        if self.extractor is not None:
            self.extractor.dry_run = True  # cached extraction answers only; count the rest

        registry = load_registry(self.request.registry) if self.request.registry else None
        rubrics = self._rubrics()
        if any(reads_consensus(r) for r in rubrics) and self.store.claim_count():
            # The audit's inputs hold the consensus of the lines already judged: as a run
            # would see it after its first pass (new claims may still change it).
            self._consensus = compute_consensus(self.store.root)
        rows: dict[str, Estimate] = {}
        for item in self._pending_items(registry, rubrics):
            row = rows.setdefault(item.judge.spec, Estimate(judge=item.judge.spec))
            if item.judge.model is None:  # the offline judge: no endpoint
                row.local += 1
                continue
            measurement = await self._measure(item.claim)
            if item.rubric.applies_to == "figure" and measurement.figure_error:
                row.local += 1
                continue
            estimate = item.judge.estimate(JudgeTask(
                claim=item.claim, rubric=item.rubric, signals=measurement.signals,
                images=measurement.images, sample=item.sample, swapped=item.swapped))
            if estimate is None:
                continue
            if estimate.cached:
                row.cached += 1
                continue
            row.calls += 1
            row.prompt_tokens += estimate.prompt_tokens
            row.completion_tokens += estimate.completion_tokens
            if estimate.cost_usd is None:
                row.priced = False
            else:
                row.cost_usd += estimate.cost_usd
        if self.extractor is not None:
            stats = self.extractor.stats
            cost = self.extractor.dry_cost()
            rows["extract"] = Estimate(
                judge=f"extract {self.extractor.spec}", calls=stats.dry, cached=stats.cached,
                prompt_tokens=stats.dry_prompt_tokens,
                completion_tokens=stats.dry_completion_tokens, cost_usd=cost or 0.0,
                priced=cost is not None)
        return list(rows.values())

    def _pending_items(self, registry: Registry | None, rubrics: list[Rubric]
                       ) -> Iterator[WorkItem]:
        """The work items not done yet, submission by submission; a claim's measurement is
        dropped once its items have been seen."""
        result = RunResult(root=self.store.root, run_id=self.store.info.run_id)
        for claims, _ in self._submissions(registry, result):
            for claim in claims:
                for item in self.plan([claim], rubrics):
                    if not self.store.has(item.key):
                        yield item
                self._drop_measurement(claim.key)

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(done, total)


@dataclass
class Estimate:
    judge: str
    calls: int = 0
    """Calls that would be sent."""
    cached: int = 0
    """Requests already answered in the cache (no call)."""
    local: int = 0
    """Work that needs no endpoint (the offline judge, unreadable figures)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True
    """False when the model has no price entry (the cost is then unknown)."""


def _identity(item: WorkItem) -> Identity:
    """The store identity of a work item's line (see `judging.rundir.identity`)."""
    return (str(item.claim.key), str(item.rubric.ref()), item.judge.spec, item.sample,
            item.swapped)


def not_addressed(loaded: LoadedSubmission, registry: Registry | None) -> list[NotAddressed]:
    """The registry claims of the submission's paper that it has no claim for. A claim that
    failed to load still addresses its registry claim (its error line is its judgment)."""
    if registry is None:
        return []
    answered = {c.claim.claim_id for c in loaded.claims}
    answered |= {p.claim_id for p in loaded.problems if p.claim_id is not None}
    header = loaded.header
    return [NotAddressed(submission_id=header.submission_id, paper_id=header.paper_id,
                         claim_id=entry.claim_id, statement=entry.statement, source=entry.source)
            for entry in registry.not_addressed(header.paper_id, answered)]


def summarize(judgments: Iterable[Judgment | LineHead]) -> Counter[str]:
    counts: Counter[str] = Counter()
    claims: set[str] = set()
    for judgment in judgments:
        counts[f"status:{judgment.status.value}"] += 1
        claims.add(str(judgment.claim))
        if judgment.aggregate is not None and judgment.status is not LineStatus.error:
            counts[f"outcome:{judgment.aggregate.outcome.value}"] += 1
    counts["claims"] = len(claims)
    return counts


def run_judging(request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                ) -> RunResult:
    return asyncio.run(Runner(request, on_progress=on_progress).run())
