"""How sure a published number is: pass rates as prediction-powered estimates with 95% intervals,
and each submission's rank as an interval simulated from the claim-level uncertainty.

A pass rate combines the AI's outcomes on every claim with the human answers on a *random* sample
of them (prediction-powered inference, Angelopoulos et al., Science 2023, with the PPI++ tuning
of how much the AI is trusted, from `ppi_py`): the interval is valid whatever the judge's errors,
and never wider than the human-only one beside it (asymptotically; with a few dozen labels
the lambda fitted on them costs a degree of freedom, `_alpha`, which a judge that says little
of people's answers does not buy back). Claims people reviewed
because they were targeted (low confidence, a rank boundary, a contested claim) are not a random
sample: they never enter the calibration, only their own claim's value. With no random human
sample an estimate says "AI-only, uncalibrated" and gives no interval.

A rank interval is simulated: the chance that people pass a claim, given the AI's outcome and
the claim's rubrics (a stratum), is drawn from its Beta posterior over the random sample;
each unreviewed claim then passes or fails at that chance, reviewed claims keep their human
outcome, and the leaderboard's rule ranks each draw. The 2.5% and 97.5% quantiles of a
submission's ranks are its interval; the top k are **settled** when k submissions' intervals
lie within places 1..k and every other's lies below place k (a tie across place k never
settles). This part is a model (the judge errs alike within a stratum), said where it is shown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from pydantic import Field
from scipy.stats import binomtest, norm
from scipy.stats import t as student_t

from judging.models import CONSENSUS_FLAGS, StrictModel, VersionedModel
from judging.resolve.decide import ClaimDecision
from judging.rubrics import FALSIFICATION_AUDIT
from judging.rundir import (
    RunPaths,
    RunStore,
    Spoken,
    judged_claims,
    read_jsonl,
    read_not_addressed,
)

#: 95% intervals, as the issue asks of every published number.
ALPHA = 0.05
#: Below this many random human labels a normal-approximation interval is not trusted (with a
#: handful of labels that all agree its width collapses to nothing): no interval, with the reason.
MIN_RANDOM_LABELS = 10
#: The AI's prediction for a claim it gave no outcome on: any fixed value keeps the interval
#: valid (PPI corrects it with the human labels); the middle costs least when it is wrong.
ABSTAIN_PREDICTION = 0.5
#: Draws of the rank simulation: 2.5%/97.5% quantiles are stable to about one place at 1,000.
RANK_DRAWS = 1000
AI_ONLY = "AI-only, uncalibrated: no random human sample"


@dataclass(frozen=True)
class ClaimRow:
    """One claim as the estimates see it."""

    key: str
    submission: str
    stratum: str
    """The claim's rubrics (`id@version`, joined): the judge errs differently per rubric."""
    ai: str | None
    """The AI's outcome: pass | fail | None (no outcome: abstained, unreadable, incomplete)."""
    human: str | None = None
    """The people's final outcome (pass | fail), if they decided it."""
    random: bool = False
    """Reviewed as part of the plan's random calibration sample (only then it calibrates)."""
    not_addressed: bool = False
    """A registry claim the submission did not address: not passed, known."""
    provisional: str | None = None
    """The leaderboard's provisional AI outcome while people have not decided (decide's
    `ai_outcome`: the AI's answers standing in for the criteria nobody decided). Only the point
    without an interval uses it: PPI needs one predictor on every claim (`ai`)."""
    low_confidence: bool = False
    """The AI answered some criterion with low confidence (review priority's reason)."""
    contested: tuple[str, ...] = ()
    """Why the claim is contested (consensus flags, an unconfirmed falsification, a conflict)."""

    @property
    def prediction(self) -> float:
        return 0.0 if self.not_addressed else {"pass": 1.0, "fail": 0.0}.get(
            self.ai or "", ABSTAIN_PREDICTION)

    @property
    def value(self) -> float:
        """People's outcome where they decided, else the AI's prediction."""
        for outcome in (self.human, self.provisional):
            if outcome in ("pass", "fail"):
                return 1.0 if outcome == "pass" else 0.0
        return self.prediction

    @property
    def labelled(self) -> bool:
        return self.random and self.human in ("pass", "fail")


