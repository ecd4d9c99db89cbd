"""`judging rerun RUN_DIR`: re-run the submitted scripts of a run's number and table claims in
the environments their submissions declare, sandboxed, and compare their numbers with the
paper's and the participant's.

Reads: the run directory's claims.jsonl (the claims as `judging run` recorded them, with their
submission folders), its judgments and consensus (for `--select contested|top:N`), the
leaderboard (`top:N`). Writes: reruns.jsonl (`RerunRecord`, one line per re-run, the newest per
claim counts; `judging.rerun/1`) and the logs under reruns/<claim>/ (build, stdout, stderr).
A later `judging run` of the same run gives the verdict rubric's re-run criterion
(verdict-justification 1.1.0 and later) the newest result, and re-judges only the claims whose
result changed.

Parts: `sandbox` (bubblewrap and the limits), `environment` (uv, the cache of built
environments), `number` (reading and comparing the numbers), `task` (one claim: plan and run),
`select` (--select, --budget), `stage` (the plan, the estimate, the local engine, the budget
loop every engine runs), `ray_engine` and `hf_jobs` (the other engines; Ray through the engine
layer's one lifecycle, `judging.engines`), `engines` (`run_rerun`: the engine a request names).
"""

from __future__ import annotations

from judging.rerun.engines import run_rerun
from judging.rerun.environment import EnvCache
from judging.rerun.sandbox import DEFAULT_LIMITS, Sandbox, SandboxUnavailable
from judging.rerun.select import SELECTORS, Budget, SelectionError, parse_budget
from judging.rerun.stage import (
    Estimate,
    RerunPlan,
    RerunRequest,
    RerunSummary,
    default_cache_dir,
    plan_rerun,
)

__all__ = ["DEFAULT_LIMITS", "SELECTORS", "Budget", "EnvCache", "Estimate", "RerunPlan",
           "RerunRequest", "RerunSummary", "Sandbox", "SandboxUnavailable", "SelectionError",
           "default_cache_dir", "parse_budget", "plan_rerun", "run_rerun"]
