"""Preloaded in the measuring pool's forkserver (`judging.run.pool._context`), imported nowhere
else: a worker that fails before it runs any of our code reports one line on stderr instead of
the traceback the forkserver prints through `sys.excepthook`.

The case: a worker forked as the pool shuts down, after the pool's semaphores were released, dies
unpickling them (`FileNotFoundError`) at the end of a run whose claims were all measured. The
line keeps the error's type and message, since a worker that cannot start for a real cause (a
broken native library) is what `MeasuringUnavailable` points the reader to."""

from __future__ import annotations

import sys


def _one_line(kind: type[BaseException], value: BaseException, _traceback: object) -> None:
    sys.stderr.write(f"judging: a measuring worker could not start ({kind.__name__}: {value})\n")


sys.excepthook = _one_line
