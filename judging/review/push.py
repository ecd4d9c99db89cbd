"""`judging review push RUN_DIR`: judgments into Argilla as records with AI suggestions.

Idempotent: record ids are derived from the claim key and the rubric version, so a re-push updates
records in place and never touches the responses people gave. Streamed and batched: records are
built one (claim, rubric) at a time from the run directory and sent in batches, two in flight.
Resumable: after each batch the server acknowledged, its records are appended to
RUN_DIR/pushed.jsonl (dataset id on the server, record id, digest of the record's content), so a
rerun after an interruption sends only the records that are missing or changed; a dataset deleted
and created again has a new id, so its records are all sent again. `full=True` sends everything.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import argilla as rg
import argilla.records._dataset_records as _sdk_records
import httpx
from pydantic import Field
from tenacity import (
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from judging.errors import JudgingError, ReviewError
from judging.hashing import content_hash
from judging.models import ClaimInput, Judgment, VersionedModel, ref_name
from judging.resolve import PlannedClaim
from judging.review.dataset import (
    SEPARATE,
    SIDE_BY_SIDE,
    Priority,
    ReviewRecord,
    build_record,
    build_settings,
    dataset_name,
    design_of,
    falsification_supported,
    in_calibration,
    record_id,
    review_priority,
)
from judging.rubrics import FALSIFICATION_AUDIT, Rubric, RubricLibrary
from judging.rundir import (
    RunStore,
    claim_chart_trace,
    cut_torn_tail,
    flags_by_claim,
    iter_jsonl,
    judged_claims,
    utc_now,
    with_flags,
)

log = logging.getLogger(__name__)
DEFAULT_WORKSPACE = "judging"


class PushedRecord(VersionedModel):
    """One record the server acknowledged (RUN_DIR/pushed.jsonl): the resume point of a push."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.pushed/1"] = Field(default="judging.pushed/1", alias="schema")
    api_url: str
    workspace: str
    dataset: str
    dataset_id: str
    """The dataset's id on the server: a dataset made again has another, and is pushed again."""
    record_id: str
    digest: str
    """Of the record's fields, metadata and suggestions (image files by path, size, mtime)."""
    pushed_at: datetime
    claim_key: str | None = None
    priority: float | None = None
    """The review priority the record carries in Argilla (computed once, by this push, after
    calibration): the dashboard's queue shows this one."""
    reasons: list[str] = Field(default_factory=list)


def record_digest(record: rg.Record) -> str:
    """What a record sends, hashed: a changed judgment, text or image file changes it."""
    fields = {}
    for name, value in record.fields.items():
        if isinstance(value, Path):
            stat = value.stat()
            value = f"file:{value}:{stat.st_size}:{stat.st_mtime_ns}"
        fields[name] = value
    suggestions = sorted((s.question_name, str(s.value), s.score, s.agent)
                         for s in record.suggestions)
    return content_hash({"id": str(record.id), "fields": fields,
                         "metadata": dict(record.metadata), "suggestions": suggestions})


