"""`judging resolve` and `judging leaderboard`: final decisions.

Reads the run's judgments, human labels (`labels.jsonl`) and calibration artifacts; writes
`decisions.jsonl` (per claim, rubric and criterion: the reviewers' majority, else a trusted AI
answer, else pending review, each saying who decided) and `final.jsonl` (per claim: outcome and
whether the participant's verdict is upheld), then the leaderboard CSVs and HTML.
"""

from __future__ import annotations

from judging.resolve.decide import (
                                    ClaimDecision,
                                    FinalAnswer,
                                    FinalOutcome,
                                    Resolution,
                                    RubricDecision,
                                    decide_run,
                                    resolve_run,
                                    write_resolution,
)
from judging.resolve.event import EventRules, load_event_rules
from judging.resolve.leaderboard import (
                                         CONSENSUS_COLUMNS,
                                         PAPER_COLUMNS,
                                         PARTICIPANT_COLUMNS,
                                         RULE_TEXT,
                                         SUBMISSION_COLUMNS,
                                         ClaimResult,
                                         Leaderboard,
                                         build_leaderboard,
                                         consensus_rows,
                                         leaderboard_rows,
                                         outcome_label,
                                         rank_text,
                                         run_leaderboard,
                                         submission_times,
                                         write_leaderboard,
)

__all__ = ["CONSENSUS_COLUMNS", "PAPER_COLUMNS", "PARTICIPANT_COLUMNS", "RULE_TEXT",
           "SUBMISSION_COLUMNS", "ClaimDecision", "ClaimResult", "EventRules", "FinalAnswer",
           "FinalOutcome", "Leaderboard", "Resolution", "RubricDecision", "build_leaderboard",
           "consensus_rows", "decide_run", "leaderboard_rows", "load_event_rules",
           "outcome_label", "rank_text", "resolve_run", "run_leaderboard", "submission_times",
           "write_leaderboard", "write_resolution"]
