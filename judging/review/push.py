"""`judging review push RUN_DIR`: judgments into Argilla as records with AI suggestions.

Idempotent: record ids are derived from the claim key and the rubric version, so a re-push updates
records in place and never touches the responses people gave. Batched, and resumable: if the
server dies, rerun the push (records already sent are simply updated).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import warnings
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import argilla as rg
import argilla.records._dataset_records as _sdk_records
import httpx
from tenacity import (
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from judging.errors import JudgingError, ReviewError
from judging.judges import choose_judgment
from judging.models import ClaimInput, Judgment, ref_name
from judging.review.dataset import (
    Priority,
    ReviewRecord,
    build_record,
    build_settings,
    dataset_name,
    falsification_supported,
    in_calibration,
    record_id,
    review_priority,
)
from judging.rubrics import FALSIFICATION_AUDIT, Rubric, RubricLibrary
from judging.rundir import RunStore, flags_by_claim, with_flags

log = logging.getLogger(__name__)
DEFAULT_WORKSPACE = "judging"


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


@dataclass
class PushResult:
    records: dict[str, int] = field(default_factory=dict)
    """Records sent per dataset."""
    skipped: list[str] = field(default_factory=list)

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


def ensure_dataset(client: rg.Argilla, name: str, workspace: str, settings: rg.Settings
                   ) -> rg.Dataset:
    """The dataset, created with `settings` if missing; an existing one must have the same fields
    and questions (a published dataset's fields cannot change)."""
    with quiet_lookups():
        dataset = client.datasets(name=name, workspace=workspace)
    if dataset is None:
        return rg.Dataset(name=name, workspace=workspace, settings=settings,
                          client=client).create()
    if _signature(dataset.settings) != _signature(settings):
        raise ReviewError(f"dataset {name!r} in workspace {workspace!r} exists with other fields "
                          f"or questions; a dataset's design cannot change: publish a new rubric "
                          f"version or push to another workspace")
    return dataset


@dataclass
class PlannedReview:
    """One (claim, rubric version) of a run as review sees it: the AI line shown, where its
    record goes, its record id and its priority (what `push` sends, and the app's queue)."""

    claim_key: str
    rubric: Rubric
    judgment: Judgment
    """The chosen AI line with the side-file flags merged in."""
    claim: ClaimInput | None
    dataset: str
    blind: bool
    priority: Priority

    @property
    def record_id(self) -> str:
        return record_id(self.claim_key, self.rubric.id, self.rubric.version)


def plan_reviews(store: RunStore, library: RubricLibrary, options: PushOptions
                 ) -> tuple[list[PlannedReview], list[str]]:
    """Which (claim, rubric version) goes to which dataset with which priority, from the run's
    stored judgments, claims, side-file flags and calibrations; and the lines skipped."""
    claims = store.claims()
    side_flags = flags_by_claim(store.root)
    groups: dict[tuple[str, str, str], list[Judgment]] = defaultdict(list)
    skipped: list[str] = []
    for judgment in store.latest():
        if judgment.rubric is None:
            skipped.append(f"{judgment.claim}: {judgment.reason}")
            continue
        ref = judgment.rubric
        groups[(str(judgment.claim), ref.id, ref.version)].append(judgment)
    audits = {claim_key: choose_judgment(lines)
              for (claim_key, rubric_id, _), lines in groups.items()
              if rubric_id == FALSIFICATION_AUDIT}
    rubrics: dict[str, Rubric] = {}
    artifacts: dict = {}  # calibration artifacts read, by (root, rubric, judge)
    planned: list[PlannedReview] = []
    for (claim_key, rubric_id, version), lines in sorted(groups.items()):
        chosen = choose_judgment(lines)
        if chosen is None or chosen.rubric is None:
            continue
        name = ref_name(rubric_id, version)
        if name not in rubrics:
            rubric = library.load(name)
            if not rubric.judged_with(chosen.rubric):
                raise ReviewError(f"{name} in {library.root} has hash "
                                  f"{rubric.content_hash()[:19]}..., the run used "
                                  f"{chosen.rubric.hash[:19]}...: push with the rubric the run "
                                  f"used")
            rubrics[name] = rubric
        rubric = rubrics[name]
        blind = in_calibration(claim_key, share=options.blind_share, seed=options.seed)
        untrusted = untrusted_criteria(chosen, root=options.calibration_dir,
                                       artifacts=artifacts)
        chosen = with_flags(chosen, side_flags)
        claim_input = claims.get(claim_key)
        priority = review_priority([*lines, chosen], untrusted=untrusted,
                                   claim_flags=[f.name for f in claim_input.flags]
                                   if claim_input is not None else (),
                                   falsification_supported=falsification_supported(
                                       audits.get(claim_key)))
        planned.append(PlannedReview(
            claim_key=claim_key, rubric=rubric, judgment=chosen, claim=claim_input,
            dataset=dataset_name(rubric_id, version, calibration=blind), blind=blind,
            priority=priority))
    return planned, skipped


def plan_records(store: RunStore, library: RubricLibrary, options: PushOptions
                 ) -> tuple[dict[str, tuple[Rubric, bool]], list[ReviewRecord], list[str]]:
    """Which record goes to which dataset, built from the run's stored judgments and claims."""
    planned, skipped = plan_reviews(store, library, options)
    datasets: dict[str, tuple[Rubric, bool]] = {}
    records: list[ReviewRecord] = []
    for item in planned:
        datasets[item.dataset] = (item.rubric, item.blind)
        record = build_record(item.rubric, item.judgment, item.claim, blind=item.blind,
                              priority=item.priority, run_root=store.root)
        records.append(ReviewRecord(dataset=item.dataset, record=record,
                                    claim_key=item.claim_key, blind=item.blind,
                                    priority=item.priority))
    return datasets, records, skipped


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
    options = options or PushOptions()
    if not 0 <= options.blind_share <= 1:
        raise ReviewError("--blind-share must be between 0 and 1")
    if options.overlap < 1:
        raise ReviewError("--overlap must be at least 1")
    store = RunStore.open(run_dir, create=False)
    library = RubricLibrary(rubrics_dir)
    datasets, records, skipped = plan_records(store, library, options)
    result = PushResult(skipped=skipped)
    if not records:
        return result
    _ensure_workspace(client, options.workspace)
    handles = {name: ensure_dataset(client, name, options.workspace,
                                    build_settings(rubric, calibration=blind,
                                                   overlap=options.overlap))
               for name, (rubric, blind) in sorted(datasets.items())}
    by_dataset: dict[str, list[rg.Record]] = defaultdict(list)
    for planned in records:
        by_dataset[planned.dataset].append(planned.record)
    batches = [(name, batch_records[start:start + options.batch_size])
               for name, batch_records in sorted(by_dataset.items())
               for start in range(0, len(batch_records), options.batch_size)]
    done = 0
    # Two batches in flight: the next one is encoded (images read and base64-encoded) while the
    # server stores the previous one.
    with sdk_progress_bars_off(), ThreadPoolExecutor(max_workers=PUSH_THREADS) as pool:
        futures = {pool.submit(_log_batch, handles[name], batch): (name, len(batch))
                   for name, batch in batches}
        for future in as_completed(futures):
            name, size = futures[future]
            try:
                future.result()
            except BaseException as exc:
                pool.shutdown(wait=True, cancel_futures=True)
                raise _push_error(exc, name=name, done=done, total=len(records)) from exc
            done += size
            result.records[name] = result.records.get(name, 0) + size
            if on_progress is not None:
                on_progress(done, len(records))
    return result
