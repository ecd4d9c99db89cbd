"""Every file of a run directory: its name, what it holds, and which stage writes it.

This module is the only place in the code that spells a run-directory file name; every stage gets
its paths from `RunPaths`. (Docstrings and CLI help may name the files.)

| file                       | holds                                         | schema                  | written by   |
|----------------------------|-----------------------------------------------|-------------------------|--------------|
| run.json                   | `RunInfo`: run id, invocations                | judging.run/1           | run          |
| judgments.jsonl            | `Judgment` lines, append-only                 | judging.judgment/1      | run          |
| claims.jsonl               | `ClaimInput` of every judged claim            | judging.claim/1         | run          |
| fingerprints.jsonl         | `Fingerprint` of every reproduced figure      | judging.fingerprint/1   | run          |
| integrity.json             | `IntegrityReport` (side file, merged on read) | judging.integrity/1     | run          |
| not_addressed.jsonl        | `NotAddressed`: registry claims not answered  | judging.not_addressed/1 | run          |
| consensus.json             | `ConsensusReport` (side file, merged on read) | judging.consensus/1     | consensus    |
| conflicts.json             | `ConflictReport` (side file, merged on read)  | judging.conflicts/1     | merge        |
| drift.json                 | `DriftReport`: what the endpoint served, and  | judging.drift/1         | run, resolve |
|                            | lines served by another model (merged on read)|                         |              |
| reruns.jsonl               | `RerunRecord` lines, append-only              | judging.rerun/1         | rerun        |
| reruns/<claim>/            | a re-run's logs: stdout, stderr, build        |                         | rerun        |
| diffs/<claim>/*.png        | the figures reviewers see                     |                         | run          |
| sources/                   | downloaded Hub sources                        |                         | run (intake) |
| logbooks/                  | figures and run logs read from logbooks       |                         | run (intake) |
| shards/<I>-of-<N>/         | shard runs of `judging run --engine`          | (run directories)       | run          |
| measurements/              | the measurement cache (default place)         | judging.measurement/1   | run          |
| report.html                | the HTML report                               |                         | report       |
| report_pages/              | a paged report's index data and claim pages   |                         | report       |
| pushed.jsonl               | `PushedRecord`: records a push sent           | judging.pushed/1        | review push  |
| review_plan.jsonl          | `PlannedClaim`: the claims to review, in order| judging.review_plan/1   | review plan  |
| labels.jsonl               | `Label` lines pulled from Argilla             | judging.label/1         | review pull  |
| retests.jsonl              | `Retest` lines: originals re-judged, beside   | judging.retest/1        | calibrate    |
|                            | them (never replacing them)                   |                         |              |
| decisions.jsonl            | `RubricDecision` lines                        | judging.decision/1      | resolve      |
| final.jsonl                | `ClaimDecision` lines                         | judging.final/1         | resolve      |
| leaderboard_*.csv, .html   | the leaderboard                               |                         | resolve      |
| leaderboard_rule.txt       | how the CSVs are ordered, and what they count |                         | resolve      |
| awards.jsonl               | `AwardPick`: people's final award picks       | judging.award_pick/1    | awards       |
| publish/, .publish-salt    | the staged Hub dataset, the pseudonym salt    |                         | publish      |
| watch.json, watch.lock     | `WatchState`: the Spaces a watch follows      | judging.watch/1         | watch        |

(diffs/<claim>/ holds published, reproduced, diff and overlay .png.)

`judging merge RUN_DIR... --out DIR` unions run.json (invocations, plus a `merges` record),
judgments, claims, fingerprints, not_addressed, labels, diffs/, sources/ and logbooks/; it
recomputes integrity.json over the union and writes conflicts.json. The files derived from
judgments (report.html, decisions, final, leaderboards, publish/) are not merged: rebuild them.
reruns.jsonl and reruns/ are not merged either: `judging rerun` the merged directory (its Ray
engine spreads the claims over a cluster).

A calibration folder (default `./calibration`, or `RUN_DIR/calibration` in the demo) holds
`artifacts/<rubric>@<version>/<judge>.json` (`CalibrationArtifact`, judging.calibration/1) and
`reports/<rubric>@<version>/<judge>/` (`CalibrationPaths`).

File versions (the schema column, as data in `RUN_FILES`): every JSON file, and every line of a
JSONL file, names its schema version first, as "schema". Readers accept every earlier version and
upgrade it on read (`VersionedModel.migrate` in judging/models.py); a file written before versions
were recorded (no "schema") is read as version 1. A version is bumped only when the shape
changes; a new optional field is not a shape change, and is left out of input hashes while unset
(judging/run/lines.py), so that adding one never makes a resume re-judge finished work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judging.hashing import slug
from judging.models import ref_name

RUN_JSON = "run.json"
JUDGMENTS = "judgments.jsonl"
CLAIMS = "claims.jsonl"
FINGERPRINTS = "fingerprints.jsonl"
INTEGRITY = "integrity.json"
NOT_ADDRESSED = "not_addressed.jsonl"
CONSENSUS = "consensus.json"
CONFLICTS = "conflicts.json"
DRIFT = "drift.json"
RERUNS = "reruns.jsonl"
RERUN_LOGS = "reruns"
#: The files of one re-run's logs folder, reruns/<claim slug>/.
RERUN_LOG_FILES = {"stdout": "stdout.txt", "stderr": "stderr.txt", "build": "build.txt"}
DIFFS = "diffs"
SHARDS = "shards"
SOURCES = "sources"
LOGBOOKS = "logbooks"
MEASUREMENTS = "measurements"
REPORT = "report.html"
LABELS = "labels.jsonl"
PUSHED = "pushed.jsonl"
REVIEW_PLAN = "review_plan.jsonl"
AWARDS = "awards.jsonl"
RETESTS = "retests.jsonl"
DECISIONS = "decisions.jsonl"
FINAL = "final.jsonl"
LEADERBOARD_SUBMISSIONS = "leaderboard_submissions.csv"
LEADERBOARD_PAPERS = "leaderboard_papers.csv"
LEADERBOARD_HTML = "leaderboard.html"
LEADERBOARD_CONSENSUS = "leaderboard_consensus.csv"
LEADERBOARD_PARTICIPANTS = "leaderboard_participants.csv"
LEADERBOARD_RULE = "leaderboard_rule.txt"
WATCH = "watch.json"
WATCH_LOCK = "watch.lock"
PUBLISH_STAGING = "publish"
PUBLISH_SALT = ".publish-salt"

#: The images written per figure claim under diffs/<claim slug>/.
CLAIM_IMAGES = {"published": "published.png", "reproduced": "reproduced.png", "diff": "diff.png",
                "overlay": "overlay.png"}

#: Calibration artifacts and reports, under a calibration folder.
CALIBRATION_DIR = "calibration"
CALIBRATION_ARTIFACTS = "artifacts"
CALIBRATION_REPORTS = "reports"
#: `judging calibrate --table`: reports/table/<judge column>/ (the same report files and plots).
CALIBRATION_TABLE_REPORTS = "table"
CALIBRATION_PLOTS = {"f1": "f1.png", "confusion": "confusion.png",
                     "reliability": "reliability.png"}
CALIBRATION_REPORT_MD = "report.md"
CALIBRATION_REPORT_JSON = "report.json"
#: `calibrate RUN_DIR --retest N`: the judge against itself, beside report.md in the report folder.
CALIBRATION_RETEST_MD = "retest.md"
CALIBRATION_RETEST_JSON = "retest.json"


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
    def not_addressed(self) -> Path:
        return self.root / NOT_ADDRESSED

    @property
    def consensus(self) -> Path:
        return self.root / CONSENSUS

    @property
    def conflicts(self) -> Path:
        return self.root / CONFLICTS

    @property
    def diffs(self) -> Path:
        return self.root / DIFFS

    @property
    def reruns(self) -> Path:
        """`judging rerun`'s results, one line per re-run (the newest line of a claim counts)."""
        return self.root / RERUNS

    def rerun_logs(self, claim_key: str) -> Path:
        """The logs folder of one claim's re-run (RERUN_LOG_FILES)."""
        return self.root / RERUN_LOGS / slug(claim_key)

    @property
    def shards(self) -> Path:
        """The shard run directories of `judging run --engine`, merged into this one."""
        return self.root / SHARDS

    @property
    def sources(self) -> Path:
        return self.root / SOURCES

    @property
    def logbooks(self) -> Path:
        """Figures and run logs read from logbook submissions, one folder per submission."""
        return self.root / LOGBOOKS

    @property
    def measurements(self) -> Path:
        """The measurement cache, unless `--measure-cache` puts it elsewhere (run/pool.py): a
        cache, not a record; deleting it costs a re-measure."""
        return self.root / MEASUREMENTS

    @property
    def report(self) -> Path:
        return self.root / REPORT

    @property
    def labels(self) -> Path:
        return self.root / LABELS

    @property
    def pushed(self) -> Path:
        """The resume point of `judging review push`."""
        return self.root / PUSHED

    @property
    def review_plan(self) -> Path:
        """`judging review plan`: the claims people review next, and why."""
        return self.root / REVIEW_PLAN

    @property
    def awards(self) -> Path:
        """`judging awards`: the final picks people made from the shortlists."""
        return self.root / AWARDS

    @property
    def decisions(self) -> Path:
        return self.root / DECISIONS

    @property
    def final(self) -> Path:
        return self.root / FINAL

    @property
    def drift(self) -> Path:
        """What each LLM judge's endpoint said it served, and the changes (flags)."""
        return self.root / DRIFT

    @property
    def retests(self) -> Path:
        """`calibrate RUN_DIR --retest N`: lines re-judged with the answer cache bypassed."""
        return self.root / RETESTS

    @property
    def leaderboards(self) -> tuple[Path, Path, Path]:
        """Per submission (CSV), per paper (CSV), and both as HTML."""
        return (self.root / LEADERBOARD_SUBMISSIONS, self.root / LEADERBOARD_PAPERS,
                self.root / LEADERBOARD_HTML)

    @property
    def leaderboard_participants(self) -> Path:
        """Per participant, under the event's rules (CSV; also in the HTML)."""
        return self.root / LEADERBOARD_PARTICIPANTS

    @property
    def leaderboard_rule(self) -> Path:
        """The rule the CSVs are ordered by and what their columns count (a CSV holds no
        prose), beside them."""
        return self.root / LEADERBOARD_RULE

    @property
    def leaderboard_consensus(self) -> Path:
        """Per registry claim: the consensus of its reproductions (CSV; also in the HTML)."""
        return self.root / LEADERBOARD_CONSENSUS

    @property
    def watch(self) -> Path:
        """`judging watch`: the Spaces it follows, the revision of each it judged, its polls."""
        return self.root / WATCH

    @property
    def watch_lock(self) -> Path:
        """Held (flock) by the one `judging watch` of this run directory."""
        return self.root / WATCH_LOCK

    @property
    def publish_staging(self) -> Path:
        return self.root / PUBLISH_STAGING

    @property
    def publish_salt(self) -> Path:
        return self.root / PUBLISH_SALT


