"""`judging review pull RUN_DIR`: every submitted human response as label lines.

Read through the REST API rather than the SDK's record objects: a discarded response without
values crashes the SDK when records are read back, and drafts and discards must be counted.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import argilla as rg
import httpx

from judging.atomic import write_jsonl_atomic
from judging.errors import ReviewError
from judging.models import ClaimKey, Label, RubricRef
from judging.resolve import PlannedClaim, Reason, read_plan, run_claim_rows
from judging.review.dataset import (
    CALIBRATION_SUFFIX,
    NOTE_QUESTION,
    OVERALL_QUESTION,
    YES,
    dataset_name,
)
from judging.review.push import DEFAULT_WORKSPACE, PushedRecord, plan_priority, quiet_lookups
from judging.rubrics import RubricLibrary, Scale
from judging.rundir import RunPaths, RunStore, cut_torn_tail, iter_jsonl, utc_now

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


#: The review priority of a claim a re-plan dropped: below every planned claim (the random
#: sample's is 0.5), so Argilla's queue, sorted by priority, shows it last.
DROPPED_PRIORITY = 0.0
DROPPED_FROM_PLAN = "dropped_from_plan"
#: The reason a record the plan does not ask for carries at DROPPED_PRIORITY: its claim is not
#: planned, or planned in the other dataset (the random sample is answered blind).
NOT_IN_PLAN = "not_in_plan"
#: The digest a pushed.jsonl line gets when only the record's priority changed in place: no
#: built record hashes to it, so the next push sends that record whole again.
REPRIORITIZED = "reprioritized"


@dataclass
class Reprioritized:
    """What `sync_plan_priorities` changed in Argilla (records, not claims)."""

    planned: int = 0
    dropped: int = 0
    not_in_plan: int = 0

    def text(self) -> str:
        """One line for the console ("" when nothing moved)."""
        if not (self.planned or self.dropped or self.not_in_plan):
            return ""
        return (f"review priorities updated in Argilla: {self.planned} planned record(s), "
                f"{self.dropped} record(s) of claims dropped from the plan, {self.not_in_plan} "
                f"record(s) the plan does not ask for (priority 0, last in the queue)")


def _plan_target(line: PushedRecord, *, entries: dict[str, PlannedClaim], planned: int,
                 dropped: set[str], decided: set[str]) -> tuple[float, list[str], str] | None:
    """(priority, reasons, what) a pushed record carries under the plan, None to leave it."""
    key = str(line.claim_key)
    others = [r for r in line.reasons
              if r not in {*get_args(Reason), DROPPED_FROM_PLAN, NOT_IN_PLAN}]
    entry = entries.get(key)
    # The plan asks for one record per (claim, rubric): the blind one for its random sample
    # (a random label must not lean on the AI), the one beside the AI's answers otherwise.
    if entry is not None and \
            line.dataset.endswith(CALIBRATION_SUFFIX) == (entry.part == "random"):
        return plan_priority(entry, planned), [*entry.reasons, *others], "planned"
    if key in decided:
        return None  # answered: it leaves the reviewers' queue by itself
    if key in dropped:
        return DROPPED_PRIORITY, [DROPPED_FROM_PLAN, *others], "dropped"
    return DROPPED_PRIORITY, [NOT_IN_PLAN, *others], "not_in_plan"


def _patch_priority(client: rg.Argilla, record: str, claim_key: str,
                    metadata: dict[str, Any]) -> None:
    """PATCH replaces a record's metadata whole: `metadata` is all of it, two values changed."""
    try:
        response = client.api.http_client.patch(f"/api/v1/records/{record}",
                                                 json={"metadata": metadata})
    except httpx.HTTPError as error:
        raise ReviewError(f"updating the review priority of {claim_key} failed: "
                          f"the Argilla server did not answer ({type(error).__name__})") from error
    if response.status_code >= 400:
        raise ReviewError(f"updating the review priority of {claim_key} failed "
                          f"({response.status_code}): {response.text[:200]}")


def sync_plan_priorities(run_dir: Path, *, client: rg.Argilla, previous: list[PlannedClaim],
                         workspace: str = DEFAULT_WORKSPACE) -> Reprioritized:
    """Argilla's queue follows the run's plan (after `review push --plan`, and after the
    re-plan of `review pull`): every record pushed to `workspace` that the plan asks for gets
    the priority the plan gives it; every other record of an undecided claim gets
    DROPPED_PRIORITY, with DROPPED_FROM_PLAN when the claim was in `previous` and the re-plan
    dropped it, else NOT_IN_PLAN (a record from an earlier push of the whole run, or a
    random-sample claim's record beside the AI's answers). Each record changed gets a
    pushed.jsonl line (the dashboard's queue reads it)."""
    plan = read_plan(run_dir)
    entries = {p.claim_key: p for p in plan}
    decided = {r.key for r in run_claim_rows(run_dir) if r.human in ("pass", "fail")}
    dropped = {p.claim_key for p in previous} - set(entries) - decided
    api_url, state = str(client.api_url), RunPaths(Path(run_dir)).pushed
    latest: dict[str, dict[str, PushedRecord]] = {}
    for line in iter_jsonl(state, PushedRecord):
        if line.api_url == api_url and line.workspace == workspace and line.claim_key:
            latest.setdefault(line.dataset_id, {})[line.record_id] = line
    done, lines = Reprioritized(), []
    try:
        for dataset_id, pushed in sorted(latest.items()):
            on_server = {str(r.get("external_id")): r for r in _records(client, dataset_id)}
            for record_id, line in sorted(pushed.items()):
                record = on_server.get(record_id)
                target = _plan_target(line, entries=entries, planned=len(plan),
                                      dropped=dropped, decided=decided)
                if record is None or target is None:  # deleted (the next push sends it), or decided
                    continue
                value, reasons, what = target
                metadata = dict(record.get("metadata") or {})
                if metadata.get("priority") == value and metadata.get("priority_reasons") == reasons:
                    continue
                _patch_priority(client, record["id"], line.claim_key,
                                {**metadata, "priority": value, "priority_reasons": reasons})
                lines.append(line.model_copy(update={"priority": value, "reasons": reasons,
                                                     "digest": REPRIORITIZED,
                                                     "pushed_at": utc_now()}))
                setattr(done, what, getattr(done, what) + 1)
    finally:
        # Also when a later update failed: the records already changed in Argilla are recorded
        # (the dashboard's queue reads them), and the next push or pull changes only the rest.
        if lines:
            cut_torn_tail(state)  # a push killed mid-write: append on a fresh line
            with state.open("a", encoding="utf-8") as out:
                out.write("".join(line.model_dump_json(by_alias=True) + "\n" for line in lines))
                out.flush()
                os.fsync(out.fileno())
    return done


def read_labels(path: Path) -> list[Label]:
    from judging.rundir import read_jsonl
    return read_jsonl(path, Label)


__all__ = ["PullResult", "Reprioritized", "pull_run", "read_labels", "sync_plan_priorities"]
