"""The calibration stage: how far each AI judge agrees with people, criterion by criterion.

Joins a run's judgments with human labels (by claim key, rubric version and hash, criterion),
computes agreement with intervals, decides which criteria a judge can be trusted with, and writes
an artifact bound to the judge, the rubric hash and the prompt-template hash (a change of either
makes it stale) plus Markdown/JSON/PNG reports.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from . import agreement
from .errors import CalibrationError
from .hashing import file_sha256, slug
from .models import AnswerStatus, Judgment, Label, RubricRef, StrictModel
from .rubrics import Criterion, Rubric, RubricLibrary, Scale
from .store import RunStore, read_jsonl, utc_now, write_text_atomic

CALIBRATION_SCHEMA = "judging.calibration/1"
DEFAULT_DIR = Path("calibration")


def calibration_root(path: Path | None = None) -> Path:
    """The calibration folder: `path`, else $JUDGING_CALIBRATION_DIR, else ./calibration."""
    return Path(path or os.environ.get("JUDGING_CALIBRATION_DIR") or DEFAULT_DIR)
LABEL_QUESTIONS_OUTSIDE_RUBRIC = ("overall_verdict", "note")
NOT_CALIBRATED = "not calibrated"


class TrustOptions(StrictModel):
    min_support: int = Field(default=50, ge=1)
    """Scored answers with a human gold label needed before a criterion can be trusted."""
    min_coverage: float = Field(default=0.9, ge=0, le=1)
    """Share of the judge's answers on labelled claims that must be scored."""
    floor: float = Field(default=0.8, ge=0, le=1)
    """Lowest acceptable lower bound of the positive-class F1 interval."""
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


class ReliabilityBin(StrictModel):
    low: float
    high: float
    n: int
    mean_confidence: float | None
    accuracy: float | None


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
    kappa: float | None = None
    """Cohen's kappa (yes/no) or quadratic-weighted kappa on the levels (ordinal)."""
    confusion: list[list[int]] = Field(default_factory=list)
    confusion_labels: list[str] = Field(default_factory=list)
    confidence_threshold: float | None = None
    threshold_agreement: float | None = None
    work_saved: float | None = None
    """Share of labelled claims whose judge confidence reaches the threshold."""
    reliability: list[ReliabilityBin] = Field(default_factory=list)
    humans: HumanAgreement | None = None


class LabelSet(StrictModel):
    path: str
    sha256: str
    source: Literal["human", "construction", "mixed"]
    labels: int
    used: int
    annotators: int
    blind_only: bool


class CalibrationArtifact(StrictModel):
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

    model_config = StrictModel.model_config | {"populate_by_name": True}

    def trusted(self) -> set[str]:
        return {c.criterion for c in self.criteria if c.decision == "trusted"}


# --- loading and joining ---------------------------------------------------------------------


def read_labels(path: Path) -> list[Label]:
    if not path.is_file():
        raise CalibrationError(f"{path}: no labels file (run `judging review pull RUN_DIR` or "
                               f"give --labels)")
    return read_jsonl(path, Label)


def check_label_hashes(labels: Sequence[Label], refs: dict[str, RubricRef]) -> None:
    """Refuse labels given on another version of a rubric's content than the run judged with."""
    wrong: dict[tuple[str, str], int] = defaultdict(int)
    for label in labels:
        ref = refs.get(f"{label.rubric.id}@{label.rubric.version}")
        if ref is not None and label.rubric.hash != ref.hash:
            wrong[(str(ref), label.rubric.hash)] += 1
    if wrong:
        (rubric, other), count = next(iter(wrong.items()))
        raise CalibrationError(
            f"{sum(wrong.values())} label(s) for {rubric} were given on rubric hash "
            f"{other[:19]}..., but the run judged with {refs[rubric].hash[:19]}...: they judge "
            f"another text of the rubric and are refused (e.g. {count} for that hash)")


@dataclass
class Pair:
    """One labelled claim for one criterion: the gold, and what the judge said."""

    claim: str
    gold: bool | int
    judged: bool | int | None
    """None when the judge's answer is unscored."""
    confidence: float | None
    humans: dict[str, bool | int]


