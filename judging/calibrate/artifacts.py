"""The calibration stage: how far each AI judge agrees with people, criterion by criterion.

Joins a run's judgments with human labels (by claim key, rubric version and hash, criterion),
computes agreement with intervals, decides which criteria a judge can be trusted with, and writes
an artifact bound to the judge, the rubric hash and the prompt-template hash (a change of either
makes it stale) plus Markdown/JSON/PNG reports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from judging.calibrate.metrics import CorrectedRate, ReliabilityBin
from judging.errors import CalibrationError
from judging.hashing import slug
from judging.models import Judgment, Label, RubricRef, StrictModel, VersionedModel
from judging.rubrics import Scale
from judging.rundir import CALIBRATION_DIR, CalibrationPaths, read_jsonl

CALIBRATION_SCHEMA = "judging.calibration/1"


DEFAULT_DIR = Path(CALIBRATION_DIR)


def calibration_root(path: Path | None = None) -> Path:
    """The calibration folder: `path`, else ./calibration (the CLI reads
    JUDGING_CALIBRATION_DIR)."""
    return Path(path or DEFAULT_DIR)


LABEL_QUESTIONS_OUTSIDE_RUBRIC = ("overall_verdict", "note")


NOT_CALIBRATED = "not calibrated"


class TrustOptions(StrictModel):
    min_support: int = Field(default=50, ge=1)
    """Scored answers with a human gold label needed before a criterion can be trusted."""
    min_coverage: float = Field(default=0.9, ge=0, le=1)
    """Share of the judge's answers on labelled claims that must be scored."""
    floor: float = Field(default=0.8, ge=0, le=1)
    """Lowest acceptable lower bound of the positive-class F1 interval (of the accuracy interval
    for a categorical criterion)."""
    tpr_floor: float = Field(default=0.7, ge=0, le=1)
    """Lowest acceptable lower bound (Wilson 95%) of the true-positive rate: the share of true
    passes the judge passes. F1 alone can be high for a judge that passes everything."""
    tnr_floor: float = Field(default=0.7, ge=0, le=1)
    """Lowest acceptable lower bound (Wilson 95%) of the true-negative rate: the share of true
    fails the judge fails."""
    bootstrap: int = Field(default=1000, ge=100)
    seed: int = 0
    include_anchored: bool = False
    """Also count labels from reviewers who saw the AI's answers."""


class HumanAgreement(StrictModel):
    raters: int
    items_with_several: int
    """Claims labelled by two or more people (where inter-human agreement can be measured)."""
    alpha: float | None
    """Krippendorff's alpha among the people: the ceiling for any judge."""
    human_kappa: float | None
    """Mean pairwise kappa between people."""
    judge_kappa: float | None
    """Mean kappa between the judge and each person (on the claims each labelled)."""
    ties: int
    """Claims whose people split evenly: no gold label, left out."""


class Baseline(StrictModel):
    """What a judge answering at random at the gold base rates scores (read figures against it)."""

    accuracy: float
    f1: float | None = None
    macro_f1: float
    kappa: float
    true_positive_rate: float | None = None
    true_negative_rate: float | None = None


class RetestCriterion(StrictModel):
    """The judge against itself on one criterion: original lines re-judged (`calibrate RUN_DIR
    --retest N`, the answer cache bypassed)."""

    n: int
    """Lines with a scored answer in both the original and its retest."""
    disagreements: int
    agreement: float
    """Share of the same answer (percent agreement)."""
    agreement_interval: tuple[float, float] | None = None
    ceiling: float | None = None
    """The most often the judge can agree with people, given `agreement`: (1 + agreement) / 2
    (`metrics.agreement_ceiling`)."""
    ceiling_interval: tuple[float, float] | None = None
    alpha: float | None = None
    """Krippendorff's alpha of original and retest as two coders."""
    alpha_interval: tuple[float, float] | None = None
    flips: dict[str, int] = Field(default_factory=dict)
    """Changed answers by direction, "original -> retest"."""


