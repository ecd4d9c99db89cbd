"""The review queue: every (claim, rubric version) of a run still waiting for people, by review
priority, as `judging review push` ranks and names it (`judging.review.push.plan_reviews`: the
same dataset and record id), with a link to the record in Argilla's web UI when a server is
known.

One priority: where a record was pushed, the queue shows the priority the push computed and
Argilla holds (RUN_DIR/pushed.jsonl), and says when the run's calibration or flags have changed
it since (a re-push updates Argilla). A record leaves the queue once enough reviewers answered
it (labels.jsonl: one, or the calibration overlap on a blind record), unless their answers are
in conflict: then it stays, first, for a further reviewer."""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judging.errors import JudgingError
from judging.models import natural_key

log = logging.getLogger(__name__)


@dataclass
class QueueRow:
    """One (claim, rubric version) waiting for people, as `judging review push` ranks it."""

    priority: float
    reasons: list[str]
    claim_key: str
    rubric: str
    dataset: str
    record_id: str
    blind: bool
    url: str | None
    """The record in Argilla's web UI, or None without a server."""
    pushed: bool = True
    """The priority is the one Argilla holds (False: not pushed yet, computed here)."""


def record_url(base_url: str, dataset_id: str, *, submission_id: str, claim_id: str) -> str:
    """The annotation page of one record: the web UI's own metadata filter
    (`metadata=NAME.VALUE~NAME.VALUE`) narrows the dataset to the record's claim key."""
    from judging.review.push import PRIORITY_SORT  # the SDK loads only when links are made

    only = "~".join(f"{name}.{value}" for name, value in
                    (("submission_id", submission_id), ("claim_id", claim_id)))
    return (f"{base_url.rstrip('/')}/dataset/{dataset_id}/annotation-mode?page=1"
            f"&metadata={urllib.parse.quote(only, safe='')}&sort={PRIORITY_SORT}")


#: The reason a record in reviewer conflict stays in the queue, first.
REVIEWER_CONFLICT = "reviewer_conflict"
#: Reviewers a record needs before it leaves the queue (blind records: the push's overlap).
REVIEWERS_NEEDED, BLIND_REVIEWERS_NEEDED = 1, 2


def _pushed(run_dir: Path, workspace: str) -> dict[str, dict[str, tuple[float, list[str]]]]:
    """Record id -> dataset -> (priority, reasons) as the newest push to `workspace` sent it,
    the dataset pushed last last (a claim's record has the same id in the blind dataset and
    beside the AI's answers, and a run can be pushed to both)."""
    from judging.review.push import PushedRecord
    from judging.rundir import RunPaths, iter_jsonl

    found: dict[str, dict[str, tuple[float, list[str]]]] = {}
    for line in iter_jsonl(RunPaths(run_dir).pushed, PushedRecord):
        if line.workspace == workspace and line.priority is not None:
            datasets = found.setdefault(line.record_id, {})
            datasets.pop(line.dataset, None)
            datasets[line.dataset] = (line.priority, list(line.reasons))
    return found


def _held(pushed: Mapping[str, Mapping[str, tuple[float, list[str]]]], item, *,
          planned: bool) -> tuple[str, tuple[float, list[str]] | None]:
    """(dataset, what Argilla holds there) for a record to queue: its own dataset's, else (no
    plan chose the dataset) the one it was pushed to last, with another blind share."""
    datasets = pushed.get(item.record_id, {})
    if item.dataset in datasets or planned or not datasets:
        return item.dataset, datasets.get(item.dataset)
    last = list(datasets)[-1]
    return last, datasets[last]


def _reviewers(run_dir: Path) -> dict[tuple[str, str], int]:
    """(dataset, record id) -> how many reviewers submitted an answer to it (labels.jsonl)."""
    from judging.models import Label
    from judging.rundir import RunPaths, iter_jsonl

    who: dict[tuple[str, str], set[str]] = {}
    for label in iter_jsonl(RunPaths(run_dir).labels, Label):
        if label.record_id:
            who.setdefault((label.dataset, label.record_id), set()).add(label.annotator_id)
    return {record: len(people) for record, people in who.items()}


def _reviews(run_dir: Path, options, rubrics_dir: Path | None,
             pushed: Mapping[str, Mapping[str, object]]) -> tuple[list, set[str], int]:
    """The records to queue, as `judging review push` would send them: with a review plan
    (`review push --plan`), its claims in the datasets and with the priorities the plan gives
    them, then the other records Argilla holds (the plan moved them last); without one, every
    claim. Also the claim keys of the plan, and how many records outside it are not queued."""
    from dataclasses import replace

    from judging.resolve import read_plan
    from judging.review.push import plan_reviews
    from judging.rubrics import RubricLibrary
    from judging.rundir import RunStore

    library = RubricLibrary(rubrics_dir)
    every, _ = plan_reviews(RunStore.open(run_dir, create=False), library, options)
    plan = read_plan(run_dir)
    if not plan:
        return every, set(), 0
    keys = {p.claim_key for p in plan}
    planned, _ = plan_reviews(RunStore.open(run_dir, create=False), library,
                              replace(options, plan=plan))
    others = [i for i in every if i.claim_key not in keys]
    held = [i for i in others if i.record_id in pushed]
    return planned + held, keys, len(others) - len(held)


