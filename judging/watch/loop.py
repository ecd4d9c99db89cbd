"""The watch's schedule: one poll now, then one every `--every`, until stopped (Ctrl+C or
SIGTERM end it between two steps; kill -9 at any moment loses nothing, see `state`). One watch
per run directory: it holds a lock (flock on RUN_DIR/watch.lock, released by the kernel when the
process dies, so a killed watch never blocks its restart).

A first poll that fails (the Hub unreachable, a registry or judge that cannot be used) stops the
watch with the reason: a configuration problem is seen at once, not after hours. Later polls that
fail are reported and tried again at the next tick.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from judging.errors import JudgingError
from judging.rundir import RunPaths
from judging.watch.poll import PollReport, WatchOptions, poll, start_state

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_every(text: str) -> float:
    """`30s`, `5m`, `2h`, `1d` or a number of seconds, as seconds (at least 1)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text or "")
    if match is None:
        raise JudgingError(f"--every {text!r}: give a duration such as 30s, 5m, 2h or 1d")
    seconds = float(match.group(1)) * UNITS[match.group(2) or "s"]
    if seconds < 1:
        raise JudgingError(f"--every {text!r}: at least one second")
    return seconds


@contextlib.contextmanager
def watch_lock(run_dir: Path) -> Iterator[None]:
    """The run directory's watch lock, or a one-line error naming the watch that holds it."""
    path = RunPaths(Path(run_dir)).watch_lock
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            raise JudgingError(f"another `judging watch` (pid {holder}) is watching {run_dir}: "
                               f"stop it first, or give another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM ends the watch as Ctrl+C does (the run in progress records itself interrupted)."""
    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def watch(options: WatchOptions, *, every: float, polls: int | None = None,
          report: Callable[[int, PollReport], None] = lambda n, r: None,
          on_progress: Callable[[int, int], None] | None = None,
          sleep: Callable[[float], None] = time.sleep) -> int:
    """Poll until stopped (or `polls` times); returns the number of polls made. A first poll
    that fails ends the watch with its error and, when the watch made the run directory, takes
    the directory away again (it holds nothing but the watch's own state)."""
    fresh = not Path(options.out).exists()
    try:
        return _watch(options, every=every, polls=polls, report=report,
                      on_progress=on_progress, sleep=sleep)
    except JudgingError:
        if fresh:
            _remove_own_files(Path(options.out))
        raise


def _remove_own_files(out: Path) -> None:
    """The watch's state and lock, and the folder when nothing else is in it."""
    paths = RunPaths(out)
    for path in (paths.watch, paths.watch_lock):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # not empty: something else was written; keep it
        out.rmdir()


def _watch(options: WatchOptions, *, every: float, polls: int | None,
           report: Callable[[int, PollReport], None],
           on_progress: Callable[[int, int], None] | None,
           sleep: Callable[[float], None]) -> int:
    with watch_lock(options.out), stop_on_sigterm():
        state = start_state(options)
        made, succeeded = 0, False
        while True:
            started = time.monotonic()
            made += 1
            result = poll(options, state, on_progress=on_progress)
            report(made, result)
            if result.record.error is not None and not succeeded:
                raise JudgingError(result.record.error)
            succeeded = succeeded or result.record.error is None
            if polls is not None and made >= polls:
                return made
            sleep(max(0.0, every - (time.monotonic() - started)))
