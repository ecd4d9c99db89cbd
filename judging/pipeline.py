"""The `judging run` stage: load submissions, measure signals, judge, append to the run store.

A rerun over the same `--out` resumes: work whose inputs are unchanged is skipped. One bad claim is
recorded as an error line and never stops the batch.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import JudgingError
from .hashing import content_hash, file_sha256, slug
from .judges import Judge, JudgeTask, make_judge
from .measure import MeasureOptions, Measurement, measure_claim
from .models import (Aggregate, AnswerStatus, ClaimInput, ClaimKey, ClaimProblem, CriterionAnswer,
                     Judgment, LineStatus, Outcome, Provenance, ReferenceOrigin)
from .rubrics import Rubric, RubricLibrary, aggregate, resolve_rubric
from .store import Invocation, LineKey, RunStore, line_key, utc_now
from .submissions import Registry, expand_source, load_registry, load_submission
from .version import code_version

log = logging.getLogger(__name__)

LOADER = "loader"
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
    concurrency: int = 8
    measure: MeasureOptions = field(default_factory=MeasureOptions)
    rubrics_dir: Path | None = None


@dataclass
class RunResult:
    root: Path
    run_id: str
    written: int = 0
    skipped: int = 0
    source_errors: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def failed(self) -> bool:
        return bool(self.source_errors)


@dataclass
class WorkItem:
    claim: ClaimInput
    rubric: Rubric
    judge: Judge
    sample: int
    input_hash: str

    @property
    def key(self) -> LineKey:
        rubric = self.rubric.ref()
        return LineKey(str(self.claim.key), f"{rubric}#{rubric.hash}", self.judge.spec,
                       self.sample, self.input_hash)


def claim_fingerprint(claim: ClaimInput) -> dict[str, object]:
    """Everything about a claim that a judgment depends on, file contents included."""
    files = {"published": claim.published_path, "reproduced": claim.reproduced_path,
             "participant_reference": claim.participant_reference_path, **claim.evidence_paths}
    return {
        "key": str(claim.key),
        "submission": claim.submission.model_dump(mode="json"),
        "claim": claim.claim.model_dump(mode="json"),
        "reference": claim.reference.value,
        "flags": [f.model_dump() for f in claim.flags],
        "files": {role: (file_sha256(path) if path is not None else None)
                  for role, path in sorted(files.items())},
    }


def _samples_for(judge: Judge, requested: int) -> int:
    # The offline judge is deterministic: more samples would only repeat the same answers.
    return 1 if judge.model is None else requested


def _provenance(judge: Judge | None, rubric: Rubric | None, **extra: object) -> Provenance:
    return Provenance(
        judge=judge.spec if judge is not None else LOADER,
        model=judge.model if judge is not None else None,
        settings=dict(judge.settings) if judge is not None else {},
        template_hash=judge.template_hash(rubric) if judge is not None and rubric else None,
        timestamp=utc_now(), code_version=code_version(), **extra)  # type: ignore[arg-type]


def problem_judgment(problem: ClaimProblem, *, run_id: str, paper_id: str | None) -> Judgment:
    return Judgment(
        run_id=run_id, claim=problem.key, paper_id=paper_id, kind=problem.kind,
        verdict=problem.verdict, rubric=None, judge=LOADER, sample=0,
        input_hash=content_hash({"problem": problem.model_dump(mode="json", exclude={"manifest"})}),
        status=LineStatus.error,
        reason=f"claim could not be loaded: {problem.reason}"
               + (f" ({problem.manifest}:{problem.line})" if problem.line else ""),
        provenance=_provenance(None, None))


def _unscored_all(rubric: Rubric, reason: str) -> list[CriterionAnswer]:
    return [CriterionAnswer(criterion_id=c.id, status=AnswerStatus.unscored, reason=reason)
            for c in rubric.criteria]


def build_judgment(item: WorkItem, *, run_id: str, measurement: Measurement,
                   answers: list[CriterionAnswer], status: LineStatus, reason: str | None,
                   **provenance: object) -> Judgment:
    claim = item.claim
    agg: Aggregate = aggregate(item.rubric, answers)
    return Judgment(
        run_id=run_id, claim=claim.key, paper_id=claim.submission.paper_id, kind=claim.claim.kind,
        verdict=claim.claim.verdict, reference=claim.reference, rubric=item.rubric.ref(),
        judge=item.judge.spec, sample=item.sample, input_hash=item.input_hash, status=status,
        reason=reason, answers=answers, aggregate=agg, signals=measurement.signals,
        flags=[*claim.flags, *measurement.flags], artifacts=measurement.artifacts,
        provenance=_provenance(item.judge, item.rubric, **provenance))


class Runner:
    """One invocation of `judging run`."""

    def __init__(self, request: RunRequest, *, on_progress: Callable[[int, int], None] | None = None
                 ):
        self.request = request
        self.on_progress = on_progress
        self.store = RunStore.open(request.out)
        self.library = RubricLibrary(request.rubrics_dir) if request.rubrics_dir else None
        self._measurements: dict[ClaimKey, asyncio.Future[Measurement]] = {}
        self._cpu = asyncio.Semaphore(max(1, os.cpu_count() or 1))

    def _rubrics(self) -> list[Rubric]:
        library = self.library or RubricLibrary()
        if not self.request.rubrics:
            return library.defaults()
        return [resolve_rubric(spec, library) for spec in self.request.rubrics]

    async def _measure(self, claim: ClaimInput) -> Measurement:
        future = self._measurements.get(claim.key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._measurements[claim.key] = future
            out_dir = self.store.diffs_dir / slug(str(claim.key))
            async with self._cpu:
                try:
                    measurement = await asyncio.to_thread(
                        measure_claim, claim, options=self.request.measure,
                        run_root=self.store.root, out_dir=out_dir)
                except Exception as exc:  # recorded on every line of this claim, batch goes on
                    future.set_exception(exc)
                    raise
                future.set_result(measurement)
        return await future

    def _error_line(self, item: WorkItem, measurement: Measurement, reason: str) -> Judgment:
        return build_judgment(item, run_id=self.store.info.run_id, measurement=measurement,
                              answers=_unscored_all(item.rubric, reason),
                              status=LineStatus.error, reason=reason)

    async def _judge(self, item: WorkItem, limit: asyncio.Semaphore) -> Judgment:
        """One judgment line; every failure becomes an error line with its reason."""
        try:
            measurement = await self._measure(item.claim)
        except Exception as exc:  # recorded on this claim's lines; the batch goes on
            log.exception("measuring %s failed", item.claim.key)
            return self._error_line(item, Measurement(), f"signals could not be computed: "
                                                         f"{type(exc).__name__}: {exc}")
        if item.rubric.applies_to == "figure" and measurement.figure_error:
            return self._error_line(item, measurement,
                                    f"figure cannot be judged: {measurement.figure_error}")
        task = JudgeTask(claim=item.claim, rubric=item.rubric, signals=measurement.signals,
                         images=measurement.images, sample=item.sample)
        async with limit:
            try:
                result = await item.judge(task)
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
            reason=reason, request_hash=result.request_hash, raw_answer=result.raw_answer,
            usage=result.usage, latency_s=result.latency_s, cost_usd=result.cost_usd)

    def _load(self, registry: Registry | None, result: RunResult
              ) -> tuple[list[ClaimInput], list[Judgment]]:
        claims: list[ClaimInput] = []
        errors: list[Judgment] = []
        seen_submissions: dict[str, Path] = {}
        run_id = self.store.info.run_id
        download_root = self.store.root / "sources"
        for source in self.request.sources:
            try:
                folders = expand_source(source, download_root=download_root)
            except JudgingError as exc:
                result.source_errors.append(str(exc))
                continue
            for folder in folders:
                try:
                    loaded = load_submission(folder, registry=registry)
                except JudgingError as exc:
                    result.source_errors.append(str(exc))
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
                claims.extend(loaded.claims)
                errors.extend(problem_judgment(p, run_id=run_id, paper_id=loaded.header.paper_id)
                              for p in loaded.problems)
        return claims, errors

    def plan(self, claims: list[ClaimInput], rubrics: list[Rubric], judges: list[Judge]
             ) -> list[WorkItem]:
        items = []
        measure_settings = self.request.measure.as_settings()
        for claim in claims:
            fingerprint = claim_fingerprint(claim)
            for rubric in rubrics:
                if not rubric.applies_to_kind(claim.claim.kind):
                    continue
                for judge in judges:
                    for sample in range(_samples_for(judge, self.request.samples)):
                        input_hash = content_hash({
                            "claim": fingerprint, "rubric": rubric.content_hash(),
                            "judge": judge.spec, "settings": judge.settings,
                            "template": judge.template_hash(rubric), "sample": sample,
                            "measure": measure_settings})
                        items.append(WorkItem(claim, rubric, judge, sample, input_hash))
        return items

    async def run(self) -> RunResult:
        request = self.request
        store = self.store
        result = RunResult(root=store.root, run_id=store.info.run_id)
        rubrics = self._rubrics()
        judges = [make_judge(spec) for spec in request.judges]
        registry = load_registry(request.registry) if request.registry else None
        invocation = Invocation(
            started_at=utc_now(), code_version=code_version(), sources=list(request.sources),
            registry=str(request.registry) if request.registry else None,
            rubrics=[f"{r.ref_name}#{r.content_hash()}" for r in rubrics],
            judges=[j.spec for j in judges],
            options={"samples": request.samples, "concurrency": request.concurrency,
                     **request.measure.as_settings()})
        store.info.invocations.append(invocation)
        store.write_info()
        try:
            claims, error_lines = self._load(registry, result)
            store.record_claims(claims)
            items = self.plan(claims, rubrics, judges)
            pending_errors = [j for j in error_lines if not store.has(line_key(j))]
            pending = [item for item in items if not store.has(item.key)]
            result.skipped = len(items) - len(pending) + len(error_lines) - len(pending_errors)
            total = len(pending) + len(pending_errors)
            done = 0
            for judgment in pending_errors:
                store.append(judgment)
                result.written += 1
                done += 1
                self._progress(done, total)
            limit = asyncio.Semaphore(max(1, request.concurrency))
            for next_line in asyncio.as_completed([self._judge(item, limit) for item in pending]):
                store.append(await next_line)
                result.written += 1
                done += 1
                self._progress(done, total)
            invocation.status = "failed" if result.source_errors else "finished"
        except BaseException:
            invocation.status = "interrupted"
            raise
        finally:
            store.close()
            invocation.ended_at = utc_now()
            invocation.errors = result.source_errors
            latest = [j for j in store.latest()]
            result.counts = summarize(latest)
            invocation.counts = dict(result.counts) | {"written": result.written,
                                                       "skipped": result.skipped}
            store.write_info()
        return result

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(done, total)


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


__all__ = ["RunRequest", "RunResult", "Runner", "run_judging", "summarize", "Outcome",
           "ReferenceOrigin"]
