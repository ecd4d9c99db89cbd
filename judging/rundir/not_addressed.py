"""The registry claims each submission leaves unanswered (not_addressed.jsonl).

Written by `judging run`, whole and atomically, from that invocation's inputs (the registry and
the submissions it loaded): a rerun without a registry, or with submissions that now answer
every claim, leaves the file empty. Read by the report and the leaderboard.
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