def connect(api_url: str | None = None, api_key: str | None = None) -> rg.Argilla:
    """An SDK client for `api_url` with `api_key`, checked at once (the CLI fills them from
    --api-url / --api-key, ARGILLA_API_URL / ARGILLA_API_KEY or the local server)."""
    url, key = api_url, api_key
    if not url or not key:
        raise ReviewError("no Argilla server: give --api-url/--api-key or set ARGILLA_API_URL and "
                          "ARGILLA_API_KEY (`judging review serve --background` prints them)")
    try:
        client = rg.Argilla(api_url=url, api_key=key, timeout=120)
        client.me  # noqa: B018 - fails fast on a dead server or a bad key
    except Exception as exc:  # the SDK raises many types here; each becomes one clear line
        raise ReviewError(f"cannot use the Argilla server at {url}: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc
    return client


def untrusted_criteria(judgment: Judgment, *, root: Path | None = None,
                       artifacts: dict | None = None) -> set[str]:
    """The criteria of `judgment`'s rubric that the calibration of its judge does not trust (all
    of them when that calibration is stale; none before any calibration exists). `artifacts`:
    see `trusted_criteria`."""
    from judging.calibrate import NOT_CALIBRATED, calibration_root, trusted_criteria

    trusted, why_not = trusted_criteria(calibration_root(root), judgment, artifacts=artifacts)
    if why_not == NOT_CALIBRATED:
        return set()
    return {a.criterion_id for a in judgment.answers} - trusted


@dataclass
class PushOptions:
    workspace: str = DEFAULT_WORKSPACE
    blind_share: float = 0.2
    """Share of claims (a stable, seeded draw) that go to the blind calibration dataset."""
    overlap: int = 2
    """Reviewers per calibration record."""
    seed: int = 0
    batch_size: int = 64
    calibration_dir: Path | None = None
    full: bool = False
    """Send every record, not only those missing or changed since the last push (`--full`)."""
    plan: list[PlannedClaim] | None = None
    """`--plan`: only the claims of RUN/review_plan.jsonl, in its order, with its priorities;
    its random calibration sample goes to the blind dataset (no AI answers shown: a random
    label must not lean on the AI), its targeted claims to the side-by-side one."""


@dataclass
class PushResult:
    records: dict[str, int] = field(default_factory=dict)
    """Records sent per dataset."""
    skipped: list[str] = field(default_factory=list)
    resumed: int = 0
    """Records already on the server as they are now (a previous push sent them): not sent."""
    dataset_ids: dict[str, str] = field(default_factory=dict)
    """Each dataset's id on the server (its review page: `review_url`)."""

    @property
    def total(self) -> int:
        return sum(self.records.values())


def _ensure_workspace(client: rg.Argilla, name: str) -> rg.Workspace:
    with quiet_lookups():
        workspace = client.workspaces(name)
    if workspace is None:
        workspace = rg.Workspace(name=name, client=client).create()
    return workspace


def _signature(settings: rg.Settings) -> dict[str, Any]:
    return {"fields": sorted((f.name, type(f).__name__) for f in settings.fields),
            "questions": sorted((q.name, type(q).__name__) for q in settings.questions)}


def ensure_dataset(client: rg.Argilla, name: str, workspace: str,
                   design: Callable[[str], rg.Settings]) -> tuple[rg.Dataset, str]:
    """The dataset and its design: made with the side-by-side design if missing; an existing
    one keeps its own (`design_of` its fields) and must have its fields and questions (a
    published dataset's fields cannot change)."""
    with quiet_lookups():
        dataset = client.datasets(name=name, workspace=workspace)
    if dataset is None:
        return rg.Dataset(name=name, workspace=workspace, settings=design(SIDE_BY_SIDE),
                          client=client).create(), SIDE_BY_SIDE
    chosen = design_of({f.name for f in dataset.settings.fields})
    settings = design(chosen)
    if _signature(dataset.settings) != _signature(settings):
        raise ReviewError(f"dataset {name!r} in workspace {workspace!r} exists with other fields "
                          f"or questions; a dataset's design cannot change: publish a new rubric "
                          f"version or push to another workspace")
    return dataset, chosen


@dataclass
class PlannedReview:
    """One (claim, rubric version) of a run as review sees it: the AI line shown, where its
    record goes, its record id and its priority (what `push` sends, and the app's queue)."""

    claim_key: str
    rubric: Rubric
    judgment: Judgment
    """The chosen AI line with the side-file flags merged in, and the claim's chart reading trace
    (its figure rubric's line holds it: a verdict rubric's record shows it too)."""
    claim: ClaimInput | None
    dataset: str
    blind: bool
    priority: Priority

    @property
    def record_id(self) -> str:
        return record_id(self.claim_key, self.rubric.id, self.rubric.version)


def plan_reviews(store: RunStore, library: RubricLibrary, options: PushOptions
                 ) -> tuple[list[PlannedReview], list[str]]:
    """Which (claim, rubric version) goes to which dataset with which priority, all in memory
    (the app's queue, tests): see `iter_planned`; and the lines skipped."""
    skipped: list[str] = []
    return list(iter_planned(store, library, options, skipped=skipped)), skipped


def iter_planned(store: RunStore, library: RubricLibrary, options: PushOptions, *,
                 skipped: list[str]) -> Iterator[PlannedReview]:
    """`_iter_planned`, or with a review plan (`options.plan`) its claims in plan order."""
    if options.plan is None:
        yield from _iter_planned(store, library, options, skipped=skipped)
        return
    planned = {p.claim_key: p for p in options.plan}
    items = sorted(_iter_planned(store, library, options, skipped=skipped, keys=set(planned)),
                   key=lambda item: planned[item.claim_key].order)
    for item in items:
        entry = planned[item.claim_key]
        blind = entry.part == "random"
        yield PlannedReview(
            claim_key=item.claim_key, rubric=item.rubric, judgment=item.judgment,
            claim=item.claim, blind=blind,
            dataset=dataset_name(item.rubric.id, item.rubric.version, calibration=blind),
            priority=Priority(value=plan_priority(entry, len(planned)),
                              reasons=[*entry.reasons, *item.priority.reasons]))


def plan_priority(entry: PlannedClaim, planned: int) -> float:
    """The priority a planned claim's records carry in Argilla: its reason's, a slightly lower
    value for each later place of a plan of `planned` claims (within a priority the plan's
    order)."""
    return round(entry.priority - entry.order / (10 * (planned + 1)), 6)


def _iter_planned(store: RunStore, library: RubricLibrary, options: PushOptions, *,
                  skipped: list[str], keys: set[str] | None = None) -> Iterator[PlannedReview]:
    """The reviews of a run, one (claim, rubric version) at a time in claim key order, from its
    stored judgments, claims, side-file flags and calibrations; `skipped` gets each line that
    names no rubric (a claim that failed to load)."""
    side_flags = flags_by_claim(store.root)
    rubrics: dict[str, Rubric] = {}
    artifacts: dict = {}  # calibration artifacts read, by (root, rubric, judge)
    for claim_key, claim_lines, speaking in judged_claims(store, keys):
        skipped += [f"{j.claim}: {j.reason}" for j in claim_lines if j.rubric is None]
        claim_input = store.claim(claim_key) if speaking else None
        trace = claim_chart_trace(claim_lines)
        # A falsified claim's audit (falsification-audit) decides whether it waits for people.
        audit = next((chosen for chosen, _ in speaking
                      if chosen.rubric is not None and chosen.rubric.id == FALSIFICATION_AUDIT),
                     None)
        for chosen, lines in speaking:
            assert chosen.rubric is not None
            rubric_id, version = chosen.rubric.id, chosen.rubric.version
            name = ref_name(rubric_id, version)
            if name not in rubrics:
                rubrics[name] = library.judged(chosen.rubric)
            rubric = rubrics[name]
            blind = in_calibration(claim_key, share=options.blind_share, seed=options.seed)
            untrusted = untrusted_criteria(chosen, root=options.calibration_dir,
                                           artifacts=artifacts)
            chosen = with_flags(chosen, side_flags)
            if chosen.chart_trace is None and trace is not None:
                chosen = chosen.model_copy(update={"chart_trace": trace})
            priority = review_priority([*lines, chosen], untrusted=untrusted,
                                       claim_flags=[f.name for f in claim_input.flags]
                                       if claim_input is not None else (),
                                       falsification_supported=falsification_supported(audit))
            yield PlannedReview(claim_key=claim_key, rubric=rubric, judgment=chosen,
                                claim=claim_input,
                                dataset=dataset_name(rubric_id, version, calibration=blind),
                                blind=blind, priority=priority)


def plan_records(store: RunStore, library: RubricLibrary, options: PushOptions
                 ) -> tuple[dict[str, tuple[Rubric, bool]], list[ReviewRecord], list[str]]:
    """Which record goes to which dataset, all in memory (small runs, tests): see
    `iter_records`."""
    datasets: dict[str, tuple[Rubric, bool]] = {}
    skipped: list[str] = []
    records = list(iter_records(store, library, options, datasets=datasets, skipped=skipped))
    return datasets, records, skipped


def iter_records(store: RunStore, library: RubricLibrary, options: PushOptions, *,
                 datasets: dict[str, tuple[Rubric, bool]], skipped: list[str],
                 design: Callable[[str], str] = lambda name: SEPARATE
                 ) -> Iterator[ReviewRecord]:
    """The records of a run, one (claim, rubric version) at a time in claim key order
    (`iter_planned`); `datasets` gets each dataset met (with its rubric and whether it is
    blind), `skipped` each line that names no rubric; `design` names each dataset's design."""
    for item in iter_planned(store, library, options, skipped=skipped):
        datasets[item.dataset] = (item.rubric, item.blind)
        record = build_record(item.rubric, item.judgment, item.claim, blind=item.blind,
                              priority=item.priority, run_root=store.root,
                              design=design(item.dataset))
        yield ReviewRecord(dataset=item.dataset, record=record, claim_key=item.claim_key,
                           blind=item.blind, priority=item.priority)


_TRANSIENT = (httpx.TransportError, ConnectionError)


@retry(retry=retry_if_exception_type(_TRANSIENT), stop=stop_after_attempt(4),
       wait=wait_exponential(multiplier=0.5, max=8), reraise=True)
def _log_batch(dataset: rg.Dataset, records: list[rg.Record]) -> None:
    dataset.records.log(records, batch_size=len(records))


_quiet_lock = threading.Lock()
_quiet_depth = 0
_sdk_tqdm: Any = None  # the SDK's own tqdm while its bars are off


@contextlib.contextmanager
def sdk_progress_bars_off():
    """The SDK draws a progress bar on stderr for every batch it sends; ours covers the whole push.
    Silence the SDK's bars while the block runs (nested or from several threads: the first in
    turns them off, the last out restores the SDK's own `tqdm`); importing this module leaves
    the SDK untouched."""
    global _quiet_depth, _sdk_tqdm
    with _quiet_lock:
        if _quiet_depth == 0:
            _sdk_tqdm = _sdk_records.tqdm
            _sdk_records.tqdm = functools.partial(_sdk_tqdm, disable=True)
        _quiet_depth += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                _sdk_records.tqdm, _sdk_tqdm = _sdk_tqdm, None


@contextlib.contextmanager
def quiet_lookups():
    """The SDK warns when a lookup finds nothing ("dataset not found"): here that is expected."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not found", category=UserWarning)
        yield


PUSH_THREADS = 2


def _push_error(exc: BaseException, *, name: str, done: int, total: int) -> BaseException:
    if isinstance(exc, JudgingError) or not isinstance(exc, Exception):
        return exc
    if isinstance(exc, _TRANSIENT):
        return ReviewError(f"the Argilla server stopped answering after {done} of {total} records "
                           f"({exc}); run the push again to resume: records already sent are "
                           f"updated in place")
    # SDK errors carry the server's message: one clear line.
    first = str(exc).splitlines()[0] if str(exc) else ""
    return ReviewError(f"pushing to {name!r} failed after {done} of {total} records: "
                       f"{type(exc).__name__}: {first}")


def push_run(run_dir: Path, *, client: rg.Argilla, options: PushOptions | None = None,
             rubrics_dir: Path | None = None,
             on_progress: Callable[[int, int], None] | None = None) -> PushResult:
    """Push a run's records (see the module docstring): datasets are made as their first record
    comes, batches of `options.batch_size` records of one dataset are sent two at a time, and each
    acknowledged batch is recorded in RUN_DIR/pushed.jsonl, so that a rerun resumes."""
    options = options or PushOptions()
    if not 0 <= options.blind_share <= 1:
        raise ReviewError("--blind-share must be between 0 and 1")
    if options.overlap < 1:
        raise ReviewError("--overlap must be at least 1")
    store = RunStore.open(run_dir, create=False)
    library = RubricLibrary(rubrics_dir)
    result = PushResult()
    datasets: dict[str, tuple[Rubric, bool]] = {}
    total = sum(1 for ident in store.identities() if ident[1] is not None)  # an upper bound
    api_url = str(client.api_url)
    state = store.paths.pushed
    cut_torn_tail(state)  # a push killed mid-write: appends start on a fresh line
    done_before = set() if options.full else {
        (p.dataset_id, p.record_id, p.digest) for p in iter_jsonl(state, PushedRecord)
        if p.api_url == api_url and p.workspace == options.workspace}
    handles: dict[str, rg.Dataset] = {}
    designs: dict[str, str] = {}
    pending: dict[str, list[ReviewRecord]] = defaultdict(list)
    in_flight: dict[Future, tuple[str, list[ReviewRecord], list[str]]] = {}
    done = 0
    workspace_ready = False

    def handle(name: str) -> rg.Dataset:
        nonlocal workspace_ready
        if name not in handles:
            if not workspace_ready:
                _ensure_workspace(client, options.workspace)
                workspace_ready = True
            rubric, blind = datasets[name]
            handles[name], designs[name] = ensure_dataset(
                client, name, options.workspace,
                lambda design: build_settings(rubric, calibration=blind,
                                              overlap=options.overlap, design=design))
        return handles[name]

    def design(name: str) -> str:
        handle(name)
        return designs[name]

    def settle(future: Future) -> None:
        nonlocal done
        name, batch, digests = in_flight.pop(future)
        try:
            future.result()
        except BaseException as exc:
            raise _push_error(exc, name=name, done=done + result.resumed, total=total) from exc
        now = utc_now()
        dataset_id = str(handles[name].id)
        lines = "".join(PushedRecord(
            api_url=api_url, workspace=options.workspace, dataset=name, dataset_id=dataset_id,
            record_id=str(planned.record.id), digest=digest, pushed_at=now,
            claim_key=planned.claim_key, priority=planned.priority.value,
            reasons=list(planned.priority.reasons),
        ).model_dump_json(by_alias=True) + "\n" for planned, digest in zip(batch, digests,
                                                                           strict=True))
        with state.open("a", encoding="utf-8") as out:
            out.write(lines)
            out.flush()
            os.fsync(out.fileno())
        done += len(batch)
        result.records[name] = result.records.get(name, 0) + len(batch)
        if on_progress is not None:
            on_progress(done + result.resumed, total)

    def send(pool: ThreadPoolExecutor, name: str) -> None:
        batch = pending.pop(name)
        dataset = handle(name)
        digests = [record_digest(p.record) for p in batch]
        future = pool.submit(_log_batch, dataset, [p.record for p in batch])
        in_flight[future] = (name, batch, digests)
        # At most PUSH_THREADS batches in flight: the next one is built and encoded (images
        # read and base64-encoded) while the server stores the previous ones, and no more of a
        # large run is held in memory.
        while len(in_flight) >= PUSH_THREADS:
            settle(next(as_completed(list(in_flight))))

    with sdk_progress_bars_off(), ThreadPoolExecutor(max_workers=PUSH_THREADS) as pool:
        try:
            for planned in iter_records(store, library, options, datasets=datasets,
                                        skipped=result.skipped, design=design):
                if done_before:
                    dataset = handle(planned.dataset)
                    key = (str(dataset.id), str(planned.record.id), record_digest(planned.record))
                    if key in done_before:
                        result.resumed += 1
                        continue
                pending[planned.dataset].append(planned)
                if len(pending[planned.dataset]) >= options.batch_size:
                    send(pool, planned.dataset)
            for name in sorted(pending):
                send(pool, name)
            while in_flight:
                settle(next(as_completed(list(in_flight))))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            store.close()
    if on_progress is not None:
        on_progress(done + result.resumed, done + result.resumed)
    result.dataset_ids = {name: str(dataset.id) for name, dataset in handles.items()}
    return result


#: Argilla's annotation page orders records by this URL parameter (its web UI's own sort
#: criterion, `entity.name.order`); without it the page opens records in the order they were
#: first logged. Highest review priority first.
PRIORITY_SORT = "metadata.priority.desc"


def review_url(api_url: str, dataset_id: str) -> str:
    """A dataset's annotation page with the highest review priority first."""
    return f"{api_url.rstrip('/')}/dataset/{dataset_id}/annotation-mode?sort={PRIORITY_SORT}"