class Estimate(StrictModel):
    """A pass rate with its 95% interval and the human-only interval beside it."""

    claims: int
    random_labels: int
    estimate: float | None
    interval: tuple[float, float] | None = None
    """Prediction-powered (PPI++), None when it cannot be given honestly (`note`)."""
    classical: tuple[float, float] | None = None
    """From the random human labels alone, for comparison."""
    note: str = ""

    def text(self) -> str:
        if self.estimate is None or self.interval is None:
            # No interval: no second point beside the leaderboard's own pass rate either.
            return self.note or "no claims"
        return f"{self.estimate:.3f} [{self.interval[0]:.3f}, {self.interval[1]:.3f}]"


def _alpha(n: int, *, fitted: int = 0) -> float:
    """The alpha to hand `ppi_py` so that its interval is the small-sample one at ALPHA: Student's
    t with n - 1 - `fitted` degrees of freedom times the unbiased standard error. `ppi_py` divides
    the sum of squares by n (`np.std`) and takes a normal quantile; with the 10-30 random labels a
    submission, participant or paper gets both are too narrow. The human-only interval then is
    the textbook t interval (sum of squares over n - 1); PPI++'s fitted lambda is one more
    estimated coefficient (it is the regression estimator of survey sampling, whose residual
    variance divides by n - 2: Cochran, Sampling Techniques, 1977, section 7.3), so it spends one
    more degree of freedom (`fitted` = 1): without it the lambda fitted on the same labels it is
    applied to reads its own noise as agreement and the small intervals undercover
    (benchmarks/review_plan.py, poor judge, papers of about 20 labels: 0.948). At the event's
    hundreds of labels both corrections are below 1e-3. `ppi_py` takes neither degrees of freedom
    nor a variance divisor, hence the translation into its alpha (the AI's own term, over the
    unlabelled claims, is scaled alike: conservative, and small beside the labels' term)."""
    df = n - 1 - fitted
    return float(2 * norm.sf(student_t.ppf(1 - ALPHA / 2, df) * np.sqrt(n / df)))


def _clip(low: float, high: float) -> tuple[float, float]:
    return round(max(0.0, float(low)), 4), round(min(1.0, float(high)), 4)


def pass_rate(rows: Sequence[ClaimRow]) -> Estimate:
    """The pass rate of these claims: PPI++ over the random human labels and the AI's outcomes
    on the other claims, with the classical interval beside it. Registry claims not addressed
    are known not to pass and are never sampled: the estimate is over the addressed claims,
    scaled by their share (else the AI's correction would reach claims it says nothing of)."""
    missing = sum(r.not_addressed for r in rows)
    estimate = _addressed_rate([r for r in rows if not r.not_addressed])
    if not missing or estimate.estimate is None:
        return estimate if not missing else Estimate(
            claims=len(rows), random_labels=0, estimate=0.0,
            note="no claim addressed: none passes")
    share = (len(rows) - missing) / len(rows)

    def scaled(pair: tuple[float, float] | None) -> tuple[float, float] | None:
        return None if pair is None else (round(pair[0] * share, 4), round(pair[1] * share, 4))
    return estimate.model_copy(update={
        "claims": len(rows), "estimate": round(estimate.estimate * share, 4),
        "interval": scaled(estimate.interval), "classical": scaled(estimate.classical)})


