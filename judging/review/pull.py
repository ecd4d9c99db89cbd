"""`judging review pull RUN_DIR`: every submitted human response as label lines.

Read through the REST API rather than the SDK's record objects: a discarded response without
values crashes the SDK when records are read back, and drafts and discards must be counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import argilla as rg

from judging.atomic import write_jsonl_atomic
from judging.errors import ReviewError
from judging.models import ClaimKey, Label, RubricRef
from judging.review.dataset import NOTE_QUESTION, OVERALL_QUESTION, YES, dataset_name
from judging.review.push import DEFAULT_WORKSPACE, quiet_lookups
from judging.rubrics import RubricLibrary, Scale
from judging.rundir import RunStore

PAGE = 500


@dataclass
class PullResult:
    path: Path
    labels: int = 0
    responses: Counter[str] = field(default_factory=Counter)
    """Responses seen by status (submitted, draft, discarded)."""
    datasets: list[str] = field(default_factory=list)


def _records(client: rg.Argilla, dataset_id: str) -> list[dict[str, Any]]:
    http = client.api.http_client
    records: list[dict[str, Any]] = []
    offset = 0
    while True:
        response = http.get(f"/api/v1/datasets/{dataset_id}/records",
                            params={"include": ["responses"], "offset": offset, "limit": PAGE})
        if response.status_code >= 400:
            raise ReviewError(f"listing records failed ({response.status_code}): "
                              f"{response.text[:200]}")
        items = response.json().get("items", [])
        records += items
        if len(items) < PAGE:
            return records
        offset += PAGE


def _users(client: rg.Argilla) -> dict[str, str]:
    response = client.api.http_client.get("/api/v1/users")
    if response.status_code >= 400:
        return {}
    return {str(user["id"]): user["username"] for user in response.json().get("items", [])}


def _value(question: str, raw: Any, scales: dict[str, Scale]) -> bool | int | str | None:
    if question in (OVERALL_QUESTION, NOTE_QUESTION):
        return str(raw) if raw not in (None, "") else None
    scale = scales.get(question)
    if scale is Scale.binary:
        return raw == YES
    if scale is Scale.ordinal:
        return int(raw)
    if scale is Scale.categorical:
        return str(raw) if raw not in (None, "") else None
    return None


def pull_run(run_dir: Path, *, client: rg.Argilla, workspace: str = DEFAULT_WORKSPACE,
             out: Path | None = None, rubrics_dir: Path | None = None) -> PullResult:
    store = RunStore.open(run_dir, create=False)
    out = out or store.paths.labels
    with quiet_lookups():
        if client.workspaces(workspace) is None:
            raise ReviewError(f"no workspace {workspace!r} on {client.api_url}: push first, or "
                              f"give the --workspace the run was pushed to")
    refs = {j.rubric for j in store.latest() if j.rubric is not None}
    library = RubricLibrary(rubrics_dir)
    users = _users(client)
    result = PullResult(path=out)
    labels: list[Label] = []
    for ref in sorted(refs, key=str):
        rubric = library.judged(ref)
        scales = {c.id: c.scale for c in rubric.criteria}
        for blind in (False, True):
            name = dataset_name(ref.id, ref.version, calibration=blind)
            with quiet_lookups():
                dataset = client.datasets(name=name, workspace=workspace)
            if dataset is None:
                continue
            result.datasets.append(name)
            for record in _records(client, str(dataset.id)):
                labels += _labels_of(record, ref=ref, blind=blind, dataset=name, users=users,
                                     scales=scales, counts=result.responses)
    write_jsonl_atomic(out, labels)
    result.labels = len(labels)
    return result


def _labels_of(record: dict[str, Any], *, ref: RubricRef, blind: bool, dataset: str,
               users: dict[str, str], scales: dict[str, Scale], counts: Counter[str]
               ) -> list[Label]:
    metadata = record.get("metadata") or {}
    if "claim_id" not in metadata or "submission_id" not in metadata:
        return []
    key = ClaimKey(submission_id=metadata["submission_id"], claim_id=metadata["claim_id"])
    # The rubric hash the record was pushed with: labels for another hash are not this rubric's.
    record_ref = RubricRef(id=ref.id, version=ref.version,
                           hash=metadata.get("rubric_hash") or ref.hash)
    labels = []
    for response in record.get("responses") or []:
        status = response.get("status", "unknown")
        counts[status] += 1
        if status != "submitted":
            continue
        user_id = str(response.get("user_id"))
        updated = datetime.fromisoformat(str(response.get("updated_at")).replace("Z", "+00:00"))
        for question, answer in (response.get("values") or {}).items():
            value = _value(question, (answer or {}).get("value"), scales)
            if value is None:
                continue
            labels.append(Label(claim=key, rubric=record_ref, criterion=question, value=value,
                                annotator=users.get(user_id, user_id), annotator_id=user_id,
                                updated_at=updated, blind=blind, dataset=dataset,
                                record_id=str(record.get("external_id") or record.get("id"))))
    return labels


def read_labels(path: Path) -> list[Label]:
    from judging.rundir import read_jsonl
    return read_jsonl(path, Label)


__all__ = ["PullResult", "pull_run", "read_labels"]