def human_ratings(criterion: Criterion, labels: Sequence[Label]
                  ) -> dict[str, dict[str, bool | int]]:
    """Each claim's labels for one criterion, by annotator."""
    by_claim: dict[str, dict[str, bool | int]] = defaultdict(dict)
    for label in labels:
        if label.criterion == criterion.id and isinstance(label.value, bool | int):
            by_claim[str(label.claim)][label.annotator] = label.value
    return by_claim


def join(criterion: Criterion, judgments: dict[str, Judgment], labels: Sequence[Label], *,
         ratings: dict[str, dict[str, bool | int]] | None = None) -> tuple[list[Pair], int]:
    """Pairs (gold, judge answer) for one criterion; and the number of human ties left out.
    `ratings`: `human_ratings(criterion, labels)` when the caller has it already."""
    by_claim = ratings if ratings is not None else human_ratings(criterion, labels)
    pairs: list[Pair] = []
    ties = 0
    for claim, humans in sorted(by_claim.items()):
        gold = agreement.majority(list(humans.values()))
        if gold is None:
            ties += 1
            continue
        judgment = judgments.get(claim)
        if judgment is None:
            continue
        answer = judgment.answer(criterion.id)
        if answer is None or answer.status is AnswerStatus.not_applicable:
            continue
        scored = answer.status is AnswerStatus.scored and answer.value is not None
        pairs.append(Pair(claim=claim, gold=gold, judged=answer.value if scored else None,
                          confidence=answer.confidence if scored else None, humans=humans))
    return pairs, ties


# --- metrics for one criterion ---------------------------------------------------------------