def _addressed_rate(rows: Sequence[ClaimRow]) -> Estimate:
    labelled = [r for r in rows if r.labelled]
    rest = [r for r in rows if not r.labelled]
    n = len(labelled)
    if not rows:
        return Estimate(claims=0, random_labels=0, estimate=None, note="no claims")
    # Without an interval the point is the leaderboard's own: people's outcome where they
    # decided (final over the AI's), else the AI's.
    ai_rate = round(float(np.mean([r.value for r in rows])), 4)
    if n == 0:
        return Estimate(claims=len(rows), random_labels=0, estimate=ai_rate, note=AI_ONLY)
    if n < MIN_RANDOM_LABELS or not rest:
        why = (f"{n} random human labels, fewer than {MIN_RANDOM_LABELS}: no interval"
               if rest else "every claim has a random human label")
        return Estimate(claims=len(rows), random_labels=n, estimate=ai_rate if rest else
                        round(float(np.mean([r.human == "pass" for r in labelled])), 4),
                        note=why)
    y = np.array([1.0 if r.human == "pass" else 0.0 for r in labelled])
    if np.ptp(y) == 0:
        return _unanimous(rows, labelled)
    yhat = np.array([r.prediction for r in labelled])
    unlabelled = np.array([r.prediction for r in rest])
    # The AI said the same of every claim (a submission it passed whole): its outcomes carry no
    # information, PPI++'s tuning divides by their zero variance (NaN, which clipping turned
    # into "0.0 [0, 1]"), and the right weight is lam = 0, the human-only estimate.
    lam = 0.0 if np.ptp(np.concatenate([yhat, unlabelled])) == 0 else None
    # PPI++ clips its lambda at 0 when the labels and the AI's outcomes covary the wrong way:
    # then nothing was fitted, the estimate is the human-only one, and so is its interval.
    fitted = int(lam is None and float(np.cov(y, yhat)[0, 1]) > 0)
    low, high = ppi_mean_ci(y, yhat, unlabelled, alpha=_alpha(n, fitted=fitted), lam=lam)
    point = ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)
    c_low, c_high = classical_mean_ci(y, alpha=_alpha(n))
    return Estimate(claims=len(rows), random_labels=n,
                    estimate=round(min(1.0, max(0.0, float(np.ravel(point)[0]))), 4),
                    interval=_clip(np.ravel(low)[0], np.ravel(high)[0]),
                    classical=_clip(np.ravel(c_low)[0], np.ravel(c_high)[0]))


def _unanimous(rows: Sequence[ClaimRow], labelled: Sequence[ClaimRow]) -> Estimate:
    """Every random label says the same. A normal interval's variance estimate is then zero
    (Wald's collapse, Brown, Cai & DasGupta 2001): a zero-width interval that misses any rate
    short of 0 or 1, and PPI++'s tuning gives lam = 0 (the labels do not vary with the AI), so
    the AI cannot help either. The exact binomial interval of the labels alone (Clopper &
    Pearson 1934, scipy's `binomtest(...).proportion_ci(method="exact")`) holds its 95% at any
    n, conservatively; its point is the labels' share. Withholding instead left the top and the
    bottom of the leaderboard without an interval (benchmarks/review_plan.py: 10 of 10 labels
    pass one time in three at a rate of 0.9; 6% of submissions with >= 10 labels)."""
    n, passes = len(labelled), sum(r.human == "pass" for r in labelled)
    found = binomtest(passes, n).proportion_ci(confidence_level=1 - ALPHA, method="exact")
    interval = _clip(found.low, found.high)
    return Estimate(claims=len(rows), random_labels=n, estimate=round(passes / n, 4),
                    interval=interval, classical=interval,
                    note=f"all {n} random human labels say {labelled[0].human}: exact binomial "
                         f"interval (Clopper-Pearson) from them alone")


