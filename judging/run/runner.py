"""The `judging run` stage: load submissions, measure signals, judge, append to the run store.

A rerun over the same `--out` resumes: work whose inputs are unchanged is skipped. One bad claim is
recorded as an error line and never stops the batch.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from judging.errors import JudgingError
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
    JudgeConfigError,
    JudgeTask,
    LLMOptions,
    aggregate_panel,
    make_judge,
    panel_name,
    structured_caller,
)
from judging.models import (
    FIGURE_MATCH_NOT_APPLICABLE,
    AnswerStatus,
    ClaimInput,
    ClaimKey,
    Fingerprint,
    IntegrityReport,
    Judgment,
    LineStatus,
    NotAddressed,
    SubmissionSource,
)
from judging.rubrics import Rubric, RubricLibrary, resolve_rubric
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
from judging.run.pool import MeasurementCache, MeasurePool, MeasureStats, MeasureWorkerDied
from judging.rundir import (
    Invocation,
    RunStore,
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
    measure_cache: Path | None = None
    """The measurement cache (`--measure-cache`); None: `measurements/` in the run directory."""
    measure_workers: int | None = None
    """Measuring processes; None: one per core; 0: measure in a thread of this process."""


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


class Runner:
    """One invocation of `judging run`."""

    def __init__(self, request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                 ):
        self.request = request
        self.on_progress = on_progress
        self.store = RunStore.open(request.out)
        self.library = RubricLibrary(request.rubrics_dir) if request.rubrics_dir else None
        self._measurements: dict[ClaimKey, asyncio.Future[Measurement]] = {}
        self._items_left: Counter[ClaimKey] = Counter()
        """Work items per claim not finished yet: a claim's measurement is dropped after its
        last item (a long run keeps only the measurements in use)."""
        self._measuring: dict[str, asyncio.Future[None]] = {}
        """Measurement keys being measured: an identical figure pair waits, then reads the
        cache."""
        self.pool = MeasurePool(request.measure_workers)
        self.measure_cache = MeasurementCache(request.measure_cache or self.store.paths.measurements)
        self.measure_stats = MeasureStats()
        self._estimating = False
        llm = request.llm
        self.budget = Budget(llm.max_cost) if llm.max_cost is not None else None
        # One bound on the calls in flight, shared by every judge of the run (--concurrency).
        self.limiter = asyncio.Semaphore(max(1, request.concurrency))
        # Tasks past their measurement: twice the call bound, so that the next prompts are built
        # while calls are in flight, without building all of a large run's prompts at once.
        self.window = asyncio.Semaphore(2 * max(1, request.concurrency))
        # Work items measured (or being measured) ahead of the calls: the window's items plus
        # as many again and a few per measuring process, so that the pool is never idle while
        # calls wait, and a large run is not measured all at once.
        self.ahead = asyncio.Semaphore(4 * max(1, request.concurrency)
                                       + 4 * max(1, self.pool.workers))
        # One HTTP connection pool for every LLM judge of the run, sized to that bound.
        self.endpoint = EndpointClient(llm, connections=request.concurrency)
        self.judges = [make_judge(spec, llm=llm, budget=self.budget, limiter=self.limiter,
                                  endpoint=self.endpoint)
                       for spec in request.judges]
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
            future.set_result(measurement)
            if measurement.fingerprint is not None and not self._estimating:
                self.store.record_fingerprint(Fingerprint(claim=claim.key,
                                                          phash=measurement.fingerprint))
        return await future

    async def _measure_once(self, claim: ClaimInput) -> Measurement:
        """From the measurement cache, else in the pool; other claims' signals (numbers) cost
        microseconds and are computed here."""
        options = self.request.measure
        key = await asyncio.to_thread(measurement_key, claim, options)  # hashes the files
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

    def _error_line(self, item: WorkItem, measurement: Measurement, reason: str, *,
                    final: bool = True) -> Judgment:
        return build_judgment(item, run_id=self.store.info.run_id, measurement=measurement,
                              answers=unscored_all(item.rubric, reason),
                              status=LineStatus.error, reason=reason, final=final)

    async def _judge(self, item: WorkItem) -> Judgment:
        """One judgment line; every failure becomes an error line with its reason."""
        try:
            async with self.ahead:
                return await self._judge_measured(item)
        finally:
            key = item.claim.key
            self._items_left[key] -= 1
            if self._items_left[key] <= 0:
                del self._items_left[key]
                self._measurements.pop(key, None)

    async def _judge_measured(self, item: WorkItem) -> Judgment:
        try:
            measurement = await self._measure(item.claim)
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
        task = JudgeTask(claim=item.claim, rubric=item.rubric, signals=measurement.signals,
                         images=measurement.images, sample=item.sample, swapped=item.swapped)
        async with self.window:
            try:
                result = await item.judge(task)
            except JudgeConfigError:
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
                result.not_addressed += not_addressed(loaded, registry)
                claims = loaded.claims
                if planned.provenance is not None:
                    result.submissions[sid] = planned.provenance
                    claims = [claim.model_copy(update={"source": planned.provenance})
                              for claim in claims]
                yield claims, [problem_judgment(p, run_id=run_id,
                                                       paper_id=loaded.header.paper_id)
                                      for p in loaded.problems]

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
            fingerprint = claim_fingerprint(claim)
            for rubric in rubrics:
                if not rubric.applies_to_kind(claim.claim.kind):
                    continue
                if rubric.applies_to == "figure" and any(
                        f.name == FIGURE_MATCH_NOT_APPLICABLE for f in claim.flags):
                    continue
                for judge in self.judges:
                    orders = [False, True] if (self.request.swap and judge.model is not None
                                               and rubric.applies_to == "figure") else [False]
                    for sample in range(samples_for(judge, self.request.samples)):
                        for swapped in orders:
                            input_hash = content_hash({
                                "claim": fingerprint, "rubric": rubric.content_hash(),
                                "judge": judge.spec, "settings": judge.answer_settings,
                                "template": judge.template_hash(rubric), "sample": sample,
                                "swapped": swapped, "measure": measure_settings})
                            items.append(WorkItem(claim, rubric, judge, sample, swapped,
                                                  input_hash))
        return items

    def panel_lines(self, items: list[WorkItem]) -> list[Judgment]:
        """Aggregate lines for every (claim, rubric) judged by more than one member line."""
        groups: dict[tuple[str, str], list[WorkItem]] = {}
        for item in items:
            groups.setdefault((str(item.claim.key), item.rubric.ref_name), []).append(item)
        if all(len(group) < 2 for group in groups.values()):
            return []
        latest = {line_key(j)[:-1]: j for j in self.store.latest()}
        lines = []
        for group in groups.values():
            if len(group) < 2:
                continue
            members = [latest.get(item.key[:-1]) for item in group]
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
            items = await self._judge_all(registry, rubrics, result)
            for line in self.panel_lines(items):
                store.append(line)
                result.written += 1
            result.integrity = find_pairs(store.fingerprints(), store.claims())
            write_integrity(store.root, result.integrity)
            write_not_addressed(store.root, result.not_addressed)
            invocation.status = "failed" if result.source_errors else "finished"
        except JudgeConfigError as exc:
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
            latest = [j for j in store.latest()]
            result.counts = summarize(latest)
            stats = result.measure = self.measure_stats
            invocation.counts = dict(result.counts) | {
                "written": result.written, "skipped": result.skipped,
                "not_addressed": len(result.not_addressed),
                # what measuring cost: figure claims measured, read from the measurement cache,
                # CPU milliseconds spent, pools lost to a dead measuring process
                "measured": stats.measured, "measure_cache_hits": stats.cached,
                "measure_cpu_ms": round(stats.cpu_s * 1000),
                "measure_workers_died": stats.workers_died}
            store.write_info()
        return result

    async def _judge_all(self, registry: Registry | None, rubrics: list[Rubric],
                         result: RunResult) -> list[WorkItem]:
        """Load submission after submission, starting each one's judge calls at once (loading
        and downloading go on in a thread meanwhile), and append lines as calls finish."""
        store = self.store
        finished: asyncio.Queue[asyncio.Task[Judgment] | None] = asyncio.Queue()
        planned: list[WorkItem] = []
        launched: list[asyncio.Task[Judgment]] = []
        progress = {"done": 0, "total": 0}

        def write(line: Judgment) -> None:
            store.append(line)
            result.written += 1
            progress["done"] += 1
            self._progress(progress["done"], progress["total"])

        async def produce() -> None:
            submissions = self._submissions(registry, result)
            while (batch := await asyncio.to_thread(next, submissions, None)) is not None:
                claims, problems = batch
                store.record_claims(claims)
                items = self.plan(claims, rubrics)
                planned.extend(items)
                pending_problems = [j for j in problems if not store.has(line_key(j))]
                pending = [item for item in items if not store.has(item.key)]
                result.skipped += len(items) - len(pending) + len(problems) \
                    - len(pending_problems)
                progress["total"] += len(pending) + len(pending_problems)
                for line in pending_problems:
                    write(line)
                for item in pending:
                    self._items_left[item.claim.key] += 1
                for item in pending:
                    task = asyncio.create_task(self._judge(item))
                    task.add_done_callback(finished.put_nowait)
                    launched.append(task)

        producer = asyncio.create_task(produce())
        producer.add_done_callback(lambda _: finished.put_nowait(None))
        written_from_tasks = 0
        producing = True
        try:
            while producing or written_from_tasks < len(launched):
                task = await finished.get()
                if task is None:
                    producer.result()  # re-raise a loading failure
                    producing = False
                    continue
                write(task.result())
                written_from_tasks += 1
        except BaseException:
            producer.cancel()
            for task in launched:
                task.cancel()
            raise
        return planned

    async def aclose(self) -> None:
        for judge in self.judges:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()
        await self.endpoint.aclose()
        await asyncio.to_thread(self.pool.shutdown)
        self.measure_stats.workers_died = self.pool.died

    async def estimate(self) -> list[Estimate]:
        """What the pending work would cost, per judge, without calling any endpoint: claims are
        measured and every request is built exactly as it would be sent, so that answers already
        in the cache are not counted."""
        from judging.judges import OpenAIJudge, estimate_tokens

        self._estimating = True  # measure (figures are needed to build requests), record nothing
        if self.extractor is not None:
            self.extractor.dry_run = True  # cached extraction answers only; count the rest

        registry = load_registry(self.request.registry) if self.request.registry else None
        claims, _ = self._load(registry, RunResult(root=self.store.root,
                                                   run_id=self.store.info.run_id))
        items = [i for i in self.plan(claims, self._rubrics()) if not self.store.has(i.key)]
        rows: dict[str, Estimate] = {}
        for item in items:
            row = rows.setdefault(item.judge.spec, Estimate(judge=item.judge.spec))
            if not isinstance(item.judge, OpenAIJudge):
                row.local += 1
                continue
            measurement = await self._measure(item.claim)
            if item.rubric.applies_to == "figure" and measurement.figure_error:
                row.local += 1
                continue
            request = item.judge.prepare(JudgeTask(
                claim=item.claim, rubric=item.rubric, signals=measurement.signals,
                images=measurement.images, sample=item.sample, swapped=item.swapped))
            if request is None:
                continue
            cache = item.judge.cache
            if cache is not None and item.judge.options.use_cache and \
                    cache.get(request.request_hash) is not None:
                row.cached += 1
                continue
            prompt_tokens, completion_tokens = estimate_tokens(
                request, detail=item.judge.options.image_detail)
            row.calls += 1
            row.prompt_tokens += prompt_tokens
            row.completion_tokens += completion_tokens
            if item.judge.price is None:
                row.priced = False
            else:
                row.cost_usd += (prompt_tokens * item.judge.price[0]
                                 + completion_tokens * item.judge.price[1]) / 1_000_000
        if self.extractor is not None:
            stats = self.extractor.stats
            cost = stats.dry_cost(self.extractor.price)
            rows["extract"] = Estimate(
                judge=f"extract {self.extractor.spec}", calls=stats.dry, cached=stats.cached,
                prompt_tokens=stats.dry_prompt_tokens,
                completion_tokens=stats.dry_completion_tokens, cost_usd=cost or 0.0,
                priced=cost is not None)
        return list(rows.values())

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


def summarize(judgments: list[Judgment]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for judgment in judgments:
        counts[f"status:{judgment.status.value}"] += 1
        if judgment.aggregate is not None and judgment.status is not LineStatus.error:
            counts[f"outcome:{judgment.aggregate.outcome.value}"] += 1
    counts["claims"] = len({str(j.claim) for j in judgments})
    return counts


def run_judging(request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                ) -> RunResult:
    return asyncio.run(Runner(request, on_progress=on_progress).run())
