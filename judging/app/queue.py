"""The review queue: every (claim, rubric version) of a run by review priority, as `judging review
push` ranks and names it (`judging.review.push.plan_reviews`: the same priority, dataset and
record id), with a link to the record in Argilla's web UI when a server is known."""

from __future__ import annotations

import logging
import urllib.parse
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


def record_url(base_url: str, dataset_id: str, *, submission_id: str, claim_id: str) -> str:
    """The annotation page of one record: the web UI's own metadata filter
    (`metadata=NAME.VALUE~NAME.VALUE`) narrows the dataset to the record's claim key."""
    only = "~".join(f"{name}.{value}" for name, value in
                    (("submission_id", submission_id), ("claim_id", claim_id)))
    return (f"{base_url.rstrip('/')}/dataset/{dataset_id}/annotation-mode?page=1"
            f"&metadata={urllib.parse.quote(only, safe='')}")


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
                 argilla_api_key: str | None = None, workspace: str | None = None
                 ) -> tuple[list[QueueRow] | None, str]:
    """The queue, highest priority first, and a note on its links (or why there is none)."""
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
    rows = []
    for item in planned:
        claim = item.judgment.claim
        dataset_id = ids.get(item.dataset)
        rows.append(QueueRow(
            priority=item.priority.value, reasons=list(item.priority.reasons),
            claim_key=item.claim_key, rubric=f"{item.rubric.id}@{item.rubric.version}",
            dataset=item.dataset, record_id=item.record_id, blind=item.blind,
            url=record_url(argilla_url, dataset_id, submission_id=claim.submission_id,
                           claim_id=claim.claim_id) if argilla_url and dataset_id else None))
    rows.sort(key=lambda r: (-r.priority, *(natural_key(p) for p in r.claim_key.split("::", 1)),
                             r.rubric))
    return rows, note
