"""`judging calibrate RUN_DIR`: join a run's judgments to human labels per criterion, measure the
agreement and write the calibration artifact and report of each (rubric version, judge)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import judging.calibrate.metrics as agreement
from judging.atomic import write_text_atomic
from judging.calibrate.artifacts import (
    DEFAULT_DIR,
    LABEL_QUESTIONS_OUTSIDE_RUBRIC,
    Baseline,
    CalibrationArtifact,
    CriterionCalibration,
    HumanAgreement,
    LabelSet,
    RetestCriterion,
    TrustOptions,
    artifact_path,
    check_label_hashes,
    latest_responses,
    load_artifact,
    read_labels,
    report_dir,
    staleness,
)
from judging.calibrate.report import write_calibration_report
from judging.calibrate.retest import read_retests, retest_criterion, retest_pairs
from judging.errors import CalibrationError
from judging.hashing import file_sha256
from judging.models import AnswerStatus, Judgment, Label
from judging.rubrics import Criterion, RubricLibrary, Scale
from judging.rundir import RunStore, utc_now

Value = bool | int | str
"""A criterion's answer: yes/no, a level, or a category."""


@dataclass
class Pair:
    """One labelled claim for one criterion: the gold, and what the judge said."""

    claim: str
    gold: Value
    judged: Value | None
    """None when the judge's answer is unscored."""
    confidence: float | None
    humans: dict[str, Value]


def _label_fits(criterion: Criterion, value: object) -> bool:
    if criterion.scale is Scale.categorical:
        return isinstance(value, str)
    return isinstance(value, bool | int)


def human_ratings(criterion: Criterion, labels: Sequence[Label]
                  ) -> dict[str, dict[str, Value]]:
    """Each claim's labels for one criterion, by annotator."""
    by_claim: dict[str, dict[str, Value]] = defaultdict(dict)
    for label in labels:
        if label.criterion == criterion.id and _label_fits(criterion, label.value):
            by_claim[str(label.claim)][label.annotator] = label.value
    return by_claim


def join(criterion: Criterion, judgments: dict[str, Judgment], labels: Sequence[Label], *,
         ratings: dict[str, dict[str, Value]] | None = None) -> tuple[list[Pair], int]:
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
        pairs.append(Pair(claim=claim, gold=gold,  # type: ignore[arg-type]
                          judged=answer.value if scored else None,
                          confidence=answer.confidence if scored else None, humans=humans))
    return pairs, ties