class CriterionCalibration(StrictModel):
    criterion: str
    scale: Scale
    decision: Literal["trusted", "needs_humans"]
    reasons: list[str]
    """Why the criterion is not trusted (empty when trusted)."""
    support: int
    scored: int
    unscored: int
    coverage: float | None
    accuracy: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    f1_interval: tuple[float, float] | None = None
    macro_f1: float | None = None
    accuracy_interval: tuple[float, float] | None = None
    """Bootstrap interval of the accuracy (the trust measure of a categorical criterion)."""
    true_positive_rate: float | None = None
    """Sensitivity: true passes the judge passes."""
    tpr_interval: tuple[float, float] | None = None
    true_negative_rate: float | None = None
    """Specificity: true fails the judge fails."""
    tnr_interval: tuple[float, float] | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    """Pass/fail against the gold: true_positives, false_negatives, true_negatives,
    false_positives (what the corrected rates use)."""
    kappa: float | None = None
    """Cohen's kappa (yes/no, categories) or quadratic-weighted kappa on the levels (ordinal)."""
    confusion: list[list[int]] = Field(default_factory=list)
    confusion_labels: list[str] = Field(default_factory=list)
    confidence_threshold: float | None = None
    threshold_agreement: float | None = None
    work_saved: float | None = None
    """Share of labelled claims whose judge confidence reaches the threshold."""
    reliability: list[ReliabilityBin] = Field(default_factory=list)
    """`metrics.reliability_bins` of the judge's confidences, as it gives them."""
    humans: HumanAgreement | None = None
    baseline: Baseline | None = None
    """The random-baseline row: a judge answering at the observed base rate."""
    retest: RetestCriterion | None = None
    """The judge against itself (None: no retest lines in the run)."""
    corrected: CorrectedRate | None = None
    """The run's pass rate corrected for the judge's errors (binary and ordinal criteria): the
    judge's scored answers in the run, `metrics.corrected_rate`'s model as it gives it (the
    interval rounded)."""


class LabelSet(StrictModel):
    path: str
    sha256: str
    source: Literal["human", "construction", "mixed"]
    labels: int
    """Every label of the file."""
    used: int
    """The labels that apply to this calibration's rubric version (and are blind unless anchored
    ones were included)."""
    annotators: int
    blind_only: bool


