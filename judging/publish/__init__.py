"""`judging publish`: a resolved run's final decisions as a Hugging Face dataset.

Reads the run directory's final decisions, claims, judgments and the calibration summary; stages
them (scrubbed of personal data, reviewers pseudonymised) under `RUN_DIR/publish/` as Parquet and
JSON lines with a dataset card, then uploads the folder to the Hub.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judging.publish.card import DEFAULT_LICENSE, dataset_card
from judging.publish.hub import check_repo_id, hub_token, upload
from judging.publish.scrub import SCRUB_PATTERNS, Scrubber, leftovers, pseudonym, scrub
from judging.publish.stage import Staged, StagedFile, describe, require_resolved, stage


@dataclass
class Published:
    staged: Staged
    url: str | None
    """None on a dry run."""


def publish(run_dir: Path, repo_id: str, *, private: bool = False, dry_run: bool = False,
            calibration_dir: Path | None = None, out: Path | None = None,
            license: str = DEFAULT_LICENSE, salt: str | None = None) -> Published:
    """Stage RUN_DIR's final decisions and, unless `dry_run`, upload them as a Hub dataset."""
    check_repo_id(repo_id)
    require_resolved(Path(run_dir))
    token = None if dry_run else hub_token()
    staged = stage(run_dir, out=out, calibration_dir=calibration_dir, license=license,
                   repo_id=repo_id, salt=salt)
    if dry_run:
        return Published(staged, None)
    assert token is not None
    return Published(staged, upload(staged, repo_id, private=private, token=token))


__all__ = ["SCRUB_PATTERNS", "Published", "Scrubber", "Staged", "StagedFile", "dataset_card",
           "describe", "hub_token", "leftovers", "publish", "pseudonym", "scrub", "stage", "upload"]
