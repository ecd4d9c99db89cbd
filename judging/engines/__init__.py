"""Where work runs: the one table of engines (`ENGINES`: local, Ray, Hugging Face Jobs), the one
Ray lifecycle (`ray`: start or connect, ship a folder as a tar archive, run the tasks, collect
what they send back, shut down) and the one budget driver (`budget`), shared by `judging run
--engine` (its shards, merged by `judging.merge`) and `judging rerun --engine`.

Below the stages that use it: it knows nothing of claims, runs or re-runs, only of functions to
run somewhere and of what they may cost. Ray is the optional `cluster` extra, imported only when
the Ray engine is used.
"""

from __future__ import annotations

from dataclasses import dataclass

from judging.engines.budget import Budget, BudgetDriver
from judging.engines.ray import EngineError, RemoteJob, RemoteResult, run_on_ray


@dataclass(frozen=True)
class Engine:
    name: str
    where: str
    """One line for --help: where the work runs."""
    commands: tuple[str, ...]
    """The commands that can run on it (`run`: a run's shards; `rerun`: claims' scripts)."""


#: Every engine, by the name --engine takes. HF Jobs runs a container per claim from the
#: submission's Hub repository: a re-run, not a judging shard (the judges need this package).
ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("local", "this machine", ("run", "rerun")),
    Engine("ray", "tasks on a Ray cluster (the optional 'cluster' extra)", ("run", "rerun")),
    Engine("hf-jobs", "Hugging Face Jobs (a container per claim, billed to the namespace)",
           ("rerun",)),
)}


def engine_names(command: str) -> list[str]:
    """The engines a command can run on, in the table's order (its --engine choices)."""
    return [e.name for e in ENGINES.values() if command in e.commands]


__all__ = ["ENGINES", "Budget", "BudgetDriver", "Engine", "EngineError", "RemoteJob",
           "RemoteResult", "engine_names", "run_on_ray"]