def finite_or_none(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _interval(found: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if found is None else (round(found[0], 6), round(found[1], 6))


def _correct(criterion: Criterion, pair: Pair) -> bool:
    """Whether the judge's answer agrees with the gold: the same category, or the same pass/fail
    (binary and ordinal)."""
    if criterion.scale is Scale.categorical:
        return pair.gold == pair.judged
    return criterion.passes(pair.gold) == criterion.passes(pair.judged)  # type: ignore[arg-type]


def _on_categories(criterion: Criterion, scored: list[Pair], result: CriterionCalibration,
                   options: TrustOptions) -> None:
    """A categorical criterion: accuracy with its interval, kappa, the confusion matrix."""
    categories = list(criterion.categories or [])
    gold = [str(p.gold) for p in scored]
    judged = [str(p.judged) for p in scored]
    unknown = sorted(set(gold + judged) - set(categories))
    if unknown:
        raise CalibrationError(f"{criterion.id}: answers or labels {unknown} are not among the "
                               f"categories {categories}")
    m = agreement.classification_metrics(gold, judged, labels=categories)
    result.accuracy = m.accuracy
    result.macro_f1 = finite_or_none(m.macro_f1)
    result.kappa = finite_or_none(m.kappa)
    result.confusion = m.confusion
    result.confusion_labels = categories
    right = [g == j for g, j in zip(gold, judged)]
    found = agreement.bootstrap_interval(
        len(right), lambda idx: float(sum(right[i] for i in idx) / len(idx)),
        n_resamples=options.bootstrap, seed=options.seed)
    if found is not None and found[0] == found[1]:
        # every resample agreed alike: the accuracy is a proportion, its Wilson interval is honest
        found = agreement.proportion_interval(sum(right), len(right))
    result.accuracy_interval = _interval(found)
    base = agreement.random_baseline(gold, labels=categories)
    result.baseline = Baseline(accuracy=base.accuracy, macro_f1=base.macro_f1, kappa=base.kappa)


def _on_pass_fail(criterion: Criterion, scored: list[Pair], result: CriterionCalibration,
                  options: TrustOptions) -> None:
    """Binary and ordinal criteria: pass/fail against the gold, with F1, the true-positive and
    true-negative rates and their intervals, the kappa on the scale, the baseline."""
    gold_pass = [bool(criterion.passes(p.gold)) for p in scored]
    judged_pass = [bool(criterion.passes(p.judged)) for p in scored]  # type: ignore[arg-type]
    passfail = agreement.classification_metrics(gold_pass, judged_pass, labels=[True, False],
                                                positive=True)
    result.accuracy = passfail.accuracy
    result.precision = finite_or_none(passfail.precision)
    result.recall = finite_or_none(passfail.recall)
    result.f1 = finite_or_none(passfail.f1)
    result.macro_f1 = finite_or_none(passfail.macro_f1)
    (tp, fn), (fp, tn) = passfail.confusion
    result.counts = {"true_positives": tp, "false_negatives": fn, "true_negatives": tn,
                     "false_positives": fp}
    result.true_positive_rate = tp / (tp + fn) if tp + fn else None
    result.true_negative_rate = tn / (tn + fp) if tn + fp else None
    result.tpr_interval = _interval(agreement.rate_interval(tp, tp + fn))
    result.tnr_interval = _interval(agreement.rate_interval(tn, tn + fp))
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
    base = agreement.random_baseline(gold_pass, labels=[True, False], positive=True)
    result.baseline = Baseline(accuracy=base.accuracy, f1=base.f1, macro_f1=base.macro_f1,
                               kappa=base.kappa, true_positive_rate=base.recall,
                               true_negative_rate=base.true_negative_rate)


def _fmt_interval(interval: tuple[float, float] | None) -> str:
    return "undefined" if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def trust_reasons(criterion: Criterion, result: CriterionCalibration,
                  options: TrustOptions) -> list[str]:
    """Why a criterion is not trusted (empty: trusted). Support and coverage; for pass/fail
    criteria the F1 and both the true-positive and true-negative rates' lower bounds, for a
    categorical one the accuracy's; and the judge's agreement with itself where it was
    retested."""
    reasons = []
    if result.support < options.min_support:
        reasons.append(f"support {result.support} < {options.min_support}")
    coverage = result.coverage
    if coverage is None or coverage < options.min_coverage:
        reasons.append(f"coverage {0 if coverage is None else coverage:.2f} < "
                       f"{options.min_coverage:g}")
    if criterion.scale is Scale.categorical:
        low = result.accuracy_interval[0] if result.accuracy_interval else None
        if low is None or low < options.floor:
            reasons.append(f"accuracy lower bound {'undefined' if low is None else f'{low:.3f}'}"
                           f" < {options.floor:g}")
    else:
        low = result.f1_interval[0] if result.f1_interval else None
        if low is None or low < options.floor:
            reasons.append(f"F1 lower bound {'undefined' if low is None else f'{low:.3f}'} < "
                           f"{options.floor:g}")
        for name, interval, floor in (("true-positive", result.tpr_interval, options.tpr_floor),
                                      ("true-negative", result.tnr_interval, options.tnr_floor)):
            bound = interval[0] if interval else None
            if bound is None or bound < floor:
                reasons.append(f"{name} rate lower bound "
                               f"{'undefined (no such case)' if bound is None else f'{bound:.3f}'}"
                               f" < {floor:g}")
    reasons += retest_reasons(criterion, result, options)
    return reasons


def retest_reasons(criterion: Criterion, result: CriterionCalibration,
                   options: TrustOptions) -> list[str]:
    """Trust refused by the judge's agreement with itself: its agreement with people above the
    retest ceiling's interval ((1 + retest agreement) / 2: one of the two measurements is off),
    a ceiling whose lower bound is below the floor (agreement with people at the floor cannot
    be told apart from the judge's own noise), or a retest alpha below the rubric's
    `reliability.retest_alpha_at_least`."""
    retest = result.retest
    if retest is None:
        return []
    reasons = []
    human = result.accuracy
    ceiling = retest.ceiling_interval
    if human is not None and ceiling is not None and human > ceiling[1] + 1e-9:
        reasons.append(f"agreement with people {human:.3f} is above the retest ceiling "
                       f"{_fmt_interval(ceiling)}: a judge cannot agree with people more than "
                       f"(1 + its agreement with itself) / 2 (too few labels, anchored labels, "
                       f"or another model served)")
    if ceiling is not None and ceiling[0] < options.floor:
        reasons.append(f"retest ceiling lower bound {ceiling[0]:.3f} < {options.floor:g}: the "
                       f"judge's answers change too often on a re-ask for an agreement with "
                       f"people at the floor to be told apart from its own noise")
    limit = criterion.reliability.retest_alpha_at_least if criterion.reliability else None
    if limit is not None:
        alpha = retest.alpha
        if alpha is None or alpha < limit:
            reasons.append(f"retest alpha {'undefined' if alpha is None else f'{alpha:.3f}'} < "
                           f"{limit:g} (the rubric's limit)")
    return reasons


def calibrate_criterion(criterion: Criterion, pairs: list[Pair], *, ties: int,
                        options: TrustOptions,
                        ratings: dict[str, dict[str, Value]] | None = None,
                        judged_all: dict[str, Value | None] | None = None,
                        retest: RetestCriterion | None = None
                        ) -> CriterionCalibration:
    """Metrics and the trust decision for one criterion. `ratings` (every labelled claim,
    ties included) and `judged_all` feed the human-agreement figures; `retest` is the judge's
    agreement with itself on this criterion, when it was retested."""
    scored = [p for p in pairs if p.judged is not None]
    unscored = len(pairs) - len(scored)
    coverage = len(scored) / len(pairs) if pairs else None
    result = CriterionCalibration(criterion=criterion.id, scale=criterion.scale,
                                  decision="needs_humans", reasons=[], support=len(scored),
                                  scored=len(scored), unscored=unscored, coverage=coverage,
                                  retest=retest)
    if scored:
        if criterion.scale is Scale.categorical:
            _on_categories(criterion, scored, result, options)
        else:
            _on_pass_fail(criterion, scored, result, options)
        confident = [p for p in scored if p.confidence is not None]
        if confident:
            correct = [_correct(criterion, p) for p in confident]
            confidences = [float(p.confidence) for p in confident]  # type: ignore[arg-type]
            # a threshold (and the work it saves) from fewer answers than an interval needs
            # would be one answer's luck: left absent, shown as "too few to say"
            if len(confident) >= agreement.MIN_ITEMS_FOR_INTERVAL:
                threshold = agreement.confidence_threshold(
                    confidences, correct, floor=options.floor, min_items=min(10, len(confident)))
                result.confidence_threshold = threshold.threshold
                result.threshold_agreement = threshold.agreement
                result.work_saved = threshold.n_above / len(pairs) \
                    if threshold.threshold is not None else 0.0
            result.reliability = agreement.reliability_bins(confidences, correct)
    if ratings is None:
        ratings = {p.claim: p.humans for p in pairs}
        judged_all = {p.claim: p.judged for p in pairs}
    result.humans = _human_agreement(criterion, ratings, judged_all or {}, ties)
    result.reasons = trust_reasons(criterion, result, options)
    result.decision = "trusted" if not result.reasons else "needs_humans"
    return result


def corrected_pass_rate(criterion: Criterion, calibration: CriterionCalibration,
                        answers: Sequence[Value], *, options: TrustOptions
                        ) -> agreement.CorrectedRate | None:
    """The pass rate of the judge's scored `answers` on one criterion (a run's), corrected for
    the sensitivity and specificity it showed against people (None: a categorical criterion,
    no answer, or no calibration counts)."""
    if criterion.scale is Scale.categorical or not answers or not calibration.counts:
        return None
    passed = sum(1 for value in answers if criterion.passes(value))
    found = agreement.corrected_rate(passed, len(answers), n_resamples=max(options.bootstrap,
                                                                           2000),
                                     seed=options.seed, **calibration.counts)
    return replace(found, interval=_interval(found.interval))


def _human_agreement(criterion: Criterion, ratings: dict[str, dict[str, Value]],
                     judged_all: dict[str, Value | None], ties: int) -> HumanAgreement:
    claims = sorted(ratings)
    raters = sorted({name for humans in ratings.values() for name in humans})
    ordinal = criterion.scale is Scale.ordinal
    values: list[Value] = sorted(criterion.levels or {}) if ordinal else \
        list(criterion.categories or []) if criterion.scale is Scale.categorical else [True, False]
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


@dataclass(frozen=True)
class Skipped:
    """A (rubric version, judge) of the run that was not calibrated, and why."""

    rubric: str
    judge: str
    reason: str


class CalibrationResults(list):
    """The calibrations written (a list of `CalibrationResult`), and in `skipped` the rubric
    versions of the run that had no label to calibrate on, so a caller can say so."""

    def __init__(self, results=(), skipped: Sequence[Skipped] = ()) -> None:
        super().__init__(results)
        self.skipped = list(skipped)


def _skip_reason(ref_name: str, labels: Sequence[Label]) -> str:
    rubric_id, _, _ = ref_name.partition("@")
    others = sorted({str(label.rubric).partition("@")[2] for label in labels
                     if str(label.rubric).partition("@")[0] == rubric_id})
    if others:
        return (f"no label for this version; the labels are for version(s) {', '.join(others)}, "
                f"and a version's labels never stand for another's")
    return "no label for this rubric"


@dataclass
class CalibrationResult:
    artifact: CalibrationArtifact
    artifact_path: Path
    report_dir: Path
    stale: str | None
    """Why an earlier calibration for this judge and rubric version no longer holds."""


def calibrate_run(run_dir: Path, *, labels_path: Path | None = None, out: Path = DEFAULT_DIR,
                  options: TrustOptions | None = None, judges: Sequence[str] | None = None,
                  rubrics_dir: Path | None = None) -> CalibrationResults:
    """Calibrate every (rubric version, judge) of a run that has labels; the others are listed
    in the result's `skipped` with the reason."""

    options = options or TrustOptions()
    store = RunStore.open(run_dir, create=False)
    labels_path = labels_path or store.paths.labels
    all_labels = read_labels(labels_path)
    judgments = [j for j in store.latest() if j.rubric is not None]
    refs = {str(j.rubric): j.rubric for j in judgments}  # type: ignore
    check_label_hashes(all_labels, refs)
    # The one rule of resolve (each reviewer's latest dataset decides), before the blind filter:
    # a blind answer its reviewer later changed in the anchored dataset is not their answer any
    # more (it leaves the blind set), and with --include-anchored the later answer counts.
    used_labels = [label for label in latest_responses(all_labels)
                   if options.include_anchored or label.blind]
    if not used_labels:
        raise CalibrationError(
            f"{labels_path}: no blind labels (reviewers who did not see the AI's answers); "
            f"push with --blind-share > 0 and have them answered, or pass --include-anchored")
    library = RubricLibrary(rubrics_dir)
    retests = read_retests(store)
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
    results = CalibrationResults()
    for (ref_name, judge), by_claim in sorted(groups.items()):
        ref = refs[ref_name]
        rubric_labels = [label for label in used_labels
                         if str(label.rubric) == ref_name
                         and label.criterion not in LABEL_QUESTIONS_OUTSIDE_RUBRIC]
        if not rubric_labels:
            results.skipped.append(Skipped(ref_name, judge, _skip_reason(ref_name, used_labels)))
            continue
        rubric = library.judged(ref)
        any_line = next(iter(by_claim.values()))
        criteria = []
        pooled_pairs: list[Pair] = []
        retested = retest_pairs(store, rubric, judge, retests)
        for criterion in rubric.criteria:
            ratings = human_ratings(criterion, rubric_labels)
            pairs, ties = join(criterion, by_claim, rubric_labels, ratings=ratings)
            judged_all = {}
            for claim in ratings:
                answer = by_claim[claim].answer(criterion.id) if claim in by_claim else None
                judged_all[claim] = answer.value if answer is not None and \
                    answer.status is AnswerStatus.scored else None
            retest = retest_criterion(criterion, retested.get(criterion.id, []),
                                      n_resamples=options.bootstrap, seed=options.seed)
            calibration = calibrate_criterion(criterion, pairs, ties=ties, options=options,
                                              ratings=ratings, judged_all=judged_all,
                                              retest=retest)
            calibration.corrected = corrected_pass_rate(
                criterion, calibration, [a.value for line in by_claim.values()
                                         if (a := line.answer(criterion.id)) is not None
                                         and a.status is AnswerStatus.scored
                                         and a.value is not None], options=options)
            criteria.append(calibration)
            if not criterion.scored:
                continue
            pooled_pairs += [Pair(p.claim + "|" + criterion.id, bool(criterion.passes(p.gold)),
                                  None if p.judged is None else bool(criterion.passes(p.judged)),
                                  p.confidence, {}) for p in pairs]
        pooled_criterion = Criterion(id="all_criteria", question="Every criterion, pass/fail.",
                                     scale=Scale.binary)
        pooled = calibrate_criterion(pooled_criterion, pooled_pairs, ties=0, options=options)
        served = sorted({s for line in by_claim.values()
                         if (s := line.provenance.served()) is not None})
        artifact = CalibrationArtifact(
            created_at=utc_now(), judge=judge, model=any_line.provenance.model, rubric=ref,
            template_hash=any_line.provenance.template_hash, run_id=store.info.run_id,
            labels=label_set.model_copy(update={"used": len(rubric_labels)}), options=options,
            criteria=criteria, pooled=pooled, served=served)
        previous = load_artifact(out, ref, judge)
        stale = staleness(previous, rubric=ref, template_hash=artifact.template_hash,
                          model=artifact.model,
                          served=served[0] if len(served) == 1 else None) if previous else None
        path = artifact_path(out, ref, judge)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, artifact.model_dump_json(indent=2, by_alias=True))
        folder = write_calibration_report(artifact, report_dir(out, ref, judge), rubric=rubric)
        results.append(CalibrationResult(artifact=artifact, artifact_path=path,
                                         report_dir=folder, stale=stale))
    if not results:
        raise CalibrationError("no judgment of the run has a label: nothing to calibrate (labels "
                               "and judgments are joined by claim key, rubric version and "
                               "criterion)" + "".join(f"; {s.rubric}: {s.reason}"
                                                      for s in results.skipped))
    return results


@dataclass
class CorrectedRow:
    """One criterion's pass rate in a run, corrected for the judge's measured errors."""

    rubric: str
    judge: str
    criterion: str
    decision: str
    """The calibration's trust decision on the criterion (trusted | needs_humans)."""
    stale: str | None
    """Why the calibration no longer holds for the run's lines (then the rate is not shown as
    corrected)."""
    rate: agreement.CorrectedRate


def corrected_rates(run_dir: Path, *, calibration_dir: Path = DEFAULT_DIR,
                    rubrics_dir: Path | None = None,
                    options: TrustOptions | None = None) -> list[CorrectedRow]:
    """Per (rubric version, judge, criterion) of a run with a calibration: the judge's pass
    rate on the run's claims (one line per claim: sample 0, straight order) and that rate
    corrected for the sensitivity and specificity the calibration measured. Categorical
    criteria and criteria the calibration has no counts for are left out."""
    store = RunStore.open(run_dir, create=False)
    try:
        groups: dict[tuple[str, str], list[Judgment]] = defaultdict(list)
        for line in store.iter_latest():
            if line.rubric is not None and line.sample == 0 and not line.swapped:
                groups[(str(line.rubric), line.judge)].append(line)
    finally:
        store.close()
    rows = []
    library = RubricLibrary(rubrics_dir)
    for (ref_name, judge), lines in sorted(groups.items()):
        ref = lines[0].rubric
        assert ref is not None
        artifact = load_artifact(calibration_dir, ref, judge)
        if artifact is None:
            continue
        rubric = library.judged(ref)
        first = lines[0].provenance
        stale = staleness(artifact, rubric=ref, template_hash=first.template_hash,
                          model=first.model, served=first.served())
        for calibration in artifact.criteria:
            if calibration.scale is Scale.categorical or not calibration.counts:
                continue
            criterion = rubric.criterion(calibration.criterion)
            values = [a.value for line in lines if (a := line.answer(calibration.criterion))
                      is not None and a.status is AnswerStatus.scored and a.value is not None]
            rate = corrected_pass_rate(criterion, calibration, values,
                                       options=options or artifact.options)
            if rate is not None:
                rows.append(CorrectedRow(rubric=ref_name, judge=judge,
                                         criterion=calibration.criterion,
                                         decision=calibration.decision, stale=stale, rate=rate))
    return rows