def _finite(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def calibrate_criterion(criterion: Criterion, pairs: list[Pair], *, ties: int,
                        options: TrustOptions,
                        ratings: dict[str, dict[str, bool | int]] | None = None,
                        judged_all: dict[str, bool | int | None] | None = None
                        ) -> CriterionCalibration:
    """Metrics and the trust decision for one criterion. `ratings` (every labelled claim,
    ties included) and `judged_all` feed the human-agreement figures."""
    scored = [p for p in pairs if p.judged is not None]
    unscored = len(pairs) - len(scored)
    coverage = len(scored) / len(pairs) if pairs else None
    result = CriterionCalibration(criterion=criterion.id, scale=criterion.scale,
                                  decision="needs_humans", reasons=[], support=len(scored),
                                  scored=len(scored), unscored=unscored, coverage=coverage)
    if scored:
        gold_pass = [criterion.passes(p.gold) for p in scored]
        judged_pass = [criterion.passes(p.judged) for p in scored]  # type: ignore[arg-type]
        passfail = agreement.classification_metrics(gold_pass, judged_pass, labels=[True, False],
                                                    positive=True)
        result.accuracy = passfail.accuracy
        result.precision = _finite(passfail.precision)
        result.recall = _finite(passfail.recall)
        result.f1 = _finite(passfail.f1)
        result.macro_f1 = _finite(passfail.macro_f1)
        if criterion.scale is Scale.binary:
            result.kappa = _finite(passfail.kappa)
            result.confusion = passfail.confusion
            result.confusion_labels = ["yes", "no"]
        else:
            levels = sorted(criterion.levels or {})
            on_levels = agreement.classification_metrics(
                [int(p.gold) for p in scored], [int(p.judged) for p in scored],  # type: ignore
                labels=levels, ordinal=True)
            result.kappa = _finite(on_levels.weighted_kappa)
            result.confusion = on_levels.confusion
            result.confusion_labels = [str(level) for level in levels]
        result.f1_interval = agreement.f1_interval(
            gold_pass, judged_pass, positive=True, labels=[True, False],
            n_resamples=options.bootstrap, seed=options.seed)
        confident = [p for p in scored if p.confidence is not None]
        if confident:
            correct = [criterion.passes(p.gold) == criterion.passes(p.judged)  # type: ignore
                       for p in confident]
            confidences = [float(p.confidence) for p in confident]  # type: ignore[arg-type]
            threshold = agreement.confidence_threshold(confidences, correct, floor=options.floor,
                                                       min_items=min(10, len(confident)))
            result.confidence_threshold = threshold.threshold
            result.threshold_agreement = threshold.agreement
            result.work_saved = threshold.n_above / len(pairs) if threshold.threshold is not None \
                else 0.0
            result.reliability = [ReliabilityBin(**vars(b)) for b in
                                  agreement.reliability_bins(confidences, correct)]
    if ratings is None:
        ratings = {p.claim: p.humans for p in pairs}
        judged_all = {p.claim: p.judged for p in pairs}
    result.humans = _human_agreement(criterion, ratings, judged_all or {}, ties)
    reasons = []
    if result.support < options.min_support:
        reasons.append(f"support {result.support} < {options.min_support}")
    if coverage is None or coverage < options.min_coverage:
        reasons.append(f"coverage {0 if coverage is None else coverage:.2f} < "
                       f"{options.min_coverage:g}")
    low = result.f1_interval[0] if result.f1_interval else None
    if low is None or low < options.floor:
        reasons.append(f"F1 lower bound {'undefined' if low is None else f'{low:.3f}'} < "
                       f"{options.floor:g}")
    result.reasons = reasons
    result.decision = "trusted" if not reasons else "needs_humans"
    return result


def _human_agreement(criterion: Criterion, ratings: dict[str, dict[str, bool | int]],
                     judged_all: dict[str, bool | int | None], ties: int) -> HumanAgreement:
    claims = sorted(ratings)
    raters = sorted({name for humans in ratings.values() for name in humans})
    ordinal = criterion.scale is Scale.ordinal
    values: list[bool | int] = sorted(criterion.levels or {}) if ordinal else [True, False]
    matrix = [[ratings[claim].get(name) for claim in claims] for name in raters]
    several = sum(1 for claim in claims if len(ratings[claim]) >= 2)
    alpha = human_kappa = judge_kappa = None
    if len(raters) >= 2 and several:
        alpha = agreement.krippendorff_alpha(matrix, level="ordinal" if ordinal else "nominal",
                                             values=values)
        kappas = [k for k in agreement.pairwise_kappa(
            matrix, labels=values, weights="quadratic" if ordinal else None).values()
            if k is not None]
        human_kappa = sum(kappas) / len(kappas) if kappas else None
    judged = [judged_all.get(claim) for claim in claims]
    if any(j is not None for j in judged) and raters:
        kappas = []
        for row in matrix:
            pair_rows = agreement.pairwise_kappa([judged, row], labels=values,
                                                 weights="quadratic" if ordinal else None)
            kappa = pair_rows.get((0, 1))
            if kappa is not None:
                kappas.append(kappa)
        judge_kappa = sum(kappas) / len(kappas) if kappas else None
    return HumanAgreement(raters=len(raters), items_with_several=several, alpha=_finite(alpha),
                          human_kappa=_finite(human_kappa), judge_kappa=_finite(judge_kappa),
                          ties=ties)


# --- the stage -------------------------------------------------------------------------------


@dataclass
class CalibrationResult:
    artifact: CalibrationArtifact
    artifact_path: Path
    report_dir: Path
    stale: str | None
    """Why an earlier calibration for this judge and rubric version no longer holds."""


def artifact_path(out: Path, rubric: RubricRef, judge: str) -> Path:
    return out / "artifacts" / f"{rubric.id}@{rubric.version}" / f"{slug(judge)}.json"


def report_dir(out: Path, rubric: RubricRef, judge: str) -> Path:
    return out / "reports" / f"{rubric.id}@{rubric.version}" / slug(judge)


def load_artifact(out: Path, rubric: RubricRef, judge: str) -> CalibrationArtifact | None:
    path = artifact_path(out, rubric, judge)
    if not path.is_file():
        return None
    return CalibrationArtifact.model_validate_json(path.read_bytes())


def staleness(artifact: CalibrationArtifact, *, rubric: RubricRef, template_hash: str | None,
              model: str | None) -> str | None:
    """Why `artifact` does not hold for judgments made with these, or None when it does."""
    if artifact.rubric.hash != rubric.hash:
        return "the rubric's content changed since the calibration"
    if artifact.template_hash != template_hash:
        return "the prompt template changed since the calibration"
    if artifact.model != model:
        return f"the judge model changed ({artifact.model} -> {model})"
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
                      model=judgment.provenance.model)
    if stale:
        return set(), f"calibration is stale: {stale}"
    return artifact.trusted(), None