class CalibrationArtifact(VersionedModel):
    """artifacts/<rubric>@<version>/<judge>.json of a calibration folder."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.calibration/1"] = Field(default=CALIBRATION_SCHEMA, alias="schema")
    created_at: datetime
    judge: str
    model: str | None
    rubric: RubricRef
    template_hash: str | None
    """The judge's prompt-template hash: a calibration only holds for the same template."""
    run_id: str
    labels: LabelSet
    options: TrustOptions
    criteria: list[CriterionCalibration]
    pooled: CriterionCalibration | None = None
    """Every criterion's pass/fail pooled: the rubric-level view."""
    served: list[str] = Field(default_factory=list)
    """What the endpoint said it served on the calibrated lines (`model id` or `model id @
    fingerprint`): judgments served by anything else make the calibration stale."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.calibration/1 is the first version: every artifact has always carried it.
        return data

    def trusted(self) -> set[str]:
        return {c.criterion for c in self.criteria if c.decision == "trusted"}


def read_labels(path: Path) -> list[Label]:
    if not path.is_file():
        raise CalibrationError(f"{path}: no labels file (run `judging review pull RUN_DIR` or "
                               f"give --labels)")
    return read_jsonl(path, Label)


def latest_responses(labels: Sequence[Label]) -> list[Label]:
    """Each reviewer's latest response per (claim, rubric version): a claim can have a record
    in two datasets of a workspace (the whole run beside the AI's answers, a plan's random
    sample blind), and a reviewer who answered both changed their answer. The labels of their
    response in the other dataset go, whichever dataset came first in the file; within one
    dataset every label counts (a criterion's answer is its own label)."""
    latest: dict[tuple[str, str, str], tuple[datetime, str]] = {}
    for label in labels:
        group = (str(label.claim), str(label.rubric), label.annotator)
        # Argilla's times carry no zone, construction labels' do: both are UTC.
        when = label.updated_at if label.updated_at.tzinfo else \
            label.updated_at.replace(tzinfo=UTC)
        if group not in latest or when > latest[group][0]:
            latest[group] = (when, label.dataset)
    return [label for label in labels
            if latest[(str(label.claim), str(label.rubric), label.annotator)][1] == label.dataset]


def check_label_hashes(labels: Sequence[Label], refs: dict[str, RubricRef]) -> None:
    """Refuse labels given on another version of a rubric's content than the run judged with."""
    wrong: dict[tuple[str, str], int] = defaultdict(int)
    for label in labels:
        ref = refs.get(str(label.rubric))
        if ref is not None and label.rubric.hash != ref.hash:
            wrong[(str(ref), label.rubric.hash)] += 1
    if wrong:
        (rubric, other), count = next(iter(wrong.items()))
        raise CalibrationError(
            f"{sum(wrong.values())} label(s) for {rubric} were given on rubric hash "
            f"{other[:19]}..., but the run judged with {refs[rubric].hash[:19]}...: they judge "
            f"another text of the rubric and are refused (e.g. {count} for that hash)")


def artifact_path(out: Path, rubric: RubricRef, judge: str) -> Path:
    return CalibrationPaths(out).artifact(rubric.id, rubric.version, slug(judge))


def report_dir(out: Path, rubric: RubricRef, judge: str) -> Path:
    return CalibrationPaths(out).report_dir(rubric.id, rubric.version, slug(judge))


def load_artifact(out: Path, rubric: RubricRef, judge: str) -> CalibrationArtifact | None:
    path = artifact_path(out, rubric, judge)
    if not path.is_file():
        return None
    return CalibrationArtifact.from_file(path.read_bytes())


def staleness(artifact: CalibrationArtifact, *, rubric: RubricRef, template_hash: str | None,
              model: str | None, served: str | None = None) -> str | None:
    """Why `artifact` does not hold for judgments made with these, or None when it does.
    `served`: what the endpoint said it served for the judgment (`Provenance.served`); a
    calibration that recorded what was served holds only for the same."""
    if artifact.rubric.hash != rubric.hash:
        return "the rubric's content changed since the calibration"
    if artifact.template_hash != template_hash:
        return "the prompt template changed since the calibration"
    if artifact.model != model:
        return f"the judge model changed ({artifact.model} -> {model})"
    if artifact.served and served is not None and served not in artifact.served:
        return (f"the endpoint served another model or build ({served}; calibrated on "
                f"{', '.join(artifact.served)})")
    return None


def trusted_criteria(out: Path, judgment: Judgment, *,
                     artifacts: dict[tuple, CalibrationArtifact | None] | None = None
                     ) -> tuple[set[str], str | None]:
    """The criteria a current calibration trusts for the judge of `judgment`, and, when there
    is no usable calibration, why. `artifacts` keeps the artifacts read, for callers that ask
    for many judgments of a few (rubric, judge) pairs."""
    if judgment.rubric is None:
        return set(), "no rubric"
    key = (out, judgment.rubric.id, judgment.rubric.version, judgment.judge)
    if artifacts is not None and key in artifacts:
        artifact = artifacts[key]
    else:
        artifact = load_artifact(out, judgment.rubric, judgment.judge)
        if artifacts is not None:
            artifacts[key] = artifact
    if artifact is None:
        return set(), NOT_CALIBRATED
    stale = staleness(artifact, rubric=judgment.rubric,
                      template_hash=judgment.provenance.template_hash,
                      model=judgment.provenance.model, served=judgment.provenance.served())
    if stale:
        return set(), f"calibration is stale: {stale}"
    return artifact.trusted(), None


