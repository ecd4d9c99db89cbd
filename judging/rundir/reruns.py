"""`judging rerun`'s results in a run directory: reruns.jsonl (one `RerunRecord` per re-run,
append-only; the newest line of a claim counts) and each re-run's logs under reruns/<claim>/.

Written by the rerun stage; read by `judging run` (the verdict rubric's re-run criterion reads
the newest record of a claim, and a judgment's input hash includes it), the report, the review
records and the dashboard.
"""

from __future__ import annotations

from pathlib import Path

from judging.models import RerunRecord
from judging.rundir.layout import RunPaths
from judging.rundir.store import append_jsonl, cut_torn_tail, iter_jsonl


def append_rerun(run_root: Path, record: RerunRecord) -> None:
    """Append one re-run's line (flushed and synced: a crash loses at most the line being
    written, and a rerun of the stage resumes)."""
    path = RunPaths(run_root).reruns
    cut_torn_tail(path)
    append_jsonl(path, [record])


def read_reruns(run_root: Path) -> dict[str, RerunRecord]:
    """The newest re-run of every claim, by claim key (none for a run never re-run)."""
    latest: dict[str, RerunRecord] = {}
    for record in iter_jsonl(RunPaths(run_root).reruns, RerunRecord):
        latest[str(record.claim)] = record
    return latest