def calibrate_run(run_dir: Path, *, labels_path: Path | None = None, out: Path = DEFAULT_DIR,
                  options: TrustOptions | None = None, judges: Sequence[str] | None = None,
                  rubrics_dir: Path | None = None) -> list[CalibrationResult]:
    """Calibrate every (rubric version, judge) of a run that has labels."""
    from .calibration_report import write_report

    options = options or TrustOptions()
    store = RunStore.open(run_dir, create=False)
    labels_path = labels_path or store.root / "labels.jsonl"
    all_labels = read_labels(labels_path)
    judgments = [j for j in store.latest() if j.rubric is not None]
    refs = {f"{j.rubric.id}@{j.rubric.version}": j.rubric for j in judgments}  # type: ignore
    check_label_hashes(all_labels, refs)
    used_labels = [label for label in all_labels
                   if options.include_anchored or label.blind]
    if not used_labels:
        raise CalibrationError(
            f"{labels_path}: no blind labels (reviewers who did not see the AI's answers); "
            f"push with --blind-share > 0 and have them answered, or pass --include-anchored")
    library = RubricLibrary(rubrics_dir)
    groups: dict[tuple[str, str], dict[str, Judgment]] = defaultdict(dict)
    for judgment in judgments:
        if judges and judgment.judge not in judges:
            continue
        groups[(f"{judgment.rubric.id}@{judgment.rubric.version}",  # type: ignore[union-attr]
                judgment.judge)][str(judgment.claim)] = judgment
    sources = {label.source for label in used_labels}
    label_set = LabelSet(path=str(labels_path), sha256=file_sha256(labels_path),
                         source=sources.pop() if len(sources) == 1 else "mixed",
                         labels=len(all_labels), used=len(used_labels),
                         annotators=len({label.annotator for label in used_labels}),
                         blind_only=not options.include_anchored)
    results = []
    for (ref_name, judge), by_claim in sorted(groups.items()):
        ref = refs[ref_name]
        rubric_labels = [label for label in used_labels
                         if f"{label.rubric.id}@{label.rubric.version}" == ref_name
                         and label.criterion not in LABEL_QUESTIONS_OUTSIDE_RUBRIC]
        if not rubric_labels:
            continue
        rubric = judged_rubric(library, ref)
        any_line = next(iter(by_claim.values()))
        criteria = []
        pooled_pairs: list[Pair] = []
        for criterion in rubric.criteria:
            ratings = human_ratings(criterion, rubric_labels)
            pairs, ties = join(criterion, by_claim, rubric_labels, ratings=ratings)
            judged_all = {}
            for claim in ratings:
                answer = by_claim[claim].answer(criterion.id) if claim in by_claim else None
                judged_all[claim] = answer.value if answer is not None and \
                    answer.status is AnswerStatus.scored else None
            criteria.append(calibrate_criterion(criterion, pairs, ties=ties, options=options,
                                                ratings=ratings, judged_all=judged_all))
            pooled_pairs += [Pair(p.claim + "|" + criterion.id, criterion.passes(p.gold),
                                  None if p.judged is None else criterion.passes(p.judged),
                                  p.confidence, {}) for p in pairs]
        pooled_criterion = Criterion(id="all_criteria", question="Every criterion, pass/fail.",
                                     scale=Scale.binary)
        pooled = calibrate_criterion(pooled_criterion, pooled_pairs, ties=0, options=options)
        artifact = CalibrationArtifact(
            created_at=utc_now(), judge=judge, model=any_line.provenance.model, rubric=ref,
            template_hash=any_line.provenance.template_hash, run_id=store.info.run_id,
            labels=label_set, options=options, criteria=criteria, pooled=pooled)
        previous = load_artifact(out, ref, judge)
        stale = staleness(previous, rubric=ref, template_hash=artifact.template_hash,
                          model=artifact.model) if previous else None
        path = artifact_path(out, ref, judge)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, artifact.model_dump_json(indent=2, by_alias=True))
        folder = write_report(artifact, report_dir(out, ref, judge), rubric=rubric)
        results.append(CalibrationResult(artifact=artifact, artifact_path=path,
                                         report_dir=folder, stale=stale))
    if not results:
        raise CalibrationError("no judgment of the run has a label: nothing to calibrate (labels "
                               "and judgments are joined by claim key, rubric version and "
                               "criterion)")
    return results


