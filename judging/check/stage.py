"""Checking one SOURCE: expand it into submission folders, load each, list its items."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from judging.check.logbook import check_logbook
from judging.check.manifest import check_manifest
from judging.check.model import MISSING, WARNING, Checklist
from judging.check.space import check_space
from judging.errors import JudgingError
from judging.intake import (
    LoadedSubmission,
    expand_source,
    load_folder,
    read_logbook,
    read_space,
    shape_of,
)

PROFILES = ("icml2026",)


def _logbook(checklist: Checklist, loaded: LoadedSubmission, folder: Path,
             profile: str | None) -> None:
    check_logbook(checklist, loaded, read_logbook(folder), folder, profile=profile)


def _space(checklist: Checklist, loaded: LoadedSubmission, folder: Path,
           profile: str | None) -> None:
    check_space(checklist, loaded, read_space(folder), folder)


def _manifest(checklist: Checklist, loaded: LoadedSubmission, folder: Path,
              profile: str | None) -> None:
    if profile is not None:
        checklist.add("profile", WARNING, f"the {profile} profile checks logbooks; "
                                          f"this is a manifest submission")
    check_manifest(checklist, loaded, folder)


#: The checklist of each shape of `intake.SHAPES`, by the shape's name (the shapes' order is
#: intake's; tests/check holds that every shape has one).
CHECKLISTS: dict[str, Callable[[Checklist, LoadedSubmission, Path, str | None], None]] = {
    "manifest": _manifest, "logbook": _logbook, "space": _space}


def check_source(source: str, *, profile: str | None = None) -> list[Checklist]:
    """One checklist per submission named by SOURCE (a submission folder, a folder of them, or
    `hf://...`). A source that is not found or not a submission is one failing checklist."""
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    with tempfile.TemporaryDirectory(prefix="judging-check-") as scratch:
        try:
            folders = expand_source(source, download_root=Path(scratch) / "sources")
        except (JudgingError, OSError) as exc:
            checklist = Checklist(source=source, folder=source, format="unknown",
                                  profile=profile)
            checklist.add("submission", MISSING, str(exc))
            return [checklist]
        return [check_folder(folder, source=source, profile=profile, scratch=Path(scratch))
                for folder in folders]


def check_folder(folder: Path, *, source: str | None = None, profile: str | None = None,
                 scratch: Path | None = None) -> Checklist:
    folder = Path(folder)
    shape = shape_of(folder) or "manifest"  # a folder of no shape: the manifest loader says why
    checklist = Checklist(source=source or str(folder), folder=str(folder), format=shape,
                          profile=profile)
    with tempfile.TemporaryDirectory(prefix="judging-check-", dir=scratch) as out:
        try:
            loaded = load_folder(folder, logbooks_dir=Path(out))
        except JudgingError as exc:
            checklist.add("submission", MISSING, f"does not load: {exc}")
            return checklist
        checklist.submission_id = loaded.header.submission_id
        CHECKLISTS[shape](checklist, loaded, folder, profile)
    return checklist
