"""`judging review plan` and its estimates (issue 42): one interval computed by hand, the plan's
parts on constructed claims, and the command on a constructed run."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from ppi_py import classical_mean_ci, ppi_mean_ci

from judging.cli import main
from judging.resolve.intervals import AI_ONLY, ClaimRow, pass_rate, read_plan, simulate_ranks
from judging.review.plan import make_plan, random_sample, replan, write_plan
from tests.constructed import _claims, _judgment, _run


def test_one_interval_by_hand() -> None:
    # 10 claims people labelled at random (human, AI) and 10 more the AI alone judged.
    pairs = [(1, 1), (1, 1), (1, 1), (0, 0), (0, 0), (1, 0), (0, 0), (1, 1), (0, 1), (1, 1)]
    y = np.array([h for h, _ in pairs], float)
    yhat = np.array([a for _, a in pairs], float)
    rest = np.array([1, 1, 0, 1, 1, 0, 0, 1, 1, 1], float)
    # PPI (lam = 1): mean of the AI on the rest + mean of the human-minus-AI rectifier.
    point = rest.mean() + (y - yhat).mean()
    assert point == 0.7 + 0.0
    se = math.sqrt(rest.var() / 10 + (y - yhat).var() / 10)  # population variances, as ppi_py
    low, high = ppi_mean_ci(y, yhat, rest, alpha=0.05, lam=1)
    assert math.isclose(float(low[0]), point - 1.959964 * se, abs_tol=1e-5)
    assert math.isclose(float(high[0]), point + 1.959964 * se, abs_tol=1e-5)
    # Our estimate: the tuned (PPI++) interval, never wider than PPI's or the human-only one.
    rows = [ClaimRow(key=f"l{i}", submission="s", stratum="r", random=True,
                     human="pass" if h else "fail", ai="pass" if a else "fail")
            for i, (h, a) in enumerate(pairs)]
    rows += [ClaimRow(key=f"u{i}", submission="s", stratum="r", ai="pass" if a else "fail")
             for i, a in enumerate(rest)]
    estimate = pass_rate(rows)
    # Both intervals are small-sample ones: Student's t times the unbiased standard error, not
    # ppi_py's normal 1.96 times a sum of squares over n. The human-only one by hand is the
    # textbook t interval, mean +- t(9) * s / sqrt(n) with s over n - 1: 6 of 10 pass, s^2 =
    # 10 * 0.24 / 9 = 0.266667, half-width 2.262157 * 0.163299 = 0.369409.
    s_unbiased = y.std(ddof=1)
    assert math.isclose(s_unbiased**2, 0.266667, abs_tol=1e-6)
    half = 2.262157 * s_unbiased / math.sqrt(10)
    assert math.isclose(half, 0.369409, abs_tol=1e-6)
    assert estimate.classical == (0.2306, 0.9694)  # 0.6 -+ 0.369409
    c_low, c_high = classical_mean_ci(y, alpha=0.05)
    assert float(c_high - c_low) < 2 * half - 0.05  # wider than ppi_py's normal interval
    # The published interval itself, by hand (PPI++, Angelopoulos, Duchi & Zrnic 2023, eq. for
    # the mean): lam = cov(y, yhat) / ((1 + n/N) var(all 20 yhat)). Here cov = 1.4 / 10 = 0.14
    # (5 pass/pass at 0.4 * 0.4, 3 fail/fail at 0.6 * 0.6, two disagreements at -0.24) and
    # var = 20 * 0.65 * 0.35 / 19 = 0.239474 (13 AI passes of 20), so lam = 0.14 / (2 *
    # 0.239474) = 0.292308. Point: mean(y - lam yhat) + lam mean(rest) = 0.6 + 0.1 lam =
    # 0.629231. Rectifier y - lam yhat: 0.707692 (x5), 0 (x3), 1, -0.292308: variance 0.178660;
    # the AI's share: lam^2 * 0.21 = 0.017943; se = sqrt((0.178660 + 0.017943) / 10) = 0.140215
    # (ppi_py's, sums of squares over n). lam was fitted on these 10 labels: one more degree of
    # freedom spent (the regression estimator's n - 2), so the se is scaled by sqrt(10 / 8) =
    # 1.118034 to 0.156766 and the quantile is t(8) = 2.306004: half-width 0.361502.
    lam = 0.14 / (2 * 20 * 0.65 * 0.35 / 19)
    assert math.isclose(lam, 0.292308, abs_tol=1e-6)
    rectifier = y - lam * yhat
    assert math.isclose(rectifier.var(), 0.178660, abs_tol=1e-6)
    se_pp = math.sqrt((rectifier.var() + lam**2 * rest.var()) / 10)
    assert math.isclose(se_pp, 0.140215, abs_tol=1e-6)
    assert math.isclose(2.306004 * se_pp * math.sqrt(10 / 8), 0.361502, abs_tol=1e-6)
    assert estimate.estimate == 0.6292
    assert estimate.interval == (0.2677, 0.9907)  # 0.629231 -+ 0.361502, rounded to 4 places
    # PPI++ at the same small-sample rules: never wider than PPI (lam = 1: point +- t(9) * se
    # over n - 1) or than the human-only interval, though its lambda cost a degree of freedom.
    width = estimate.interval[1] - estimate.interval[0]
    assert width <= 2 * 2.262157 * se * math.sqrt(10 / 9) + 1e-4
    assert width <= 2 * half + 1e-4


def test_no_random_sample_is_ai_only() -> None:
    rows = [ClaimRow(key=f"c{i}", submission="s", stratum="r", ai="pass",
                     human="fail" if i < 20 else None) for i in range(40)]  # targeted only
    estimate = pass_rate(rows)
    assert estimate.interval is None and estimate.note == AI_ONLY
    assert not simulate_ranks(rows, draws=50).calibrated


def _rows() -> list[ClaimRow]:
    rows = []
    for s in range(12):
        for c in range(30):
            ai = None if c % 10 == 0 else ("pass" if (c + s) % 3 else "fail")
            rows.append(ClaimRow(key=f"s{s:02d}::c{c}", submission=f"s{s:02d}",
                                 stratum="figure@1" if c % 2 else "verdict@1", ai=ai,
                                 low_confidence=c == 7, contested=("value_outlier",)
                                 if (s, c) == (3, 5) else ()))
    return rows


def test_plan_parts_strata_and_reasons() -> None:
    rows = _rows()
    plan = make_plan(rows, 60, k=3)
    random_part = [p for p in plan if p.part == "random"]
    targeted_part = [p for p in plan if p.part == "targeted"]
    assert len(plan) == 60 and len(random_part) == 30
    assert not {p.claim_key for p in random_part} & {p.claim_key for p in targeted_part}
    # Proportional allocation over (rubric, AI outcome).
    population = Counter((r.stratum, r.ai) for r in rows)
    drawn = Counter((p.stratum, p.ai_outcome) for p in random_part)
    for stratum, n in population.items():
        assert abs(drawn[stratum] - 30 * n / len(rows)) < 1
    assert all(p.reasons == ["random_sample"] for p in random_part)
    # The contested claim first, every targeted claim with a reason beyond the random sample.
    assert targeted_part[0].claim_key == "s03::c5" and targeted_part[0].reasons[0] == "contested"
    assert all(set(p.reasons) <= {"contested", "no_ai_outcome", "low_confidence",
                                  "rank_boundary"} for p in targeted_part)
    assert [p.order for p in plan] == list(range(60))
    assert random_sample(rows, 30) == random_sample(rows, 30)


def test_targeted_reviews_never_calibrate() -> None:
    rows = _rows()
    plan = make_plan(rows, 40, k=3)
    targeted_keys = {p.claim_key for p in plan if p.part == "targeted"}
    decided = [ClaimRow(**{**r.__dict__, "human": "pass"}) if r.key in targeted_keys else r
               for r in rows]
    assert pass_rate(decided).random_labels == 0


def test_plan_command_on_a_run(tmp_path: Path, verdict_rubric) -> None:
    answers = {"verdict_consistent": (True, 0.9), "scale_disclosed": (True, 0.9),
               "cites_evidence": (True, 0.4), "value_in_logs": (True, 0.9),
               "justification_quality": (4, 0.9)}
    judgments = [_judgment(verdict_rubric, claim, answers) for claim in _claims(40)]
    run = _run(tmp_path, judgments, [])
    result = CliRunner().invoke(main, ["review", "plan", str(run), "--budget", "20",
                                       "--top", "3", "--explain"])
    assert result.exit_code == 0, result.output
    assert "10 in the random calibration sample" in result.output
    assert "low confidence" in result.output
    assert "AI-only, uncalibrated" in result.output
    plan = read_plan(run)
    assert len(plan) == 20 and sum(p.part == "random" for p in plan) == 10
    first_random = {p.claim_key for p in plan if p.part == "random"}
    # A re-plan keeps the random sample drawn before.
    write_plan(run, make_plan([], 0))
    assert {p.claim_key for p in read_plan(run) if p.part == "random"} == first_random


def test_award_shortlist_claims_come_first_after_contested() -> None:
    rows = _rows()
    shortlisted = {"s05::c3", "s05::c4", "s05::c6"}
    plan = make_plan(rows, 40, k=3, shortlisted=shortlisted)
    random_keys = {p.claim_key for p in plan if p.part == "random"}
    targeted_part = [p for p in plan if p.part == "targeted"]
    expected = len(shortlisted - random_keys)
    assert expected >= 1
    assert [p.reasons[0] for p in targeted_part[:1 + expected]] == \
        ["contested"] + ["award_shortlist"] * expected


def test_claims_not_addressed_scale_the_rate_and_take_no_correction() -> None:
    addressed = [ClaimRow(key=f"c{i}", submission="s", stratum="r", ai="pass",
                          human=("fail" if i % 4 == 0 else "pass") if i < 20 else None,
                          random=i < 20) for i in range(40)]
    alone = pass_rate(addressed)
    missing = [ClaimRow(key=f"m{i}", submission="s", stratum="not_addressed", ai=None,
                        not_addressed=True) for i in range(40)]
    # The AI passed every claim: no information in its outcomes, the human-only estimate (15
    # of 20 labels pass), never the NaN of PPI++'s tuning turned into "0.0 [0, 1]".
    assert alone.estimate == 0.75 and alone.interval == alone.classical
    assert 0.5 < alone.interval[0] < 0.75 < alone.interval[1] < 1
    both = pass_rate(addressed + missing)
    assert both.claims == 80 and both.random_labels == 20
    assert both.estimate == round(alone.estimate / 2, 4)
    assert both.interval == (round(alone.interval[0] / 2, 4), round(alone.interval[1] / 2, 4))


def test_every_addressed_claim_is_equally_likely_in_the_random_sample() -> None:
    # PPI (ppi_mean_ci) assumes the random labels are a uniform sample of the claims it
    # corrects; the plan stratifies by (rubric, AI outcome) with proportional allocation, so each
    # claim's chance must be the same in every stratum, up to rounding a quota to whole claims.
    rows = [ClaimRow(key=f"c{i}", submission=f"s{i % 7}", stratum=("figure@1", "verdict@1")[i % 2],
                     ai=("pass", "fail", None)[i % 5 % 3]) for i in range(370)]
    rows += [ClaimRow(key=f"n{i}", submission="s0", stratum="figure@1", ai="fail",
                      not_addressed=True) for i in range(30)]
    drawn: Counter[str] = Counter()
    for seed in range(300):
        sample = random_sample(rows, 37, seed=seed)
        assert len(sample) == 37 and not any(r.not_addressed for r in sample)
        drawn.update(r.key for r in sample)
    by_stratum: dict[tuple, list[float]] = {}
    for row in rows[:370]:
        by_stratum.setdefault((row.stratum, row.ai), []).append(drawn[row.key] / 300)
    for shares in by_stratum.values():
        assert abs(float(np.mean(shares)) - 0.1) < 0.02, by_stratum


def test_unanimous_random_labels_give_the_exact_binomial_interval() -> None:
    # 12 random labels all "fail" on a submission whose AI passes half its claims: a normal
    # interval would have no width (Wald's collapse) and miss any rate above 0.
    rows = [ClaimRow(key=f"c{i}", submission="s", stratum="r", ai=("pass", "fail")[i % 2],
                     human="fail" if i < 12 else None, random=i < 12) for i in range(50)]
    estimate = pass_rate(rows)
    # Clopper-Pearson for 0 of 12 by hand: the upper bound p solves (1 - p)^12 = 0.025, so
    # p = 1 - 0.025^(1/12) = 1 - exp(ln 0.025 / 12) = 1 - exp(-0.307410) = 0.264648.
    assert math.isclose(1 - 0.025 ** (1 / 12), 0.264648, abs_tol=1e-6)
    assert estimate.interval == estimate.classical == (0.0, 0.2646)
    assert estimate.estimate == 0.0 and estimate.text() == "0.000 [0.000, 0.265]"
    assert estimate.note == "all 12 random human labels say fail: exact binomial interval " \
        "(Clopper-Pearson) from them alone"
    # 12 of 12 pass: the mirror image, (0.025^(1/12), 1).
    rows = [replace(r, human="pass") if r.random else r for r in rows]
    assert pass_rate(rows).interval == (0.7354, 1.0)
    # One label the other way and the prediction-powered interval is back.
    rows[0] = ClaimRow(key="c0", submission="s", stratum="r", ai="pass", human="fail",
                       random=True)
    estimate = pass_rate(rows)
    assert estimate.interval is not None and estimate.interval[1] > estimate.interval[0]
    assert estimate.note == ""


def test_replan_keeps_the_random_sample_and_moves_the_rest() -> None:
    rows = _rows()
    first = make_plan(rows, 60, k=3)
    random_keys = [p.claim_key for p in first if p.part == "random"]
    targeted_keys = [p.claim_key for p in first if p.part == "targeted"]
    # People answer 10 of the random sample (all "fail") and the first 5 targeted claims.
    answered = set(random_keys[:10]) | set(targeted_keys[:5])
    rows = [replace(r, human="fail" if r.key in answered else None,
                    random=r.key in random_keys) for r in rows]
    plan, line = replan(rows, first)
    keys = [p.claim_key for p in plan]
    # The budget left is the 45 planned claims nobody answered; none answered is planned again.
    assert len(plan) == 45 and not answered & set(keys)
    # The unanswered random sample stays whole, first, still random; no other claim is random.
    assert keys[:20] == random_keys[10:]
    assert {p.part for p in plan[:20]} == {"random"} and {p.part for p in plan[20:]} == \
        {"targeted"}
    assert all(p.top_k == 3 for p in plan)
    assert line.startswith("re-planned: 15 of 60 planned claims answered; 45 left: 20 of the "
                           "random sample (kept), ")
    kept = len(set(keys[20:]) & set(targeted_keys))
    assert kept < 25  # the answers moved the calibration and the boundary
    assert f"{kept} targeted kept, {25 - kept} dropped" in line
    assert f"{25 - kept} added" in line
    # Nothing answered since: the same plan again, nothing added.
    again, line = replan(rows, plan)
    assert [p.claim_key for p in again] == keys and line.endswith(", 0 added")
