"""`judging resolve` and `judging leaderboard`: final decisions.

Reads the run's judgments, human labels (`labels.jsonl`) and calibration artifacts; writes
`decisions.jsonl` (per claim, rubric and criterion: the reviewers' majority, else a trusted AI
answer, else pending review, each saying who decided) and `final.jsonl` (per claim: outcome and
whether the participant's verdict is upheld), then the leaderboard CSVs and HTML.
"""

from __future__ import annotations

from judging.resolve.awards import run_shortlists
from judging.resolve.decide import (
    ClaimDecision,
    FinalAnswer,
    FinalOutcome,
    Resolution,
    RubricDecision,
    decide_run,
    resolve_run,
    stale_decisions,
    write_resolution,
)
from judging.resolve.event import EventRules, load_event_rules
from judging.resolve.intervals import (
    AI_ONLY,
    ClaimRow,
    Estimate,
    PlannedClaim,
    RankSimulation,
    Reason,
    pass_rate,
    read_plan,
    run_claim_rows,
    simulate_ranks,
    stratum_posteriors,
)
from judging.resolve.leaderboard import (
    CONSENSUS_COLUMNS,
    INTERVAL_COLUMNS,
    NO_PASS_TEXT,
    PAPER_COLUMNS,
    PARTICIPANT_COLUMNS,
    RULE_TEXT,
    SETTLE_TOP,
    SUBMISSION_COLUMNS,
    ClaimResult,
    Leaderboard,
    add_intervals,
    build_leaderboard,
    consensus_rows,
    leaderboard_rows,
    no_claim_passes,
    outcome_label,
    rank_text,
    rule_lines,
    run_leaderboard,
    submission_times,
    unjudged_submissions,
    write_leaderboard,
)

__all__ = ["unjudged_submissions",
           "AI_ONLY", "ClaimRow", "Estimate", "PlannedClaim", "RankSimulation", "Reason", "pass_rate",
           "read_plan", "run_claim_rows", "run_shortlists", "simulate_ranks", "stratum_posteriors", "add_intervals",
           "CONSENSUS_COLUMNS", "INTERVAL_COLUMNS", "NO_PASS_TEXT", "PAPER_COLUMNS", "PARTICIPANT_COLUMNS",
           "RULE_TEXT", "SETTLE_TOP", "SUBMISSION_COLUMNS", "ClaimDecision", "ClaimResult", "EventRules",
           "FinalAnswer", "FinalOutcome", "Leaderboard", "Resolution", "RubricDecision",
           "build_leaderboard", "consensus_rows", "decide_run", "leaderboard_rows",
           "load_event_rules", "no_claim_passes", "outcome_label", "rank_text", "resolve_run",
           "rule_lines", "run_leaderboard", "stale_decisions", "submission_times",
           "write_leaderboard", "write_resolution"]
