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


def _pushed(run_dir: Path, workspace: str) -> dict[str, tuple[float, list[str]]]:
    """Record id -> (priority, reasons) as the newest push to `workspace` sent it."""
    from judging.review.push import PushedRecord
    from judging.rundir import RunPaths, iter_jsonl

    found: dict[str, tuple[float, list[str]]] = {}
    for line in iter_jsonl(RunPaths(run_dir).pushed, PushedRecord):
        if line.workspace == workspace and line.priority is not None:
            found[line.record_id] = (line.priority, list(line.reasons))
    return found


def _reviewers(run_dir: Path) -> dict[str, int]:
    """Record id -> how many reviewers submitted an answer to it (labels.jsonl)."""
    from judging.models import Label
    from judging.rundir import RunPaths, iter_jsonl

    who: dict[str, set[str]] = {}
    for label in iter_jsonl(RunPaths(run_dir).labels, Label):
        if label.record_id:
            who.setdefault(label.record_id, set()).add(label.annotator_id)
    return {record: len(people) for record, people in who.items()}


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
    from judging.review.push import DEFAULT_WORKSPACE, PushOptions, plan_reviews
    from judging.rubrics import RubricLibrary
    from judging.rundir import RunStore

    workspace = workspace or DEFAULT_WORKSPACE
    options = PushOptions(workspace=workspace, calibration_dir=calibration_dir)
    try:
        planned, _ = plan_reviews(RunStore.open(run_dir, create=False),
                                  RubricLibrary(rubrics_dir), options)
    except JudgingError as exc:
        return None, f"No review queue: {exc}"
    ids: dict[str, str] = {}
    if argilla_url and argilla_api_key:
        try:
            ids = _dataset_ids(argilla_url, argilla_api_key, workspace,
                               {p.dataset for p in planned})
            note = (f"Links open the records in Argilla at {argilla_url} (workspace "
                    f"{workspace}); a dataset not pushed yet has no link: `judging review push "
                    f"{run_dir}`.")
        except JudgingError as exc:
            note = f"No links: {exc}"
    elif argilla_url:
        note = (f"Argilla at {argilla_url}: give its API key (--api-key or ARGILLA_API_KEY) to "
                f"link each record.")
    else:
        note = ("No Argilla server given (--api-url, ARGILLA_API_URL, or a local server of "
                "--home): records are named by dataset and id.")
    pushed = _pushed(run_dir, workspace)
    reviewed = _reviewers(run_dir)
    conflicts = conflicts or {}
    rows, changed, done = [], 0, 0
    for item in planned:
        claim = item.judgment.claim
        rubric = f"{item.rubric.id}@{item.rubric.version}"
        conflict = conflicts.get((item.claim_key, rubric))
        needed = BLIND_REVIEWERS_NEEDED if item.blind else REVIEWERS_NEEDED
        if reviewed.get(item.record_id, 0) >= needed and conflict is None:
            done += 1
            continue
        priority, reasons = pushed.get(item.record_id, (None, []))
        live = (item.priority.value, list(item.priority.reasons))
        changed += priority is not None and (priority, reasons) != live
        if priority is None:
            priority, reasons = live
        if conflict is not None:
            priority, reasons = 1.0, [REVIEWER_CONFLICT, *reasons]
        dataset_id = ids.get(item.dataset)
        rows.append(QueueRow(
            priority=priority, reasons=reasons, claim_key=item.claim_key, rubric=rubric,
            dataset=item.dataset, record_id=item.record_id, blind=item.blind,
            url=record_url(argilla_url, dataset_id, submission_id=claim.submission_id,
                           claim_id=claim.claim_id) if argilla_url and dataset_id else None,
            pushed=item.record_id in pushed))
    rows.sort(key=lambda r: (-r.priority, *(natural_key(p) for p in r.claim_key.split("::", 1)),
                             r.rubric))
    notes = [note]
    if done:
        notes.append(f"{done} record(s) reviewed (labels.jsonl) left the queue.")
    if not pushed:
        notes.append(f"Not pushed yet: priorities computed here, as `judging review push "
                     f"{run_dir}` will send them.")
    if changed:
        notes.append(f"{changed} record(s) hold an older priority in Argilla than the run's "
                     f"calibration and flags give now: `judging review push {run_dir}` "
                     f"(with the same --calibration) updates them.")
    return rows, " ".join(notes)
