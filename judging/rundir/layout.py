"""Every file of a run directory: its name, what it holds, and which stage writes it.

This module is the only place in the code that spells a run-directory file name; every stage gets
its paths from `RunPaths`. (Docstrings and CLI help may name the files.)

| file                                | holds                                            | written by        |
|-------------------------------------|--------------------------------------------------|-------------------|
| run.json                            | `RunInfo`: run id, invocations                   | run               |
| judgments.jsonl                     | `Judgment` lines, append-only                    | run               |
| claims.jsonl                        | `ClaimInput` of every judged claim               | run               |
| fingerprints.jsonl                  | `Fingerprint` of every reproduced figure         | run               |
| integrity.json                      | `IntegrityReport` (side file, merged on read)    | run               |
| diffs/<claim>/{published,reproduced,diff,overlay}.png | the figures reviewers see      | run               |
| sources/                            | downloaded Hub sources                           | run (intake)      |
| report.html                         | the HTML report                                  | report            |
| labels.jsonl                        | `Label` lines pulled from Argilla                | review pull       |
| decisions.jsonl, final.jsonl        | `RubricDecision`, `ClaimDecision` lines          | resolve           |
| leaderboard_*.csv, leaderboard.html | the leaderboard                                  | resolve           |
| publish/, .publish-salt             | the staged Hub dataset, the pseudonym salt       | publish           |

A calibration folder (default `./calibration`, or `RUN_DIR/calibration` in the demo) holds
`artifacts/<rubric>@<version>/<judge>.json` and `reports/<rubric>@<version>/<judge>/`
(`CalibrationPaths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judging.models import ref_name

RUN_JSON = "run.json"
JUDGMENTS = "judgments.jsonl"
CLAIMS = "claims.jsonl"
FINGERPRINTS = "fingerprints.jsonl"
INTEGRITY = "integrity.json"
DIFFS = "diffs"
SOURCES = "sources"
REPORT = "report.html"
LABELS = "labels.jsonl"
DECISIONS = "decisions.jsonl"
FINAL = "final.jsonl"
LEADERBOARD_SUBMISSIONS = "leaderboard_submissions.csv"
LEADERBOARD_PAPERS = "leaderboard_papers.csv"
LEADERBOARD_HTML = "leaderboard.html"
PUBLISH_STAGING = "publish"
PUBLISH_SALT = ".publish-salt"

#: The images written per figure claim under diffs/<claim slug>/.
CLAIM_IMAGES = {"published": "published.png", "reproduced": "reproduced.png", "diff": "diff.png",
                "overlay": "overlay.png"}

#: Calibration artifacts and reports, under a calibration folder.
CALIBRATION_DIR = "calibration"
CALIBRATION_ARTIFACTS = "artifacts"
CALIBRATION_REPORTS = "reports"
CALIBRATION_PLOTS = {"f1": "f1.png", "confusion": "confusion.png",
                     "reliability": "reliability.png"}
CALIBRATION_REPORT_MD = "report.md"
CALIBRATION_REPORT_JSON = "report.json"


@dataclass(frozen=True)
class RunPaths:
    """The paths of one run directory."""

    root: Path

    @property
    def run_json(self) -> Path:
        return self.root / RUN_JSON

    @property
    def judgments(self) -> Path:
        return self.root / JUDGMENTS

    @property
    def claims(self) -> Path:
        return self.root / CLAIMS

    @property
    def fingerprints(self) -> Path:
        return self.root / FINGERPRINTS

    @property
    def integrity(self) -> Path:
        return self.root / INTEGRITY

    @property
    def diffs(self) -> Path:
        return self.root / DIFFS

    @property
    def sources(self) -> Path:
        return self.root / SOURCES

    @property
    def report(self) -> Path:
        return self.root / REPORT

    @property
    def labels(self) -> Path:
        return self.root / LABELS

    @property
    def decisions(self) -> Path:
        return self.root / DECISIONS

    @property
    def final(self) -> Path:
        return self.root / FINAL

    @property
    def leaderboards(self) -> tuple[Path, Path, Path]:
        """Per submission (CSV), per paper (CSV), and both as HTML."""
        return (self.root / LEADERBOARD_SUBMISSIONS, self.root / LEADERBOARD_PAPERS,
                self.root / LEADERBOARD_HTML)

    @property
    def publish_staging(self) -> Path:
        return self.root / PUBLISH_STAGING

    @property
    def publish_salt(self) -> Path:
        return self.root / PUBLISH_SALT


def claim_images(claim_dir: Path) -> dict[str, Path]:
    """The figure files of one claim's folder under diffs/."""
    return {kind: claim_dir / name for kind, name in CLAIM_IMAGES.items()}


@dataclass(frozen=True)
class CalibrationPaths:
    """The paths of a calibration folder."""

    root: Path

    def artifact(self, rubric_id: str, version: str, judge_slug: str) -> Path:
        return self.root / CALIBRATION_ARTIFACTS / ref_name(rubric_id, version) / f"{judge_slug}.json"

    def report_dir(self, rubric_id: str, version: str, judge_slug: str) -> Path:
        return self.root / CALIBRATION_REPORTS / ref_name(rubric_id, version) / judge_slug
