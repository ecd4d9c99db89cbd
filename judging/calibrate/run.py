"""`judging calibrate RUN_DIR`: join a run's judgments to human labels per criterion, measure the
agreement and write the calibration artifact and report of each (rubric version, judge)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judging.atomic import write_text_atomic
from judging.calibrate import metrics as agreement
from judging.calibrate.artifacts import (
    DEFAULT_DIR,
    LABEL_QUESTIONS_OUTSIDE_RUBRIC,
    CalibrationArtifact,
    CriterionCalibration,
    HumanAgreement,
    LabelSet,
    ReliabilityBin,
    TrustOptions,
    artifact_path,
    check_label_hashes,
    judged_rubric,
    load_artifact,
    read_labels,
    report_dir,
    staleness,
)
from judging.calibrate.report import write_calibration_report
from judging.errors import CalibrationError
from judging.hashing import file_sha256
from judging.models import AnswerStatus, Judgment, Label
from judging.rubrics import Criterion, RubricLibrary, Scale
from judging.rundir import RunStore, utc_now


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


def finite_or_none(value: float | None) -> float | None:
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
        result.precision = finite_or_none(passfail.precision)
        result.recall = finite_or_none(passfail.recall)
        result.f1 = finite_or_none(passfail.f1)
        result.macro_f1 = finite_or_none(passfail.macro_f1)
        if criterion.scale is Scale.binary:
            result.kappa = finite_or_none(passfail.kappa)
            result.confusion = passfail.confusion
            result.confusion_labels = ["yes", "no"]
        else:
            levels = sorted(criterion.levels or {})
            on_levels = agreement.classification_metrics(
                [int(p.gold) for p in scored], [int(p.judged) for p in scored],  # type: ignore
                labels=levels, ordinal=True)
            result.kappa = finite_or_none(on_levels.weighted_kappa)
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
    return HumanAgreement(raters=len(raters), items_with_several=several, alpha=finite_or_none(alpha),
                          human_kappa=finite_or_none(human_kappa), judge_kappa=finite_or_none(judge_kappa),
                          ties=ties)


@dataclass
class CalibrationResult:
    artifact: CalibrationArtifact
    artifact_path: Path
    report_dir: Path
    stale: str | None
    """Why an earlier calibration for this judge and rubric version no longer holds."""


def calibrate_run(run_dir: Path, *, labels_path: Path | None = None, out: Path = DEFAULT_DIR,
                  options: TrustOptions | None = None, judges: Sequence[str] | None = None,
                  rubrics_dir: Path | None = None) -> list[CalibrationResult]:
    """Calibrate every (rubric version, judge) of a run that has labels."""

    options = options or TrustOptions()
    store = RunStore.open(run_dir, create=False)
    labels_path = labels_path or store.paths.labels
    all_labels = read_labels(labels_path)
    judgments = [j for j in store.latest() if j.rubric is not None]
    refs = {str(j.rubric): j.rubric for j in judgments}  # type: ignore
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
        groups[(str(judgment.rubric),  # type: ignore[union-attr]
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
                         if str(label.rubric) == ref_name
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
        folder = write_calibration_report(artifact, report_dir(out, ref, judge), rubric=rubric)
        results.append(CalibrationResult(artifact=artifact, artifact_path=path,
                                         report_dir=folder, stale=stale))
    if not results:
        raise CalibrationError("no judgment of the run has a label: nothing to calibrate (labels "
                               "and judgments are joined by claim key, rubric version and "
                               "criterion)")
    return results
