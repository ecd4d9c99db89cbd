"""What `judging watch` remembers between polls and across restarts (RUN_DIR/watch.json): every
Space it has seen, the head the listing last showed, the revision it judges and whether that
revision is judged; and a line per poll.

The file is replaced whole (atomically) after each poll's decisions and after its run, so a watch
killed at any moment (kill -9 included) restarts from the last file: a Space marked `pending` is
judged again by the next poll, and the run directory's resume skips every line already written
(nothing judged twice, nothing lost).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from judging.atomic import write_text_atomic
from judging.errors import JudgingError
from judging.models import StrictModel, VersionedModel
from judging.rundir import RunPaths

SpaceStatus = Literal["pending", "judged", "failed", "skipped"]

#: Polls kept in watch.json (the newest); older ones are in run.json's invocations.
KEEP_POLLS = 200


class WatchedSpace(StrictModel):
    """One Space the watch has seen."""

    head: str | None = None
    """The head commit the last listing showed."""
    sha: str | None = None
    """The revision judged (the head, or with a deadline the last commit at or before it)."""
    committed_at: datetime | None = None
    """That revision's date, when known."""
    status: SpaceStatus = "pending"
    """pending: to judge at `sha`; judged; failed (`attempts`, `reason`); skipped (`reason`:
    no commit at or before the deadline)."""
    attempts: int = 0
    """Polls that tried to judge `sha` and failed."""
    reason: str | None = None
    first_seen: datetime
    judged_at: datetime | None = None
    listed: bool = True
    """Whether the last listing showed it (a Space that lost its tag stays judged)."""


class PollRecord(StrictModel):
    """One poll, as the watch reported it."""

    started_at: datetime
    ended_at: datetime | None = None
    listed: int = 0
    new: int = 0
    changed: int = 0
    """Spaces with a new revision to judge."""
    judged: int = 0
    failed: int = 0
    written: int = 0
    """Judgment lines the poll's run wrote."""
    error: str | None = None
    """Why the poll could not list or judge (the next poll tries again)."""


class WatchState(VersionedModel):
    """RUN_DIR/watch.json."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.watch/1"] = Field(default="judging.watch/1", alias="schema")
    tags: list[str]
    as_of: datetime | None = None
    spaces: dict[str, WatchedSpace] = Field(default_factory=dict)
    """By Space repo id."""
    polls: list[PollRecord] = Field(default_factory=list)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.watch/1 is the first version.
        return data


def read_state(run_dir: Path) -> WatchState | None:
    path = RunPaths(Path(run_dir)).watch
    if not path.is_file():
        return None
    try:
        return WatchState.from_file(path.read_bytes())
    except ValueError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise JudgingError(f"{path}: not a watch state file ({first[:200]}); move it away to "
                           f"start the watch afresh") from None


def write_state(run_dir: Path, state: WatchState) -> None:
    state.polls = state.polls[-KEEP_POLLS:]
    write_text_atomic(RunPaths(Path(run_dir)).watch,
                      state.model_dump_json(indent=2, by_alias=True))