def grouped(rows: Iterable[ClaimRow], key) -> dict[str, Estimate]:
    """`pass_rate` per group (`key(row)` names a row's group)."""
    groups: dict[str, list[ClaimRow]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return {name: pass_rate(group) for name, group in groups.items()}


Reason = Literal["random_sample", "no_ai_outcome", "low_confidence", "rank_boundary",
                 "contested", "award_shortlist"]


class PlannedClaim(VersionedModel):
    """One claim of a review plan (a line of RUN/review_plan.jsonl)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.review_plan/1"] = Field(default="judging.review_plan/1",
                                                       alias="schema")
    claim_key: str
    submission: str
    order: int
    """Position in the plan (0 first): the push sends in this order."""
    part: Literal["random", "targeted"]
    reasons: list[Reason]
    priority: float
    stratum: str
    ai_outcome: str | None
    detail: str = ""
    top_k: int | None = None
    """The top places the plan tries to settle: a re-plan on `review pull` keeps it (None in
    plans written before it was recorded: the default then)."""

    @classmethod
    def migrate(cls, data: dict) -> dict:
        return data  # judging.review_plan/1 is the first version


def read_plan(run_dir: Path) -> list[PlannedClaim]:
    """RUN/review_plan.jsonl (`judging review plan`), or nothing."""
    path = RunPaths(Path(run_dir)).review_plan
    return read_jsonl(path, PlannedClaim) if path.is_file() else []


#: Below this confidence an AI answer is "low confidence" (review priority uses the same).
LOW_CONFIDENCE = 0.6


def _ai_claim(speaking: list[Spoken]) -> tuple[str, str | None, bool, list[str]]:
    """(stratum, AI outcome across rubrics, low confidence, contested reasons) of one claim,
    from the lines that speak for the AI."""
    names, outcomes, low, contested = [], [], False, []
    for chosen, _ in speaking:
        names.append(str(chosen.rubric))
        outcome = chosen.aggregate.outcome.value if chosen.aggregate is not None else None
        outcomes.append(outcome if outcome in ("pass", "fail") else None)
        low |= any(a.confidence is not None and a.confidence < LOW_CONFIDENCE
                   for a in chosen.answers)
        contested += [f.name for f in chosen.flags if f.name in CONSENSUS_FLAGS]
        if chosen.rubric is not None and chosen.rubric.id == FALSIFICATION_AUDIT and \
                outcome != "pass":
            contested.append("falsification_unconfirmed")
    ai = "fail" if "fail" in outcomes else (
        "pass" if outcomes and all(o == "pass" for o in outcomes) else None)
    return "+".join(names) or "?", ai, low, contested


def run_claim_rows(run_dir: Path, *,
                   finals: Iterable[ClaimDecision] | None = None) -> list[ClaimRow]:
    """Every claim of a resolved run as the estimates see it: the AI's outcome from the run's
    judgments, the people's from final.jsonl (or `finals`, decided live), whether it is in a
    plan's random sample (review_plan.jsonl), and the registry claims not addressed."""
    run_dir = Path(run_dir)
    if finals is None and RunPaths(run_dir).final.is_file():
        finals = read_jsonl(RunPaths(run_dir).final, ClaimDecision)
    by_key = {str(f.claim): f for f in finals or ()}
    random = {p.claim_key for p in read_plan(run_dir) if p.part == "random"}
    store = RunStore.open(run_dir, create=False)
    rows = []
    try:
        for key, _, speaking in judged_claims(store):
            stratum, ai, low, contested = _ai_claim(speaking)
            final = by_key.get(key)
            human = final.outcome if final is not None and "humans" in final.decided_by \
                and final.outcome in ("pass", "fail") else None
            if final is not None and final.conflicts:
                contested.append("reviewer_conflict")
            if final is not None and final.copied_figure and ai == "pass":
                # The leaderboard counts a flagged copy as a fail until people pass it: the
                # prediction follows (a function of the claim alone, as PPI needs).
                ai = "fail"
            rows.append(ClaimRow(key=key, submission=key.split("::")[0], stratum=stratum,
                                 ai=ai, human=human, random=key in random, low_confidence=low,
                                 provisional=final.ai_outcome if final is not None else None,
                                 contested=tuple(contested)))
    finally:
        store.close()
    judged = {r.key for r in rows}
    rows += [ClaimRow(key=f"{n.submission_id}::{n.claim_id}", submission=n.submission_id,
                      stratum="not_addressed", ai=None, not_addressed=True)
             for n in read_not_addressed(run_dir)
             if f"{n.submission_id}::{n.claim_id}" not in judged]
    return rows


# --- ranks ---------------------------------------------------------------------------------------


class RankInterval(StrictModel):
    submission: str
    low: int
    high: int

    def text(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}–{self.high}"


@dataclass
class RankSimulation:
    intervals: dict[str, RankInterval]
    calibrated: bool
    """False: no random human sample, the draws trust the AI's outcomes (AI-only)."""
    index: dict[str, int] = field(default_factory=dict)
    ranks: np.ndarray | None = None
    """The rank of each submission (column `index[s]`) in each draw."""

    def settled(self, k: int) -> bool:
        """Whether the top k are settled (module docstring)."""
        inside = sum(1 for r in self.intervals.values() if r.high <= k)
        below = sum(1 for r in self.intervals.values() if r.low > k)
        return self.calibrated and inside == k and inside + below == len(self.intervals)

    def straddling(self, k: int) -> set[str]:
        """Submissions whose rank interval straddles place k."""
        return {s for s, r in self.intervals.items() if r.low <= k < r.high}

    def boundary(self, k: int) -> set[str]:
        """Every submission that is in the top k in some draws and out of it in others: a
        straddler whose claims are all reviewed still moves while one of these can overtake
        it now and then."""
        if self.ranks is None:
            return set()
        inside = (self.ranks <= k).mean(axis=0)
        return {s for s, i in self.index.items() if 0 < inside[i] < 1}


def stratum_posteriors(rows: Iterable[ClaimRow]) -> dict[tuple[str, str | None], tuple[int, int]]:
    """Per (stratum, AI outcome): (human passes, human fails) in the random sample."""
    counts: dict[tuple[str, str | None], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        if row.labelled:
            counts[(row.stratum, row.ai)][0 if row.human == "pass" else 1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


def simulate_ranks(rows: Sequence[ClaimRow], *, draws: int = RANK_DRAWS,
                   seed: int = 0) -> RankSimulation:
    """Rank intervals of the submissions (module docstring). Uses binomial counts per
    (submission, stratum, AI outcome) cell, so its cost does not grow with the claims."""
    rng = np.random.default_rng(seed)
    calibration = stratum_posteriors(rows)
    calibrated = bool(calibration)
    submissions = sorted({r.submission for r in rows})
    if not submissions:  # nothing ranked (every claim failed to load): no interval to draw
        return RankSimulation(intervals={}, calibrated=calibrated)
    index = {s: i for i, s in enumerate(submissions)}
    fixed_pass = np.zeros(len(submissions))
    fixed_fail = np.zeros(len(submissions))
    missing = np.zeros(len(submissions))
    cells: dict[tuple[str, str | None], np.ndarray] = defaultdict(
        lambda: np.zeros(len(submissions)))
    for row in rows:
        i = index[row.submission]
        if row.not_addressed:
            missing[i] += 1
        elif row.human in ("pass", "fail"):
            (fixed_pass if row.human == "pass" else fixed_fail)[i] += 1
        else:
            cells[(row.stratum, row.ai)][i] += 1
    passes = np.tile(fixed_pass, (draws, 1))
    total = fixed_pass + fixed_fail + sum(cells.values(), np.zeros(len(submissions)))
    for cell, n in cells.items():
        if calibrated:
            # Beta(1 + passes, 1 + fails): a stratum nobody sampled is uniformly uncertain.
            good, bad = calibration.get(cell, (0, 0))
            chance = rng.beta(1 + good, 1 + bad, size=(draws, 1))
        else:
            chance = np.full((draws, 1), 1.0 if cell[1] == "pass" else 0.0)
        passes += rng.binomial(n.astype(np.int64), np.broadcast_to(chance, (draws, len(n))))
    fails = total - passes
    # The leaderboard's rule as one number: passes first, then fewer fails, then fewer not
    # addressed (each term smaller than one step of the one before).
    scale = float(total.max() + missing.max() + 2)
    key = passes * scale * scale - fails * scale - missing
    # Competition ranking per draw: 1 + how many submissions are strictly better.
    ordered = np.sort(key, axis=1)
    better = key.shape[1] - np.stack([np.searchsorted(row, values, side="right")
                                      for row, values in zip(ordered, key)])
    ranks = better + 1
    low = np.quantile(ranks, ALPHA / 2, axis=0, method="lower")
    high = np.quantile(ranks, 1 - ALPHA / 2, axis=0, method="higher")
    return RankSimulation(intervals={s: RankInterval(submission=s, low=int(low[i]),
                                                     high=int(high[i]))
                                     for s, i in index.items()}, calibrated=calibrated,
                          index=index, ranks=ranks)