def _dataset_ids(url: str, api_key: str, workspace: str, names: set[str]) -> dict[str, str]:
    """Dataset name -> id on the server (the links need ids); those missing are left out."""
    from judging.review.push import connect, quiet_lookups

    client = connect(url, api_key)
    found = {}
    with quiet_lookups():
        for name in sorted(names):
            dataset = client.datasets(name=name, workspace=workspace)
            if dataset is not None:
                found[name] = str(dataset.id)
    return found


def review_queue(run_dir: Path, *, rubrics_dir: Path | None = None,
                 calibration_dir: Path | None = None, argilla_url: str | None = None,
                 argilla_api_key: str | None = None, workspace: str | None = None,
                 conflicts: Mapping[tuple[str, str], str] | None = None
                 ) -> tuple[list[QueueRow] | None, str]:
    """The queue, highest priority first, and a note on its links and priorities (or why there
    is none). `conflicts`: (claim key, rubric `id@version`) -> the reviewer conflict resolve
    found there; such a record stays in the queue, first."""
    from judging.review.push import DEFAULT_WORKSPACE, PushOptions

    workspace = workspace or DEFAULT_WORKSPACE
    options = PushOptions(workspace=workspace, calibration_dir=calibration_dir)
    pushed = _pushed(run_dir, workspace)
    try:
        planned, in_plan, left_out = _reviews(run_dir, options, rubrics_dir, pushed)
    except JudgingError as exc:
        return None, f"No review queue: {exc}"
    push = f"judging review push {run_dir}" + (" --plan" if in_plan else "")
    ids: dict[str, str] = {}
    if argilla_url and argilla_api_key:
        try:
            ids = _dataset_ids(argilla_url, argilla_api_key, workspace,
                               {p.dataset for p in planned}
                               | {d for datasets in pushed.values() for d in datasets})
            note = (f"Links open the records in Argilla at {argilla_url} (workspace "
                    f"{workspace}); a dataset not pushed yet has no link: `{push}`.")
        except JudgingError as exc:
            note = f"No links: {exc}"
    elif argilla_url:
        note = (f"Argilla at {argilla_url}: give its API key (--api-key or ARGILLA_API_KEY) to "
                f"link each record.")
    else:
        note = ("No Argilla server given (--api-url, ARGILLA_API_URL, or a local server of "
                "--home): records are named by dataset and id.")
    reviewed = _reviewers(run_dir)
    conflicts = conflicts or {}
    rows, changed, done = [], 0, 0
    for item in planned:
        claim = item.judgment.claim
        rubric = f"{item.rubric.id}@{item.rubric.version}"
        conflict = conflicts.get((item.claim_key, rubric))
        dataset, held = _held(pushed, item, planned=item.claim_key in in_plan)
        # Each (claim, rubric) has two datasets, blind or beside the AI's answers.
        blind = item.blind == (dataset == item.dataset)
        needed = BLIND_REVIEWERS_NEEDED if blind else REVIEWERS_NEEDED
        if reviewed.get((dataset, item.record_id), 0) >= needed and conflict is None:
            done += 1
            continue
        priority, reasons = held or (None, [])
        live = (item.priority.value, list(item.priority.reasons))
        # A record outside the plan holds the priority the plan gave it (last), not its own.
        changed += priority is not None and (priority, reasons) != live and \
            (not in_plan or item.claim_key in in_plan)
        if priority is None:
            priority, reasons = live
        if conflict is not None:
            priority, reasons = 1.0, [REVIEWER_CONFLICT, *reasons]
        dataset_id = ids.get(dataset)
        rows.append(QueueRow(
            priority=priority, reasons=reasons, claim_key=item.claim_key, rubric=rubric,
            dataset=dataset, record_id=item.record_id, blind=blind,
            url=record_url(argilla_url, dataset_id, submission_id=claim.submission_id,
                           claim_id=claim.claim_id) if argilla_url and dataset_id else None,
            pushed=held is not None))
    rows.sort(key=lambda r: (-r.priority, *(natural_key(p) for p in r.claim_key.split("::", 1)),
                             r.rubric))
    notes = [note]
    if done:
        notes.append(f"{done} record(s) reviewed (labels.jsonl) left the queue.")
    if not pushed:
        notes.append(f"Not pushed yet: priorities computed here, as `{push}` will send them.")
    if in_plan:
        notes.append(f"The review plan's claims first (review_plan.jsonl); "
                     f"{left_out} record(s) outside it are not in Argilla and not queued.")
    if changed:
        notes.append(f"{changed} record(s) hold an older priority in Argilla than the run's "
                     f"calibration and flags give now: `{push}` "
                     f"(with the same --calibration) updates them.")
    return rows, " ".join(notes)
