"""What one `judging run` is asked (`RunRequest`) and what it gives (`RunResult`, or with
--estimate one `Estimate` per judge); the invocation it records in run.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from judging.intake import DownloadLimits
from judging.judges import CallEstimate, Judge, LLMOptions
from judging.models import (
    DriftReport,
    Judgment,
    LineStatus,
    NotAddressed,
    SubmissionSource,
)
from judging.rubrics import Rubric
from judging.run.measure import MeasureOptions
from judging.run.pool import DEFAULT_MEASURE_TIMEOUT, MeasureStats
from judging.rundir import Invocation, LineHead, Shard, UnreadableSource, utc_now
from judging.version import code_version


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
    """LLM judges also see figure claims in the other figure order (an answer that changes with
    the order is a doubt: judges.panel.orders_disagree). `judging run` asks both orders unless
    told --no-swap; a request built in code asks what it says."""
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
    download_limits: DownloadLimits = field(default_factory=DownloadLimits)
    """What one Hub submission may hold to be downloaded (`--max-download-files/-mb`)."""
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
    integrity_pairs: Counter[str] = field(default_factory=Counter)
    """Integrity pairs found, per kind (the pairs themselves are in integrity.json: a run keeps
    their counts, not a model per pair; see `memory`)."""
    not_addressed: list[NotAddressed] = field(default_factory=list)
    """Registry claims of the submissions' papers that a submission has no claim for."""
    skipped_sources: list[str] = field(default_factory=list)
    """Sources left out on purpose, with the reason (no commit before --as-of)."""
    notes: list[str] = field(default_factory=list)
    """What source planning did (Spaces discovered...)."""
    submissions: dict[str, SubmissionSource] = field(default_factory=dict)
    """Submission id -> the Hub revision judged."""
    unreadable: dict[str, UnreadableSource] = field(default_factory=dict)
    """Submission folders (and Hub sources) that could not be read, by `source_label`, with why
    (run.json keeps them: the leaderboard lists them unranked)."""
    read_sources: list[str] = field(default_factory=list)
    """The submission folders read, by `source_label`."""
    loaded: set[str] = field(default_factory=set)
    """The submissions this invocation loaded (their not-addressed records are its own)."""
    measure: MeasureStats = field(default_factory=MeasureStats)
    """Figure claims measured and read from the measurement cache."""
    drift: DriftReport | None = None
    """What each LLM judge's endpoint said served its calls, and the lines served by another
    model or build than its first calls (drift.json)."""

    @property
    def failed(self) -> bool:
        return bool(self.source_errors)


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

    def add(self, call: CallEstimate) -> None:
        """One request the judge would send, or find answered in the cache."""
        if call.cached:
            self.cached += 1
            return
        self.calls += 1
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        if call.cost_usd is None:
            self.priced = False
        else:
            self.cost_usd += call.cost_usd


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


def invocation(request: RunRequest, rubrics: list[Rubric], judges: list[Judge]) -> Invocation:
    """The invocation a run records in run.json as it starts."""
    return Invocation(
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


def record_end(invocation: Invocation, result: RunResult, heads: Iterable[LineHead],
               stats: MeasureStats) -> None:
    """What the invocation did, as it ends (finished, failed or interrupted)."""
    invocation.ended_at = utc_now()
    invocation.errors = result.source_errors
    invocation.skipped = result.skipped_sources
    invocation.unreadable = dict(result.unreadable)
    invocation.read = list(result.read_sources)
    invocation.submissions = dict(result.submissions)
    result.counts = summarize(heads)
    result.measure = stats
    invocation.counts = dict(result.counts) | {
        "written": result.written, "skipped": result.skipped,
        "not_addressed": len(result.not_addressed),
        # what measuring cost: figure claims measured, read from the measurement cache, CPU
        # milliseconds spent, measuring processes that died or were stopped on a claim that
        # outlasted the timeout, pools replaced because they broke
        "measured": stats.measured, "measure_cache_hits": stats.cached,
        "measure_cpu_ms": round(stats.cpu_s * 1000),
        "measure_workers_died": stats.workers_died,
        "measure_timed_out": stats.timed_out,
        "measure_pools_replaced": stats.pools_replaced}
