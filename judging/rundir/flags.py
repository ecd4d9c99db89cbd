"""Flags computed after judging live in side files of the run directory and are merged into
judgments on read, never by rewriting judgment lines (integrity today; consensus next)."""

from __future__ import annotations

from pathlib import Path

from judging.models import (
    Flag,
    IntegrityReport,
    Judgment,
)
from judging.rundir.files import write_text_atomic
from judging.rundir.layout import RunPaths


def write_integrity(run_root: Path, report: IntegrityReport) -> Path:
    """Write the integrity side file (duplicate figures, copied justifications)."""
    path = RunPaths(run_root).integrity
    write_text_atomic(path, report.model_dump_json(indent=2))
    return path


def with_flags(judgment: Judgment, flags: dict[str, list[Flag]]) -> Judgment:
    """`judgment` with the integrity flags of its claim (`IntegrityReport.flags()`) added."""
    extra = flags.get(str(judgment.claim), [])
    return judgment.model_copy(update={"flags": [*judgment.flags, *extra]}) if extra else judgment


def read_integrity(run_root: Path) -> IntegrityReport:
    """The integrity side file; an empty report when the run has none yet."""
    path = RunPaths(run_root).integrity
    if not path.is_file():
        return IntegrityReport()
    return IntegrityReport.from_file(path.read_bytes())
