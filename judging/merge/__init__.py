"""`judging merge`: the union of run directories (the shards of one run, or runs of the same
rubrics over different submissions), and the engine that runs a run's shards on a cluster and
merges them (`judging run --engine ray --shards N`).

`union.merge_runs` is append-only: it never rewrites a line of the merged directory; two final
lines of one (claim, rubric, judge, sample) with different answers are a conflict, recorded and
flagged, never a silent choice. `engine.run_sharded` runs the shards as Ray tasks on the engine
layer's one Ray lifecycle (`judging.engines`; Ray is the optional `cluster` extra).
"""

from __future__ import annotations

from judging.merge.engine import (
           EngineError,
           EngineResult,
           ShardOutcome,
           run_sharded,
           shard_requests,
)
from judging.merge.union import MergeResult, merge_runs

__all__ = ["EngineError", "EngineResult", "MergeResult", "ShardOutcome", "merge_runs",
           "run_sharded", "shard_requests"]