def judged_rubric(library: RubricLibrary, ref: RubricRef) -> Rubric:
    """The rubric version `ref` names, refused unless it is the very text the run judged with."""
    rubric = library.load(f"{ref.id}@{ref.version}")
    if rubric.content_hash() != ref.hash:
        raise CalibrationError(f"{ref} in {library.root} is not the text the run judged with")
    return rubric


__all__ = ["CalibrationArtifact", "CalibrationResult", "CriterionCalibration", "TrustOptions",
           "calibrate_run", "calibrate_criterion", "join", "load_artifact", "staleness",
           "trusted_criteria", "calibration_root", "judged_rubric"]


# --- external label tables -----------------------------------------------------------------


@dataclass
class TableReport:
    """Agreement on a table of per-item labels (one column per human, one per judge)."""

    path: Path
    items: int
    gold_items: int
    ties: int
    labels: list[str]
    judges: dict[str, agreement.ClassificationMetrics]
    """Each judge column against the human majority (macro over all classes)."""
    human_kappa: dict[str, float | None]
    """Cohen's kappa for each pair of human columns ("a~b")."""
    judge_human_kappa: dict[str, float | None]
    """Mean kappa of each judge column with each human column."""
    alpha: float | None
    between_judges: dict[str, float | None] | None = None
    """With --compare: the two judges' agreement (accuracy and kappa) on the same items."""


def read_table(path: Path) -> list[dict[str, str]]:
    import csv
    import json

    if not path.is_file():
        raise CalibrationError(f"{path}: no such table")
    if path.suffix == ".jsonl":
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rows.append({k: "" if v is None else str(v)
                                 for k, v in json.loads(line).items()})
                except (ValueError, AttributeError) as exc:
                    raise CalibrationError(f"{path}:{number}: not a JSON object") from exc
        return rows
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def calibrate_table(path: Path, *, judge_column: str, human_columns: Sequence[str],
                    compare: str | None = None, ordinal: bool = False,
                    order: Sequence[str] | None = None) -> TableReport:
    """Judge-vs-gold and human-vs-human agreement on a label table (gold = human majority)."""
    rows = read_table(path)
    if not rows:
        raise CalibrationError(f"{path}: the table is empty")
    judges = [judge_column] + ([compare] if compare else [])
    missing = [c for c in [*judges, *human_columns] if c not in rows[0]]
    if missing:
        raise CalibrationError(f"{path}: no column {', '.join(missing)} (columns: "
                               f"{', '.join(rows[0])})")
    if len(human_columns) < 1:
        raise CalibrationError("give at least one human column")

    def cell(row: dict[str, str], column: str) -> str | None:
        value = (row.get(column) or "").strip()
        return value or None

    observed = sorted({v for row in rows for c in [*judges, *human_columns]
                       if (v := cell(row, c)) is not None})
    labels = list(order) if order else observed
    unknown = sorted(set(observed) - set(labels))
    if unknown:
        raise CalibrationError(f"{path}: values {unknown} are not in the given order {labels}")
    gold_rows, ties = [], 0
    for row in rows:
        gold = agreement.majority([v for c in human_columns if (v := cell(row, c)) is not None])
        if gold is None:
            ties += 1
        else:
            gold_rows.append((row, gold))
    results = {}
    for column in judges:
        pairs = [(gold, cell(row, column)) for row, gold in gold_rows if cell(row, column)]
        results[column] = agreement.classification_metrics(
            [g for g, _ in pairs], [p for _, p in pairs], labels=labels, ordinal=ordinal)
    weights = "quadratic" if ordinal else None
    humans = [[cell(row, c) for row in rows] for c in human_columns]
    pairwise = agreement.pairwise_kappa(humans, labels=labels, weights=weights)
    human_kappa = {f"{human_columns[i]}~{human_columns[j]}": k for (i, j), k in pairwise.items()}
    judge_human = {}
    for column in judges:
        judged = [cell(row, column) for row in rows]
        kappas = [agreement.pairwise_kappa([judged, h], labels=labels, weights=weights)[(0, 1)]
                  for h in humans]
        defined = [k for k in kappas if k is not None]
        judge_human[column] = sum(defined) / len(defined) if defined else None
    alpha = agreement.krippendorff_alpha(humans, level="ordinal" if ordinal else "nominal",
                                         values=labels) if len(humans) > 1 else None
    between = None
    if compare:
        a = [cell(row, judge_column) for row in rows]
        b = [cell(row, compare) for row in rows]
        both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        metrics = agreement.classification_metrics([x for x, _ in both], [y for _, y in both],
                                                   labels=labels, ordinal=ordinal)
        between = {"accuracy": metrics.accuracy,
                   "kappa": metrics.weighted_kappa if ordinal else metrics.kappa}
    return TableReport(path=path, items=len(rows), gold_items=len(gold_rows), ties=ties,
                       labels=labels, judges=results, human_kappa=human_kappa,
                       judge_human_kappa=judge_human, alpha=alpha, between_judges=between)


