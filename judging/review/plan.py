"""`judging review plan RUN --budget N`: which claims people should review, and why.

Two parts. A **random calibration sample**, stratified by rubric and AI outcome (proportional
allocation, seeded), is what makes the intervals valid (judging.resolve.intervals); it is the
only review that ever calibrates. **Targeted reviews** go where a human answer can change a
published outcome: claims the AI could not answer or answered with low confidence, contested
claims (consensus, the falsification audit, a reviewer conflict), the claims an award
shortlist rests on (`judging awards`), and claims of submissions whose rank interval straddles
the top-k boundary. A claim in both is in the random sample (its
reason says it was also targeted); a targeted review never counts as random.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from judging.atomic import write_jsonl_atomic
from judging.resolve import (
    ClaimRow,
    PlannedClaim,
    RankSimulation,
    pass_rate,
    read_plan,
    run_claim_rows,
    run_shortlists,
    simulate_ranks,
    stratum_posteriors,
)
from judging.rundir import RunPaths

#: Share of a budget spent on the random calibration sample when the caller does not say: the
#: intervals need it; past a few hundred labels targeted reviews change more outcomes.
RANDOM_SHARE = 0.5
#: `--explain`: reviews added per simulated round, draws per simulation, and rounds at most.
SETTLE_BATCH, SETTLE_DRAWS, MAX_SETTLE_ROUNDS = 50, 400, 40
#: The top places whose order the plan tries to settle (the event's prizes and its front page).
TOP_K = 10
#: Priorities carried to Argilla (highest first): targeted reasons above the random sample, the
#: random sample above nothing; within a part, the plan's order.
PRIORITY = {"contested": 0.95, "award_shortlist": 0.92, "rank_boundary": 0.9, "no_ai_outcome": 0.85,
            "low_confidence": 0.8, "random_sample": 0.5}


def _draw_order(key: str, seed: int) -> str:
    # A stable pseudo-random order per claim (same plan for the same run, budget and seed).
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def random_sample(rows: Sequence[ClaimRow], size: int, *, seed: int = 0) -> list[ClaimRow]:
    """A random sample of `size` addressed claims, stratified by (rubrics, AI outcome) with
    proportional allocation (largest remainders), each stratum drawn in a seeded order.
    Claims already in the random sample count towards it first (a re-plan keeps them)."""
    pool = [r for r in rows if not r.not_addressed]
    size = min(size, len(pool))
    strata: dict[tuple[str, str | None], list[ClaimRow]] = defaultdict(list)
    for row in pool:
        strata[(row.stratum, row.ai)].append(row)
    quotas = {s: size * len(m) / len(pool) for s, m in strata.items()} if pool else {}
    counts = {s: int(q) for s, q in quotas.items()}
    for s in sorted(quotas, key=lambda s: counts[s] - quotas[s])[:size - sum(counts.values())]:
        counts[s] += 1
    chosen = []
    for s, members in strata.items():
        members = sorted(members, key=lambda r: (not r.random, _draw_order(r.key, seed)))
        chosen += members[:counts[s]]
    return chosen


def targeted(rows: Sequence[ClaimRow], simulation: RankSimulation | None, size: int, *,
             k: int = TOP_K, exclude: set[str] = frozenset(),
             shortlisted: set[str] = frozenset()) -> list[tuple[ClaimRow, list[str]]]:
    """Up to `size` claims nobody decided where a human answer can change an outcome, strongest
    reason first, each with its reasons. Boundary claims are spread round-robin over the
    submissions that straddle place k."""
    boundary = simulation.boundary(k) if simulation is not None else set()
    straddling = simulation.straddling(k) if simulation is not None else set()
    found = []
    for row in rows:
        if row.key in exclude or row.not_addressed or row.human in ("pass", "fail"):
            continue
        reasons = [*(["contested"] if row.contested else []),
                   *(["award_shortlist"] if row.key in shortlisted else []),
                   *(["rank_boundary"] if row.submission in boundary else []),
                   *(["no_ai_outcome"] if row.ai is None else []),
                   *(["low_confidence"] if row.low_confidence else [])]
        if reasons:
            found.append((row, reasons))
    calibration = stratum_posteriors(rows)

    def doubt(row: ClaimRow) -> float:
        # How unsure the claim's human outcome is: p(1-p) at the stratum's posterior mean.
        good, bad = calibration.get((row.stratum, row.ai), (0, 0))
        mean = (1 + good) / (2 + good + bad)
        return round(mean * (1 - mean), 2)

    position: dict[tuple[str, float], int] = defaultdict(int)
    ranked = []
    for row, reasons in sorted(found, key=lambda f: _draw_order(f[0].key, 1)):
        position[(row.submission, doubt(row))] += 1
        # Straddlers' claims first, the least certain first, spread over the submissions.
        ranked.append((-PRIORITY[reasons[0]], row.submission not in straddling, -doubt(row),
                       position[(row.submission, doubt(row))], row.key, row, reasons))
    ranked.sort(key=lambda t: t[:5])
    return [(row, reasons) for *_, row, reasons in ranked[:max(0, size)]]


def make_plan(rows: Sequence[ClaimRow], budget: int, *, random_share: float = RANDOM_SHARE,
              k: int = TOP_K, seed: int = 0,
              shortlisted: set[str] = frozenset()) -> list[PlannedClaim]:
    """The plan for `budget` reviews: the random part first (it makes every interval valid),
    then the targeted part. Claims people already decided are not planned again."""
    undecided = [r for r in rows if r.human not in ("pass", "fail")]
    done_random = sum(1 for r in rows if r.random)
    sample = random_sample(rows, done_random + round(budget * random_share), seed=seed)
    # A drawn claim people already decided (targeted earlier) stays in the sample: the draw
    # never looked at it, and dropping it would under-sample the strata targeting favours.
    random_part = [r for r in sample if not r.random]
    simulation = simulate_ranks(rows, seed=seed) if rows else None
    chosen = {r.key for r in random_part}
    spent = sum(1 for r in random_part if r.human not in ("pass", "fail"))
    # An earlier sample may sit unevenly over today's strata: the new draw can then take a
    # few more than its share; the targeted part gets what is left, never less than nothing.
    rest = targeted(undecided, simulation, max(0, budget - spent), k=k, exclude=chosen,
                    shortlisted=shortlisted)
    plan = [PlannedClaim(claim_key=r.key, submission=r.submission, order=i, part="random",
                         reasons=["random_sample"], priority=PRIORITY["random_sample"],
                         stratum=r.stratum, ai_outcome=r.ai, top_k=k,
                         detail=f"stratum {r.stratum} / AI {r.ai or 'no outcome'}"
                         + ("; already decided by people" if r.human else ""))
            for i, r in enumerate(random_part)]
    return plan + _targeted_entries(rest, start=len(plan), k=k)


def _targeted_entries(chosen: list[tuple[ClaimRow, list[str]]], *, start: int,
                      k: int) -> list[PlannedClaim]:
    return [PlannedClaim(claim_key=r.key, submission=r.submission, order=start + i,
                         part="targeted", reasons=reasons, priority=PRIORITY[reasons[0]],
                         stratum=r.stratum, ai_outcome=r.ai, top_k=k,
                         detail="; ".join(r.contested))
            for i, (r, reasons) in enumerate(chosen)]


def replan(rows: Sequence[ClaimRow], previous: Sequence[PlannedClaim], *, seed: int = 0,
           shortlisted: set[str] = frozenset()) -> tuple[list[PlannedClaim], str]:
    """The plan again once answers came back, and one line saying what changed. The budget
    left is the earlier plan's claims people have not decided yet. The random sample is kept
    whole (its unanswered claims stay first: dropping them because others were answered
    sooner would make the sample depend on who answered); answered claims are not planned
    again; the rest goes to the targeted claims that matter now (the rank boundary and the
    calibration move with every answer)."""
    decided = {r.key for r in rows if r.human in ("pass", "fail")}
    k = next((p.top_k for p in previous if p.top_k is not None), TOP_K)
    left = [p for p in previous if p.claim_key not in decided]
    random_left = [p for p in left if p.part == "random"]
    random_keys = {p.claim_key for p in previous if p.part == "random"}
    before = {p.claim_key for p in left if p.part == "targeted"}
    simulation = simulate_ranks(rows, seed=seed) if rows else None
    rest = targeted([r for r in rows if r.key not in decided], simulation,
                    len(left) - len(random_left), k=k, exclude=random_keys,
                    shortlisted=shortlisted)
    plan = [p.model_copy(update={"order": i}) for i, p in enumerate(random_left)]
    plan += _targeted_entries(rest, start=len(plan), k=k)
    now = {r.key for r, _ in rest}
    answered = sum(1 for p in previous if p.claim_key in decided)
    added = Counter(reasons[0] for r, reasons in rest if r.key not in before)
    line = (f"re-planned: {answered} of {len(previous)} planned claims answered; "
            f"{len(left)} left: {len(random_left)} of the random sample (kept), "
            f"{len(before & now)} targeted kept, {len(before - now)} dropped (others matter more "
            f"now), {sum(added.values())} added"
            + (" (" + ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in added.most_common())
               + ")" if added else ""))
    return plan, line


def replan_run(run_dir: Path, *, seed: int = 0) -> str | None:
    """`replan` on a run's plan file (`review pull` calls it after resolving the answers):
    writes the new plan and returns its line, or None when the run has no plan."""
    previous = read_plan(run_dir)
    if not previous:
        return None
    rows = run_claim_rows(run_dir)
    plan, line = replan(rows, previous, seed=seed, shortlisted=shortlisted_claims(run_dir))
    write_plan(run_dir, plan)
    added = {p.claim_key for p in plan} - {p.claim_key for p in previous}
    return line + (f"; send them with `judging review push {run_dir} --plan`" if added else "")


def shortlisted_claims(run_dir: Path) -> set[str]:
    """The claims the award shortlists rest on (once the run is resolved): reviewed first."""
    if not RunPaths(run_dir).final.is_file():
        return set()
    return {claim for places in run_shortlists(run_dir).values() for place in places
            for claim in place.claims}


def write_plan(run_dir: Path, plan: list[PlannedClaim]) -> Path:
    """RUN/review_plan.jsonl, replaced whole. A re-plan keeps the random sample drawn before:
    its claims stay random (`run_claim_rows` reads them from this file first)."""
    path = RunPaths(Path(run_dir)).review_plan
    previous = [p for p in read_plan(run_dir) if p.part == "random"]
    # The new plan's order first (what to review next), then what earlier plans sampled.
    new_keys = {p.claim_key for p in plan}
    ordered = [*plan, *(p for p in previous if p.claim_key not in new_keys)]
    write_jsonl_atomic(path, [p.model_copy(update={"order": i}) for i, p in enumerate(ordered)])
    return path


def plan_summary(rows: list[ClaimRow], plan: list[PlannedClaim], *, k: int = TOP_K,
                 explain: bool = False, seed: int = 0) -> list[str]:
    """What `judging review plan` prints: the plan's parts and reasons, the event's pass rate
    with its interval, and with `explain` how many more labels would settle the top k."""
    random_new = sum(1 for p in plan if p.part == "random")
    reasons = Counter(r for p in plan if p.part == "targeted" for r in p.reasons)
    event = pass_rate(rows)
    lines = [f"{len(plan)} claims planned: {random_new} in the random calibration sample "
             f"(stratified by rubric and AI outcome), {len(plan) - random_new} targeted"
             + (" (" + ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in reasons.most_common())
                + ")" if reasons else ""),
             f"event pass rate: {event.text()}"
             + (f"; human-only [{event.classical[0]:.3f}, {event.classical[1]:.3f}]"
                if event.classical else "")]
    if explain:
        lines.append(settle_explanation(rows, k=k, seed=seed))
    return lines


def settle_explanation(rows: list[ClaimRow], *, k: int = TOP_K, seed: int = 0) -> str:
    """How many more reviews would settle the top k, if their answers matched the AI's where it
    answered (a planning figure, not a promise): targeted batches on the boundary until the
    simulated rank intervals settle."""
    simulation = simulate_ranks(rows, seed=seed, draws=SETTLE_DRAWS)
    if not simulation.calibrated:
        return (f"top {k}: cannot say yet: no random human sample (review the random part "
                f"first)")
    if simulation.settled(k):
        return f"top {k}: settled with the reviews done"
    current, added = list(rows), 0
    for _ in range(MAX_SETTLE_ROUNDS):
        batch = targeted(current, simulation, SETTLE_BATCH, k=k)
        if not batch:
            break
        picked = {r.key for r, _ in batch}
        added += len(picked)
        current = [replace(r, human=r.ai or "fail") if r.key in picked else r for r in current]
        simulation = simulate_ranks(current, seed=seed, draws=SETTLE_DRAWS)
        if simulation.settled(k):
            return (f"top {k}: about {added} more targeted reviews would settle it (assuming "
                    f"people mostly agree with the AI)")
    return f"top {k}: not settled even after {added} more targeted reviews (a near tie)"
