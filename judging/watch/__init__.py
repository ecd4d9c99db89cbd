"""`judging watch --discover TAG... --out RUN_DIR`: a live event. Every `--every` it lists the
Spaces carrying the tags (every page of the Hub's listing), judges the new Spaces and the new
revisions (`judging run` on the run directory, which resumes), never a Space whose head is
unchanged, takes no revision made after `--as-of`, and rewrites the decisions and the leaderboard
(and, with `--push`, sends the new records to Argilla).

Reads the Hub (through `judging.intake`), judges through `judging.run`, decides through
`judging.resolve`; writes RUN_DIR/watch.json (`state`: every Space seen and the revision judged)
and holds RUN_DIR/watch.lock while it runs. Killed (even with kill -9) and started again, it goes
on where it was: nothing judged twice, nothing lost.
"""

from __future__ import annotations

from judging.watch.loop import parse_every, watch, watch_lock
from judging.watch.poll import MAX_ATTEMPTS, PollReport, WatchOptions, poll, start_state
from judging.watch.state import PollRecord, WatchedSpace, WatchState, read_state, write_state

__all__ = ["MAX_ATTEMPTS", "PollRecord", "PollReport", "WatchOptions", "WatchState",
           "WatchedSpace", "parse_every", "poll", "read_state", "start_state", "watch",
           "watch_lock", "write_state"]
