"""What a run's pending work would cost (`judging run --estimate`), per judge, without calling
any endpoint: each judge's task is built by the run's own builder (`Calls.task`: the measured
signals, the re-run facts and, for the audit rubrics, the consensus fact), so the request
estimated is the request a run would send, and answers already in the cache are not counted."""

from __future__ import annotations

from collections.abc import Iterable

from judging.models import Judgment
from judging.run.call import Calls
from judging.run.lines import WorkItem
from judging.run.request import Estimate


async def estimate_items(items: Iterable[WorkItem], *, calls: Calls) -> dict[str, Estimate]:
    """One row per judge spec: the calls it would send, those the cache answers, and the work
    that needs no endpoint (the offline judge, a claim whose run line would be an error: a
    figure that cannot be read, signals that cannot be computed)."""
    rows: dict[str, Estimate] = {}
    for item in items:
        row = rows.setdefault(item.judge.spec, Estimate(judge=item.judge.spec))
        if item.judge.model is None:  # the offline judge: no endpoint
            row.local += 1
            continue
        prepared = await calls.task(item)
        if isinstance(prepared, Judgment):  # the run writes an error line: no call
            row.local += 1
            continue
        call = item.judge.estimate(prepared[0])
        if call is not None:
            row.add(call)
    return rows
