"""The judges of a run and the calls that turn a work item into its judgment line: one bound on
the calls in flight shared by every judge (--concurrency), one HTTP connection pool, one budget,
the LLM extractor the logbook importer is given. Every failure of measuring or judging becomes an
error line with its reason; only what stops the run (`RunStopped`) is raised.

Before the first call the endpoint of every LLM judge is checked (`preflight`: a dead endpoint,
refused credentials or an unknown model stop the run with the cause before anything is judged);
during the run a breaker stops it when calls keep failing for the same cause (`Breaker`), rather
than writing the same unscored line for every claim; `calls` counts what the endpoint did."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from judging.errors import JudgingError, RunStopped
from judging.judges import (
    Budget,
    JudgeContext,
    JudgeResult,
    JudgeTask,
    make_extractor,
    make_judge,
)
from judging.models import AnswerStatus, ClaimInput, Judgment, LineStatus, Signal
from judging.rules import CONSENSUS_AGREES
from judging.run.audit import reads_consensus
from judging.run.lines import WorkItem, build_judgment, unscored_all
from judging.run.measure import Measurement
from judging.run.pool import MeasureWorkerDied
from judging.run.request import Estimate, RunRequest
from judging.run.reruns import RerunFacts

log = logging.getLogger(__name__)

#: Calls in a row that fail for the same cause before the run stops (a dead endpoint or a server
#: down: every later call would fail the same way). Fewer than the calls in flight at a usual
#: --concurrency would not do: those all fail together when the endpoint goes away.
BREAKER_FAILURES = 12


class Breaker:
    """Counts the calls in a row that failed for one cause (a passing failure: unreachable, timed
    out, a server error; not the budget, not a model's refusal); trips at BREAKER_FAILURES."""

    def __init__(self, limit: int = BREAKER_FAILURES):
        self.limit = limit
        self.cause: str | None = None
        self.count = 0
        self.calls = 0
        """Calls answered by the endpoint or failed trying (cached answers are not calls)."""
        self.failed = 0

    def record(self, result: JudgeResult) -> None:
        if result.cached or result.error == "budget":
            return
        self.calls += 1
        failure = (not result.final and result.error is not None and
                   not any(a.status is AnswerStatus.scored for a in result.answers))
        if not failure:
            self.cause, self.count = None, 0
            return
        self.failed += 1
        self.count = self.count + 1 if result.error == self.cause else 1
        self.cause = result.error
        if self.count >= self.limit:
            raise RunStopped(f"stopped after {self.count} calls in a row failed the same way: "
                             f"{self.cause}; the lines written so far are kept and a rerun "
                             f"tries the failed ones again")

    def all_failed(self) -> str | None:
        """The cause, when the endpoint was called and every call failed."""
        if self.calls and self.failed == self.calls:
            return (f"every call to the judge endpoint failed ({self.calls} of {self.calls}); "
                    f"the last: {self.cause}")
        return None


class Calls:
    """The judges of one run, and `line(item)`: a work item's judgment line."""

    def __init__(self, request: RunRequest, *, run_id: str,
                 measure: Callable[[ClaimInput], Awaitable[Measurement]],
                 consensus_fact: Callable[[ClaimInput], Signal],
                 rerun_facts: RerunFacts | None = None):
        llm = request.llm
        self.llm = llm
        self.breaker = Breaker()
        self.run_id = run_id
        self.measure = measure
        self.consensus_fact = consensus_fact
        self.rerun_facts = rerun_facts
        self.budget = Budget(llm.max_cost) if llm.max_cost is not None else None
        # Tasks past their measurement: twice the call bound, so that the next prompts are built
        # while calls are in flight, without building all of a large run's prompts at once.
        self.window = asyncio.Semaphore(2 * max(1, request.concurrency))
        # What the judges share: one bound on the calls in flight (--concurrency), the budget,
        # and the connections a backend keeps for all its judges, sized to that bound.
        self.context = JudgeContext(llm, budget=self.budget,
                                    limiter=asyncio.Semaphore(max(1, request.concurrency)),
                                    connections=request.concurrency)
        self.judges = [make_judge(spec, self.context) for spec in request.judges]
        # The LLM extractor is built here (the judges' backend, cache, budget) and injected into
        # the logbook importer, which sits below judges and cannot import it.
        self.extractor = make_extractor(request.extract, self.context) \
            if request.extract else None

    def preflight(self) -> None:
        """Check every judge and the extractor, once per spec, before the first call
        (`RunStopped` with the cause: a dead endpoint, refused credentials, an unknown model)."""
        checked: set[str] = set()
        for part in [*self.judges, *([self.extractor] if self.extractor is not None else [])]:
            if part.spec not in checked:
                checked.add(part.spec)
                part.preflight()

    def error_line(self, item: WorkItem, measurement: Measurement, reason: str, *,
                   final: bool = True) -> Judgment:
        return build_judgment(item, run_id=self.run_id, measurement=measurement,
                              answers=unscored_all(item.rubric, reason),
                              status=LineStatus.error, reason=reason, final=final)

    async def task(self, item: WorkItem) -> tuple[JudgeTask, Measurement] | Judgment:
        """What the judge is shown for an item (its claim measured, with the measurement the
        line records), or the item's error line."""
        try:
            measurement = await self.measure(item.claim)
        except RunStopped:
            raise  # no figure can be measured here: stop the run (a rerun resumes)
        except MeasureWorkerDied as exc:  # not this claim's fault, maybe: a rerun tries again
            return self.error_line(item, Measurement(), f"signals could not be computed: {exc}",
                                   final=False)
        except Exception as exc:  # recorded on this claim's lines; the batch goes on
            log.exception("measuring %s failed", item.claim.key)
            return self.error_line(item, Measurement(), f"signals could not be computed: "
                                                        f"{type(exc).__name__}: {exc}")
        if item.rubric.applies_to == "figure" and measurement.figure_error:
            return self.error_line(item, measurement,
                                   f"figure cannot be judged: {measurement.figure_error}")
        if self.rerun_facts is not None:  # recorded on the line, like the consensus fact
            measurement = replace(measurement, signals=self.rerun_facts.with_facts(
                item.rubric, item.claim, measurement.signals))
        if reads_consensus(item.rubric):
            # The fact is recorded on the line like any signal (provenance), not in the
            # claim's shared measurement.
            measurement = replace(measurement, signals={
                **measurement.signals, CONSENSUS_AGREES: self.consensus_fact(item.claim)})
        return JudgeTask(claim=item.claim, rubric=item.rubric, signals=measurement.signals,
                         images=measurement.images, sample=item.sample,
                         swapped=item.swapped), measurement

    async def line(self, item: WorkItem) -> Judgment:
        """One judgment line; every failure becomes an error line with its reason."""
        prepared = await self.task(item)
        if isinstance(prepared, Judgment):
            return prepared
        task, measurement = prepared
        async with self.window:
            try:
                result = await item.judge(task)
            except RunStopped:
                raise  # the judge cannot work at all: stop the run
            except JudgingError as exc:
                return self.error_line(item, measurement, str(exc))
            except Exception as exc:  # a judge bug must not sink the batch; it is logged loudly
                log.exception("judge %s failed on %s", item.judge.spec, item.claim.key)
                return self.error_line(item, measurement, f"internal error in judge "
                                       f"{item.judge.spec}: {type(exc).__name__}: {exc}")
        if item.judge.model is not None:
            self.breaker.record(result)  # raises RunStopped when calls keep failing alike
        scored = any(a.status is AnswerStatus.scored for a in result.answers)
        reason = None if scored else (result.error or "no criterion could be answered by this "
                                                      "judge")
        return build_judgment(
            item, run_id=self.run_id, measurement=measurement,
            answers=result.answers, status=LineStatus.scored if scored else LineStatus.unscored,
            reason=reason, final=result.final, settings_used=result.settings_used,
            **result.call_record())

    def extract_estimate(self) -> Estimate | None:
        """What the extractor's requests a dry run did not send would cost."""
        if self.extractor is None:
            return None
        stats = self.extractor.stats
        cost = self.extractor.dry_cost()
        return Estimate(judge=f"extract {self.extractor.spec}", calls=stats.dry,
                        cached=stats.cached, prompt_tokens=stats.dry_prompt_tokens,
                        completion_tokens=stats.dry_completion_tokens, cost_usd=cost or 0.0,
                        priced=cost is not None)

    async def aclose(self) -> None:
        for judge in self.judges:
            await judge.close()
        await self.context.close()
        if self.extractor is not None:
            # Its connections live in an event loop of its own (`judges.openai.transport.Portal`)
            await asyncio.to_thread(self.extractor.close)