# --- two judges (or two rubric versions) side by side ----------------------------------------


@dataclass
class ComparisonRow:
    group: str
    """The rubric version (two judges compared) or the judge (two rubric versions)."""
    criterion: str
    both: int
    """Claims both sides answered (scored)."""
    agreement: float | None
    kappa: float | None
    left_f1: float | None
    right_f1: float | None
    """Each side's pass-class F1 against the human gold (None without labels)."""


def _is_rubric_spec(spec: str) -> bool:
    return "@" in spec and not spec.startswith(("openai:", "panel("))


def compare_run(results: Sequence[CalibrationResult], run_dir: Path, left: str, right: str
                ) -> list[ComparisonRow]:
    """Side by side on the same claims, criterion by criterion: two judges on each rubric
    version they share, or two rubric versions (`id@version`) for each judge they share."""
    if _is_rubric_spec(left) != _is_rubric_spec(right):
        raise CalibrationError("--compare takes two judges or two rubric versions, not a mix")
    by_rubric = _is_rubric_spec(left)
    lines: dict[tuple[str, str], dict[str, Judgment]] = defaultdict(dict)
    for judgment in RunStore.open(run_dir, create=False).latest():
        if judgment.rubric is None:
            continue
        ref = f"{judgment.rubric.id}@{judgment.rubric.version}"
        side, group = (ref, judgment.judge) if by_rubric else (judgment.judge, ref)
        lines[(side, group)][str(judgment.claim)] = judgment
    artifacts = {((f"{r.artifact.rubric.id}@{r.artifact.rubric.version}", r.artifact.judge)
                  if by_rubric else (r.artifact.judge, f"{r.artifact.rubric.id}@"
                                                        f"{r.artifact.rubric.version}")):
                 r.artifact for r in results}
    groups = sorted({g for s, g in lines if s == left} & {g for s, g in lines if s == right})
    if not groups:
        raise CalibrationError(f"--compare: {left!r} and {right!r} share no "
                               f"{'judge' if by_rubric else 'rubric version'} in this run")

    def f1(key: tuple[str, str], cid: str) -> float | None:
        artifact = artifacts.get(key)
        return next((c.f1 for c in artifact.criteria if c.criterion == cid), None) \
            if artifact else None

    rows = []
    for group in groups:
        a_lines, b_lines = lines[(left, group)], lines[(right, group)]
        criteria = sorted({a.criterion_id for j in a_lines.values() for a in j.answers}
                          & {a.criterion_id for j in b_lines.values() for a in j.answers})
        for cid in criteria:
            pairs = []
            for claim in sorted(a_lines.keys() & b_lines.keys()):
                a, b = a_lines[claim].answer(cid), b_lines[claim].answer(cid)
                if a and b and a.status is AnswerStatus.scored and \
                        b.status is AnswerStatus.scored:
                    pairs.append((bool(a.passed), bool(b.passed)))
            metrics = agreement.classification_metrics(
                [x for x, _ in pairs], [y for _, y in pairs], labels=[True, False]) \
                if pairs else None
            rows.append(ComparisonRow(
                group=group, criterion=cid, both=len(pairs),
                agreement=metrics.accuracy if metrics else None,
                kappa=_finite(metrics.kappa) if metrics else None,
                left_f1=f1((left, group), cid), right_f1=f1((right, group), cid)))
    return rows