@dataclass(frozen=True)
class RunFile:
    """One versioned file of a run directory (or of a calibration folder)."""

    name: str
    """The file name (a pattern for calibration artifacts)."""
    model: str
    """The model of the file (JSON) or of each line (JSONL), as `module:Class`."""
    schema: str
    """The current schema version; readers also accept every earlier one."""
    written_by: str
    """The stage that writes it."""
    flags_side_file: bool = False
    """Flags computed after judging, merged into judgments on read (`rundir.flags`)."""


#: Every versioned file, its model and its schema version (checked against the models by the tests).
RUN_FILES: tuple[RunFile, ...] = (
    RunFile(RUN_JSON, "judging.rundir.store:RunInfo", "judging.run/1", "run"),
    RunFile(JUDGMENTS, "judging.models:Judgment", "judging.judgment/1", "run"),
    RunFile(CLAIMS, "judging.models:ClaimInput", "judging.claim/1", "run"),
    RunFile(FINGERPRINTS, "judging.models:Fingerprint", "judging.fingerprint/1", "run"),
    RunFile(INTEGRITY, "judging.models:IntegrityReport", "judging.integrity/1", "run",
            flags_side_file=True),
    RunFile(NOT_ADDRESSED, "judging.models:NotAddressed", "judging.not_addressed/1", "run"),
    RunFile(CONSENSUS, "judging.models:ConsensusReport", "judging.consensus/1", "consensus",
            flags_side_file=True),
    RunFile(CONFLICTS, "judging.models:ConflictReport", "judging.conflicts/1", "merge",
            flags_side_file=True),
    RunFile(DRIFT, "judging.models:DriftReport", "judging.drift/1", "run",
            flags_side_file=True),
    RunFile(RERUNS, "judging.models:RerunRecord", "judging.rerun/1", "rerun"),
    RunFile(PUSHED, "judging.review.push:PushedRecord", "judging.pushed/1", "review push"),
    RunFile(REVIEW_PLAN, "judging.resolve.intervals:PlannedClaim", "judging.review_plan/1",
            "review plan"),
    RunFile(AWARDS, "judging.resolve.awards:AwardPick", "judging.award_pick/1", "awards"),
    RunFile(f"{MEASUREMENTS}/<ab>/<key>.json", "judging.run.pool:CachedMeasurement",
            "judging.measurement/1", "run"),
    RunFile(LABELS, "judging.models:Label", "judging.label/1", "review pull"),
    RunFile(RETESTS, "judging.calibrate.retest:Retest", "judging.retest/1", "calibrate"),
    RunFile(DECISIONS, "judging.resolve.decide:RubricDecision", "judging.decision/1", "resolve"),
    RunFile(FINAL, "judging.resolve.decide:ClaimDecision", "judging.final/1", "resolve"),
    RunFile(WATCH, "judging.watch.state:WatchState", "judging.watch/1", "watch"),
    RunFile(f"{CALIBRATION_ARTIFACTS}/<rubric>@<version>/<judge>.json",
            "judging.calibrate.artifacts:CalibrationArtifact", "judging.calibration/1",
            "calibrate"),
)


def run_file(name: str) -> RunFile:
    return next(f for f in RUN_FILES if f.name == name)


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

    def table_report_dir(self, judge_column: str) -> Path:
        """`--table` mode's report folder, named after the judge column (a path-safe slug
        when the column's name is not a plain file name)."""
        plain = re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,59}", judge_column) is not None
        return self.root / CALIBRATION_REPORTS / CALIBRATION_TABLE_REPORTS / (
            judge_column if plain else slug(judge_column))
