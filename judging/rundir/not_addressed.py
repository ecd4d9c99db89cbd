"""The registry claims each submission leaves unanswered (not_addressed.jsonl).

Written by `judging run`, whole and atomically, from complete inputs only: the records of the
submissions an invocation loaded are replaced by what its registry says of them, those of the
submissions it did not load (a source that failed, another shard's) are kept, and an invocation
without a registry leaves the file as it is. Read by the report and the leaderboard.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from judging.atomic import write_jsonl_atomic
from judging.models import NotAddressed
from judging.rundir.layout import RunPaths
from judging.rundir.store import read_jsonl


def write_not_addressed(run_root: Path, records: Iterable[NotAddressed]) -> Path:
    """Replace the run's not_addressed records with `records`."""
    path = RunPaths(run_root).not_addressed
    write_jsonl_atomic(path, records)
    return path


def read_not_addressed(run_root: Path) -> list[NotAddressed]:
    """The run's not_addressed records; none for a run written before they were recorded."""
    return read_jsonl(RunPaths(run_root).not_addressed, NotAddressed)
